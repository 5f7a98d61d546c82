package vm_test

import (
	"context"
	"fmt"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// A plan run twice under one Replay reads the same dates and random
// numbers, however long its calls took: what lets a paused plan be run
// again and reach the same calls.
func ExampleReplay() {
	limits, _ := presets.LimitsFor(presets.Balanced)
	plan, err := ast.Validate(`const t = Date.now(); await callTool('crm.find', {}); return [t, Math.random()]`, ast.RulesFor(limits))
	if err != nil {
		panic(err)
	}
	replay := &vm.Replay{Seed: vm.SeedFrom("run-42"), EpochMs: 1_700_000_000_000}
	first := vm.Run(context.Background(), plan, &mcptest.Host{}, vm.Options{RunID: "run-42", Limits: limits, Replay: replay})
	again := vm.Run(context.Background(), plan, &mcptest.Host{}, vm.Options{RunID: "run-42", Limits: limits, Replay: replay})
	fmt.Println(first.Status, string(first.Result) == string(again.Result))
	// Output: ok true
}
