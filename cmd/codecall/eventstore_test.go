package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/server"
)

func TestEventStore(t *testing.T) {
	ctx := context.Background()
	replay := func(s *eventStore, session, after string) ([]string, string, error) {
		var got []string
		stream, err := s.ReplayEventsAfter(ctx, session, after, func(id string, m json.RawMessage) error {
			got = append(got, id+"="+string(m))
			return nil
		})
		return got, stream, err
	}
	t.Run("replays the stream after an event", func(t *testing.T) {
		s := newEventStore()
		ids := []string{}
		for i, stream := range []string{"a", "b", "a", "a"} {
			id, err := s.StoreEvent(ctx, "s1", stream, json.RawMessage(fmt.Sprint(i)))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		got, stream, err := replay(s, "s1", ids[0])
		if err != nil || stream != "a" || !slices.Equal(got, []string{ids[2] + "=2", ids[3] + "=3"}) {
			t.Errorf("replay = %v, %q, %v", got, stream, err)
		}
		if _, _, err := replay(s, "s2", ids[0]); !errors.Is(err, server.ErrUnknownEventID) {
			t.Errorf("another session's event: %v", err)
		}
		if _, _, err := replay(s, "s1", "nope"); !errors.Is(err, server.ErrUnknownEventID) {
			t.Errorf("a malformed id: %v", err)
		}
		_ = s.PurgeSession(ctx, "s1")
		if _, _, err := replay(s, "s1", ids[0]); !errors.Is(err, server.ErrUnknownEventID) {
			t.Errorf("a purged session: %v", err)
		}
	})
	t.Run("bounded per session", func(t *testing.T) {
		s := &eventStore{maxEvents: 3, maxBytes: 10, maxSessions: 2, sessions: map[string]*eventLog{}}
		var ids []string
		for i := range 5 {
			id, _ := s.StoreEvent(ctx, "s1", "a", json.RawMessage(`"`+fmt.Sprint(i)+`"`)) // 3 bytes each
			ids = append(ids, id)
		}
		if n, b := len(s.sessions["s1"].events), s.sessions["s1"].bytes; n != 3 || b != 9 {
			t.Errorf("kept %d events, %d bytes; want 3, 9", n, b)
		}
		if _, _, err := replay(s, "s1", ids[0]); !errors.Is(err, server.ErrUnknownEventID) {
			t.Errorf("an evicted event: %v", err)
		}
		if got, _, err := replay(s, "s1", ids[2]); err != nil || len(got) != 2 {
			t.Errorf("replay after a kept event = %v, %v", got, err)
		}
		big, _ := s.StoreEvent(ctx, "s1", "a", json.RawMessage(`"a message larger than the byte bound"`))
		if n := len(s.sessions["s1"].events); n != 1 {
			t.Errorf("an event over the byte bound kept %d events; want only itself", n)
		}
		if got, _, err := replay(s, "s1", big); err != nil || len(got) != 0 {
			t.Errorf("replay after the last event = %v, %v", got, err)
		}
	})
	t.Run("bounded in sessions", func(t *testing.T) {
		s := &eventStore{maxEvents: 3, maxBytes: 100, maxSessions: 2, sessions: map[string]*eventLog{}}
		_, _ = s.StoreEvent(ctx, "old", "a", json.RawMessage(`1`))
		_, _ = s.StoreEvent(ctx, "mid", "a", json.RawMessage(`1`))
		_, _ = s.StoreEvent(ctx, "old", "a", json.RawMessage(`2`)) // old is now the most recent
		_, _ = s.StoreEvent(ctx, "new", "a", json.RawMessage(`1`))
		if _, ok := s.sessions["mid"]; ok || len(s.sessions) != 2 {
			t.Errorf("sessions kept: %v", s.sessions)
		}
	})
}
