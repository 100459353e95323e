package js_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tokenstorm/tokenstorm/js"
	"github.com/tokenstorm/tokenstorm/js/vm"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// syncBuffer is a goroutine-safe output; onWrite (optional) sees every write.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	onWrite func(p []byte)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onWrite != nil {
		s.onWrite(p)
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type result struct {
	rep            *js.Report
	err            error
	stdout, stderr *syncBuffer
}

func script(name string) string { return filepath.Join("testdata", name) }

func ptr[T any](v T) *T { return &v }

func run(t *testing.T, name string, opts js.Options) result {
	t.Helper()
	return runCtx(t, context.Background(), name, opts, &syncBuffer{})
}

func runCtx(t *testing.T, ctx context.Context, name string, opts js.Options, stderr *syncBuffer) result {
	t.Helper()
	out := &syncBuffer{}
	opts.Stdout, opts.Stderr = out, stderr
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // bound every run
	defer cancel()
	rep, err := js.Run(ctx, script(name), opts)
	require.NotNil(t, rep)
	return result{rep: rep, err: err, stdout: out, stderr: stderr}
}

func TestScriptErrors(t *testing.T) {
	cases := []struct {
		script string
		code   int
		// where is the file:line:col the error must name.
		where string
		msg   string
	}{
		{"syntax_error.js", js.ExitScriptException, "syntax_error.js:2:", "SyntaxError"},
		{"init_throw.js", js.ExitScriptException, "init_throw.js:3:", "boom in init"},
		{"setup_throw.js", js.ExitScriptException, "setup_throw.js:2:", "boom in setup"},
		// The module declares its metrics when imported, before any script code runs, so
		// a conflicting script declaration is the init error, with its position.
		{"metric_conflict.js", js.ExitScriptException, "ttft_counter.js:3:", `"llm_ttft": already declared as trend (time), redeclared as counter`},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			res := run(t, c.script, js.Options{})
			require.NoError(t, res.err)
			assert.Equal(t, c.code, res.rep.ExitCode)
			require.Error(t, res.rep.Err)
			assert.Contains(t, res.rep.Err.Error(), c.where)
			assert.Contains(t, res.rep.Err.Error(), c.msg)
			var se *vm.ScriptError
			assert.True(t, errors.As(res.rep.Err, &se), "want a *vm.ScriptError, got %T", res.rep.Err)
		})
	}
}

