package metrics

import (
	"encoding/json"
	"time"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

type engineState struct{ clock Clock }
type thresholdSet struct{ items []int }

// TrendView is a read-only copy of a trend's aggregate.
type TrendView struct {
	Count              int64
	Avg, Min, Med, Max float64
}

// P returns the pth percentile (0..100).
func (v *TrendView) P(p float64) float64 { return 0 }

func (r *Registry) newMetric(name string, typ xk6ext.MetricType, vt xk6ext.ValueType) (*xk6ext.Metric, error) {
	m := &xk6ext.Metric{Name: name, Type: typ, ValueType: vt}
	r.mu.Lock()
	r.byName[name] = m
	r.mu.Unlock()
	return m, nil
}
func newEngine(reg *Registry, th Thresholds, opts ...Option) *Engine { return &Engine{} }
func (e *Engine) ingest(samples []xk6ext.Sample)                     {}
func (e *Engine) setStart(t time.Time)                               {}
func (e *Engine) setEnd(t time.Time)                                 {}
func (e *Engine) elapsed() time.Duration                             { return 0 }
func (e *Engine) evaluate(final bool) ([]ThresholdResult, bool)      { return nil, false }
func (e *Engine) snapshot() *Summary                                 { return &Summary{} }
func parseThresholds(raw map[string]json.RawMessage, reg *Registry) (Thresholds, error) {
	return Thresholds{}, nil
}
func (s *Summary) handleSummaryData(opts SummaryOptions) map[string]any { return nil }
func (s *Summary) exportJSON(opts SummaryOptions) ([]byte, error)       { return nil, nil }
func (s *Summary) text(opts SummaryOptions) string                      { return "" }

// Trend returns the named trend's aggregate, or nil.
func (s *Summary) Trend(name string) *TrendView { return nil }

// Rate returns the named rate metric's ratio of non-zero samples.
func (s *Summary) Rate(name string) float64 { return 0 }

// Counter returns the named counter's sum.
func (s *Summary) Counter(name string) float64 { return 0 }

// Check returns the passes and fails of the check called name, summed over groups; a
// name starting with "::" is matched as a full path instead.
func (s *Summary) Check(name string) (passes, fails int64) { return 0, 0 }
