package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/presets"
)

// PinsFile is the name of the file, in the state directory, that holds the
// pinned tool definitions of every upstream.
const PinsFile = "upstream-pins.json"

// pinRecord is one upstream tool's pinned definition: Hash is the accepted
// definition's, Pending the changed (or new) one waiting for an operator.
type pinRecord struct {
	Hash    string `json:"hash,omitempty"`
	Pending string `json:"pending,omitempty"`
}

// pinState is the file's content: upstream id -> upstream tool name ->
// record.
type pinState map[string]map[string]pinRecord

// pins records the definitions of upstream tools the first time they are
// seen and holds back a tool whose definition changed afterwards (a "rug
// pull": the description a person approved is not the one the model now
// reads). The file is read on every check, so an accept written by another
// process (codecall upstreams accept) applies at the next check.
type pins struct {
	mu       sync.Mutex // serialises read-modify-write of the file
	path     string
	newTools string // presets.NewToolsAccept or NewToolsQuarantine
}

func newPins(dir, newTools string) *pins {
	if newTools == "" {
		newTools = presets.NewToolsAccept
	}
	return &pins{path: filepath.Join(dir, PinsFile), newTools: newTools}
}

// definitionHash is the SHA-256 of what a model and a person read of a
// tool: its name, title, description, schemas and annotations, as the
// upstream sends them.
func definitionHash(t mcp.Tool) string {
	def := struct {
		Name         string             `json:"name"`
		Title        string             `json:"title,omitempty"`
		Description  string             `json:"description"`
		InputSchema  any                `json:"inputSchema"`
		OutputSchema any                `json:"outputSchema,omitempty"`
		Annotations  mcp.ToolAnnotation `json:"annotations"`
	}{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations}
	def.InputSchema = t.InputSchema
	if len(t.RawInputSchema) > 0 {
		def.InputSchema = json.RawMessage(t.RawInputSchema)
	}
	if len(t.RawOutputSchema) > 0 {
		def.OutputSchema = json.RawMessage(t.RawOutputSchema)
	} else if t.OutputSchema.Type != "" {
		def.OutputSchema = t.OutputSchema
	}
	b, _ := json.Marshal(def)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// check returns the names (the upstream's own) of the tools of upstream
// id to hold back: those whose definition differs from the pinned one,
// and, under newTools quarantine, those new to an upstream seen before.
// It records the definitions of an upstream seen for the first time and,
// under newTools accept, of its new tools.
//
// A held tool maps to true when it is new, false when it changed.
func (p *pins) check(id string, tools []mcp.Tool) (held map[string]bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, err := p.load()
	if err != nil {
		return nil, err
	}
	known, seen := st[id]
	if !seen {
		known = map[string]pinRecord{}
		st[id] = known
	}
	held = map[string]bool{}
	changed := false
	for _, t := range tools {
		h := definitionHash(t)
		rec, ok := known[t.Name]
		switch {
		case ok && rec.Hash == h:
			if rec.Pending != "" {
				rec.Pending = "" // changed back to the accepted definition
				known[t.Name], changed = rec, true
			}
		case !seen || (!ok && p.newTools == presets.NewToolsAccept):
			known[t.Name], changed = pinRecord{Hash: h}, true
		default:
			held[t.Name] = rec.Hash == ""
			if rec.Pending != h {
				rec.Pending = h
				known[t.Name], changed = rec, true
			}
		}
	}
	if changed {
		err = p.save(st)
	}
	return held, err
}

func (p *pins) load() (pinState, error) {
	return loadPins(p.path)
}

func loadPins(path string) (pinState, error) {
	st := pinState{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the pinned tool definitions: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("the pinned tool definitions in %s are not valid JSON (%v); move the file away to pin every tool afresh", path, err)
	}
	return st, nil
}

func (p *pins) save(st pinState) error { return savePins(p.path, st) }

// savePins writes the file atomically, readable by its owner only.
func savePins(path string, st pinState) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pins-*")
	if err != nil {
		return fmt.Errorf("writing the pinned tool definitions: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the pinned tool definitions: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// AcceptDefinitions accepts the changed or new definitions waiting in the
// state directory dir: of every tool of the upstream named target, or of
// the one tool target names (its gateway name, <id><sep><tool>, or
// <id>:<tool>). It returns the tools accepted, as <id>/<tool>; a running
// gateway serves them the next time it checks that upstream's tools (on
// its next tools/list_changed, reload or restart).
func AcceptDefinitions(dir, target, sep string) ([]string, error) {
	path := filepath.Join(dir, PinsFile)
	st, err := loadPins(path)
	if err != nil {
		return nil, err
	}
	match := func(id, tool string) bool {
		return target == id || target == id+sep+tool || target == id+":"+tool
	}
	var accepted []string
	known := false
	for id, tools := range st {
		for name, rec := range tools {
			if !match(id, name) {
				continue
			}
			known = true
			if rec.Pending == "" {
				continue
			}
			tools[name] = pinRecord{Hash: rec.Pending}
			accepted = append(accepted, id+"/"+name)
		}
	}
	if !known {
		return nil, fmt.Errorf("no upstream or tool %q in %s; name an upstream id or a tool as <id>%s<tool>", target, path, sep)
	}
	sort.Strings(accepted)
	if len(accepted) == 0 {
		return nil, nil
	}
	return accepted, savePins(path, st)
}

// DefaultStateDir is where the command line keeps state between runs
// ($XDG_STATE_HOME/codecall, else ~/.local/state/codecall).
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "codecall"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: %w; set upstreams.stateDir", err)
	}
	return filepath.Join(home, ".local", "state", "codecall"), nil
}

// quarantineText is the log and audit reason for a held-back tool.
func quarantineText(id, tool string, isNew bool) string {
	what := "its definition (description, schemas or annotations) changed since it was first seen"
	if isNew {
		what = "it is new and upstreams.newTools is quarantine"
	}
	return fmt.Sprintf("tool %q of upstream %q is held back: %s; run `codecall upstreams accept %s` to serve it, or set upstreams.pinDefinitions: false",
		tool, id, what, strings.TrimSpace(id))
}
