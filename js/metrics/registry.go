package metrics

import (
	"unicode"
	"unicode/utf8"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// MaxMetricNameLength is k6's limit on a metric name, in characters.
const MaxMetricNameLength = 128

// ValidateMetricName applies k6's documented rule: 1 to 128 Unicode letters, Unicode
// numbers or underscores, not starting with a number (so names stay valid in
// Prometheus and OpenTelemetry once non-ASCII is transliterated).
func ValidateMetricName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0:
		return &MetricError{Name: name, Reason: "name is empty"}
	case n > MaxMetricNameLength:
		return &MetricError{Name: name, Reason: "name is longer than 128 characters"}
	}
	for i, r := range name {
		switch {
		case unicode.IsNumber(r):
			if i == 0 {
				return &MetricError{Name: name, Reason: "name must not start with a number"}
			}
		case unicode.IsLetter(r), r == '_':
		default:
			return &MetricError{Name: name, Reason: "name may contain only letters, numbers and '_'"}
		}
	}
	return nil
}

func (r *Registry) newMetric(name string, typ xk6ext.MetricType, vt xk6ext.ValueType) (*xk6ext.Metric, error) {
	if err := ValidateMetricName(name); err != nil {
		return nil, err
	}
	if typ < xk6ext.Counter || typ > xk6ext.Rate {
		return nil, &MetricError{Name: name, Reason: "unknown metric type"}
	}
	if vt < xk6ext.Default || vt > xk6ext.Data {
		return nil, &MetricError{Name: name, Reason: "unknown value type"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.byName[name]; ok {
		if m.Type != typ || m.ValueType != vt {
			return nil, &MetricError{Name: name, Reason: "already declared as " + m.Type.String() +
				" (" + m.ValueType.String() + "), redeclared as " + typ.String() + " (" + vt.String() + ")"}
		}
		return m, nil
	}
	m := &xk6ext.Metric{Name: name, Type: typ, ValueType: vt}
	r.byName[name] = m
	r.order = append(r.order, m)
	return m, nil
}
