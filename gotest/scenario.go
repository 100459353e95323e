package gotest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/tokenstorm/tokenstorm/js"
	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/mockllm"
	"github.com/tokenstorm/tokenstorm/tokens"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// Scenario is a load scenario written in Go with a k6 script's vocabulary. Pick the load
// model the way k6's shortcuts and executors do:
//
//   - Iterations: VUs share that many iterations (shared-iterations), with Duration,
//     if given, as the maxDuration;
//   - Duration: VUs loop for that long (constant-vus);
//   - Rate and Duration: Rate iterations per TimeUnit start whatever the latency
//     (constant-arrival-rate), on up to MaxVUs VUs, VUs of them initialised up front.
//
// Thresholds and SLOs mean what they mean in a script; the metrics and their tags are the
// ones the JS module emits, so a scenario here and the same scenario as a script can be
// compared number for number.
type Scenario struct {
	// Name is the scenario's name, the "scenario" tag of every sample ("default").
	Name string
	// VUs is the number of VUs (k6's vus; preAllocatedVUs with Rate). Default 1.
	VUs int64
	// Iterations is the total number of iterations the VUs share.
	Iterations int64
	// Duration is how long the scenario runs.
	Duration time.Duration
	// Rate is the number of iterations started per TimeUnit (default 1s).
	Rate     int64
	TimeUnit time.Duration
	// MaxVUs caps the VUs an arrival-rate scenario may use (default VUs).
	MaxVUs int64
	// GracefulStop is how long running iterations may finish after Duration (k6's
	// default 30s when zero).
	GracefulStop time.Duration

	// Client configures every VU's client. An empty BaseURL starts the embedded mock for
	// the test, as a script's Client without url uses it.
	Client llm.Config
	// ClientTags are added to every request's samples (a script's Client tags).
	ClientTags map[string]string
	// SLO sets the limits llm_goodput measures requests against.
	SLO tokens.SLO

	// Tags are added to every sample of the scenario (a scenario's tags in k6).
	Tags map[string]string
	// Thresholds are k6 thresholds: metric (or "metric{tag:value}") → expressions.
	Thresholds map[string][]string

	// NoShrink keeps Duration and Iterations as given under -short.
	NoShrink bool

	// Exec runs one iteration on vu. A returned error fails the iteration (it is
	// logged, like an exception in a script's iteration) and the run goes on; the
	// iteration still counts in iterations, unless it is a context error after the
	// stop (an interrupted iteration, as in a script).
	Exec func(ctx context.Context, vu *VU) error
}

// options is the scenario as a k6 options object, so the runner parses, validates and
// schedules it exactly as it would a script's options.
func (s *Scenario) options() (json.RawMessage, error) {
	name := s.Name
	if name == "" {
		name = executor.DefaultScenarioName
	}
	sc := map[string]any{}
	vus := max(s.VUs, 1)
	switch {
	case s.Rate > 0:
		if s.Duration <= 0 {
			return nil, errors.New("gotest: Scenario.Rate needs a Duration")
		}
		tu := s.TimeUnit
		if tu <= 0 {
			tu = executor.DefaultTimeUnit
		}
		sc["executor"] = executor.ConstantArrivalRate
		sc["rate"] = s.Rate
		sc["timeUnit"] = tu.String()
		sc["duration"] = s.Duration.String()
		sc["preAllocatedVUs"] = vus
		sc["maxVUs"] = max(s.MaxVUs, vus)
	case s.Iterations > 0:
		sc["executor"] = executor.SharedIterations
		sc["vus"] = vus
		sc["iterations"] = s.Iterations
		if s.Duration > 0 {
			sc["maxDuration"] = s.Duration.String()
		}
	case s.Duration > 0:
		sc["executor"] = executor.ConstantVUs
		sc["vus"] = vus
		sc["duration"] = s.Duration.String()
	default:
		return nil, errors.New("gotest: a Scenario needs Iterations, Duration, or Rate with Duration")
	}
	if s.GracefulStop > 0 {
		sc["gracefulStop"] = s.GracefulStop.String()
	}
	if len(s.Tags) > 0 {
		sc["tags"] = s.Tags
	}
	opts := map[string]any{"scenarios": map[string]any{name: sc}}
	if len(s.Thresholds) > 0 {
		opts["thresholds"] = s.Thresholds
	}
	return json.Marshal(opts)
}

