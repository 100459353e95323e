package xk6ext_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/mockllm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// TestInvalidArguments checks that every invalid argument throws a JS exception whose
// message names the offending option.
func TestInvalidArguments(t *testing.T) {
	cases := []struct {
		name, code, want string
	}{
		{"unknown client option", `new storm.Client({ url: U, urll: 'x' })`, `option "urll": unknown option`},
		{"bad duration", `new storm.Client({ url: U, timeout: 'soon' })`, `option "timeout": invalid duration`},
		{"negative duration", `new storm.Client({ url: U, idleTimeout: -5 })`, `option "idleTimeout": negative duration`},
		{"bad dialect", `new storm.Client({ url: U, dialect: 'grpc' })`, `option "dialect": unknown dialect`},
		{"bad url", `new storm.Client({ url: 'ftp://x' })`, `option "url"`},
		{"bad encoding", `new storm.Client({ url: U, encoding: 'nope' })`, `option "encoding"`},
		{"tags not strings", `new storm.Client({ url: U, tags: { a: {} } })`, `option "tags.a": must be a string`},
		{"slo typo", `new storm.Client({ url: U, slo: { ttfb: '1s' } })`, `option "slo.ttfb": unknown option`},
		{"options not object", `new storm.Client('http://x')`, `Client: must be an object`},
		{"messages not array", `C.chat({ messages: 'hi' })`, `option "messages": must be an array`},
		{"message content", `C.chat({ messages: [{ role: 'user' }] })`, `option "messages[0].content": must be a string`},
		{"no messages", `C.chat({ max_tokens: 3 })`, `option "messages": is required`},
		{"max_tokens negative", `C.chat({ prompt: 'x', max_tokens: -1 })`, `option "max_tokens": must be between`},
		{"max_tokens fraction", `C.chat({ prompt: 'x', max_tokens: 1.5 })`, `option "max_tokens": must be an integer`},
		{"complete without prompt", `C.complete({ max_tokens: 1 })`, `option "prompt": is required`},
		{"complete with messages", `C.complete({ prompt: 'x', messages: [] })`, `option "messages"`},
		{"call slo", `C.chat({ prompt: 'x', slo: { e2e: 'x' } })`, `option "slo.e2e": invalid duration`},
		{"no request", `C.chat()`, `chat: needs a request object`},
		{"chat on tgi", `new storm.Client({ url: U, dialect: 'tgi' }).chat({ prompt: 'x' })`, `dialect tgi has no chat endpoint`},
		{"complete on anthropic", `new storm.Client({ url: U, dialect: 'anthropic' }).complete({ prompt: 'x' })`, `dialect anthropic has no complete endpoint`},
		{"mock jitter", `storm.mock({ jitter: 2 })`, `option "jitter": must be in [0, 1)`},
		{"mock fault", `storm.mock({ faults: ['boom'] })`, `option "faults[0]": unknown fault`},
		{"mock typo", `storm.mock({ tft: '1ms' })`, `option "tft": unknown option`},
		{"dataset path", `storm.dataset(42)`, `option "path": must be a non-empty string`},
		{"dataset order", `storm.dataset('d.jsonl', { order: 'shuffled' })`, `option "order": must be`},
		{"dataset s without zipf", `storm.dataset('d.jsonl', { s: 2 })`, `option "s": only applies`},
		{"dataset seed without order", `storm.dataset('d.jsonl', { seed: 2 })`, `option "seed": only applies`},
		{"dataset missing file", `storm.dataset('missing.jsonl')`, `missing.jsonl`},
		{"lognormal median", `storm.lognormal({ sigma: 1 })`, `option "median": is required`},
		{"lognormal bounds", `storm.lognormal({ median: 10, min: 5, max: 2 })`, `max (2) is below min (5)`},
		{"uniform missing", `storm.uniform({ min: 1 })`, `min and max are required`},
		{"constant", `storm.constant(-1)`, `option "n": must be a non-negative integer`},
	}
	e := newEnv(t)
	e.startMock(t, mockllm.Config{})
	require.NoError(t, writeFile(e.dir, "d.jsonl", `{"prompt":"x"}`))
	src := "import storm from 'k6/x/tokenstorm';\nconst U = __ENV.MOCK_URL;\nconst C = new storm.Client({ url: U });\n"
	for i, c := range cases {
		src += "export function f" + itoa(i) + "() { " + c.code + "; }\n"
	}
	vu := e.vu(t, src)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := callErr(t, vu, "f"+itoa(i))
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestRequestInInitContext(t *testing.T) {
	e := newEnv(t)
	e.startMock(t, mockllm.Config{})
	prog := e.compile(t, `
import storm from 'k6/x/tokenstorm';
const c = new storm.Client({ url: __ENV.MOCK_URL });
c.chat({ prompt: 'x' });
export default function () {}
`)
	_, err := prog.NewVU(testCtx(t), 1)
	var se *vm.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Message, "init context")
	assert.Equal(t, 4, se.Line, "the exception points at the call")
	assert.Empty(t, e.sink.named("llm_reqs"), "nothing was sent")
}

// TestMetricConflict: when the host already has llm_ttft with another type, the module
// cannot declare its metrics. Instantiate reports it; a host that uses
// NewModuleInstance().Exports() sees it thrown by the first Client.
func TestMetricConflict(t *testing.T) {
	const script = `
import storm from 'k6/x/tokenstorm';
export function make() { new storm.Client(); }
`
	t.Run("Instantiate", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.sink.NewMetric("llm_ttft", xk6ext.Counter, xk6ext.Default)
		require.NoError(t, err)
		_, err = e.compile(t, script).NewVU(testCtx(t), 1)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "declaring metric llm_ttft")
	})
	t.Run("NewModuleInstance", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.sink.NewMetric("llm_ttft", xk6ext.Counter, xk6ext.Default)
		require.NoError(t, err)
		path := filepath.Join(e.dir, "main.js")
		require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
		prog, err := vm.Compile(path, vm.Config{
			Modules: map[string]vm.ModuleFactory{xk6ext.ImportPath: func(h xk6ext.Host) (vm.Exports, error) {
				return vm.Exports(e.root.NewModuleInstance(h).Exports()), nil
			}},
			Registry: e.sink,
		})
		require.NoError(t, err)
		vu, err := prog.NewVU(testCtx(t), 1)
		require.NoError(t, err)
		assert.Contains(t, callErr(t, vu, "make").Error(), "declaring metric llm_ttft")
	})
}
