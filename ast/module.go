package ast

// ModuleLinker links a Code Mode module (an ES module, with import and
// export declarations and top-level await) into the body of an async
// function, which Validate's rules can check and goja can run. Package
// codemode provides the one CodeCall uses; package ast does not import it,
// so that a sandbox worker, which is sent the linked body, links no module
// parser.
//
// ValidateModule calls LinkModule only after it has bounded the script as
// Validate does before parsing (size, lines, nesting), so a linker may
// parse it with a recursive parser. An error LinkModule returns is
// returned by ValidateModule unchanged.
type ModuleLinker interface {
	LinkModule(script string) (*Stripped, error)
}

// ValidateModule validates a Code Mode module: link turns it into the body
// of an async function, and that JavaScript goes through every check of
// Validate, under r with CodeMode set, and is compiled. As for a
// TypeScript plan, the byte and line limits apply to the module as sent,
// the character rules look at the module as sent too, and every location
// reported, in errors and by the Checked, is in the module as sent.
//
// Errors are those of Validate, or link's own.
func ValidateModule(script string, r Rules, link ModuleLinker) (c *Checked, err error) {
	defer recoverValidation(&c, &err)
	if err := precheck(script, r); err != nil {
		return nil, err
	}
	r.CodeMode = true
	v := &validation{script: script, rules: r, lines: newLineIndex(script)}
	if err := v.bound(); err != nil {
		return nil, err
	}
	linked, err := link.LinkModule(script)
	if err != nil {
		return nil, err
	}
	c, err = v.validateStripped(linked)
	if c != nil {
		c.module = true
	}
	return c, err
}
