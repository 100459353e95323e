package vm_test

import (
	"context"
	"sync"
	"testing"

	"github.com/grafana/sobek"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// hostModule checks the host contract from the module's side.
func TestHostContract(t *testing.T) {
	type seen struct {
		inInit     bool
		metricErr  error
		state      xk6ext.State
		ctxErr     error
		sameRT     bool
		loggerNil  bool
		iterCtx    context.Context
		iterCtxErr error
	}
	var (
		mu   sync.Mutex
		log  []seen
		host xk6ext.Host
	)
	factory := func(h xk6ext.Host) (vm.Exports, error) {
		host = h
		rt := h.Runtime()
		m, err := h.NewMetric("host_metric", xk6ext.Trend, xk6ext.Time)
		require.NoError(t, err)
		again, err := h.NewMetric("host_metric", xk6ext.Trend, xk6ext.Time)
		require.NoError(t, err)
		require.Same(t, m, again, "NewMetric is idempotent")
		_, err = h.NewMetric("host_metric", xk6ext.Counter, xk6ext.Default)
		require.Error(t, err, "conflicting redeclaration")
		return vm.Exports{Named: map[string]any{
			"look": func(sobek.FunctionCall) sobek.Value {
				_, merr := h.NewMetric("late_metric", xk6ext.Counter, xk6ext.Default)
				mu.Lock()
				defer mu.Unlock()
				log = append(log, seen{
					inInit: h.InInit(), metricErr: merr, state: h.State(), ctxErr: h.Context().Err(),
					sameRT: h.Runtime() == rt, loggerNil: h.Logger() == nil,
					iterCtx: h.Context(),
				})
				return nil
			},
			"emitFrom": func() {
				// Emit is goroutine-safe: call it from another goroutine while JS runs.
				var wg sync.WaitGroup
				wg.Go(func() { h.Emit(xk6ext.Sample{Metric: m, Value: 1, Tags: map[string]string{"from": "goroutine"}}) })
				wg.Wait()
			},
		}}, nil
	}
	path := writeScript(t, "h.js", `
		import { look, emitFrom } from 'k6/x/host';
		look();
		export default function () { look(); emitFrom(); }
	`)
	s := &sink{}
	p, err := vm.Compile(path, vm.Config{Modules: map[string]vm.ModuleFactory{"k6/x/host": factory}, Emit: s.emit})
	require.NoError(t, err)
	vu, err := p.NewVU(context.Background(), 4)
	require.NoError(t, err)
	require.NoError(t, vu.RunIteration(context.Background(), executor.Iteration{Scenario: scenario("sc"), InVU: 2, InScenario: 9}))

	require.Len(t, log, 2)
	assert.True(t, log[0].inInit)
	assert.NoError(t, log[0].metricErr)
	assert.False(t, log[1].inInit)
	assert.ErrorIs(t, log[1].metricErr, vm.ErrInitOnly)
	assert.Equal(t, xk6ext.State{VUIDInTest: 4, Iteration: 2, Scenario: "sc", IterationInRun: 9}, log[1].state)
	assert.NoError(t, log[1].ctxErr)
	assert.Error(t, log[1].iterCtx.Err(), "the iteration's context is cancelled when it ends")
	assert.True(t, log[1].sameRT)
	assert.False(t, log[1].loggerNil, "a nil Config.Logger still gives modules a logger")

	got := s.named("host_metric")
	require.Len(t, got, 1)
	assert.Equal(t, map[string]string{"from": "goroutine", "scenario": "sc", "group": ""}, got[0].Tags)
	assert.False(t, got[0].Time.IsZero())
	assert.Same(t, vu, host)
}

// VUs of one Program run in parallel (the compiled modules are shared).
func TestParallelVUs(t *testing.T) {
	e := newEnv(t)
	p := e.compile("k6core.js")
	const vus, iters = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, vus*iters+vus)
	for id := int64(1); id <= vus; id++ {
		wg.Go(func() {
			vu, err := p.NewVU(context.Background(), id)
			if err != nil {
				errs <- err
				return
			}
			sc := scenario("par")
			sc.Exec = "checks"
			for i := int64(0); i < iters; i++ {
				if err := vu.RunIteration(context.Background(), executor.Iteration{Scenario: sc, InVU: i}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Len(t, e.sink.named("iterations"), vus*iters)
	assert.Len(t, e.sink.named("checks"), vus*iters*4)
}

func TestNativePanicFailsOnlyTheIteration(t *testing.T) {
	path := writeScript(t, "p.js", `
		import { boom } from 'k6/x/panic';
		export default function () { boom(); }
		export function fine() {}
	`)
	p, err := vm.Compile(path, vm.Config{Modules: map[string]vm.ModuleFactory{"k6/x/panic": func(xk6ext.Host) (vm.Exports, error) {
		return vm.Exports{Named: map[string]any{"boom": func() { panic("kaboom") }}}, nil
	}}})
	require.NoError(t, err)
	vu, err := p.NewVU(context.Background(), 1)
	require.NoError(t, err)
	err = vu.RunIteration(context.Background(), executor.Iteration{Scenario: scenario("x")})
	var pe *vm.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "kaboom", pe.Value)
	sc := scenario("x")
	sc.Exec = "fine"
	require.NoError(t, vu.RunIteration(context.Background(), executor.Iteration{Scenario: sc}))
}

func TestOptionsAndExportsEdgeCases(t *testing.T) {
	tests := []struct {
		name, src, options string
		exports            []string
	}{
		{"no options", "export default function () {}", "{}", []string{"default"}},
		{"options with functions dropped by JSON", "export const options = { a: 1, f() {} }; export function setup() {}",
			`{"a":1}`, []string{"setup"}},
		{"scenario exec fns", "export const options = { scenarios: { s: { executor: 'shared-iterations', exec: 'chat' } } };\nexport function chat() {}\nexport { chat as alias };\nexport let n = 1;",
			`{"scenarios":{"s":{"executor":"shared-iterations","exec":"chat"}}}`, []string{"alias", "chat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "o.js", tt.src)
			p, err := vm.Compile(path, vm.Config{})
			require.NoError(t, err)
			vu, err := p.NewVU(context.Background(), 1)
			require.NoError(t, err)
			opts, err := vu.Options()
			require.NoError(t, err)
			assert.JSONEq(t, tt.options, string(opts))
			assert.Equal(t, tt.exports, vu.Exports())
		})
	}
}
