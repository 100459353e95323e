package js

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/metrics"
	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// Exit codes of a run, k6's (k6 documents them in its errext/exitcodes package).
const (
	ExitOK              = 0
	ExitThresholds      = 99  // a threshold was crossed (also after abortOnFail)
	ExitSetupTimeout    = 100 // setup() ran past setupTimeout
	ExitTeardownTimeout = 101 // teardown() ran past teardownTimeout
	ExitInvalidConfig   = 104 // invalid or unsupported options
	ExitExternalAbort   = 105 // interrupted (Ctrl-C, SIGTERM: the ctx given to Run was cancelled)
	ExitScriptException = 107 // syntax error, exception in init, setup() or teardown()
	ExitScriptAborted   = 108 // the script called exec.test.abort()
)

// Options are the command-line level settings of a run. They take precedence over the
// script's options the way k6's flags do: -d, -i or -s given here replace the script's
// duration, iterations, stages and scenarios; -u replaces its vus.
type Options struct {
	VUs        *int64
	Duration   *time.Duration
	Iterations *int64
	// Stages are -s/--stage values: like -d and -i, they replace the script's duration,
	// iterations, stages and scenarios.
	Stages []executor.Stage
	// Env holds -e KEY=VALUE values, layered over the process environment (k6's default,
	// --include-system-env-vars): __ENV sees both.
	Env map[string]string

	SummaryExport     string   // --summary-export: k6's flat JSON export to this file
	SummaryTrendStats []string // --summary-trend-stats; replaces options.summaryTrendStats
	SummaryTimeUnit   string   // --summary-time-unit ("s", "ms", "us"); replaces options.summaryTimeUnit
	NoColor           bool     // --no-color
	Quiet             bool     // -q: no progress line

	Stdout, Stderr io.Writer // default os.Stdout, os.Stderr

	// Progress draws a live progress line on Stderr (the CLI sets it when stderr is a
	// terminal and Quiet is false).
	Progress bool
	// NoSummary suppresses the default end-of-test text summary (handleSummary and
	// SummaryExport still run).
	NoSummary bool
}

// Report is the outcome of a run.
type Report struct {
	// ExitCode is k6's exit code for the outcome (the Exit* constants).
	ExitCode int
	// Err is why ExitCode is not 0: a *vm.ScriptError, an *OptionError, a
	// *ThresholdsError, an *InterruptError or a *vm.AbortError.
	Err error
	// Summary is everything measured (also after Ctrl-C or an abort); nil when the run
	// never started (invalid options, init error).
	Summary *metrics.Summary
	// Thresholds are the final evaluations of every threshold.
	Thresholds []metrics.ThresholdResult
	// Duration is the test's duration, setup() to the end of teardown().
	Duration time.Duration
}

// ThresholdsError says thresholds were crossed (exit code 99).
type ThresholdsError struct {
	Failed  []metrics.ThresholdResult
	Aborted bool // the run was stopped early by abortOnFail
}

func (e *ThresholdsError) Error() string {
	names := make([]string, 0, len(e.Failed))
	for _, t := range e.Failed {
		names = append(names, fmt.Sprintf("%s %s", t.Metric, t.Expr))
	}
	s := "thresholds on metrics crossed: " + strings.Join(names, ", ")
	if e.Aborted {
		s = "test run aborted: " + s
	}
	return s
}

// InterruptError says the run was interrupted from outside (exit code 105).
type InterruptError struct{ Cause error }

func (e *InterruptError) Error() string {
	return "test run was interrupted: " + e.Cause.Error()
}

func (e *InterruptError) Unwrap() error { return e.Cause }

// TimeoutError says setup() or teardown() ran past its timeout (exit 100 or 101).
type TimeoutError struct {
	Stage   string // "setup" or "teardown"
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s() execution timed out after %s", e.Stage, e.Timeout)
}

// Run runs the k6-style script at path with k6's lifecycle: init, setup(), the
// scenarios, teardown(), handleSummary() or the text summary, --summary-export. It blocks
// until all of that is done; cancelling ctx stops the scenarios (exit code 105) and the
// rest still happens, so the summary holds everything measured so far.
//
// The outcome, failures of the script included, is in the Report; the error is non-nil
// only for a problem its exit code cannot express (an output file that could not be
// written), and then the Report is still valid.
func Run(ctx context.Context, path string, opts Options) (*Report, error) {
	r := newRunner(path, opts)
	r.build = r.compile
	defer r.close()
	return r.run(ctx)
}