// shrink applies -short to the scenario's durations and iteration count.
func (s *Scenario) shrink() { s.shrinkBy(testing.Short()) }

func (s *Scenario) shrinkBy(short bool) {
	if s.NoShrink || !short {
		return
	}
	if s.Duration > 0 {
		s.Duration = shrinkDuration(s.Duration)
	}
	if s.Iterations > 0 {
		// Every VU needs an iteration (k6 refuses fewer iterations than VUs).
		s.Iterations = max(shrinkCount(s.Iterations), min(s.Iterations, s.VUs))
	}
}

// Run runs the scenario through the same runner as `tokenstorm run` (executors, metrics
// engine, thresholds, summary) and returns its Result. Crossed thresholds are reported
// with t.Errorf; an invalid scenario fails the test with t.Fatalf.
func Run(t testing.TB, s Scenario) *Result {
	t.Helper()
	if s.Exec == nil {
		t.Fatalf("gotest: Scenario.Exec is nil")
		return &Result{tb: t} // a Fatalf that returned (a recording TB) gets no nil
	}
	s.shrink()
	if s.Client.BaseURL == "" {
		s.Client.BaseURL = MockServer(t, mockllm.Config{}).OpenAIURL()
	}
	if s.Client.Model == "" {
		s.Client.Model = mockllm.DefaultModel
	}
	rawOpts, err := s.options()
	if err != nil {
		t.Fatalf("%v", err)
		return &Result{tb: t}
	}
	name := s.Name
	if name == "" {
		name = "Go scenario " + t.Name()
	}
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := js.RunProgram(ctx, name, func(env js.Env) (js.Program, error) {
		return newProgram(&s, rawOpts, env)
	}, js.Options{NoColor: true, Quiet: true, Stdout: out, Stderr: out})
	return finish(t, name, rep, err, out)
}

// finish turns a runner's report into a Result, reporting on t what went wrong: the
// run not starting (Fatalf), each crossed threshold and any other failure (Errorf).
func finish(t testing.TB, name string, rep *js.Report, err error, out *syncBuffer) *Result {
	t.Helper()
	res := &Result{tb: t, Output: out.String()}
	defer res.logOutput()
	if err != nil {
		t.Errorf("gotest: %s: %v", name, err)
	}
	if rep == nil {
		t.Fatalf("gotest: %s: the runner returned no report", name)
		return res
	}
	res.ExitCode, res.Err, res.Thresholds, res.summary = rep.ExitCode, rep.Err, rep.Thresholds, rep.Summary
	if rep.Summary == nil {
		t.Fatalf("gotest: %s did not run (exit code %d): %v", name, rep.ExitCode, rep.Err)
		return res
	}
	res.reportThresholds()
	if rep.ExitCode != js.ExitOK && rep.ExitCode != js.ExitThresholds {
		t.Errorf("gotest: %s ended with exit code %d: %v", name, rep.ExitCode, rep.Err)
	}
	return res
}

// program is a Scenario as the runner sees it.
type program struct {
	s       *Scenario
	opts    json.RawMessage
	env     js.Env
	metrics *xk6ext.Recorder
	iters   *xk6ext.Metric
	iterDur *xk6ext.Metric
	checks  *xk6ext.Metric

	mu      sync.Mutex
	clients []*llm.Client // every VU's, closed with the program
}

var _ js.Program = (*program)(nil)

func newProgram(s *Scenario, opts json.RawMessage, env js.Env) (*program, error) {
	rec, err := xk6ext.NewRecorder(env.Registry.NewMetric)
	if err != nil {
		return nil, err
	}
	p := &program{s: s, opts: opts, env: env, metrics: rec}
	if p.iters, err = env.Registry.NewMetric("iterations", xk6ext.Counter, xk6ext.Default); err != nil {
		return nil, err
	}
	if p.iterDur, err = env.Registry.NewMetric("iteration_duration", xk6ext.Trend, xk6ext.Time); err != nil {
		return nil, err
	}
	if p.checks, err = env.Registry.NewMetric("checks", xk6ext.Rate, xk6ext.Default); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *program) NewVU(_ context.Context, id int64) (js.ProgramVU, error) {
	c, err := llm.NewClient(p.s.Client)
	if err != nil {
		return nil, fmt.Errorf("gotest: Scenario.Client: %w", err)
	}
	p.mu.Lock()
	p.clients = append(p.clients, c)
	p.mu.Unlock()
	vu := &VU{ID: id, p: p}
	vu.Client = &Client{c: c, vu: vu}
	return vu, nil
}

