package xk6ext

import (
	"context"
	"log/slog"
	"time"

	"github.com/grafana/sobek"
)

// Host is everything the module needs from the program running the script. Its
// semantics are those of k6's modules.VU, so a small adapter outside this repository can
// satisfy it from k6; inside tokenstorm the js package implements it.
//
// One Host per VU. Runtime, NewMetric, InInit and Emit-from-JS are used only on the VU
// goroutine; Emit and the enqueue function returned by RegisterCallback are
// goroutine-safe.
type Host interface {
	// Runtime is the VU's JS runtime. Only touch it on the VU goroutine.
	Runtime() *sobek.Runtime
	// Context is cancelled at iteration end (after pending callbacks) and at test end.
	Context() context.Context
	// RegisterCallback reserves a slot on the VU event loop so the iteration does not end
	// while work is pending. The returned enqueue func is goroutine-safe and must be
	// called exactly once; the callback then runs on the VU goroutine.
	RegisterCallback() (enqueue func(func() error))
	// NewMetric declares a custom metric. Init context only; idempotent for the same name,
	// type and value type; an error for a conflicting redeclaration.
	NewMetric(name string, typ MetricType, vt ValueType) (*Metric, error)
	// Emit records samples. Tags are merged over the VU's current tags (scenario, group,
	// user tags set in options), sample tags winning.
	Emit(samples ...Sample)
	// InInit reports whether the VU is in the init context.
	InInit() bool
	// Logger logs to the run's log output.
	Logger() *slog.Logger
	// State gives the identity of the VU and the run, as k6/execution does.
	State() State
}

// MetricType is a metric's kind, as in k6.
type MetricType int

// Metric types.
const (
	Counter MetricType = iota
	Gauge
	Trend
	Rate
)

// String returns k6's lower-case name for the type.
func (t MetricType) String() string {
	switch t {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Trend:
		return "trend"
	case Rate:
		return "rate"
	}
	return "unknown"
}

// ValueType says what a metric's values mean, which decides how they are printed.
type ValueType int

// Value types.
const (
	Default ValueType = iota
	Time              // milliseconds
	Data              // bytes
)

// String returns k6's name for the value type ("default", "time", "data").
func (v ValueType) String() string {
	switch v {
	case Time:
		return "time"
	case Data:
		return "data"
	}
	return "default"
}

// Metric is a declared metric. Hosts create them; the module only passes them back in
// Samples.
type Metric struct {
	Name      string
	Type      MetricType
	ValueType ValueType
}

// Sample is one observation of a metric.
type Sample struct {
	Metric *Metric
	Time   time.Time
	Value  float64
	// Tags are the sample's own tags (model, dialect, status…). The host merges them
	// over the VU's tags. The map is not retained by the caller after Emit.
	Tags map[string]string
}

// State is the identity of a VU and its run, as k6/execution exposes it.
type State struct {
	VUIDInTest     int64 // 1-based VU id across the test
	Iteration      int64 // iteration number of this VU in its scenario, 0-based
	Scenario       string
	IterationInRun int64 // the iteration's number across the scenario (-1 when unknown)
}
