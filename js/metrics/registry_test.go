package metrics

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func TestValidateMetricName(t *testing.T) {
	tests := []struct {
		name   string
		ok     bool
		reason string
	}{
		{"llm_ttft", true, ""},
		{"_private", true, ""},
		{"métrique2", true, ""},
		{"a", true, ""},
		{strings.Repeat("x", 128), true, ""},
		{strings.Repeat("é", 128), true, ""},
		{"", false, "empty"},
		{strings.Repeat("x", 129), false, "longer than 128"},
		{"2fast", false, "start with a number"},
		{"http.req", false, "only letters"},
		{"has space", false, "only letters"},
		{"dash-ed", false, "only letters"},
		{"brace{x:y}", false, "only letters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateMetricName(tt.name)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			var me *MetricError
			require.True(t, errors.As(err, &me), "want *MetricError, got %v", err)
			assert.Equal(t, tt.name, me.Name)
			assert.Contains(t, err.Error(), tt.reason)
		})
	}
}

func TestRegistryNewMetric(t *testing.T) {
	reg := NewRegistry()
	a, err := reg.NewMetric("llm_ttft", xk6ext.Trend, xk6ext.Time)
	require.NoError(t, err)
	b, err := reg.NewMetric("llm_ttft", xk6ext.Trend, xk6ext.Time)
	require.NoError(t, err)
	assert.Same(t, a, b, "redeclaring identically returns the same metric")
	assert.Same(t, a, reg.Get("llm_ttft"))
	assert.Nil(t, reg.Get("nope"))

	_, err = reg.NewMetric("llm_ttft", xk6ext.Trend, xk6ext.Default)
	var me *MetricError
	require.ErrorAs(t, err, &me)
	assert.Contains(t, err.Error(), "already declared as trend (time)")
	_, err = reg.NewMetric("llm_ttft", xk6ext.Counter, xk6ext.Time)
	require.ErrorAs(t, err, &me)

	_, err = reg.NewMetric("bad name", xk6ext.Counter, xk6ext.Default)
	require.ErrorAs(t, err, &me)
	_, err = reg.NewMetric("x", xk6ext.MetricType(9), xk6ext.Default)
	require.ErrorAs(t, err, &me)
	_, err = reg.NewMetric("x", xk6ext.Counter, xk6ext.ValueType(9))
	require.ErrorAs(t, err, &me)

	_, err = reg.NewMetric("iterations", xk6ext.Counter, xk6ext.Default)
	require.NoError(t, err)
	names := []string{}
	for _, m := range reg.Metrics() {
		names = append(names, m.Name)
	}
	assert.Equal(t, []string{"llm_ttft", "iterations"}, names, "declaration order")
}
