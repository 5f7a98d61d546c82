package middleware

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/sandbox"
)

// stats is the worker pool's counters since Wrap: those of the pools a
// reload replaced, plus the current pool's.
func (iso *isolation) stats() sandbox.Stats {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	st := iso.retired
	st.Kills, st.Refusals = addByLabel(nil, iso.retired.Kills), addByLabel(nil, iso.retired.Refusals)
	if iso.pool != nil {
		cur := iso.pool.Stats()
		st.Warm, st.Live, st.Running, st.Queued, st.Parked = cur.Warm, cur.Live, cur.Running, cur.Queued, cur.Parked
		st.Sessions, st.WaitingSessions, st.LongestSessionQueue = cur.Sessions, cur.WaitingSessions, cur.LongestSessionQueue
		addCounters(&st, cur)
	}
	return st
}

// addCounters adds the monotonic counters of s to total.
func addCounters(total *sandbox.Stats, s sandbox.Stats) {
	total.Spawned += s.Spawned
	total.SpawnFailures += s.SpawnFailures
	total.SpawnSeconds += s.SpawnSeconds
	total.QueueTimeouts += s.QueueTimeouts
	total.Acquired += s.Acquired
	total.Reused += s.Reused
	total.QueueWaitSeconds += s.QueueWaitSeconds
	total.Kills = addByLabel(total.Kills, s.Kills)
	total.Refusals = addByLabel(total.Refusals, s.Refusals)
}

// addByLabel adds the counters of s to total, which it returns, never nil.
func addByLabel(total, s map[string]int64) map[string]int64 {
	if total == nil {
		total = map[string]int64{}
	}
	for k, v := range s {
		total[k] += v
	}
	return total
}

// registerMetrics reports the worker pool through OpenTelemetry metrics,
// read from the pool's counters whenever the provider collects.
func (iso *isolation) registerMetrics(mp metric.MeterProvider) (metric.Registration, error) {
	m := mp.Meter(meta.Instrumentation)
	var errs []error
	gauge := func(name, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	counter := func(name, desc string) metric.Int64ObservableCounter {
		g, err := m.Int64ObservableCounter(name, metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	seconds := func(name, desc string) metric.Float64ObservableCounter {
		g, err := m.Float64ObservableCounter(name, metric.WithDescription(desc), metric.WithUnit("s"))
		errs = append(errs, err)
		return g
	}
	warm := gauge("codecall.sandbox.workers.warm", "Sandboxed worker processes ready for a plan.")
	live := gauge("codecall.sandbox.workers.live", "Sandboxed worker processes alive (warm, running or exiting).")
	running := gauge("codecall.sandbox.workers.running", "Sandboxed worker processes running a plan.")
	parked := gauge("codecall.sandbox.workers.parked", "Sandboxed worker processes waiting for their session's next plan.")
	queued := gauge("codecall.sandbox.queue.waiting", "Plans waiting for a worker.")
	waitingSessions := gauge("codecall.sandbox.queue.sessions", "Sessions with plans waiting for a worker (those without a session count as one).")
	longest := gauge("codecall.sandbox.queue.longest", "Most plans one session has waiting for a worker.")
	spawns := counter("codecall.sandbox.spawns", "Workers that became ready.")
	spawnFailures := counter("codecall.sandbox.spawn.failures", "Workers that failed to start.")
	spawnTime := seconds("codecall.sandbox.spawn.duration", "Time from spawn to ready, summed over workers (divide by spawns for the mean).")
	acquired := counter("codecall.sandbox.runs", "Plans that got a worker.")
	reused := counter("codecall.sandbox.runs.reused", "Plans run by a worker that had run an earlier plan of the same session (sandbox.reuseRuns).")
	queueWait := seconds("codecall.sandbox.queue.wait", "Time plans waited for a worker, summed (divide by runs for the mean).")
	queueTimeouts := counter("codecall.sandbox.queue.timeouts", "Plans refused because no worker became free in time.")
	refusals := counter("codecall.sandbox.refusals", "Plans refused a worker under load, by reason: session_queue_full, session_running_limit, server_busy.")
	kills := counter("codecall.sandbox.kills", "Workers killed or lost, by cause.")
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("codecall: metrics: %w", err)
		}
	}
	return m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		st := iso.stats()
		o.ObserveInt64(warm, int64(st.Warm))
		o.ObserveInt64(live, int64(st.Live))
		o.ObserveInt64(running, int64(st.Running))
		o.ObserveInt64(parked, int64(st.Parked))
		o.ObserveInt64(queued, st.Queued)
		o.ObserveInt64(waitingSessions, int64(st.WaitingSessions))
		o.ObserveInt64(longest, int64(st.LongestSessionQueue))
		o.ObserveInt64(spawns, st.Spawned)
		o.ObserveInt64(spawnFailures, st.SpawnFailures)
		o.ObserveFloat64(spawnTime, st.SpawnSeconds)
		o.ObserveInt64(acquired, st.Acquired)
		o.ObserveInt64(reused, st.Reused)
		o.ObserveFloat64(queueWait, st.QueueWaitSeconds)
		o.ObserveInt64(queueTimeouts, st.QueueTimeouts)
		for _, cause := range slices.Sorted(maps.Keys(st.Kills)) {
			o.ObserveInt64(kills, st.Kills[cause], metric.WithAttributes(attribute.String("cause", cause)))
		}
		for _, reason := range slices.Sorted(maps.Keys(st.Refusals)) {
			o.ObserveInt64(refusals, st.Refusals[reason], metric.WithAttributes(attribute.String("reason", reason)))
		}
		return nil
	}, warm, live, running, parked, queued, waitingSessions, longest, spawns, spawnFailures, spawnTime, acquired, reused, queueWait, queueTimeouts,
		refusals, kills)
}

