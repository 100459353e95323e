package gotest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tokenstorm/tokenstorm/js/metrics"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// Result is the outcome of a script or a Go scenario: typed access to every metric, the
// threshold outcomes and the exit code `tokenstorm run` would have returned.
type Result struct {
	// ExitCode is k6's exit code for the run (js.Exit*): 0, 99 when a threshold was
	// crossed, 107 for an exception in setup() or teardown(), and so on.
	ExitCode int
	// Err explains a non-zero ExitCode.
	Err error
	// Thresholds holds every threshold's final evaluation.
	Thresholds []metrics.ThresholdResult
	// Output is what the run printed: the end-of-test summary and any log lines.
	Output string

	summary *metrics.Summary
	tb      testing.TB
}

// Summary is everything the run measured, as handleSummary and --summary-export see it.
func (r *Result) Summary() *metrics.Summary { return r.summary }

// Trend returns the named trend (or trend submetric, "llm_ttft{model:x}") for assertions
// such as res.Trend("llm_ttft").P(95). A trend that received no samples fails the test
// at once (also when a threshold names it, which puts it in the summary): asserting on
// it would compare against zeroes.
func (r *Result) Trend(name string) *metrics.TrendView {
	r.tb.Helper()
	m := r.mustHave(name, xk6ext.Trend)
	if m == nil {
		return emptyTrend() // only after a t.Fatalf that returned
	}
	return r.summary.Trend(name)
}

// Rate returns the named rate metric's share of true samples, e.g. llm_goodput. A rate
// that received no samples fails the test at once.
func (r *Result) Rate(name string) float64 {
	r.tb.Helper()
	if m := r.mustHave(name, xk6ext.Rate); m != nil {
		return m.Values["rate"]
	}
	return 0
}

// Counter returns the named counter's sum, e.g. llm_completion_tokens.
func (r *Result) Counter(name string) float64 {
	r.tb.Helper()
	if m := r.mustHave(name, xk6ext.Counter); m != nil {
		return m.Values["count"]
	}
	return 0
}

// Gauge returns the named gauge's last value, e.g. vus_max.
func (r *Result) Gauge(name string) float64 {
	r.tb.Helper()
	if m := r.mustHave(name, xk6ext.Gauge); m != nil {
		return m.Values["value"]
	}
	return 0
}

// Check returns the passes and fails of the checks called name (or, starting with
// "::", of the check at that group path). A name no check has fails the test at once,
// listing the names there are: a misspelt name would otherwise read as zero fails.
func (r *Result) Check(name string) (passes, fails int64) {
	r.tb.Helper()
	if r.summary == nil {
		r.tb.Fatalf("gotest: no summary: the run did not start (%v)", r.Err)
		return 0, 0
	}
	var names []string
	found := false
	var walk func(g *metrics.Group)
	walk = func(g *metrics.Group) {
		for _, c := range g.Checks {
			names = append(names, c.Name)
			found = found || c.Name == name || c.Path == name
		}
		for _, sub := range g.Groups {
			walk(sub)
		}
	}
	if r.summary.RootGroup != nil {
		walk(r.summary.RootGroup)
	}
	if !found {
		slices.Sort(names)
		r.tb.Fatalf("gotest: no check %q; checks: %s", name, strings.Join(slices.Compact(names), ", "))
		return 0, 0
	}
	return r.summary.Check(name)
}

// Has reports whether the metric received samples. A trend or rate that a threshold
// names is in the summary without samples; Has says false for it. (A counter or gauge
// so named reads as present: the summary does not count their samples.)
func (r *Result) Has(name string) bool {
	if r.summary == nil {
		return false
	}
	return sampled(r.summary.Metric(name))
}

