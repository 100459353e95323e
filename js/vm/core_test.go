package vm_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func run(t *testing.T, vu *vm.VU, exec string, it executor.Iteration) error {
	t.Helper()
	if it.Scenario == nil {
		it.Scenario = scenario("sc")
	}
	sc := *it.Scenario
	sc.Exec = exec
	it.Scenario = &sc
	return vu.RunIteration(context.Background(), it)
}

func tagsOf(samples []xk6ext.Sample) []map[string]string {
	out := make([]map[string]string, len(samples))
	for i, s := range samples {
		out[i] = s.Tags
	}
	return out
}

func TestCheckAndGroup(t *testing.T) {
	e := newEnv(t)
	vu := e.vu("k6core.js", 1)
	require.NoError(t, run(t, vu, "checks", executor.Iteration{}))
	assert.Equal(t, []any{false}, e.probe.recorded())

	checks := e.sink.named("checks")
	require.Len(t, checks, 4)
	type row struct {
		check, group string
		value        float64
	}
	var got []row
	for _, s := range checks {
		got = append(got, row{s.Tags["check"], s.Tags["group"], s.Value})
		assert.Equal(t, "sc", s.Tags["scenario"])
		assert.Equal(t, "r1", s.Tags["run"])
	}
	assert.Equal(t, []row{
		{"is five", "", 1}, {"is six", "", 0}, {"inside outer", "::outer", 1}, {"inside inner", "::outer::inner", 1},
	}, got)
	assert.Equal(t, "num", checks[0].Tags["kind"])
	assert.NotContains(t, checks[2].Tags, "kind")

	gd := e.sink.named("group_duration")
	require.Len(t, gd, 2)
	assert.Equal(t, "::outer::inner", gd[0].Tags["group"])
	assert.Equal(t, "::outer", gd[1].Tags["group"])
	assert.Equal(t, "::outer::inner", e.sink.named("custom_in_group")[0].Tags["group"])
	root := e.sink.named("custom_root")[0].Tags
	assert.Equal(t, map[string]string{"group": "mine", "x": "y", "scenario": "sc", "run": "r1"}, root, "sample tags win")

	it := e.sink.named("iterations")
	require.Len(t, it, 1)
	assert.Equal(t, "", it[0].Tags["group"], "group path is reset for the iteration samples")
	assert.Equal(t, xk6ext.Time, e.sink.named("iteration_duration")[0].Metric.ValueType)
}

func TestCustomMetrics(t *testing.T) {
	e := newEnv(t)
	vu := e.vu("k6core.js", 1)
	require.NoError(t, run(t, vu, "metrics", executor.Iteration{}))
	assert.Equal(t, []any{"my_reqs true"}, e.probe.recorded())

	c := e.sink.named("my_reqs")
	require.Len(t, c, 1)
	assert.Equal(t, 2.0, c[0].Value)
	assert.Equal(t, "/a", c[0].Tags["route"])
	assert.Equal(t, "sc", c[0].Tags["scenario"])
	assert.Equal(t, xk6ext.Counter, c[0].Metric.Type)
	assert.Equal(t, xk6ext.Time, e.sink.named("my_temp")[0].Metric.ValueType)
	rates := e.sink.named("my_ok")
	require.Len(t, rates, 2)
	assert.Equal(t, []float64{1, 0}, []float64{rates[0].Value, rates[1].Value})
	assert.Equal(t, xk6ext.Time, e.sink.named("my_lat")[0].Metric.ValueType)
	assert.Equal(t, xk6ext.Default, e.sink.named("my_plain")[0].Metric.ValueType)

	for _, fn := range []string{"lateMetric", "lateShared", "lateOpen"} {
		t.Run(fn, func(t *testing.T) {
			err := run(t, vu, fn, executor.Iteration{})
			var se *vm.ScriptError
			require.ErrorAs(t, err, &se)
			assert.Contains(t, se.Message, "init context")
		})
	}
}

