package js

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/metrics"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

const sampleData = `{
 "metrics": {
  "iterations": {"type": "counter", "contains": "default", "values": {"count": 2, "rate": 4},
                 "thresholds": {"count==2": {"ok": true}}},
  "llm_ttft{model:x}": {"type": "trend", "contains": "time", "values": {"avg": 10, "p(95)": 20},
                 "thresholds": {"p(95)<5": {"ok": false}}}
 },
 "root_group": {"name": "", "path": "", "id": "r", "groups": [{"name": "g", "path": "::g", "id": "g",
   "groups": [], "checks": [{"name": "c", "path": "::g::c", "id": "c", "passes": 3, "fails": 1}]}], "checks": []},
 "options": {"summaryTrendStats": ["avg", "p(95)"], "summaryTimeUnit": "ms"}
}`

func TestSummaryFromData(t *testing.T) {
	var data any
	require.NoError(t, json.Unmarshal([]byte(sampleData), &data))
	obs := &thresholdObservations{}
	obs.set([]metrics.ThresholdResult{{Metric: "iterations", Expr: "count==2", Stat: "count", Observed: 2, OK: true}})
	s, opts, indent, err := summaryFromData(data, map[string]any{"indent": "  ", "enableColors": true}, obs)
	require.NoError(t, err)
	assert.Equal(t, "  ", indent)
	assert.False(t, opts.NoColor)
	assert.Equal(t, []string{"avg", "p(95)"}, opts.TrendStats)
	assert.Equal(t, "ms", opts.TimeUnit)

	sub := s.Metrics["llm_ttft{model:x}"]
	require.NotNil(t, sub)
	assert.True(t, sub.Submetric)
	assert.Equal(t, "llm_ttft", sub.Parent)
	assert.Equal(t, "model:x", sub.Tags)
	assert.Equal(t, xk6ext.Trend, sub.Type)
	assert.Equal(t, xk6ext.Time, sub.Contains)

	require.Len(t, s.Thresholds, 2)
	assert.Equal(t, metrics.ThresholdResult{Metric: "iterations", Expr: "count==2", Stat: "count", Observed: 2, OK: true}, s.Thresholds[0])
	// Not among the runner's results: stat and value come from the data.
	assert.Equal(t, metrics.ThresholdResult{Metric: "llm_ttft{model:x}", Expr: "p(95)<5", Stat: "p(95)", Observed: 20, OK: false}, s.Thresholds[1])

	require.Len(t, s.RootGroup.Groups, 1)
	require.Len(t, s.RootGroup.Groups[0].Checks, 1)
	assert.Equal(t, int64(3), s.RootGroup.Groups[0].Checks[0].Passes)

	_, _, _, err = summaryFromData("not data", nil, obs)
	assert.Error(t, err)
	_, _, _, err = summaryFromData(map[string]any{"metrics": map[string]any{"x": map[string]any{"type": "histogram"}}}, nil, obs)
	assert.ErrorContains(t, err, "unknown type")
}

// FuzzSummaryFromData: whatever object a script hands textSummary, it is rendered or
// rejected with an error, never a panic.
func FuzzSummaryFromData(f *testing.F) {
	f.Add([]byte(sampleData))
	f.Add([]byte(`{"metrics": {}}`))
	f.Add([]byte(`{"metrics": {"a{": {"type": "rate", "values": {"rate": 1}, "thresholds": {"": {"ok": true}}}}}`))
	f.Add([]byte(`{"metrics": {"x": {"type": "gauge"}}, "root_group": {"groups": [null]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var data any
		if json.Unmarshal(raw, &data) != nil {
			return
		}
		s, opts, _, err := summaryFromData(data, nil, &thresholdObservations{})
		if err != nil {
			return
		}
		_ = s.Text(opts)
	})
}