// Close closes every VU's client (their idle connections).
func (p *program) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.clients {
		c.Close()
	}
	p.clients = nil
	return nil
}

// VU is one virtual user of a Go scenario. Exec receives it; its fields describe the
// current iteration.
type VU struct {
	// ID is the VU's number in the test, from 1 (a script's __VU).
	ID int64
	// Iteration is the VU's iteration number in the scenario, from 0 (__ITER).
	Iteration int64
	// Client is the VU's own client: each request it makes emits the llm_* metrics.
	Client *Client

	p    *program
	tags map[string]string // the current scenario's tags, built once per scenario
	sc   *executor.Scenario
}

var _ js.ProgramVU = (*VU)(nil)

// Options returns the scenario as k6 options.
func (vu *VU) Options() (json.RawMessage, error) { return vu.p.opts, nil }

// Exports lists the one function a Go scenario has.
func (vu *VU) Exports() []string { return []string{executor.DefaultExec} }

// Call is never needed: a Go scenario has no setup, teardown or handleSummary.
func (vu *VU) Call(context.Context, string, ...any) (any, error) { return nil, nil }

// SetSetupData ignores setup data: a Go scenario shares state through its closure.
func (vu *VU) SetSetupData(json.RawMessage) {}

// RunIteration runs Exec once and emits iterations and iteration_duration, tagged as a
// script's VU tags them.
func (vu *VU) RunIteration(ctx context.Context, it executor.Iteration) error {
	if it.Scenario != vu.sc {
		vu.sc = it.Scenario
		vu.tags = make(map[string]string, len(vu.p.env.Tags)+len(it.Scenario.Tags)+2)
		maps.Copy(vu.tags, vu.p.env.Tags)
		maps.Copy(vu.tags, it.Scenario.Tags)
		vu.tags["scenario"] = it.Scenario.Name
		vu.tags["group"] = ""
	}
	vu.Iteration = it.InVU
	start := time.Now()
	err := vu.p.s.Exec(ctx, vu)
	end := time.Now()
	// Cut short by the stop (a context error once ctx is done): not counted, as a
	// script's interrupted iteration is not. Exec's own error still counts, as a script's
	// exception does even after the stop (vm.VU.RunIteration).
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("%w: %w", err, context.Cause(ctx))
	}
	vu.p.env.Emit([]xk6ext.Sample{
		{Metric: vu.p.iters, Time: end, Value: 1, Tags: vu.tags},
		{Metric: vu.p.iterDur, Time: end, Value: float64(end.Sub(start)) / float64(time.Millisecond), Tags: vu.tags},
	})
	return err
}

// Check records a named check in the checks rate metric, as k6's check() does, and
// returns ok.
func (vu *VU) Check(name string, ok bool) bool {
	tags := make(map[string]string, len(vu.tags)+1)
	maps.Copy(tags, vu.tags)
	tags["check"] = name
	v := 0.0
	if ok {
		v = 1
	}
	vu.p.env.Emit([]xk6ext.Sample{{Metric: vu.p.checks, Time: time.Now(), Value: v, Tags: tags}})
	return ok
}

// Client is a VU's LLM client. Every request emits the same samples a script's
// client.chat() does.
type Client struct {
	c  *llm.Client
	vu *VU
}

// Do sends req and records its metrics with tags (added to the scenario's ClientTags).
func (c *Client) Do(ctx context.Context, req *llm.Request, tags map[string]string) *llm.Result {
	res := c.c.Do(ctx, req)
	if !res.OK() && ctx.Err() != nil {
		return res // interrupted by the end of the test: not a measurement of the server
	}
	p := c.vu.p
	samples := p.metrics.Samples(res, p.s.SLO, p.s.ClientTags, tags)
	// One tag map is shared by a request's samples; the VU's tags go under it, as a
	// script's host merges them.
	if shared := samples[0].Tags; shared != nil {
		for k, v := range c.vu.tags {
			if _, ok := shared[k]; !ok {
				shared[k] = v
			}
		}
	}
	p.env.Emit(samples)
	return res
}

// Chat sends one chat request with messages and maxTokens.
func (c *Client) Chat(ctx context.Context, maxTokens int, messages ...llm.Message) *llm.Result {
	return c.Do(ctx, &llm.Request{Messages: messages, MaxTokens: maxTokens}, nil)
}