func TestInvalidOptions(t *testing.T) {
	cases := []struct {
		name  string
		opt   string
		field string
	}{
		{"negative vus", `{"vus": -1}`, "vus"},
		{"fractional iterations", `{"iterations": 1.5}`, "iterations"},
		{"bad duration", `{"duration": "forever"}`, "duration"},
		{"unsupported option", `{"rps": 10}`, "rps"},
		{"unsupported tls option", `{"tlsVersion": "tls1.2"}`, "tlsVersion"},
		{"noConnectionReuse not a bool", `{"noConnectionReuse": "yes"}`, "noConnectionReuse"},
		{"bad stage", `{"stages": [{"duration": "1s", "target": -2}]}`, "stages[0].target"},
		{"bad trend stat", `{"summaryTrendStats": ["avg", "p(101)"]}`, "summaryTrendStats"},
		{"bad time unit", `{"summaryTimeUnit": "years"}`, "summaryTimeUnit"},
		{"threshold on unknown metric", `{"thresholds": {"no_such_metric": ["count>0"]}}`, "thresholds.no_such_metric"},
		{"bad threshold expression", `{"thresholds": {"iterations": ["count >>> 1"]}}`, "thresholds.iterations"},
		{"unknown executor", `{"scenarios": {"s": {"executor": "warp-speed"}}}`, "scenarios.s"},
		{"zero rate", `{"scenarios": {"s": {"executor": "constant-arrival-rate", "rate": 0, "duration": "1s", "preAllocatedVUs": 1}}}`, "scenarios.s.rate"},
		{"tags not strings", `{"tags": {"a": 1}}`, "tags"},
		{"setupTimeout zero", `{"setupTimeout": "0s"}`, "setupTimeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, "bad_option.js", js.Options{Env: map[string]string{"OPT": c.opt}})
			require.NoError(t, res.err)
			assert.Equal(t, js.ExitInvalidConfig, res.rep.ExitCode)
			var oe *js.OptionError
			require.True(t, errors.As(res.rep.Err, &oe), "want *js.OptionError, got %T: %v", res.rep.Err, res.rep.Err)
			assert.True(t, strings.HasPrefix(oe.Field, c.field), "field %q should start with %q (%v)", oe.Field, c.field, oe)
			assert.Nil(t, res.rep.Summary, "no summary when the run never started")
		})
	}
	t.Run("harmless k6/http options are accepted", func(t *testing.T) {
		res := run(t, "bad_option.js", js.Options{Env: map[string]string{"OPT": `{"iterations": 1, "discardResponseBodies": true, "userAgent": "x", "noUsageReport": true}`}})
		require.NoError(t, res.err)
		assert.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
	})
	t.Run("module options are accepted", func(t *testing.T) {
		res := run(t, "mock_request.js", js.Options{Iterations: ptr[int64](2), Env: map[string]string{
			"OPTIONS": `{"noConnectionReuse": true, "insecureSkipTLSVerify": true}`,
		}})
		require.NoError(t, res.err)
		assert.Equal(t, js.ExitOK, res.rep.ExitCode, "%v\n%s", res.rep.Err, res.stderr)
		assert.Equal(t, 2.0, res.rep.Summary.Counter("llm_reqs"))
	})
	t.Run("missing exec function", func(t *testing.T) {
		res := run(t, "missing_exec.js", js.Options{})
		assert.Equal(t, js.ExitInvalidConfig, res.rep.ExitCode)
		var oe *js.OptionError
		require.ErrorAs(t, res.rep.Err, &oe)
		assert.Equal(t, "scenarios.s.exec", oe.Field)
	})
	t.Run("bad --summary-trend-stats", func(t *testing.T) {
		res := run(t, "thresholds_fail.js", js.Options{SummaryTrendStats: []string{"p(x)"}})
		assert.Equal(t, js.ExitInvalidConfig, res.rep.ExitCode)
	})
}

func TestLifecycle(t *testing.T) {
	res := run(t, "lifecycle.js", js.Options{Env: map[string]string{"WHO": "tester"}})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "err: %v\nstderr:\n%s", res.rep.Err, res.stderr)

	s := res.rep.Summary
	require.NotNil(t, s)
	assert.Equal(t, 6.0, s.Counter("iterations"))
	assert.Equal(t, 12.0, s.Counter("work_items"))
	passes, fails := s.Check("setup data arrived")
	assert.Equal(t, int64(6), passes)
	assert.Zero(t, fails)
	passes, fails = s.Check("env WHO is set")
	assert.Equal(t, int64(6), passes, "-e values reach __ENV")
	assert.Zero(t, fails)
	passes, fails = s.Check("scenario info")
	assert.Equal(t, int64(6), passes, "exec.scenario.progress and startTime answered from the executors")
	assert.Zero(t, fails)
	passes, fails = s.Check("instance info")
	assert.Equal(t, int64(6), passes, "exec.instance answered from the executors and the pool")
	assert.Zero(t, fails)

	// Groups nest as k6 paths, with the check inside the inner group.
	require.NotNil(t, s.RootGroup)
	require.Len(t, s.RootGroup.Groups, 1)
	outer := s.RootGroup.Groups[0]
	assert.Equal(t, "outer", outer.Name)
	require.Len(t, outer.Groups, 1)
	inner := outer.Groups[0]
	assert.Equal(t, "::outer::inner", inner.Path)
	require.Len(t, inner.Checks, 1)
	assert.Equal(t, "setup data arrived", inner.Checks[0].Name)

	// Every threshold, submetrics included, was evaluated and passed.
	require.Len(t, res.rep.Thresholds, 5)
	for _, th := range res.rep.Thresholds {
		assert.True(t, th.OK, "%s %s observed %v", th.Metric, th.Expr, th.Observed)
	}
	assert.Contains(t, s.Metrics, "work_items{kind:even}")

	assert.Contains(t, res.stderr.String(), "teardown saw 42 tester", "teardown gets setup's data")
	assert.Contains(t, res.stdout.String(), "work_items", "text summary on stdout")
	assert.Contains(t, res.stdout.String(), "✓", "threshold marks in the summary")
	assert.Greater(t, res.rep.Duration, time.Duration(0))
}

