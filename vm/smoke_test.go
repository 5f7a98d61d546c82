package vm

import "testing"

func TestSmoke(t *testing.T) {
	for _, s := range []string{
		`return 1`,
		`const r = await callTool('a.b', {x: 1}); return r`,
		`return [1,2,3].map(x => x*2).join('-')`,
		`return 'ab'.repeat(3)`,
		`return /a(b)?/.exec('xab')`,
		`return 'aXbX'.replace(/X/g, '$&$&')`,
		`return JSON.stringify({a: [1, {b: 2}]}, null, 2)`,
		`return (function(){}).constructor('return 1')`,
		`throw new Error('boom')`,
		`console.log('hi', {a: 1}); return codecallContext`,
	} {
		res := runScript(t, nil, s)
		t.Logf("%s => %s", s, describe(res))
	}
}