func TestExecutionAndEnv(t *testing.T) {
	e := newEnv(t)
	p := e.compile("k6core.js")
	vu, err := p.NewVU(context.Background(), 7)
	require.NoError(t, err)
	e.probe.reset()
	sc := &executor.Scenario{Name: "chat", Executor: "constant-vus", Exec: "execInfo", Env: map[string]string{"SCENARIO_ONLY": "yes"}}
	require.NoError(t, vu.RunIteration(context.Background(), executor.Iteration{Scenario: sc, InScenario: 10, InVU: 3}))
	other := scenario("other")
	other.Exec = "execInfo"
	require.NoError(t, vu.RunIteration(context.Background(), executor.Iteration{Scenario: other, InScenario: 0, InVU: 0}))
	// __ITER is the VU's count across scenarios (k6 sets it from the counter behind
	// vu.iterationInInstance), not vu.iterationInScenario.
	assert.Equal(t, []any{
		"7,7,0,3,chat,constant-vus,10,number,7,0,hello,yes",
		"7,7,1,0,other,shared-iterations,0,number,7,1,hello,none",
	}, e.probe.recorded())
}

func TestVUTags(t *testing.T) {
	e := newEnv(t)
	vu := e.vu("k6core.js", 1)
	require.NoError(t, run(t, vu, "tagging", executor.Iteration{}))
	tagged := e.sink.named("tagged")
	require.Len(t, tagged, 2)
	assert.Equal(t, "gold", tagged[0].Tags["tier"])
	assert.Equal(t, "sample-wins", tagged[1].Tags["tier"])
	assert.Equal(t, "overridden", tagged[1].Tags["scenario"])
	assert.NotContains(t, e.sink.named("iterations")[0].Tags, "tier", "deleted before the iteration ended")
}

func TestSharedArray(t *testing.T) {
	e := newEnv(t)
	p := e.compile("k6core.js")
	vus := make([]*vm.VU, 3)
	// VUs are initialised in parallel, as the runner does; the function still runs once.
	errs := make([]error, len(vus))
	var wg sync.WaitGroup
	for i := range vus {
		wg.Go(func() { vus[i], errs[i] = p.NewVU(context.Background(), int64(i+1)) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, []any{"shared fn ran"}, e.probe.recorded(), "the function runs once per program")
	for _, vu := range vus {
		require.NoError(t, run(t, vu, "shared", executor.Iteration{}))
	}
	rec := e.probe.recorded()[1:]
	require.Len(t, rec, 12)
	assert.Equal(t, []any{"2 bob undefined true", "ann+bob 1+0", "frozen: TypeError", "read-only: TypeError"}, rec[:4])
	assert.Equal(t, rec[:4], rec[4:8])
}

func TestFailAndStacks(t *testing.T) {
	e := newEnv(t)
	vu := e.vu("k6core.js", 1)
	path := vu.Program().Path()

	err := run(t, vu, "failing", executor.Iteration{})
	var se *vm.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "Error: custom failure", se.Message)
	assert.Equal(t, path, se.File)
	assert.Equal(t, 89, se.Line)

	err = run(t, vu, "nested", executor.Iteration{})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "Error: deep", se.Message)
	assert.Equal(t, 97, se.Line)
	assert.Equal(t, 9, se.Column)
	assert.Contains(t, se.Stack, "at helper ("+path+":97:9)")
	assert.Contains(t, se.Stack, "at nested ("+path+":93:9)")
	// A failed iteration still counts as an iteration, as in k6.
	assert.Len(t, e.sink.named("iterations"), 2)
}

func TestCancellation(t *testing.T) {
	for _, fn := range []string{"cancelThenSleep", "spin"} {
		t.Run(fn, func(t *testing.T) {
			e := newEnv(t)
			vu := e.vu("k6core.js", 1)
			ctx, cancel := context.WithCancel(context.Background())
			e.probe.cancel = cancel
			sc := scenario("sc")
			sc.Exec = fn
			start := time.Now()
			err := vu.RunIteration(ctx, executor.Iteration{Scenario: sc})
			require.ErrorIs(t, err, vm.ErrInterrupted)
			require.ErrorIs(t, err, context.Canceled)
			assert.Less(t, time.Since(start), time.Minute, "sleep(3600) honours the context")
			assert.Empty(t, e.probe.recorded())
			assert.Empty(t, e.sink.named("iterations"), "interrupted iterations are not counted")

			// The VU is usable afterwards.
			require.NoError(t, run(t, vu, "default", executor.Iteration{}))
		})
	}
}

