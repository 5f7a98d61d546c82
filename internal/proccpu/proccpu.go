// Package proccpu reads the CPU time the current process has used. Tests
// use it to tell a run that burns CPU past its deadline (a bug) from one
// that waits for a core on a loaded machine (not one): wall-clock bounds
// fail on a busy machine, CPU-time bounds do not.
package proccpu
