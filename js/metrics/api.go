package metrics

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/tokenstorm/tokenstorm/tokens"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// Registry holds the metrics declared for one test run. It is safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]*xk6ext.Metric
	order  []*xk6ext.Metric
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: make(map[string]*xk6ext.Metric)}
}

// NewMetric declares a metric, following k6's name rules. Declaring the same name again
// with the same type and value type returns the existing metric; a conflicting
// redeclaration is a *MetricError.
func (r *Registry) NewMetric(name string, typ xk6ext.MetricType, vt xk6ext.ValueType) (*xk6ext.Metric, error) {
	return r.newMetric(name, typ, vt)
}

// Get returns the metric called name, or nil.
func (r *Registry) Get(name string) *xk6ext.Metric {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// Metrics returns every declared metric in declaration order.
func (r *Registry) Metrics() []*xk6ext.Metric {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]*xk6ext.Metric(nil), r.order...)
}

// Clock gives the engine its notion of now; tests inject a fake one.
type Clock interface {
	Now() time.Time
}

// Option configures an Engine.
type Option func(*Engine)

// WithClock makes the engine read time from c instead of the system clock. The clock
// decides Elapsed (and so counter rates) and when delayAbortEval has passed.
func WithClock(c Clock) Option { return func(e *Engine) { e.clock = c } }

// WithTrendOptions configures every trend sink, for example
// tokens.WithExactLimit(n) to keep percentiles exact for up to n samples per series
// (default tokens.DefaultExactLimit) before the bounded-memory sketch takes over.
func WithTrendOptions(opts ...tokens.TrendOption) Option {
	return func(e *Engine) { e.trendOpts = append(e.trendOpts, opts...) }
}

// Engine aggregates samples into per-metric sinks, evaluates thresholds and produces
// summaries. Ingest, EvaluateThresholds, Snapshot and Elapsed are safe to call
// concurrently.
type Engine struct {
	engineState
}

// NewEngine returns an engine aggregating the metrics of reg and evaluating th.
func NewEngine(reg *Registry, th Thresholds, opts ...Option) *Engine {
	return newEngine(reg, th, opts...)
}

// Ingest aggregates samples. Samples carry their full tags (already merged by the host);
// a tag map may be shared by many samples but must not change during the call. It takes
// one lock per call and does not allocate in steady state for series it has seen
// before.
func (e *Engine) Ingest(samples []xk6ext.Sample) { e.ingest(samples) }

// SetStart marks the test start; counter rates and delayAbortEval count from it.
func (e *Engine) SetStart(t time.Time) { e.setStart(t) }

// SetEnd freezes Elapsed at t - start, for the end-of-test summary.
func (e *Engine) SetEnd(t time.Time) { e.setEnd(t) }

// Elapsed is the test duration so far (or as frozen by SetEnd).
func (e *Engine) Elapsed() time.Duration { return e.elapsed() }

// EvaluateThresholds evaluates every threshold. While the test runs (final == false)
// thresholds of metrics without samples are skipped, as k6 does; at the end they are
// evaluated on empty values. abort reports that an abortOnFail threshold failed after
// its delayAbortEval.
func (e *Engine) EvaluateThresholds(final bool) (results []ThresholdResult, abort bool) {
	return e.evaluate(final)
}

// Snapshot returns a deep copy of everything aggregated so far, safe to use while Ingest
// continues. Its Thresholds are evaluated on the copy as at the end of a test (metrics
// without samples included). It copies every trend, so poll Counter rather than
// Snapshot for a live progress line.
func (e *Engine) Snapshot() *Summary { return e.snapshot() }

// Counter returns the current sum of the named counter (0 if unknown or not a counter)
// without copying anything, for progress lines polled while the test runs.
func (e *Engine) Counter(name string) float64 { return e.counterSum(name) }

// Thresholds is the parsed options.thresholds of a test. The zero value has none.
type Thresholds struct {
	sets []*thresholdSet
}

// Len is the number of threshold expressions.
func (t Thresholds) Len() int {
	n := 0
	for _, s := range t.sets {
		n += len(s.items)
	}
	return n
}

// ParseThresholds parses k6's options.thresholds: keys are metric names, optionally with
// a submetric selector "name{tag:value,…}", values arrays of expressions given either as
// strings or as {"threshold", "abortOnFail", "delayAbortEval"} objects. Every metric
// must already be declared in reg. Errors are *ThresholdError.
func ParseThresholds(raw map[string]json.RawMessage, reg *Registry) (Thresholds, error) {
	return parseThresholds(raw, reg)
}

// ThresholdResult is the outcome of one threshold expression.
type ThresholdResult struct {
	Metric      string // metric or submetric name as written in options, e.g. llm_ttft{model:x}
	Expr        string // the expression as written, e.g. "p(95)<200"
	OK          bool
	Observed    float64 // value of the aggregation Stat
	Stat        string  // aggregation method, e.g. "p(95)"
	AbortOnFail bool
}

// Summary is a copy of a test's aggregated results.
type Summary struct {
	Metrics    map[string]*MetricSummary // by name; submetrics as "parent{tag:value}"
	RootGroup  *Group
	Duration   time.Duration
	Thresholds []ThresholdResult
}

// MetricSummary is one metric's (or submetric's) aggregate.
type MetricSummary struct {
	Name     string
	Type     xk6ext.MetricType
	Contains xk6ext.ValueType
	// Values are k6's summary values: counter count, rate; gauge value, min, max; rate
	// rate, passes, fails; trend avg, min, med, max, p(90), p(95), count.
	Values     map[string]float64
	Thresholds map[string]bool // expression → ok
	Submetric  bool
	Parent     string // for a submetric, the parent metric's name
	Tags       string // for a submetric, the selector inside the braces, e.g. model:x

	trend *TrendView
}

// Group is a k6 group with its checks; the root group has empty Name and Path.
type Group struct {
	Name, Path, ID string
	Groups         []*Group
	Checks         []*Check
}

// Check is a k6 check's tally within its group.
type Check struct {
	Name, Path, ID string
	Passes, Fails  int64
}

// SummaryOptions shape the summary outputs, as k6's summaryTrendStats, summaryTimeUnit
// and noColor options do.
type SummaryOptions struct {
	TrendStats []string // default DefaultTrendStats
	TimeUnit   string   // "", "ns", "us", "µs", "ms", "s", "m", "h"
	NoColor    bool
	StdoutTTY  bool
	StderrTTY  bool
}

// DefaultTrendStats is k6's default summaryTrendStats.
var DefaultTrendStats = []string{"avg", "min", "med", "max", "p(90)", "p(95)"}

// HandleSummaryData returns the data object k6 passes to handleSummary(data).
func (s *Summary) HandleSummaryData(opts SummaryOptions) map[string]any {
	return s.handleSummaryData(opts)
}

// ExportJSON returns k6's --summary-export document.
func (s *Summary) ExportJSON(opts SummaryOptions) ([]byte, error) { return s.exportJSON(opts) }

// Text returns the k6-style end-of-test summary.
func (s *Summary) Text(opts SummaryOptions) string { return s.text(opts) }