// builtinMetrics are k6's built-in metrics the runner itself declares, so thresholds on
// them parse even when nothing emitted them yet.
var builtinMetrics = []struct {
	name string
	typ  xk6ext.MetricType
	vt   xk6ext.ValueType
}{
	{"checks", xk6ext.Rate, xk6ext.Default},
	{"data_received", xk6ext.Counter, xk6ext.Data},
	{"data_sent", xk6ext.Counter, xk6ext.Data},
	{"dropped_iterations", xk6ext.Counter, xk6ext.Default},
	{"group_duration", xk6ext.Trend, xk6ext.Time},
	{"iteration_duration", xk6ext.Trend, xk6ext.Time},
	{"iterations", xk6ext.Counter, xk6ext.Default},
	{"vus", xk6ext.Gauge, xk6ext.Default},
	{"vus_max", xk6ext.Gauge, xk6ext.Default},
}

// ScheduleLagMetric is the trend (time) of how late arrival-rate iterations started
// behind their schedule: the runner reporting its own accuracy, as fortio does. It is
// declared only when a run has an arrival-rate scenario.
const ScheduleLagMetric = "schedule_lag"

type runner struct {
	path string
	opts Options
	// build makes the Program with the run-level tags: the script compiled, or a Go
	// program (RunProgram).
	build func(tags map[string]string) (Program, error)
	// closers are the Go programs to close when the run ends.
	closers []interface{ Close() error }
	term    *terminal
	log     *slog.Logger

	reg    *metrics.Registry
	engine atomic.Pointer[metrics.Engine]
	// pending holds samples emitted before the engine exists (init-time emits).
	pendingMu sync.Mutex
	pending   []xk6ext.Sample

	root *xk6ext.RootModule
	// observed feeds jslib's textSummary the thresholds' observed values.
	observed thresholdObservations

	// vuCtx is the VUs' lifetime, cancelled by close: detached from the caller's ctx so
	// teardown() and handleSummary() run after an interrupt.
	vuCtx    context.Context
	vuCancel context.CancelFunc

	// stop ends the scenarios early; the first reason wins.
	stopMu     sync.Mutex
	stopReason error
	stopRun    context.CancelCauseFunc
	execRun    *executor.Run
	pool       *vuPool
}

func newRunner(path string, opts Options) *runner {
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Quiet {
		opts.Progress = false
	}
	term := &terminal{w: opts.Stderr, start: time.Now()}
	vuCtx, vuCancel := context.WithCancel(context.Background())
	return &runner{
		path:     path,
		opts:     opts,
		term:     term,
		log:      slog.New(newLogHandler(term, slog.LevelInfo)),
		reg:      metrics.NewRegistry(),
		root:     xk6ext.NewRootModule(),
		vuCtx:    vuCtx,
		vuCancel: vuCancel,
	}
}

// track remembers p to close it when the run ends, if it can be closed.
func (r *runner) track(p Program) {
	if c, ok := p.(interface{ Close() error }); ok {
		r.closers = append(r.closers, c)
	}
}

func (r *runner) close() {
	r.vuCancel()
	for _, c := range r.closers {
		if err := c.Close(); err != nil {
			r.log.Warn("closing the program: " + err.Error())
		}
	}
	if err := r.root.Close(); err != nil {
		r.log.Warn("closing the tokenstorm module: " + err.Error())
	}
}

// emit is the VUs' sample sink. It forwards to the engine; samples emitted before the
// engine exists (it needs the thresholds, which need the init context) wait in pending.
func (r *runner) emit(samples []xk6ext.Sample) {
	if e := r.engine.Load(); e != nil {
		e.Ingest(samples)
		return
	}
	r.pendingMu.Lock()
	defer r.pendingMu.Unlock()
	if e := r.engine.Load(); e != nil {
		e.Ingest(samples)
		return
	}
	for _, s := range samples {
		s.Tags = cloneTags(s.Tags)
		r.pending = append(r.pending, s)
	}
}

