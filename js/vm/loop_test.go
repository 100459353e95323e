package vm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/vm"
)

func TestEventLoop(t *testing.T) {
	tests := []struct {
		exec     string
		want     []any
		errorHas string
	}{
		{exec: "parallel", want: []any{"1,2,3"}},
		{exec: "thenChain", want: []any{"xy"}},
		{exec: "handledLater", want: []any{"caught handled"}},
		{exec: "timers", want: []any{"t0,t2 n=3"}},
		{exec: "asyncThrow", errorHas: "Error: async boom"},
		{exec: "unhandled", errorHas: "Uncaught (in promise) Error: nobody catches me"},
		{exec: "dynamicImport", errorHas: `dynamic import("./lib.js") is not supported by tokenstorm`},
		{exec: "default"},
	}
	for _, tt := range tests {
		t.Run(tt.exec, func(t *testing.T) {
			e := newEnv(t)
			vu := e.vu("async.js", 1)
			err := run(t, vu, tt.exec, executor.Iteration{})
			if tt.errorHas != "" {
				var se *vm.ScriptError
				require.ErrorAs(t, err, &se)
				assert.Contains(t, se.Error(), tt.errorHas)
				assert.Equal(t, vu.Program().Path(), se.File, "positioned in the script: %s", se.Error())
				assert.Positive(t, se.Line)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, e.probe.recorded())
			assert.Len(t, e.sink.named("iterations"), 1)
		})
	}
}

// A pending callback keeps the iteration alive until it is enqueued.
func TestPendingCallbackKeepsIterationAlive(t *testing.T) {
	e := newEnv(t)
	vu := e.vu("async.js", 1)
	done := make(chan error, 1)
	go func() { done <- run(t, vu, "awaitLater", executor.Iteration{}) }()
	<-e.probe.started // the request goroutine holds the slot
	select {
	case err := <-done:
		t.Fatalf("iteration ended with a callback pending: %v", err)
	default:
	}
	assert.Empty(t, e.sink.named("iterations"))
	close(e.probe.release)
	require.NoError(t, <-done)
	assert.Equal(t, []any{"late value"}, e.probe.recorded())
	assert.Len(t, e.sink.named("iterations"), 1)
}

// Cancelling the iteration while a slot is reserved ends it; a late enqueue is a safe
// no-op and the VU keeps working.
func TestCancelWithPendingCallback(t *testing.T) {
	e := newEnv(t)
	vu := e.vu("async.js", 1)
	ctx, cancel := context.WithCancel(context.Background())
	sc := scenario("sc")
	sc.Exec = "holdForever"
	done := make(chan error, 1)
	go func() { done <- vu.RunIteration(ctx, executor.Iteration{Scenario: sc}) }()
	enqueue := <-e.probe.late
	cancel()
	err := <-done
	require.ErrorIs(t, err, vm.ErrInterrupted)

	ran := false
	assert.NotPanics(t, func() { enqueue(func() error { ran = true; return nil }) })
	assert.NotPanics(t, func() { enqueue(func() error { ran = true; return nil }) }, "a second call is ignored")

	require.NoError(t, run(t, vu, "parallel", executor.Iteration{}))
	assert.False(t, ran, "a callback from an ended iteration never runs")
	assert.Equal(t, []any{"1,2,3"}, e.probe.recorded())
}

func TestAsyncSetupAndCall(t *testing.T) {
	path := writeScript(t, "s.js", `
		import probe from 'k6/x/probe';
		export async function setup() { const v = await probe.soon(41); return { v: v + 1, vu: __VU }; }
		export default function (data) { probe.record(data.v + ' ' + __VU); data.v++; }
		export function handleSummary(data) { return { stdout: 'n=' + data.n }; }
	`)
	e := newEnv(t)
	p, err := vm.Compile(path, e.cfg)
	require.NoError(t, err)
	vu, err := p.NewVU(context.Background(), 2)
	require.NoError(t, err)
	data, err := vu.CallJSON(context.Background(), "setup")
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":42,"vu":0}`, string(data))
	vu.SetSetupData(data)
	require.NoError(t, run(t, vu, "default", executor.Iteration{}))
	require.NoError(t, run(t, vu, "default", executor.Iteration{}))
	// Each VU parses the data once; mutations persist within the VU, as in k6.
	assert.Equal(t, []any{"42 2", "43 2"}, e.probe.recorded())

	out, err := vu.Call(context.Background(), "handleSummary", map[string]any{"n": 3})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"stdout": "n=3"}, out)

	_, err = vu.Call(context.Background(), "teardown")
	var se *vm.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Message, `"teardown" is not exported`)
}