// registerDurableMetrics reports paused plans kept in the state store:
// pauses, resumes, calls answered from journals, divergences, and the
// store's round trips.
func registerDurableMetrics(mp metric.MeterProvider, d *meta.Durable) (metric.Registration, error) {
	m := mp.Meter(meta.Instrumentation)
	var errs []error
	counter := func(name, desc string) metric.Int64ObservableCounter {
		g, err := m.Int64ObservableCounter(name, metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	pauses := counter("codecall.durable.pauses", "Plans saved in the state store while waiting for an approval.")
	resumes := counter("codecall.durable.resumes", "Approval answers that ran a saved plan again.")
	replayed := counter("codecall.durable.replayed_calls", "Calls of resumed plans answered from their journal instead of being made again.")
	divergences := counter("codecall.durable.divergences", "Resumed plans ended because they made another call than their journal holds (REPLAY_DIVERGED).")
	expired := counter("codecall.durable.expired", "Paused plans ended by a sweep because nobody answered their approval prompt in time.")
	ops := counter("codecall.state.ops", "Round trips to the state store.")
	storeErrors := counter("codecall.state.errors", "Round trips to the state store that failed.")
	storeTime, err := m.Float64ObservableCounter("codecall.state.duration", metric.WithUnit("s"),
		metric.WithDescription("Time spent in round trips to the state store, summed (divide by codecall.state.ops for the mean)."))
	errs = append(errs, err)
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("codecall: metrics: %w", err)
		}
	}
	return m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		st := d.Stats()
		o.ObserveInt64(pauses, st.Pauses)
		o.ObserveInt64(resumes, st.Resumes)
		o.ObserveInt64(replayed, st.ReplayedCalls)
		o.ObserveInt64(divergences, st.Divergences)
		o.ObserveInt64(expired, st.Expired)
		o.ObserveInt64(ops, st.StoreOps)
		o.ObserveInt64(storeErrors, st.StoreErrors)
		o.ObserveFloat64(storeTime, st.StoreSeconds)
		return nil
	}, pauses, resumes, replayed, divergences, expired, ops, storeErrors, storeTime)
}