func (r *runner) setEngine(e *metrics.Engine) {
	r.pendingMu.Lock()
	defer r.pendingMu.Unlock()
	if len(r.pending) > 0 {
		e.Ingest(r.pending)
		r.pending = nil
	}
	r.engine.Store(e)
}

func cloneTags(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// stop asks the scenarios to end now with reason; only the first reason is kept.
func (r *runner) stop(reason error) {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if r.stopReason != nil {
		return
	}
	r.stopReason = reason
	if r.stopRun != nil {
		r.stopRun(reason)
	}
	if r.execRun != nil {
		r.execRun.Abort()
	}
}

// stopped returns why the run was stopped early, nil if it was not.
func (r *runner) stopped() error {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	return r.stopReason
}

func (r *runner) env() map[string]string {
	env := make(map[string]string)
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	for k, v := range r.opts.Env {
		env[k] = v
	}
	return env
}

func (r *runner) compile(tags map[string]string) (Program, error) {
	modules := map[string]vm.ModuleFactory{
		// Instantiate reports a failure to declare the module's metrics as an init error.
		xk6ext.ImportPath: func(h xk6ext.Host) (vm.Exports, error) {
			ex, err := r.root.Instantiate(h)
			return vm.Exports(ex), err
		},
	}
	for _, v := range jslibSummaryVersions {
		modules[jslibSummarySpecifier(v)] = textSummaryModule(&r.observed)
	}
	cfg := vm.Config{
		Env:      r.env(),
		Modules:  modules,
		Registry: r.reg,
		Emit:     r.emit,
		Logger:   r.log,
		Tags:     tags,
		Abort: func(reason string) {
			r.stop(&vm.AbortError{Reason: reason})
		},
		ScenarioInfo: r.scenarioInfo,
		Instance:     r.instanceInfo,
	}
	p, err := vm.Compile(r.path, cfg)
	if err != nil {
		return nil, err
	}
	return scriptProgram{p}, nil
}

// scenarioInfo answers exec.scenario.startTime and .progress from the executors.
func (r *runner) scenarioInfo(name string) (time.Time, float64) {
	r.stopMu.Lock()
	er := r.execRun
	r.stopMu.Unlock()
	now := time.Now()
	if er == nil {
		return now, 0
	}
	for _, s := range er.Progress().Scenarios {
		if s.Name != name {
			continue
		}
		var p float64
		switch {
		case s.Iterations > 0:
			p = float64(s.Completed) / float64(s.Iterations)
		case s.Duration > 0:
			p = float64(s.Elapsed) / float64(s.Duration)
		}
		return now.Add(-s.Elapsed), min(max(p, 0), 1)
	}
	return now, 0
}

// moduleOptions are the k6 options the tokenstorm module applies run-wide.
func moduleOptions(so *scriptOptions) []xk6ext.Option {
	var o []xk6ext.Option
	if so.NoConnectionReuse {
		o = append(o, xk6ext.WithNoConnectionReuse())
	}
	if so.InsecureTLS {
		o = append(o, xk6ext.WithInsecureSkipTLSVerify())
	}
	return o
}

// instanceInfo answers exec.instance.* from the executors and the pool.
func (r *runner) instanceInfo() vm.InstanceInfo {
	r.stopMu.Lock()
	er, pool := r.execRun, r.pool
	r.stopMu.Unlock()
	var info vm.InstanceInfo
	if pool != nil {
		info.VUsInitialized = pool.initialised()
	}
	if er != nil {
		p := er.Progress()
		info.VUsActive = p.ActiveVUs
		info.CurrentTestRunDuration = p.Elapsed
		for _, s := range p.Scenarios {
			info.IterationsCompleted += s.Completed
			info.IterationsInterrupted += s.Interrupted
		}
	}
	return info
}

// fail builds the Report of a run that stopped before its scenarios.
func fail(code int, err error) *Report { return &Report{ExitCode: code, Err: err} }

func scriptFailure(err error) *Report {
	var ab *vm.AbortError
	if errors.As(err, &ab) {
		return fail(ExitScriptAborted, ab)
	}
	if errors.Is(err, context.Canceled) {
		return fail(ExitExternalAbort, &InterruptError{Cause: err})
	}
	return fail(ExitScriptException, err)
}

func (r *runner) run(ctx context.Context) (*Report, error) {
	for _, m := range builtinMetrics {
		if _, err := r.reg.NewMetric(m.name, m.typ, m.vt); err != nil {
			return nil, fmt.Errorf("js: declaring built-in metric %s: %w", m.name, err)
		}
	}

	// Init context once to read the options, as k6 does; custom metrics get declared
	// here, before the thresholds that name them are parsed.
	prog, err := r.build(nil)
	if err != nil {
		return scriptFailure(err), nil
	}
	vu0, err := prog.NewVU(r.vuCtx, 0)
	if err != nil {
		return scriptFailure(err), nil
	}
	rawOpts, err := vu0.Options()
	if err != nil {
		return scriptFailure(err), nil
	}
	so, err := parseOptions(rawOpts)
	if err != nil {
		return fail(ExitInvalidConfig, err), nil
	}
	if err := validateTrendStats(r.opts.SummaryTrendStats); err != nil {
		return fail(ExitInvalidConfig, &OptionError{Field: "summaryTrendStats", Reason: err.Error()}), nil
	}
	if err := checkTimeUnit(r.opts.SummaryTimeUnit); err != nil {
		return fail(ExitInvalidConfig, &OptionError{Field: "summaryTimeUnit", Reason: err.Error()}), nil
	}
	if r.opts.SummaryTimeUnit != "" {
		so.SummaryTimeUnit = r.opts.SummaryTimeUnit
	}
	for _, name := range so.Ignored {
		r.log.Debug("option has no effect in tokenstorm", slog.String("option", name))
	}
	if rootOpts := moduleOptions(so); len(so.Tags) > 0 || len(rootOpts) > 0 {
		// Run-level tags and the module's run-wide settings are part of every VU's
		// configuration, and they are only known now: start again with them (cheap next
		// to running the test). VU 0's module state (a mock it started) goes with the old
		// root module.
		if len(rootOpts) > 0 {
			old := r.root
			r.root = xk6ext.NewRootModule(rootOpts...)
			if err := old.Close(); err != nil {
				r.log.Warn("closing the tokenstorm module: " + err.Error())
			}
		}
		if prog, err = r.build(so.Tags); err != nil {
			return scriptFailure(err), nil
		}
		if vu0, err = prog.NewVU(r.vuCtx, 0); err != nil {
			return scriptFailure(err), nil
		}
	}

	scenarios, err := r.scenarios(so)
	if err != nil {
		return fail(ExitInvalidConfig, err), nil
	}
	exports := vu0.Exports()
	for i := range scenarios {
		if !slices.Contains(exports, scenarios[i].Exec) {
			field := "scenarios." + scenarios[i].Name + ".exec"
			reason := fmt.Sprintf("function %q is not exported by the script", scenarios[i].Exec)
			if scenarios[i].Exec == executor.DefaultExec {
				field, reason = "default", "the script exports no default function and no scenario names another exec function"
			}
			return fail(ExitInvalidConfig, &OptionError{Field: field, Reason: reason}), nil
		}
	}
	var lag *xk6ext.Metric
	for i := range scenarios {
		if ex := scenarios[i].Executor; ex == executor.ConstantArrivalRate || ex == executor.RampingArrivalRate {
			if lag, err = r.reg.NewMetric(ScheduleLagMetric, xk6ext.Trend, xk6ext.Time); err != nil {
				return nil, fmt.Errorf("js: declaring %s: %w", ScheduleLagMetric, err)
			}
			break
		}
	}

	th, err := metrics.ParseThresholds(so.Thresholds, r.reg)
	if err != nil {
		oe := &OptionError{Field: "thresholds", Reason: err.Error(), Err: err}
		var te *metrics.ThresholdError
		if errors.As(err, &te) {
			oe.Field = "thresholds." + te.Metric
		}
		return fail(ExitInvalidConfig, oe), nil
	}
	engine := metrics.NewEngine(r.reg, th)
	r.setEngine(engine)

	pool := newVUPool(r.vuCtx, 0, prog.NewVU)
	r.stopMu.Lock()
	r.pool = pool
	r.stopMu.Unlock()
	pool.logger = r.log
	pool.minIter = so.MinIterDuration
	hooks := r.hooks(lag)
	execRun, err := executor.NewRun(scenarios, pool, hooks)
	if err != nil {
		return fail(ExitInvalidConfig, optionErrorFrom(err)), nil
	}
	pool.max = execRun.MaxVUs()
	var initErr atomic.Pointer[error]
	pool.onInitError = func(err error) {
		if initErr.CompareAndSwap(nil, &err) {
			r.stop(err)
		}
	}
	pool.onAbort = func(ab *vm.AbortError) { r.stop(ab) }

	if !r.opts.Quiet && !r.opts.NoSummary {
		writeBanner(r.opts.Stdout, r.path, scenarios, pool.max)
	}
	if (so.VUs != nil || r.opts.VUs != nil) && len(so.Scenarios) > 0 && r.opts.Duration == nil && r.opts.Iterations == nil && len(r.opts.Stages) == 0 {
		r.log.Warn("vus is ignored when options.scenarios is set (as in k6): set vus per scenario, or give -d or -i to replace the scenarios")
	}

	// Pre-initialise the planned VUs, so init cost stays out of the measured run.
	if err := pool.initN(ctx, execRun.PlannedVUs()); err != nil {
		return scriptFailure(err), nil
	}

	sumOpts := r.summaryOptions(so)
	start := time.Now()
	engine.SetStart(start)
	r.emitVUsMax(engine, pool.initialised())

	rep := &Report{}
	setupData, setupOK := r.setup(ctx, vu0, so, rep)
	if setupOK {
		pool.setSetupData(setupData)
		r.runScenarios(ctx, execRun, engine, pool)
		if err := initErr.Load(); err != nil {
			r.setOutcome(rep, ExitScriptException, *err)
		}
		r.setStopOutcome(rep, ctx)
		r.teardown(vu0, so, setupData, rep)
	}
	r.emitVUsMax(engine, pool.initialised())
	engine.SetEnd(time.Now())

	results, _ := engine.EvaluateThresholds(true)
	rep.Thresholds = results
	var failed []metrics.ThresholdResult
	for _, t := range results {
		if !t.OK {
			failed = append(failed, t)
		}
	}
	abortErr, aborted := r.stopped().(*ThresholdsError)
	switch {
	case len(failed) > 0:
		r.setOutcome(rep, ExitThresholds, &ThresholdsError{Failed: failed, Aborted: aborted})
	case aborted:
		// The threshold that stopped the run passes on the final data (it recovered
		// during gracefulStop or teardown): the run was still cut short by it, and k6
		// exits 99 for that.
		r.setOutcome(rep, ExitThresholds, abortErr)
	}
	rep.Summary = engine.Snapshot()
	rep.Summary.Thresholds = results
	rep.Duration = engine.Elapsed()

	outErr := r.summarise(vu0, rep, sumOpts)
	return rep, outErr
}

// setOutcome records code and err unless an earlier outcome is already recorded: the
// first thing that went wrong explains the run (an interrupt wins over the thresholds it
// caused to miss, as in k6).
func (r *runner) setOutcome(rep *Report, code int, err error) {
	if rep.ExitCode == ExitOK {
		rep.ExitCode, rep.Err = code, err
	}
}

func (r *runner) setStopOutcome(rep *Report, ctx context.Context) {
	switch reason := r.stopped().(type) {
	case *vm.AbortError:
		r.setOutcome(rep, ExitScriptAborted, reason)
		return
	case *ThresholdsError:
		return // exit code 99 is set from the final evaluation
	}
	if ctx.Err() != nil {
		r.setOutcome(rep, ExitExternalAbort, &InterruptError{Cause: context.Cause(ctx)})
	}
}

func optionErrorFrom(err error) error {
	var oe *OptionError
	if errors.As(err, &oe) {
		return oe
	}
	var eo *executor.OptionError
	if errors.As(err, &eo) {
		return &OptionError{Field: eo.Field, Reason: eo.Reason, Err: err}
	}
	return &OptionError{Reason: err.Error(), Err: err}
}

// scenarios resolves the scenarios from the script's options and the CLI overrides, as
// k6 consolidates them.
func (r *runner) scenarios(so *scriptOptions) ([]executor.Scenario, error) {
	var scriptScenarios []executor.Scenario
	if len(so.Scenarios) > 0 {
		sc, err := executor.ParseScenarios(so.Scenarios)
		if err != nil {
			oe := optionErrorFrom(err).(*OptionError)
			if !strings.HasPrefix(oe.Field, "scenarios") {
				oe.Field = strings.TrimPrefix("scenarios."+oe.Field, ".")
			}
			return nil, oe
		}
		scriptScenarios = sc
	}
	script := executor.Shortcuts{VUs: so.VUs, Duration: so.Duration, Iterations: so.Iterations, Stages: so.Stages}
	cli := executor.Shortcuts{VUs: r.opts.VUs, Duration: r.opts.Duration, Iterations: r.opts.Iterations, Stages: r.opts.Stages}
	sc, err := executor.Resolve(script, scriptScenarios, cli)
	if err != nil {
		return nil, optionErrorFrom(err)
	}
	return sc, nil
}

func (r *runner) hooks(lag *xk6ext.Metric) executor.Hooks {
	dropped := r.reg.Get("dropped_iterations")
	// Tag maps are built once per scenario and never mutated, so they can be shared by
	// every sample of that scenario.
	var tagsMu sync.Mutex
	tags := map[*executor.Scenario]map[string]string{}
	scTags := func(sc *executor.Scenario) map[string]string {
		tagsMu.Lock()
		defer tagsMu.Unlock()
		t, ok := tags[sc]
		if !ok {
			t = map[string]string{"scenario": sc.Name}
			tags[sc] = t
		}
		return t
	}
	h := executor.Hooks{
		Dropped: func(sc *executor.Scenario) {
			r.emit([]xk6ext.Sample{{Metric: dropped, Time: time.Now(), Value: 1, Tags: scTags(sc)}})
		},
	}
	if lag != nil {
		h.Lag = func(sc *executor.Scenario, d time.Duration) {
			r.emit([]xk6ext.Sample{{Metric: lag, Time: time.Now(), Value: float64(d) / float64(time.Millisecond), Tags: scTags(sc)}})
		}
	}
	return h
}

// emitVUs samples the vus and vus_max gauges, as k6 does once a second while the
// executors run.
func (r *runner) emitVUs(e *metrics.Engine, active, max int64) {
	now := time.Now()
	e.Ingest([]xk6ext.Sample{
		{Metric: r.reg.Get("vus"), Time: now, Value: float64(active)},
		{Metric: r.reg.Get("vus_max"), Time: now, Value: float64(max)},
	})
}

// emitVUsMax samples vus_max alone, before and after the executors: a vus sample there
// would read 0 VUs (none started yet, or all returned), which k6 never reports.
func (r *runner) emitVUsMax(e *metrics.Engine, max int64) {
	e.Ingest([]xk6ext.Sample{{Metric: r.reg.Get("vus_max"), Time: time.Now(), Value: float64(max)}})
}

// jsonCaller is a ProgramVU that can return a call's result as JSON.stringify makes it
// (vm.VU): setup()'s data then reaches the VUs exactly as k6's JSON copy does (Dates as
// ISO strings, toJSON honoured, NaN as null, functions and undefined dropped).
type jsonCaller interface {
	CallJSON(ctx context.Context, name string, args ...any) (json.RawMessage, error)
}

// setup runs setup() (unless absent or noSetup) and returns its result as JSON, nil for
// none (the VUs then get undefined, as in k6). false means the run must not go on; rep
// then holds why.
func (r *runner) setup(ctx context.Context, vu0 ProgramVU, so *scriptOptions, rep *Report) (json.RawMessage, bool) {
	if so.NoSetup || !slices.Contains(vu0.Exports(), "setup") {
		return nil, true
	}
	sctx, cancel := context.WithTimeout(ctx, so.SetupTimeout)
	defer cancel()
	var data json.RawMessage
	var err error
	if jc, ok := vu0.(jsonCaller); ok {
		data, err = jc.CallJSON(sctx, "setup")
	} else {
		var out any
		if out, err = vu0.Call(sctx, "setup"); err == nil && out != nil {
			if data, err = json.Marshal(out); err != nil {
				err = fmt.Errorf("its return value is not JSON-serialisable: %w", err)
			}
		}
	}
	if err != nil {
		switch {
		case errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
			r.setOutcome(rep, ExitSetupTimeout, &TimeoutError{Stage: "setup", Timeout: so.SetupTimeout})
		case ctx.Err() != nil:
			r.setOutcome(rep, ExitExternalAbort, &InterruptError{Cause: context.Cause(ctx)})
		default:
			f := scriptFailure(err)
			r.setOutcome(rep, f.ExitCode, fmt.Errorf("setup: %w", err))
		}
		r.log.Error(rep.Err.Error(), slog.String("source", "setup"))
		return nil, false
	}
	if r.stopped() != nil { // exec.test.abort() inside setup
		r.setStopOutcome(rep, ctx)
		return nil, false
	}
	return data, true
}

func (r *runner) teardown(vu0 ProgramVU, so *scriptOptions, data json.RawMessage, rep *Report) {
	if so.NoTeardown || !slices.Contains(vu0.Exports(), "teardown") {
		return
	}
	// Detached from the run's ctx: after Ctrl-C, teardown still runs (k6 does).
	tctx, cancel := context.WithTimeout(r.vuCtx, so.TeardownTimeout)
	defer cancel()
	vu0.SetSetupData(data)
	// A json.RawMessage is JSON.parse'd in the VU: teardown gets its own copy of the
	// data, as every VU does (undefined when there is none).
	if _, err := vu0.Call(tctx, "teardown", data); err != nil {
		var ab *vm.AbortError
		switch {
		case errors.Is(tctx.Err(), context.DeadlineExceeded):
			r.setOutcome(rep, ExitTeardownTimeout, &TimeoutError{Stage: "teardown", Timeout: so.TeardownTimeout})
		case errors.As(err, &ab):
			r.setOutcome(rep, ExitScriptAborted, ab)
		default:
			r.setOutcome(rep, ExitScriptException, fmt.Errorf("teardown: %w", err))
		}
		r.log.Error(err.Error(), slog.String("source", "teardown"))
	}
}

// runScenarios runs the executors with the run's background work beside them: the vus
// gauges, threshold evaluation for abortOnFail and the progress line.
func (r *runner) runScenarios(ctx context.Context, er *executor.Run, engine *metrics.Engine, pool *vuPool) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.stopMu.Lock()
	r.stopRun, r.execRun = cancel, er
	stopped := r.stopReason != nil
	r.stopMu.Unlock()
	if stopped {
		return
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.background(done, er, engine, pool)
	}()
	// An interrupt stops iterations now, as k6's first Ctrl-C does; then teardown and the
	// summary still run.
	stopWatch := context.AfterFunc(ctx, func() { r.stop(&InterruptError{Cause: context.Cause(ctx)}) })
	defer stopWatch()

	if err := er.Start(runCtx); err != nil && runCtx.Err() == nil {
		r.log.Error("executors: " + err.Error())
	}
	close(done)
	wg.Wait()
}

