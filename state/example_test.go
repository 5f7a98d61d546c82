package state_test

import (
	"context"
	"fmt"
	"time"

	"github.com/codecall-go/codecall/state"
)

// A paused run is filed once and taken once: a second replica that gets
// the same answer finds nothing.
func ExampleStore_Take() {
	ctx := context.Background()
	s, err := state.Open(ctx, state.Spec{Store: "memory"})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	_ = s.Put(ctx, "run/1", []byte("paused"), time.Minute)
	v, err := s.Take(ctx, "run/1")
	fmt.Println(string(v), err)
	_, err = s.Take(ctx, "run/1")
	fmt.Println(err)
	// Output:
	// paused <nil>
	// not found
}

// Scan lists the live entries under a prefix, sorted by key and bounded
// by its limit.
func ExampleStore_Scan() {
	ctx := context.Background()
	s := state.NewMemory()
	defer s.Close()
	_ = s.Put(ctx, "approval/b", []byte("2"), time.Minute)
	_ = s.Put(ctx, "approval/a", []byte("1"), time.Minute)
	_ = s.Put(ctx, "approvals", []byte("not under the prefix"), time.Minute)
	entries, err := s.Scan(ctx, "approval/", 100)
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		fmt.Println(e.Key, string(e.Value))
	}
	// Output:
	// approval/a 1
	// approval/b 2
}
