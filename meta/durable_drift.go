package meta

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/vm"
)

// A paused plan runs again under whatever catalog and configuration the
// replica that gets the answer has. Replicas give their snapshots their
// own version numbers, so a saved plan records digests instead: of the
// tools it could call (names and schemas) and of the configuration. A
// resumed run whose digests differ says so in its warnings; a plan that
// took another path because of the change ends replay_diverged anyway.

// WarningReplayChanged is the warning of a resumed run that ran under
// another catalog or configuration than its first run.
const WarningReplayChanged = "replay_changed"

// drift computes and remembers the digests of the last snapshot and
// configuration it saw: plans pause far more often than catalogs change.
type drift struct {
	mu      sync.Mutex
	snap    *catalog.Snapshot
	catalog string
	cfgJSON string
	config  string
}

// digests returns the digests of st's catalog and configuration.
func (d *drift) digests(st *State) (catalogDigest, configDigest string) {
	cfg, err := json.Marshal(st.Config)
	if err != nil {
		cfg = nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.snap != st.Catalog {
		h := sha256.New()
		for _, t := range st.Catalog.Enabled() {
			h.Write([]byte(t.Name))
			h.Write([]byte{0})
			h.Write(t.InputSchema)
			h.Write([]byte{0})
			h.Write(t.OutputSchema)
			h.Write([]byte{0})
		}
		d.snap, d.catalog = st.Catalog, hex.EncodeToString(h.Sum(nil)[:16])
	}
	if string(cfg) != d.cfgJSON {
		sum := sha256.Sum256(cfg)
		d.cfgJSON, d.config = string(cfg), hex.EncodeToString(sum[:16])
	}
	return d.catalog, d.config
}

// changedWarning is the warning of a resumed run whose catalog or
// configuration differ from its first run's; nil when neither does (or
// the plan was saved before digests were kept).
func (d *drift) changedWarning(st *State, p *savedPlan) *vm.Warning {
	if p.CatalogDigest == "" && p.ConfigDigest == "" {
		return nil
	}
	cat, cfg := d.digests(st)
	var what string
	switch {
	case cat != p.CatalogDigest && cfg != p.ConfigDigest:
		what = "the tools and the server's configuration"
	case cat != p.CatalogDigest:
		what = "the tools"
	case cfg != p.ConfigDigest:
		what = "the server's configuration"
	default:
		return nil
	}
	return &vm.Warning{Type: WarningReplayChanged, Message: what + " changed between the pause and the answer; " +
		"the plan ran again under the current ones (a call that differed from the first run would have ended it)"}
}