func (r *runner) background(done <-chan struct{}, er *executor.Run, engine *metrics.Engine, pool *vuPool) {
	vusT := time.NewTicker(DefaultVUsInterval)
	defer vusT.Stop()
	thT := time.NewTicker(DefaultThresholdInterval)
	defer thT.Stop()
	var progC <-chan time.Time
	var prog *progress
	if r.opts.Progress {
		t := time.NewTicker(DefaultProgressInterval)
		defer t.Stop()
		progC = t.C
		prog = &progress{start: time.Now(), scenarios: er.Scenarios()}
		defer func() {
			r.term.setProgress("")
			_ = r.term.writeLine(prog.line(er.Progress(), engine, pool.initialised(), true) + "\n")
		}()
	}
	sampled := false
	for {
		select {
		case <-done:
			if !sampled {
				// A run shorter than the sampling period: report the VUs that ran rather
				// than nothing, which is what a k6 run of a second or more shows.
				r.emitVUs(engine, er.TakePeakVUs(), pool.initialised())
			}
			return
		case <-vusT.C:
			r.emitVUs(engine, er.ActiveVUs(), pool.initialised())
			sampled = true
		case <-thT.C:
			if results, abort := engine.EvaluateThresholds(false); abort {
				var failed []metrics.ThresholdResult
				for _, t := range results {
					if !t.OK && t.AbortOnFail {
						failed = append(failed, t)
					}
				}
				err := &ThresholdsError{Failed: failed, Aborted: true}
				r.log.Error(err.Error())
				r.stop(err)
			}
		case <-progC:
			r.term.setProgress(prog.line(er.Progress(), engine, pool.initialised(), false))
		}
	}
}

