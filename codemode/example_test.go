package codemode_test

import (
	"fmt"
	"strings"

	"github.com/codecall-go/codecall/codemode"
)

func ExampleLink() {
	module := `import { list_repos as repos } from "@codemode/servers/github";
const all = await repos({ owner: "octo" });
export default all.length;`

	l, err := codemode.Link(module, modules{"@codemode/servers/github": {"__meta__", "list_repos"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Removed declarations leave spaces, trimmed here at the ends of lines.
	for _, line := range strings.Split(l.JavaScript, "\n") {
		fmt.Println(strings.TrimRight(line, " "))
	}
	fmt.Println(l.Imports)

	_, err = codemode.Link(`import { list_repo } from "@codemode/servers/github";`, modules{"@codemode/servers/github": {"__meta__", "list_repos"}})
	fmt.Println(err)
	// Output:
	// const {list_repos: repos} = __codemode_modules__[0];;
	// const all = await repos({ owner: "octo" });
	// ;0,            all.length;
	// [@codemode/servers/github]
	// "@codemode/servers/github" has no export named "list_repo"; its exports closest to it are list_repos, __meta__ (line 1, column 10); import one of its exports instead, such as list_repos
}

func ExampleExportNames() {
	names := codemode.ExportNames([]codemode.Tool{
		{Canonical: "files.list", Local: "files.list"},
		{Canonical: "files-list", Local: "files-list"},
		{Canonical: "delete", Local: "delete"},
		{Canonical: "2fa", Local: "2fa"},
		{Canonical: "meta", Local: "__meta__"},
	})
	for _, c := range []string{"files-list", "files.list", "delete", "2fa", "meta"} {
		fmt.Printf("%s -> %s\n", c, names[c])
	}
	// Output:
	// files-list -> files_list
	// files.list -> files_list__2
	// delete -> delete_
	// 2fa -> _2fa
	// meta -> __meta____2
}
