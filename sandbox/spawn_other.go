//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
)

// supported says whether this platform can run sandbox workers at all.
const supported = false

func sysProcAttr(int) *syscall.SysProcAttr { return nil }

func confine(workerLimits) (Confinement, error) {
	return Confinement{}, errors.New("sandbox workers need Linux")
}

func serverNamespaces() map[string]string { return nil }

func endingOf(st *os.ProcessState) ending {
	if st == nil {
		return ending{code: -1}
	}
	return ending{code: st.ExitCode()}
}

func checkConfinement(w *worker) Confinement { return w.conf }
