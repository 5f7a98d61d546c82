//go:build linux && cgo

package sandbox

// #include <stdint.h>
// #include "preconfine_linux.h"
// void codecall_landlock_access(int abi, uint64_t *fs, uint64_t *net);
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// confineThreads reports what the worker's pre-confinement did
// (preconfine_linux.c): in a binary built with cgo the Go runtime cannot
// change every thread's capabilities or Landlock domain at once, so a C
// constructor took the file system away and confined the only thread
// there was, before the runtime started, and every thread since inherited
// it. What is left here is the time zone, whose file it kept open.
func confineThreads(workerLimits) (Confinement, error) {
	var c Confinement
	pre := &C.codecall_preconfined
	if pre.active == 0 {
		return c, errors.New("the worker was not confined before the Go runtime started " +
			"(its first argument must be the sandbox marker, and /proc must be mounted)")
	}
	c.Namespaces = strings.FieldsFunc(C.GoString(&pre.namespaces[0]), func(r rune) bool { return r == ',' })
	if msg := C.GoString(&pre.error[0]); msg != "" {
		return c, fmt.Errorf("confining the worker: %s", msg)
	}
	c.EmptyRoot = pre.empty_root != 0
	c.NoNewPrivs = pre.no_new_privs != 0
	c.LandlockABI = int(pre.landlock_abi)
	c.Landlock = c.LandlockABI > 0
	c.CapabilitiesDropped = pre.caps_dropped != 0
	if !c.EmptyRoot || !c.NoNewPrivs || !c.CapabilitiesDropped {
		return c, fmt.Errorf("the worker's pre-confinement stopped short: %+v", c)
	}
	// Go checks what C did, on the thread it runs on.
	if err := capabilitiesEmpty(); err != nil {
		return c, err
	}
	if c.Landlock && !inLandlockDomain() {
		return c, errors.New("the Landlock domain the pre-confinement reported is not in force")
	}
	loadTimeZone(int(pre.tz_fd))
	return c, nil
}

// loadTimeZone makes the zone file the pre-confinement opened the local
// time zone, as the runtime would have loaded it from the file system.
func loadTimeZone(fd int) {
	if fd < 0 {
		time.Local = time.UTC
		return
	}
	f := os.NewFile(uintptr(fd), "time zone")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return
	}
	// "Local" is the name the runtime gives the zone it loads itself.
	if loc, err := time.LoadLocationFromTZData("Local", data); err == nil {
		time.Local = loc
	}
}

// preconfineLandlockAccess is the C side's table of landlockAccess, for
// the test that holds the two together.
func preconfineLandlockAccess(abi int) (fs, net uint64) {
	var f, n C.uint64_t
	C.codecall_landlock_access(C.int(abi), &f, &n)
	return uint64(f), uint64(n)
}
