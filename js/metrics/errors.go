package metrics

import "fmt"

// MetricError reports an invalid metric name or a conflicting redeclaration.
type MetricError struct {
	Name   string
	Reason string
}

func (e *MetricError) Error() string {
	return fmt.Sprintf("metric %q: %s", e.Name, e.Reason)
}

// ThresholdError reports an invalid threshold in options.thresholds. Runners map it to
// k6's exit code 104 (invalid options).
type ThresholdError struct {
	Metric string // the key as written, e.g. llm_ttft{model:x}
	Expr   string // the expression, empty when the problem is the key or the value shape
	Reason string
}

func (e *ThresholdError) Error() string {
	if e.Expr == "" {
		return fmt.Sprintf("invalid threshold on %q: %s", e.Metric, e.Reason)
	}
	return fmt.Sprintf("invalid threshold %q on %q: %s", e.Expr, e.Metric, e.Reason)
}
