package vm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/vm"
)

func TestModulesAndOpen(t *testing.T) {
	e := newEnv(t)
	p := e.compile("sub/main.js")
	for id := int64(1); id <= 2; id++ {
		_, err := p.NewVU(context.Background(), id)
		require.NoError(t, err)
	}
	want := []any{"parent:sub-data a>b>A function sub-data 3 42", "function"}
	// Top-level code runs once per VU.
	assert.Equal(t, append(append([]any{}, want...), want...), e.probe.recorded())
	assert.Equal(t, 2, e.probe.inits, "native module factory once per VU")
}

func TestScriptErrors(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string // first is the entry
		entry    string
		atNewVU  bool
		file     string
		line     int
		col      int
		contains string
	}{
		{
			name:  "syntax error in entry",
			entry: "main.js", files: map[string]string{"main.js": "export default function () {\n  let x = ;\n}\n"},
			file: "main.js", line: 2, col: 11, contains: "SyntaxError",
		},
		{
			name:  "syntax error in import",
			entry: "main.js", files: map[string]string{
				"main.js":  "import { f } from './lib/f.js';\nexport default function () { f(); }\n",
				"lib/f.js": "export function f() {\n\n  return (;\n}\n",
			},
			file: "lib/f.js", line: 3, col: 11, contains: "SyntaxError",
		},
		{
			name:  "unsupported k6 module",
			entry: "main.js", files: map[string]string{"main.js": "import { sleep } from 'k6';\nimport http from 'k6/http';\nexport default function () {}\n"},
			file: "main.js", line: 2, col: 1, contains: `module "k6/http" is not supported by tokenstorm`,
		},
		{
			name:  "remote module",
			entry: "main.js", files: map[string]string{"main.js": "import x from 'https://jslib.k6.io/x.js';\nexport default function () {}\n"},
			file: "main.js", line: 1, col: 1, contains: "remote module",
		},
		{
			name:  "bare module",
			entry: "main.js", files: map[string]string{"main.js": "\n\nexport { x } from 'lodash';\n"},
			file: "main.js", line: 3, col: 1, contains: `module "lodash" is not supported`,
		},
		{
			name:  "missing file",
			entry: "main.js", files: map[string]string{"main.js": "import x from './nope.js';\n"},
			file: "main.js", line: 1, col: 1, contains: "cannot read module",
		},
		{
			name:  "unknown named import from k6",
			entry: "main.js", files: map[string]string{"main.js": "import { chek } from 'k6';\nexport default function () {}\n"},
			atNewVU: true, file: "main.js", line: 1, contains: `does not provide an export named "chek"`,
		},
		{
			name:  "throw in init",
			entry: "main.js", files: map[string]string{"main.js": "const a = 1;\n    throw new Error('boom');\n"},
			atNewVU: true, file: "main.js", line: 2, col: 11, contains: "Error: boom",
		},
		{
			name:  "throw in imported init",
			entry: "main.js", files: map[string]string{
				"main.js": "import './lib.js';\n",
				"lib.js":  "function f() {\n  null.x;\n}\nf();\n",
			},
			atNewVU: true, file: "lib.js", line: 2, col: 8, contains: "TypeError",
		},
		{
			name:  "check in init",
			entry: "main.js", files: map[string]string{"main.js": "import { check } from 'k6';\ncheck(1, { a: true });\n"},
			atNewVU: true, file: "main.js", line: 2, contains: "not supported in the init context",
		},
		{
			name:  "open missing file",
			entry: "main.js", files: map[string]string{"main.js": "\nopen('./missing.txt');\n"},
			atNewVU: true, file: "main.js", line: 2, contains: "open()",
		},
		{
			name:  "top-level await rejection",
			entry: "main.js", files: map[string]string{"main.js": "await Promise.reject(new Error('tla'));\n"},
			atNewVU: true, file: "main.js", contains: "tla",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, src := range tt.files {
				writeIn(t, dir, name, src)
			}
			e := newEnv(t)
			p, err := vm.Compile(dir+"/"+tt.entry, e.cfg)
			if !tt.atNewVU {
				require.Error(t, err)
				assertScriptError(t, err, dir+"/"+tt.file, tt.line, tt.col, tt.contains)
				return
			}
			require.NoError(t, err)
			_, err = p.NewVU(context.Background(), 1)
			require.Error(t, err)
			assertScriptError(t, err, dir+"/"+tt.file, tt.line, tt.col, tt.contains)
		})
	}
}

func assertScriptError(t *testing.T, err error, file string, line, col int, contains string) {
	t.Helper()
	var se *vm.ScriptError
	require.True(t, errors.As(err, &se), "want *ScriptError, got %T: %v", err, err)
	assert.Contains(t, se.Error(), contains)
	if line > 0 {
		assert.Equal(t, file, se.File, se.Error())
		assert.Equal(t, line, se.Line, se.Error())
		if col > 0 {
			assert.Equal(t, col, se.Column, se.Error())
		}
		assert.Contains(t, se.Error(), file+":")
	}
}

func TestReExportsAndNamespaces(t *testing.T) {
	dir := t.TempDir()
	writeIn(t, dir, "lib.js", "export function double(x) { return 2 * x; }\nexport const k = 'K';\nexport default 'lib-default';\n")
	writeIn(t, dir, "mid.js", "export * from './lib.js';\nexport { double as twice, default as libDefault } from './lib.js';\nexport * as ns from './lib.js';\n")
	main := writeIn(t, dir, "main.js", `
		import * as mid from './mid.js';
		import { twice, libDefault, ns } from './mid.js';
		import * as probeNS from 'k6/x/probe';
		import probe from 'k6/x/probe';
		export { double } from './lib.js';
		export default function () {
			probe.record([mid.double(2), twice(3), mid.k, libDefault, ns.k, 'default' in mid, typeof probeNS.record, typeof probeNS.default.record].join(' '));
		}
	`)
	e := newEnv(t)
	p, err := vm.Compile(main, e.cfg)
	require.NoError(t, err)
	vu, err := p.NewVU(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"default", "double"}, vu.Exports())
	require.NoError(t, run(t, vu, "default", executor.Iteration{}))
	assert.Equal(t, []any{"4 6 K lib-default K false function function"}, e.probe.recorded())
}
