// What the pre-confinement of a cgo worker did before the Go runtime
// started (preconfine_linux.c), read by confine_cgo_linux.go.

#ifndef CODECALL_PRECONFINE_H
#define CODECALL_PRECONFINE_H

struct codecall_preconfinement {
	int active;        // argv[1] is a sandbox marker: this process is a worker
	int empty_root;    // the root is an empty read-only tmpfs
	int landlock_abi;  // the Landlock ABI of the deny-all domain in force; 0: none
	int no_new_privs;  // no_new_privs is set
	int caps_dropped;  // every capability set is empty, the bounding set too
	int tz_fd;         // the server's time zone file, open; -1: none
	char namespaces[64]; // the namespaces not shared with the server, comma-separated
	char error[256];   // why it stopped; empty when it did not
};

extern struct codecall_preconfinement codecall_preconfined;

#endif