func TestThresholdsCrossed(t *testing.T) {
	res := run(t, "thresholds_fail.js", js.Options{})
	require.NoError(t, res.err)
	assert.Equal(t, js.ExitThresholds, res.rep.ExitCode)
	var te *js.ThresholdsError
	require.ErrorAs(t, res.rep.Err, &te)
	require.Len(t, te.Failed, 1)
	assert.Equal(t, "iterations", te.Failed[0].Metric)
	assert.False(t, te.Aborted)
	assert.Equal(t, 3.0, res.rep.Summary.Counter("iterations"), "the run completed")
	assert.Contains(t, res.stdout.String(), "✗")
}

func TestAbortOnFail(t *testing.T) {
	res := run(t, "abort_on_fail.js", js.Options{})
	require.NoError(t, res.err)
	assert.Equal(t, js.ExitThresholds, res.rep.ExitCode)
	var te *js.ThresholdsError
	require.ErrorAs(t, res.rep.Err, &te)
	assert.True(t, te.Aborted, "stopped by abortOnFail")
	// The first evaluation (2 s in) stops the 1-minute run; 30 s leaves room for a slow
	// machine while still proving the run did not go the distance.
	assert.Less(t, res.rep.Duration, 30*time.Second)
	assert.Greater(t, res.rep.Summary.Counter("iterations"), 0.0)
	assert.Contains(t, res.stderr.String(), "teardown after abort", "teardown runs after a threshold abort, as in k6")
}

func TestTestAbort(t *testing.T) {
	res := run(t, "abort.js", js.Options{})
	require.NoError(t, res.err)
	assert.Equal(t, js.ExitScriptAborted, res.rep.ExitCode)
	var ab *vm.AbortError
	require.ErrorAs(t, res.rep.Err, &ab)
	assert.Equal(t, "enough", ab.Reason)
	assert.Less(t, res.rep.Summary.Counter("iterations"), 100.0)
}

func TestHandleSummary(t *testing.T) {
	outFile := filepath.Join(t.TempDir(), "sub", "summary.json")
	binFile := filepath.Join(t.TempDir(), "bin.out")
	res := run(t, "handle_summary.js", js.Options{Env: map[string]string{"OUT_FILE": outFile, "BIN_FILE": binFile}, Quiet: true})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
	assert.Equal(t, "custom stdout: 2\n", res.stdout.String(), "handleSummary replaces the text summary")
	assert.Contains(t, res.stderr.String(), "custom stderr\n")

	bin, err := os.ReadFile(binFile)
	require.NoError(t, err)
	assert.Equal(t, "hi", string(bin))

	b, err := os.ReadFile(outFile)
	require.NoError(t, err)
	var data struct {
		Metrics map[string]struct {
			Type       string                       `json:"type"`
			Contains   string                       `json:"contains"`
			Values     map[string]float64           `json:"values"`
			Thresholds map[string]struct{ OK bool } `json:"thresholds"`
		} `json:"metrics"`
		RootGroup map[string]any `json:"root_group"`
		Options   map[string]any `json:"options"`
		State     map[string]any `json:"state"`
	}
	require.NoError(t, json.Unmarshal(b, &data))
	it := data.Metrics["iterations"]
	assert.Equal(t, "counter", it.Type)
	assert.Equal(t, 2.0, it.Values["count"])
	assert.True(t, it.Thresholds["count==2"].OK)
	assert.NotNil(t, data.RootGroup)
	assert.Contains(t, data.Options, "summaryTrendStats")
	assert.Contains(t, data.State, "testRunDurationMs")
}

func TestHandleSummaryThrows(t *testing.T) {
	res := run(t, "handle_summary_throw.js", js.Options{})
	require.NoError(t, res.err)
	assert.Equal(t, js.ExitOK, res.rep.ExitCode, "k6 logs a handleSummary error without changing the exit code")
	assert.Contains(t, res.stderr.String(), "broken summary")
	assert.Contains(t, res.stdout.String(), "iterations", "the default summary is printed instead")
}

