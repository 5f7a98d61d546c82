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
