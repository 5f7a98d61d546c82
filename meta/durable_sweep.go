package meta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/policy/audit"
	"github.com/codecall-go/codecall/state"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// A plan whose prompt nobody answers would otherwise leave the store when
// its TTL runs out, with an execute.start in the audit log and no
// execute.end. Each pause therefore also files a small record under
// pausedKey, read by SweepExpired: any replica, on a timer, ends the plans
// whose prompt expired unanswered, with the execute.end their run lacks.

// pausedKey files the record of a paused plan that a sweep reads: small,
// unlike the plan and its journal, so that listing them stays cheap.
func pausedKey(runID string) string { return "paused/" + runID }

// pausedRecord is what a sweep needs to end a plan nobody answered.
type pausedRecord struct {
	RunID     string `json:"runId"`
	ExpiresMs int64  `json:"expiresMs"`
}

// sweepDelay is how long after its prompt expired a plan is swept: until
// then a late answer still runs it, and is told the approval expired.
// Half the grace a saved plan outlives its prompt by.
func (d *Durable) sweepDelay() time.Duration { return d.grace / 2 }

// markPaused files the record a sweep reads, for as long as the plan.
func (d *Durable) markPaused(ctx context.Context, p *savedPlan) error {
	b, err := json.Marshal(pausedRecord{RunID: p.RunID, ExpiresMs: p.ExpiresMs})
	if err != nil {
		return err
	}
	return d.store.Put(ctx, pausedKey(p.RunID), b, time.UnixMilli(p.ExpiresMs).Sub(d.now())+d.grace)
}

// SweepExpired ends the saved plans whose prompt expired unanswered before
// now, less the grace a late answer has: each gets its execute.end in st's
// audit log (tool_error, APPROVAL_EXPIRED, the run not resumed) and leaves
// the store. Replicas may sweep at the same time: the resume lease makes
// one of them end each plan, and a plan being resumed is left alone. It
// returns how many plans it ended; a record this server cannot open is
// reported in the error and does not stop the sweep of the others.
func (d *Durable) SweepExpired(ctx context.Context, st *State, now time.Time) (int, error) {
	entries, err := d.store.Scan(ctx, "paused/", state.MaxScan)
	var errs []error
	var unreadable *state.SealedKeysError
	switch {
	case errors.As(err, &unreadable):
		// Records sealed with another key (a changed key, a replica
		// configured with another, an altered entry) cannot be read, so
		// not ended: they expire with their TTL. They must not keep the
		// sweep from ending the others.
		errs = append(errs, fmt.Errorf("paused plans this server cannot read, left to expire: %w", err))
	case err != nil:
		return 0, fmt.Errorf("listing paused plans: %w", err)
	}
	ended := 0
	for _, e := range entries {
		var rec pausedRecord
		if json.Unmarshal(e.Value, &rec) != nil || rec.RunID == "" {
			_ = d.store.Delete(ctx, e.Key) // not ours to read: it cannot end a run
			continue
		}
		if now.Before(time.UnixMilli(rec.ExpiresMs).Add(d.sweepDelay())) {
			continue
		}
		done, err := d.sweepOne(ctx, st, rec.RunID, now)
		if err != nil {
			errs = append(errs, err)
		}
		if done {
			ended++
		}
	}
	return ended, errors.Join(errs...)
}

// sweepOne ends one plan whose prompt expired, under its lease.
func (d *Durable) sweepOne(ctx context.Context, st *State, runID string, now time.Time) (bool, error) {
	holder := newRunID()
	leaseUntil, err := d.acquire(ctx, runID, holder)
	if err != nil {
		if errors.Is(err, state.ErrExists) {
			return false, nil // being resumed, or swept by another replica
		}
		return false, err
	}
	p, err := d.load(ctx, runID)
	switch {
	case errors.Is(err, state.ErrNotFound):
		// It ended since the record was listed (and its record with it),
		// or its TTL ran out first: nothing is left to end.
		d.release(ctx, runID, holder)
		return false, d.store.Delete(ctx, pausedKey(runID))
	case err != nil:
		d.release(ctx, runID, holder)
		return false, err
	}
	p.holder, p.leaseUntil = holder, leaseUntil
	if p.Pending == nil || now.Before(time.UnixMilli(p.ExpiresMs).Add(d.sweepDelay())) {
		// Paused again since it was listed: a later sweep looks again.
		d.release(ctx, runID, holder)
		return false, nil
	}
	via := string(policy.ViaExecute)
	if p.Surface == surfaceCodeMode {
		via = viaCodeMode
	}
	ev := audit.Event{Type: audit.ExecuteEnd, RunID: p.RunID, SessionID: p.Session, Via: via,
		ScriptSHA256: p.ScriptSHA, Status: string(vm.StatusToolError), Duration: now.Sub(time.UnixMilli(p.StartedMs)),
		ErrorCode: string(toolerr.ApprovalExpired), Error: fmt.Sprintf(
			"nobody answered the approval prompt for %s (call %d) before it expired; the plan was not resumed and ends here",
			p.Pending.Tool, p.Pending.Index+1)}
	if _, answered := p.Decisions[p.Pending.Index]; answered {
		// Answered, but the replica that resumed it stopped before the run
		// ended, and the client did not send the answer again.
		ev.Status, ev.ErrorCode = string(vm.StatusRuntimeError), string(toolerr.Execution)
		ev.Error = fmt.Sprintf("the approval for %s (call %d) was answered, but the server resuming the plan stopped before the run ended, "+
			"and the answer was not sent again before the plan expired; the audit log holds the calls it made", p.Pending.Tool, p.Pending.Index+1)
	}
	st.Audit.Log(ctx, ev)
	d.counters.expired.Add(1)
	if err := d.forget(ctx, p); err != nil {
		return true, err
	}
	return true, nil
}