func (r *runner) summaryOptions(so *scriptOptions) metrics.SummaryOptions {
	stats := so.SummaryTrendStats
	if len(r.opts.SummaryTrendStats) > 0 {
		stats = r.opts.SummaryTrendStats
	}
	if len(stats) == 0 {
		stats = DefaultSummaryTrendStats
	}
	stdoutTTY, stderrTTY := isTerminal(r.opts.Stdout), isTerminal(r.opts.Stderr)
	return metrics.SummaryOptions{
		TrendStats: stats,
		TimeUnit:   so.SummaryTimeUnit,
		NoColor:    r.opts.NoColor || !stdoutTTY,
		StdoutTTY:  stdoutTTY,
		StderrTTY:  stderrTTY,
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// summarise writes the end-of-test outputs: handleSummary's or the text summary, then
// --summary-export. A handleSummary exception is logged and the text summary printed
// instead, so the results are never lost.
func (r *runner) summarise(vu0 ProgramVU, rep *Report, so metrics.SummaryOptions) error {
	var errs []error
	printed := false
	if slices.Contains(vu0.Exports(), "handleSummary") {
		r.observed.set(rep.Thresholds)
		hctx, cancel := context.WithTimeout(r.vuCtx, DefaultTeardownTimeout)
		out, err := vu0.Call(hctx, "handleSummary", rep.Summary.HandleSummaryData(so))
		cancel()
		if err != nil {
			r.log.Error("handleSummary() failed, printing the default summary instead: "+err.Error(), slog.String("source", "handleSummary"))
		} else if err := r.routeSummary(out); err != nil {
			errs = append(errs, err)
			printed = true
		} else {
			printed = true
		}
	}
	if !printed && !r.opts.NoSummary {
		if _, err := io.WriteString(r.opts.Stdout, rep.Summary.Text(so)); err != nil {
			errs = append(errs, fmt.Errorf("writing the summary: %w", err))
		}
	}
	if r.opts.SummaryExport != "" {
		b, err := rep.Summary.ExportJSON(so)
		if err == nil {
			err = os.WriteFile(r.opts.SummaryExport, b, 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--summary-export: %w", err))
		}
	}
	return errors.Join(errs...)
}

// routeSummary writes handleSummary's result: "stdout" and "stderr" to the run's
// outputs, every other key to the file of that path (relative to the working
// directory, as k6 does).
func (r *runner) routeSummary(out any) error {
	if out == nil {
		return nil
	}
	m, ok := out.(map[string]any)
	if !ok {
		return fmt.Errorf("handleSummary() must return an object mapping outputs to content, got %T", out)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	for _, k := range keys {
		var b []byte
		switch v := m[k].(type) {
		case string:
			b = []byte(v)
		case []byte:
			b = v
		case sobek.ArrayBuffer:
			b = v.Bytes()
		case nil:
			continue
		default:
			j, err := json.Marshal(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("handleSummary()[%q]: %w", k, err))
				continue
			}
			b = j
		}
		var err error
		switch k {
		case "stdout":
			_, err = r.opts.Stdout.Write(b)
		case "stderr":
			err = r.term.writeLine(string(b))
		default:
			if dir := filepath.Dir(k); dir != "." {
				err = os.MkdirAll(dir, 0o755)
			}
			if err == nil {
				err = os.WriteFile(k, b, 0o644)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("handleSummary() output %q: %w", k, err))
		}
	}
	return errors.Join(errs...)
}