func TestSummaryExport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "export.json")
	res := run(t, "lifecycle.js", js.Options{SummaryExport: out, Env: map[string]string{"WHO": "tester"}, NoSummary: true})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
	assert.Empty(t, res.stdout.String(), "NoSummary")

	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var exp struct {
		Metrics   map[string]map[string]any `json:"metrics"`
		RootGroup struct {
			Groups map[string]any `json:"groups"`
			Checks map[string]struct {
				Passes float64 `json:"passes"`
				Fails  float64 `json:"fails"`
			} `json:"checks"`
		} `json:"root_group"`
	}
	require.NoError(t, json.Unmarshal(b, &exp))
	assert.Equal(t, 6.0, exp.Metrics["iterations"]["count"])
	for _, k := range []string{"avg", "min", "med", "max", "p(90)", "p(95)"} {
		assert.Contains(t, exp.Metrics["iteration_duration"], k)
	}
	th, ok := exp.Metrics["work_items"]["thresholds"].(map[string]any)
	require.True(t, ok, "thresholds inside the metric: %v", exp.Metrics["work_items"])
	assert.Equal(t, false, th["count==12"], "export maps expression → failed")
	assert.Equal(t, 6.0, exp.RootGroup.Checks["env WHO is set"].Passes)
}

func TestCLIOverrides(t *testing.T) {
	cases := []struct {
		name       string
		opts       js.Options
		iterations float64 // exact, or -1 to only require at least one
		maxVUs     float64
	}{
		{"-i replaces the scenarios", js.Options{Iterations: ptr[int64](4)}, 4, 1},
		{"-u with -i", js.Options{Iterations: ptr[int64](5), VUs: ptr[int64](2)}, 5, 2},
		{"-d replaces the scenarios", js.Options{Duration: ptr(300 * time.Millisecond), VUs: ptr[int64](2)}, -1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, "overrides.js", c.opts)
			require.NoError(t, res.err)
			require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
			got := res.rep.Summary.Counter("iterations")
			if c.iterations >= 0 {
				assert.Equal(t, c.iterations, got)
			} else {
				assert.Greater(t, got, 0.0)
				assert.Less(t, res.rep.Duration, time.Minute, "the 10-minute scenario was replaced")
			}
			vm := res.rep.Summary.Metrics["vus_max"]
			require.NotNil(t, vm)
			assert.Equal(t, c.maxVUs, vm.Values["value"])
		})
	}
}

// TestCLIReplacesShortcuts: as k6 consolidates options, -d or -i replace every
// execution option of the script (duration, iterations, stages), only vus carries over.
func TestCLIReplacesShortcuts(t *testing.T) {
	cases := []struct {
		name   string
		opt    string
		cli    js.Options
		banner string
		iters  float64 // exact; 0 = at least one
	}{
		{"-i over stages", `{"stages": [{"duration": "10m", "target": 5}]}`, js.Options{Iterations: ptr[int64](3)},
			"3 iterations shared among 1 VUs", 3},
		{"-i over duration keeps vus", `{"vus": 2, "duration": "10m"}`, js.Options{Iterations: ptr[int64](4)},
			"4 iterations shared among 2 VUs", 4},
		{"-d over iterations", `{"vus": 2, "iterations": 100000}`, js.Options{Duration: ptr(200 * time.Millisecond)},
			"2 looping VUs for 200ms", 0},
		{"-u over vus", `{"vus": 5, "iterations": 3}`, js.Options{VUs: ptr[int64](1)},
			"3 iterations shared among 1 VUs", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cli.Env = map[string]string{"OPT": c.opt}
			res := run(t, "shortcuts.js", c.cli)
			require.NoError(t, res.err)
			require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
			assert.Contains(t, res.stdout.String(), c.banner)
			if c.iters > 0 {
				assert.Equal(t, c.iters, res.rep.Summary.Counter("iterations"))
			} else {
				assert.Greater(t, res.rep.Summary.Counter("iterations"), 0.0)
			}
		})
	}
}