func TestAbort(t *testing.T) {
	e := newEnv(t)
	var reasons []string
	e.cfg.Abort = func(r string) { reasons = append(reasons, r) }
	vu := e.vu("k6core.js", 1)
	err := run(t, vu, "abort", executor.Iteration{})
	var ae *vm.AbortError
	require.True(t, errors.As(err, &ae), "%T %v", err, err)
	assert.Equal(t, "enough", ae.Reason)
	assert.Equal(t, []string{"enough"}, reasons)
	assert.Empty(t, e.probe.recorded(), "abort cannot be caught and stops the script")
	require.NoError(t, run(t, vu, "default", executor.Iteration{}))
}

func TestRandomSeed(t *testing.T) {
	e := newEnv(t)
	vu := e.vu("k6core.js", 1)
	require.NoError(t, run(t, vu, "seeded", executor.Iteration{}))
	assert.Equal(t, []any{true}, e.probe.recorded())
}

func TestConsole(t *testing.T) {
	e := newEnv(t)
	vu := e.vu("k6core.js", 1)
	require.NoError(t, run(t, vu, "logs", executor.Iteration{}))
	assert.Equal(t, []string{
		`INFO plain 1 {"a":1}`, "INFO info", "DEBUG dbg", "WARN warn", "ERROR Error: bad",
	}, e.logs.lines())
}

func TestExecInstance(t *testing.T) {
	path := writeScript(t, "i.js", `
		import exec from 'k6/execution';
		import probe from 'k6/x/probe';
		export default function () {
			probe.record([exec.instance.vusActive, exec.instance.vusInitialized, exec.instance.iterationsCompleted,
				exec.instance.iterationsInterrupted, exec.instance.currentTestRunDuration].join(','));
		}
	`)
	t.Run("with runner info", func(t *testing.T) {
		e := newEnv(t)
		e.cfg.Instance = func() vm.InstanceInfo {
			return vm.InstanceInfo{VUsActive: 2, VUsInitialized: 3, IterationsCompleted: 10, IterationsInterrupted: 1, CurrentTestRunDuration: 1500 * time.Millisecond}
		}
		vu := e.vu(path, 1)
		require.NoError(t, run(t, vu, "default", executor.Iteration{}))
		assert.Equal(t, []any{"2,3,10,1,1500"}, e.probe.recorded())
	})
	t.Run("without", func(t *testing.T) {
		e := newEnv(t)
		vu := e.vu(path, 1)
		err := run(t, vu, "default", executor.Iteration{})
		require.ErrorContains(t, err, "exec.instance.vusActive is not supported")
	})
}

func TestExecScenarioInfoAndOptions(t *testing.T) {
	path := writeScript(t, "x.js", `
		import exec from 'k6/execution';
		import probe from 'k6/x/probe';
		export const options = { vus: 3, tags: { team: 'a' } };
		let initErr = '';
		try { exec.scenario.name; } catch (e) { initErr = e.message; }
		probe.record(initErr);
		export default function () {
			probe.record([exec.scenario.startTime, exec.scenario.progress, exec.test.options.vus, exec.test.options.tags.team].join(','));
		}
	`)
	e := newEnv(t)
	start := time.UnixMilli(1_700_000_000_123)
	e.cfg.ScenarioInfo = func(name string) (time.Time, float64) {
		require.Equal(t, "sc", name)
		return start, 0.25
	}
	p, err := vm.Compile(path, e.cfg)
	require.NoError(t, err)
	vu, err := p.NewVU(context.Background(), 1)
	require.NoError(t, err)
	require.NoError(t, run(t, vu, "default", executor.Iteration{}))
	rec := e.probe.recorded()
	require.Len(t, rec, 2)
	assert.Contains(t, rec[0], "only available inside an iteration")
	assert.Equal(t, "1700000000123,0.25,3,a", rec[1])
}
