//go:build linux && cgo

// The pre-confinement of a worker in a binary built with cgo.
//
// Capabilities, the bounding set, no_new_privs and a Landlock domain belong
// to a thread, not to a process. A binary built without cgo changes them
// on every thread at once (syscall.AllThreadsSyscall); with cgo the Go
// runtime refuses that, since C code may have started threads it does not
// know of, and the C library offers no general equivalent. So in a cgo
// binary the worker confines itself here, in a constructor that runs
// before the Go runtime has started its first thread: every thread the
// runtime starts afterwards inherits the confinement of the only one that
// existed.
//
// The steps and their order are those of confine_nocgo_linux.go; keep the
// two in step. Go reads the outcome from codecall_preconfined, and fails
// the worker when error is set.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preconfine_linux.h"

struct codecall_preconfinement codecall_preconfined = {.tz_fd = -1};

// Constants spelled out, so the file builds against old kernel headers.
#define CC_SYS_landlock_create_ruleset 444
#define CC_SYS_landlock_restrict_self 446
#define CC_SYS_close_range 436
#define CC_LANDLOCK_CREATE_RULESET_VERSION 1u
#define CC_CAPABILITY_VERSION_3 0x20080522
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

// The argument every sandbox process of this package starts with: the
// worker's, and the test binary's probes.
static const char marker[] = "-codecall-sandbox-";

static const char *const ns_kinds[] = {"user", "pid", "net", "mnt", "ipc", "uts"};

static void fail(const char *what, int err) {
	snprintf(codecall_preconfined.error, sizeof codecall_preconfined.error, "%s: %s", what, strerror(err));
}