// Metrics lists the names of the metrics that received samples (as Has decides), sorted.
func (r *Result) Metrics() []string {
	if r.summary == nil {
		return nil
	}
	names := make([]string, 0, len(r.summary.Metrics))
	for n, m := range r.summary.Metrics {
		if sampled(m) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// sampled reports whether m received samples, as far as its summary values tell.
func sampled(m *metrics.MetricSummary) bool {
	if m == nil {
		return false
	}
	switch m.Type {
	case xk6ext.Trend:
		return m.Values["count"] > 0
	case xk6ext.Rate:
		return m.Values["passes"]+m.Values["fails"] > 0
	}
	return true
}

// mustHave returns the named metric, or fails the test and returns nil.
func (r *Result) mustHave(name string, typ xk6ext.MetricType) *metrics.MetricSummary {
	r.tb.Helper()
	if r.summary == nil {
		r.tb.Fatalf("gotest: no summary: the run did not start (%v)", r.Err)
		return nil
	}
	m := r.summary.Metric(name)
	if !sampled(m) {
		r.tb.Fatalf("gotest: metric %q has no samples; metrics with samples: %s", name, strings.Join(r.Metrics(), ", "))
		return nil
	}
	if m.Type != typ {
		r.tb.Fatalf("gotest: metric %q is a %s, not a %s", name, m.Type, typ)
		return nil
	}
	return m
}

// emptyTrend is the trend view handed back after a t.Fatalf that returned (a recording
// TB), so the caller's .P(95) reads zero instead of dereferencing nil. The metrics
// package only makes views in summaries: a threshold puts an empty trend in one.
var emptyTrend = sync.OnceValue(func() *metrics.TrendView {
	reg := metrics.NewRegistry()
	if _, err := reg.NewMetric("empty", xk6ext.Trend, xk6ext.Default); err != nil {
		panic("gotest: declaring the empty trend: " + err.Error())
	}
	th, err := metrics.ParseThresholds(map[string]json.RawMessage{"empty": json.RawMessage(`["avg>=0"]`)}, reg)
	if err != nil {
		panic("gotest: the empty trend's threshold: " + err.Error())
	}
	return metrics.NewEngine(reg, th).Snapshot().Trend("empty")
})

// Failed returns the thresholds that were crossed.
func (r *Result) Failed() []metrics.ThresholdResult {
	var out []metrics.ThresholdResult
	for _, t := range r.Thresholds {
		if !t.OK {
			out = append(out, t)
		}
	}
	return out
}

// reportThresholds fails the test once per crossed threshold, naming the metric, the
// threshold and the observed value.
func (r *Result) reportThresholds() {
	r.tb.Helper()
	for _, t := range r.Failed() {
		r.tb.Errorf("%s", describe(t, r.summary))
	}
}

func describe(t metrics.ThresholdResult, s *metrics.Summary) string {
	observed := fmt.Sprintf("%g", t.Observed)
	if s != nil {
		if m := s.Metric(t.Metric); m != nil && m.Contains == xk6ext.Time {
			observed = metrics.FormatDuration(t.Observed, "")
		}
	}
	msg := fmt.Sprintf("threshold crossed: %s %q: observed %s = %s", t.Metric, t.Expr, t.Stat, observed)
	if t.AbortOnFail {
		msg += " (abortOnFail)"
	}
	return msg
}

// RequireThresholds stops the test at once when any threshold of res was crossed,
// listing them all. RunScript and Run already report each crossed threshold with
// t.Errorf; use this where the rest of the test makes no sense after a crossing.
func RequireThresholds(t testing.TB, res *Result) {
	t.Helper()
	failed := res.Failed()
	if len(failed) == 0 {
		return
	}
	lines := make([]string, len(failed))
	for i, f := range failed {
		lines[i] = describe(f, res.summary)
	}
	t.Fatalf("%d threshold(s) crossed:\n\t%s", len(failed), strings.Join(lines, "\n\t"))
}

// logOutput logs what the run printed when the test failed or runs verbosely.
func (r *Result) logOutput() {
	r.tb.Helper()
	if r.Output != "" && (r.tb.Failed() || testing.Verbose()) {
		r.tb.Logf("run output:\n%s", r.Output)
	}
}
