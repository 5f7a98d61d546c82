//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
)

const supported = false

func sysProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func confine(workerLimits) (Confinement, error) {
	return Confinement{}, errors.New("sandbox workers need Linux")
}

func serverNamespaces() map[string]string { return nil }
