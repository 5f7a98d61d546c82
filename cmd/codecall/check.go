package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/staticcatalog"
)

func checkCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	configFile := fs.String("config", "", "CodeCall YAML config `file` to validate")
	catalogFile := fs.String("catalog", "", "static catalog `file` to validate")
	upstreamsFile := fs.String("upstreams", "", "upstream servers `file` ({\"mcpServers\": ...}) to validate")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *configFile == "" && *catalogFile == "" && *upstreamsFile == "" {
		return fmt.Errorf("check needs --config FILE, --catalog FILE and/or --upstreams FILE")
	}
	failed := false
	if *configFile != "" {
		cfg, err := presets.Load(*configFile)
		if err != nil {
			fmt.Fprintf(stdout, "%s: invalid\n%v\n", *configFile, err)
			failed = true
		} else {
			fmt.Fprintf(stdout, "%s: ok (mode %s, preset %s, timeout %s, %d tool calls per run)\n",
				*configFile, cfg.Mode, cfg.Preset, cfg.VM.Timeout, cfg.VM.MaxToolCalls)
			if cfg.Upstreams.File != "" {
				if _, err := gateway.ServersOf(cfg.Upstreams, filepath.Dir(*configFile)); err != nil {
					fmt.Fprintf(stdout, "%s: upstreams.file: invalid\n%v\n", *configFile, err)
					failed = true
				}
			}
		}
	}
	if *catalogFile != "" {
		tools, err := staticcatalog.Load(*catalogFile)
		if err != nil {
			fmt.Fprintf(stdout, "%s: invalid\n%v\n", *catalogFile, err)
			failed = true
		} else {
			fmt.Fprintf(stdout, "%s: ok (%d tools)\n", *catalogFile, len(tools))
		}
	}
	if *upstreamsFile != "" {
		servers, err := gateway.LoadServers(*upstreamsFile)
		if err != nil {
			fmt.Fprintf(stdout, "%s: invalid\n%v\n", *upstreamsFile, err)
			failed = true
		} else {
			fmt.Fprintf(stdout, "%s: ok (%d servers; commands and URLs are checked when serving)\n", *upstreamsFile, len(servers))
		}
	}
	if failed {
		return fmt.Errorf("check found problems")
	}
	return nil
}