func TestIterationException(t *testing.T) {
	res := run(t, "iteration_throw.js", js.Options{})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "an iteration error does not fail the run: %v", res.rep.Err)
	passes, fails := res.rep.Summary.Check("reached the end")
	assert.Equal(t, int64(4), passes, "the iterations after the failing one ran")
	assert.Zero(t, fails, "the failed iteration is not a failed check")
	log := res.stderr.String()
	assert.Contains(t, log, "iteration boom")
	assert.Contains(t, log, "iteration_throw.js:12:", "stack with the throw's position")
	assert.Contains(t, log, "explode", "stack names the function")
	assert.Contains(t, log, "source=stacktrace")
}

func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &syncBuffer{onWrite: func(p []byte) {
		if bytes.Contains(p, []byte("INTERRUPT-ME")) {
			cancel() // what the CLI's signal.NotifyContext does on Ctrl-C
		}
	}}
	out := filepath.Join(t.TempDir(), "export.json")
	res := runCtx(t, ctx, "interrupt.js", js.Options{SummaryExport: out}, stderr)
	require.NoError(t, res.err)
	assert.Equal(t, js.ExitExternalAbort, res.rep.ExitCode)
	var ie *js.InterruptError
	require.ErrorAs(t, res.rep.Err, &ie)
	assert.GreaterOrEqual(t, res.rep.Summary.Counter("iterations"), 2.0, "what ran before the interrupt is in the summary")
	assert.Less(t, res.rep.Duration, 50*time.Second, "stopped early")
	assert.Contains(t, stderr.String(), "teardown after interrupt", "teardown runs after Ctrl-C, as in k6")
	assert.Contains(t, res.stdout.String(), "checks", "summary printed")
	b, err := os.ReadFile(out)
	require.NoError(t, err, "summary exported after the interrupt")
	assert.Contains(t, string(b), `"iterations"`)
}

func TestScenariosWithExecEnvTags(t *testing.T) {
	res := run(t, "scenarios_exec.js", js.Options{})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v\n%s", res.rep.Err, res.stderr)
	for _, th := range res.rep.Thresholds {
		assert.True(t, th.OK, "%s %s observed %v", th.Metric, th.Expr, th.Observed)
	}
	assert.Equal(t, 10.0, res.rep.Summary.Counter("hits"))
}

func TestRelativeImports(t *testing.T) {
	res := run(t, "imports.js", js.Options{})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
	p, _ := res.rep.Summary.Check("imported helper works")
	assert.Equal(t, int64(1), p)
}

func TestMissingScript(t *testing.T) {
	res := run(t, "does_not_exist.js", js.Options{})
	assert.Equal(t, js.ExitScriptException, res.rep.ExitCode)
	assert.Contains(t, res.rep.Err.Error(), "does_not_exist.js")
}