// read_all reads a small file into buf, NUL-terminated; it returns the
// length, or -1.
static ssize_t read_all(const char *path, char *buf, size_t size) {
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	size_t n = 0;
	while (n < size - 1) {
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

// codecall_landlock_access returns the file-system and network access
// rights a deny-all ruleset handles at a Landlock ABI; landlockAccess in
// Go returns the same (a test holds them together).
void codecall_landlock_access(int abi, uint64_t *fs, uint64_t *net) {
	*fs = (1ull << 13) - 1; // ABI 1: execute .. make_sym
	*net = 0;
	if (abi >= 2) *fs |= 1ull << 13; // refer
	if (abi >= 3) *fs |= 1ull << 14; // truncate
	if (abi >= 4) *net = 1 | 2;      // bind and connect TCP
	if (abi >= 5) *fs |= 1ull << 15; // ioctl on devices
}

// check_namespaces compares the process's namespaces with the server's,
// given on the command line as ns.KIND=ID, and records those it does not
// share. It refuses to go on outside a user and a mount namespace of the
// worker's own: the steps below would act on the server's.
static int check_namespaces(const char *args, size_t len) {
	int own_user = 0, own_mnt = 0;
	char *list = codecall_preconfined.namespaces;
	for (size_t k = 0; k < sizeof ns_kinds / sizeof ns_kinds[0]; k++) {
		char want[80] = "";
		char key[16];
		int keylen = snprintf(key, sizeof key, "ns.%s=", ns_kinds[k]);
		for (const char *a = args; a < args + len; a += strlen(a) + 1) {
			if (strncmp(a, key, (size_t)keylen) == 0) {
				snprintf(want, sizeof want, "%s", a + keylen);
			}
		}
		char path[32], self[80];
		snprintf(path, sizeof path, "/proc/self/ns/%s", ns_kinds[k]);
		ssize_t n = readlink(path, self, sizeof self - 1);
		if (n < 0) {
			fail("reading the worker's namespaces", errno);
			return -1;
		}
		self[n] = 0;
		if (want[0] == 0 || strcmp(want, self) == 0) continue;
		if (list[0]) strncat(list, ",", sizeof codecall_preconfined.namespaces - strlen(list) - 1);
		strncat(list, ns_kinds[k], sizeof codecall_preconfined.namespaces - strlen(list) - 1);
		if (k == 0) own_user = 1;
		if (k == 3) own_mnt = 1;
	}
	if (!own_user || !own_mnt) {
		snprintf(codecall_preconfined.error, sizeof codecall_preconfined.error,
			 "the worker is not in its own user and mount namespaces (got %s)", list);
		return -1;
	}
	return 0;
}

// close_inherited closes every descriptor above stderr: nothing but the
// standard three may reach a worker, and nothing else is open yet.
static void close_inherited(void) {
	if (syscall(CC_SYS_close_range, 3u, ~0u, 0u) == 0) return;
	for (int fd = 3; fd < 4096; fd++) close(fd);
}

// open_time_zone opens the zone file the server's TZ names, or
// /etc/localtime, as the Go runtime would look it up, for Go to read once
// the file system is gone.
static void open_time_zone(void) {
	const char *tz = getenv("TZ");
	char path[512];
	if (tz == NULL) {
		snprintf(path, sizeof path, "/etc/localtime");
	} else {
		if (tz[0] == ':') tz++;
		if (tz[0] == 0 || strcmp(tz, "UTC") == 0) return;
		if (tz[0] == '/') {
			snprintf(path, sizeof path, "%s", tz);
		} else {
			snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", tz);
		}
	}
	codecall_preconfined.tz_fd = open(path, O_RDONLY | O_CLOEXEC);
}

// empty_root makes the root an empty, read-only tmpfs and detaches the
// host's tree, as emptyRoot does in Go.
static int empty_root(void) {
	if (mount("", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		fail("making mounts private", errno);
		return -1;
	}
	static const char *const dirs[] = {"/tmp", "/mnt", "/dev", "/run", "/var"};
	const char *dir = NULL;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		struct stat st;
		if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			dir = dirs[i];
			break;
		}
	}
	if (dir == NULL) {
		fail("no directory to mount the empty root on", ENOENT);
		return -1;
	}
	if (mount("codecall-sandbox", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=2,mode=0555") != 0) {
		fail("mounting an empty tmpfs", errno);
		return -1;
	}
	if (chdir(dir) != 0 || syscall(SYS_pivot_root, ".", ".") != 0) {
		fail("pivot_root", errno);
		return -1;
	}
	if (umount2(".", MNT_DETACH) != 0) {
		fail("detaching the host's file system", errno);
		return -1;
	}
	if (chdir("/") != 0) {
		fail("chdir /", errno);
		return -1;
	}
	// Read-only as well as empty, where the kernel allows the remount.
	mount("", "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	codecall_preconfined.empty_root = 1;
	return 0;
}

// landlock_deny_all restricts the thread, and so every thread started
// after it, with a ruleset that handles every access right of the
// kernel's ABI and allows none. It then checks the domain is in force:
// the empty root, readable by its mode, must be refused.
static void landlock_deny_all(void) {
	long abi = syscall(CC_SYS_landlock_create_ruleset, NULL, 0, CC_LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) return;
	struct {
		uint64_t fs, net;
	} attr;
	codecall_landlock_access((int)abi, &attr.fs, &attr.net);
	long fd = syscall(CC_SYS_landlock_create_ruleset, &attr, abi >= 4 ? sizeof attr : sizeof attr.fs, 0);
	if (fd < 0) return;
	long ok = syscall(CC_SYS_landlock_restrict_self, fd, 0);
	close((int)fd);
	if (ok != 0) return;
	int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		close(root);
		return;
	}
	if (errno == EACCES) codecall_preconfined.landlock_abi = (int)abi;
}

// drop_capabilities empties the bounding set first (dropping from it
// needs CAP_SETPCAP, which goes next), then the ambient, inheritable,
// permitted and effective sets, and checks that nothing is left.
static int drop_capabilities(void) {
	int last = -1;
	for (int cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
			if (errno == EINVAL) break;
			fail("dropping the capability bounding set", errno);
			return -1;
		}
		last = cap;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		fail("clearing the ambient capabilities", errno);
		return -1;
	}
	struct {
		uint32_t version;
		int pid;
	} hdr = {CC_CAPABILITY_VERSION_3, 0};
	struct {
		uint32_t effective, permitted, inheritable;
	} data[2];
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) != 0) {
		fail("dropping the capabilities", errno);
		return -1;
	}
	if (syscall(SYS_capget, &hdr, data) != 0) {
		fail("reading the capabilities back", errno);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		if (data[i].effective || data[i].permitted || data[i].inheritable) {
			fail("capabilities left after capset", EPERM);
			return -1;
		}
	}
	for (int cap = 0; cap <= last; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 0) {
			fail("a capability left in the bounding set", EPERM);
			return -1;
		}
	}
	codecall_preconfined.caps_dropped = 1;
	return 0;
}

__attribute__((constructor)) static void codecall_preconfine(void) {
	static char args[16384];
	ssize_t n = read_all("/proc/self/cmdline", args, sizeof args);
	if (n <= 0) return;
	size_t first = strlen(args) + 1;
	if ((size_t)n <= first || strncmp(args + first, marker, sizeof marker - 1) != 0) return;
	codecall_preconfined.active = 1;

	if (check_namespaces(args, (size_t)n) != 0) return;
	close_inherited();
	open_time_zone();
	if (empty_root() != 0) return;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		fail("setting no_new_privs", errno);
		return;
	}
	codecall_preconfined.no_new_privs = 1;
	landlock_deny_all();
	drop_capabilities();
}
