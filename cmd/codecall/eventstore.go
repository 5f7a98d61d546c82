package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// eventStore is the streamable HTTP transport's record of the messages it
// sent on SSE streams, so that a client whose stream broke can resume it
// with Last-Event-ID and be redelivered what it missed. It keeps at most
// maxEvents events and maxBytes of messages per session (oldest first
// out; resuming from an event no longer kept is refused, and the client
// starts over), and at most maxSessions sessions (the least recently
// written first out), so its memory is bounded whatever the clients do.
//
// It also makes mcp-go's delivery of notifications sent while a request is
// handled exact: with a store, the transport hands every notification it
// has taken from the session's queue to the stream before the response,
// where without one a notification taken at the moment the response is
// written can be lost (mcp-go v1.2.1, StreamableHTTPServer.handlePost).
type eventStore struct {
	maxEvents   int
	maxBytes    int
	maxSessions int

	mu       sync.Mutex
	seq      int64
	clock    int64 // increases with every write, for least-recently-written eviction
	sessions map[string]*eventLog
}

// eventLog is one session's kept events, in the order they were stored.
type eventLog struct {
	events  []storedEvent
	bytes   int
	written int64
}

type storedEvent struct {
	seq     int64
	stream  string
	message json.RawMessage
}

// The store's bounds: a few minutes of a busy session's notifications, far
// more than a reconnecting client has missed.
const (
	eventsPerSession   = 1024
	eventBytesPerSess  = 4 << 20
	eventStoreSessions = 1024
)

func newEventStore() *eventStore {
	return &eventStore{maxEvents: eventsPerSession, maxBytes: eventBytesPerSess, maxSessions: eventStoreSessions,
		sessions: map[string]*eventLog{}}
}

var _ server.EventStore = (*eventStore)(nil)

// StoreEvent implements server.EventStore.
func (s *eventStore) StoreEvent(_ context.Context, sessionID, streamID string, message json.RawMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	log := s.sessions[sessionID]
	if log == nil {
		if len(s.sessions) >= s.maxSessions {
			s.evictSession()
		}
		log = &eventLog{}
		s.sessions[sessionID] = log
	}
	s.seq++
	s.clock++
	log.written = s.clock
	msg := append(json.RawMessage(nil), message...)
	log.events = append(log.events, storedEvent{seq: s.seq, stream: streamID, message: msg})
	log.bytes += len(msg)
	drop := 0
	for drop < len(log.events)-1 && (len(log.events)-drop > s.maxEvents || log.bytes > s.maxBytes) {
		log.bytes -= len(log.events[drop].message)
		drop++
	}
	if drop > 0 {
		log.events = append(log.events[:0:0], log.events[drop:]...)
	}
	return strconv.FormatInt(s.seq, 10), nil
}

// evictSession drops the session written least recently. s.mu is held.
func (s *eventStore) evictSession() {
	oldest, at := "", int64(-1)
	for id, log := range s.sessions {
		if at < 0 || log.written < at {
			oldest, at = id, log.written
		}
	}
	delete(s.sessions, oldest)
}

// ReplayEventsAfter implements server.EventStore: it sends the events of
// lastEventID's stream stored after it, in order.
func (s *eventStore) ReplayEventsAfter(_ context.Context, sessionID, lastEventID string, send func(eventID string, message json.RawMessage) error) (string, error) {
	seq, err := strconv.ParseInt(lastEventID, 10, 64)
	var stream string
	var tail []storedEvent
	found := false
	s.mu.Lock()
	if log := s.sessions[sessionID]; err == nil && log != nil {
		i := sort.Search(len(log.events), func(i int) bool { return log.events[i].seq >= seq })
		if i < len(log.events) && log.events[i].seq == seq {
			found, stream = true, log.events[i].stream
			for _, ev := range log.events[i+1:] {
				if ev.stream == stream {
					tail = append(tail, ev)
				}
			}
		}
	}
	s.mu.Unlock()
	if !found {
		return "", fmt.Errorf("%w: %s", server.ErrUnknownEventID, lastEventID)
	}
	for _, ev := range tail {
		if err := send(strconv.FormatInt(ev.seq, 10), ev.message); err != nil {
			return "", err
		}
	}
	return stream, nil
}

// PurgeSession implements server.EventStore.
func (s *eventStore) PurgeSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sessionID)
	return nil
}