func TestLifecycleOptions(t *testing.T) {
	cases := []struct {
		name  string
		code  int
		check func(t *testing.T, res result)
	}{
		{"noSetup", js.ExitOK, func(t *testing.T, res result) {
			p, f := res.rep.Summary.Check("no setup, no data")
			assert.Equal(t, int64(1), p)
			assert.Zero(t, f)
		}},
		{"setupTimeout", js.ExitSetupTimeout, func(t *testing.T, res result) {
			var te *js.TimeoutError
			require.ErrorAs(t, res.rep.Err, &te)
			assert.Equal(t, "setup", te.Stage)
			assert.Zero(t, res.rep.Summary.Counter("iterations"), "no iteration after a failed setup")
		}},
		{"teardownThrows", js.ExitScriptException, func(t *testing.T, res result) {
			assert.Contains(t, res.rep.Err.Error(), "teardown boom")
			assert.Equal(t, 1.0, res.rep.Summary.Counter("iterations"))
		}},
		{"minIteration", js.ExitOK, func(t *testing.T, res result) {
			// Three 100 ms minimum iterations on one VU cannot take less than 300 ms.
			assert.GreaterOrEqual(t, res.rep.Duration, 300*time.Millisecond)
		}},
		{"initThrowsInVU2", js.ExitScriptException, func(t *testing.T, res result) {
			assert.Contains(t, res.rep.Err.Error(), "VU 2 cannot start")
		}},
		{"setupData", js.ExitOK, func(t *testing.T, res result) {
			p, f := res.rep.Summary.Check("setup data is a JSON copy")
			assert.Equal(t, int64(1), p)
			assert.Zero(t, f)
		}},
		{"runTags", js.ExitOK, func(t *testing.T, res result) {
			require.Len(t, res.rep.Thresholds, 1)
			assert.True(t, res.rep.Thresholds[0].OK, "options.tags reach every sample: %+v", res.rep.Thresholds[0])
		}},
		{"scenariosAndDuration", js.ExitInvalidConfig, func(t *testing.T, res result) {
			var oe *js.OptionError
			require.ErrorAs(t, res.rep.Err, &oe)
			assert.Equal(t, "duration", oe.Field)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, "lifecycle_options.js", js.Options{Env: map[string]string{"CASE": c.name}})
			require.NoError(t, res.err)
			require.Equal(t, c.code, res.rep.ExitCode, "%v\n%s", res.rep.Err, res.stderr)
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}

func TestArrivalRateDropsAndLag(t *testing.T) {
	res := run(t, "arrival_drops.js", js.Options{})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v\n%s", res.rep.Err, res.stderr)
	s := res.rep.Summary
	started, dropped := s.Counter("iterations"), s.Counter("dropped_iterations")
	assert.Greater(t, dropped, 0.0)
	assert.Equal(t, 50.0, started+dropped, "every scheduled iteration either started or was dropped")
	lag := s.Trend(js.ScheduleLagMetric)
	require.NotNil(t, lag, "arrival-rate runs report their lag behind schedule")
	assert.Equal(t, int64(started), lag.Count(), "one lag sample per started iteration")
	for _, th := range res.rep.Thresholds { // the samples carry the scenario tag
		assert.True(t, th.OK, "%s %s observed %v", th.Metric, th.Expr, th.Observed)
	}
	assert.Len(t, res.rep.Thresholds, 2)
}

func TestProgressLine(t *testing.T) {
	res := run(t, "lifecycle.js", js.Options{Progress: true, Env: map[string]string{"WHO": "tester"}})
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
	// The final line is always drawn; the periodic ones depend on how long the run takes.
	assert.Contains(t, res.stderr.String(), "finished (")
	assert.Contains(t, res.stderr.String(), "6/6 complete and 0 interrupted iterations")

	quiet := run(t, "lifecycle.js", js.Options{Progress: true, Quiet: true, Env: map[string]string{"WHO": "tester"}})
	assert.NotContains(t, quiet.stderr.String(), "finished (", "-q wins over Progress")
}

func TestJslibTextSummary(t *testing.T) {
	res := run(t, "text_summary.js", js.Options{Quiet: true})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v\n%s", res.rep.Err, res.stderr)
	out := res.stdout.String()
	assert.True(t, strings.HasPrefix(out, "FROM HANDLESUMMARY\n"), "handleSummary's output, not the default summary")
	assert.Contains(t, out, "THRESHOLDS")
	assert.Contains(t, out, "✓ 'rate==1' rate=100.00%")
	assert.Contains(t, out, "'p(99)<60000' p(99)=", "observed value of a stat outside summaryTrendStats")
	assert.Contains(t, out, "✓ fine")
	assert.Contains(t, out, "iterations")
	assert.NotContains(t, out, "\x1b[", "enableColors: false")
}

// TestVUsGauge: the vus gauge shows the VUs that ran, as k6's summary does, not the 0
// left once the executors have returned them; vus_max shows the VUs initialised.
func TestVUsGauge(t *testing.T) {
	res := run(t, "shortcuts.js", js.Options{Env: map[string]string{"OPT": `{"vus": 4, "iterations": 40}`}})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
	for _, name := range []string{"vus", "vus_max"} {
		m := res.rep.Summary.Metrics[name]
		require.NotNil(t, m, name)
		assert.Equal(t, map[string]float64{"value": 4, "min": 4, "max": 4}, m.Values, name)
	}
	assert.Regexp(t, `vus\.+: 4 +min=4 +max=4`, res.stdout.String())
}

// TestCoreFeatures runs k6 core features through the runner (features.js): every check
// passes and every threshold, on custom Gauge/Rate metrics and per-scenario sub-metrics
// included, holds.
func TestCoreFeatures(t *testing.T) {
	t.Setenv("TS_FEATURES_PROCESS", "from-process")
	res := run(t, "features.js", js.Options{Env: map[string]string{"TS_FEATURES_FLAG": "from-flag"}})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v\n%s", res.rep.Err, res.stderr)
	require.Len(t, res.rep.Thresholds, 6)
	for _, th := range res.rep.Thresholds {
		assert.True(t, th.OK, "%s %s observed %v", th.Metric, th.Expr, th.Observed)
	}
	passes, fails := res.rep.Summary.Check("shared array")
	assert.Equal(t, int64(6), passes)
	assert.Zero(t, fails)
	log := res.stderr.String()
	assert.Equal(t, 6, strings.Count(log, "features vu="), "console.log reaches the log")
	assert.Equal(t, 2, strings.Count(log, " iter=2 "), "iterationInScenario per VU slot: 0, 1, 2")
	assert.InDelta(t, 4.0/6, res.rep.Summary.Metrics["even_iters"].Values["rate"], 1e-9)
}

// TestBuiltinMetricsWithRequests: a run that makes real requests (the embedded mock)
// has k6's built-in metrics next to the module's, with the bytes the client moved.
func TestBuiltinMetricsWithRequests(t *testing.T) {
	res := run(t, "mock_request.js", js.Options{Iterations: ptr[int64](3), VUs: ptr[int64](2)})
	require.NoError(t, res.err)
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v\n%s", res.rep.Err, res.stderr)
	s := res.rep.Summary
	assert.Equal(t, 3.0, s.Counter("iterations"))
	require.NotNil(t, s.Trend("iteration_duration"))
	assert.Equal(t, int64(3), s.Trend("iteration_duration").Count())
	assert.Equal(t, 3.0, s.Counter("llm_reqs"))
	assert.Greater(t, s.Counter("data_sent"), 3*100.0, "request bodies and headers")
	assert.Greater(t, s.Counter("data_received"), s.Counter("data_sent"), "streamed answers")
	assert.Equal(t, 2.0, s.Gauge("vus_max"))
	for _, name := range []string{"vus", "vus_max", "llm_ttft", "llm_itl", "llm_tpot", "llm_e2e", "llm_req_failed"} {
		assert.Contains(t, res.stdout.String(), name+"...", "text summary lists %s", name)
	}
}

// TestProgressLineTokens: the live line shows the current output tokens/s, the final one
// the tokens generated, on a run longer than one progress period.
func TestProgressLineTokens(t *testing.T) {
	res := run(t, "mock_request.js", js.Options{Progress: true, Duration: ptr(1300 * time.Millisecond)})
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
	log := res.stderr.String()
	assert.Regexp(t, `running \(0m01\.\ds/0m01\.3s\), 1/1 VUs, \d+ complete and 0 interrupted iterations, \d+ tok/s`, log)
	tokens := res.rep.Summary.Counter("llm_completion_tokens")
	require.Positive(t, tokens)
	assert.Contains(t, log, fmt.Sprintf(", %.0f tokens\n", tokens))
}

// TestIterAcrossScenarios: __ITER is the VU's iteration count across scenarios, as in
// k6, not the count within the scenario.
func TestIterAcrossScenarios(t *testing.T) {
	res := run(t, "iter_reuse.js", js.Options{})
	require.Equal(t, js.ExitOK, res.rep.ExitCode, "%v", res.rep.Err)
	assert.Equal(t, 1.0, res.rep.Summary.Gauge("vus_max"), "one VU runs both scenarios")
	for _, name := range []string{"__ITER is iterationInInstance", "iterationInScenario restarts"} {
		passes, fails := res.rep.Summary.Check(name)
		assert.Equal(t, int64(1), passes, name)
		assert.Zero(t, fails, name)
	}
}
