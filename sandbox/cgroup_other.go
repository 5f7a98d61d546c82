//go:build !linux

package sandbox

import "errors"

// cgroupParent and workerCgroup exist on Linux only.
type cgroupParent struct{}

type workerCgroup struct{}

func cgroupsFor(mode CgroupMode) (*cgroupParent, string, error) {
	if mode == CgroupRequired {
		return nil, "", errors.New("sandbox: sandbox.cgroup is required, and cgroups need Linux")
	}
	return nil, "cgroups need Linux", nil
}

func (*cgroupParent) newWorker(int64) (*workerCgroup, CgroupLimits, error) {
	return nil, CgroupLimits{}, nil
}

func (*workerCgroup) cloneFD() int    { return -1 }
func (*workerCgroup) started()        {}
func (*workerCgroup) place(int) error { return nil }
func (*workerCgroup) oomKills() int64 { return 0 }
func (*workerCgroup) remove()         {}

func startErrorNeedsPlacement(error) bool { return false }

func launchCgroup(mode CgroupMode, _ string, _, _ int64) (string, string, error) {
	_, none, err := cgroupsFor(mode)
	return "", none, err
}

func joinCgroup(string) error { return errors.New("cgroups need Linux") }
