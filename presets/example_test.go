package presets_test

import (
	"errors"
	"fmt"

	"github.com/codecall-go/codecall/presets"
)

func ExampleParse() {
	yaml := []byte(`
preset: secure
vm:
  timeout: 10s         # the secure limits, with a longer timeout
  maxResultBytes: 1MiB
tools:
  "billing.*": { appId: billing, tags: [payments] }
`)
	env := []string{"CODECALL_SEARCH__TOPK=12", "CODECALL_EXCLUDE=billing.admin.*"}
	cfg, err := presets.Parse(yaml, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Preset, cfg.VM.Timeout, cfg.VM.MaxToolCalls, cfg.VM.MaxResultBytes)
	fmt.Println(cfg.Search.TopK, cfg.Exclude, cfg.Tools["billing.*"].AppID)
	fmt.Println(cfg.MetaToolName(presets.MetaSearch))
	// Output:
	// secure 10s 100 1048576
	// 12 [billing.admin.*] billing
	// codecall.search
}

func ExampleParse_errors() {
	yaml := []byte(`
preset: fast
vm:
  timout: 1s
  maxToolCalls: 0
`)
	_, err := presets.Parse(yaml, []string{"CODECALL_SEARCH__TOPK=many"})
	fmt.Println(err)

	var ve *presets.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(ve.Problems[0].Line, ve.Problems[0].Key)
	}
	// Output:
	// invalid configuration (4 problems):
	//   line 2: preset: unknown preset "fast"; allowed: locked_down, secure, balanced, experimental
	//   line 4: vm.timout: unknown key; allowed keys: timeout, maxToolCalls, maxTimers, maxConcurrency, allowLoops, allowConsole, regex, regexTimeout, maxLogBytes, maxResultBytes, memoryBytes, maxScriptBytes, maxScriptLines, maxNestingDepth, maxStackDepth, bannedIdentifiers, isolation, languages (did you mean "timeout"?)
	//   line 5: vm.maxToolCalls: must be at least 1, got 0
	//   env CODECALL_SEARCH__TOPK: search.topK: want an integer, got "many"
	// 2 preset
}
