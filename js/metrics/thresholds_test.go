package metrics

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func TestParseExprValid(t *testing.T) {
	tests := []struct {
		expr  string
		typ   xk6ext.MetricType
		stat  string
		kind  statKind
		p     float64
		op    operator
		value float64
	}{
		{"p(95)<200", xk6ext.Trend, "p(95)", statPercentile, 95, opLT, 200},
		{"  p( 99.9 )  <=  1.5e3 ", xk6ext.Trend, "p(99.9)", statPercentile, 99.9, opLE, 1500},
		{"p(0)>0", xk6ext.Trend, "p(0)", statPercentile, 0, opGT, 0},
		{"p(100)>=-1", xk6ext.Trend, "p(100)", statPercentile, 100, opGE, -1},
		{"avg==3", xk6ext.Trend, "avg", statAvg, 0, opEQ, 3},
		{"min===3", xk6ext.Trend, "min", statMin, 0, opEQ, 3},
		{"max!=3", xk6ext.Trend, "max", statMax, 0, opNE, 3},
		{"med<1", xk6ext.Trend, "med", statMed, 0, opLT, 1},
		{"count>10", xk6ext.Counter, "count", statCount, 0, opGT, 10},
		{"rate>=0.5", xk6ext.Counter, "rate", statCounterRate, 0, opGE, 0.5},
		{"value<5", xk6ext.Gauge, "value", statValue, 0, opLT, 5},
		{"rate<0.01", xk6ext.Rate, "rate", statRate, 0, opLT, 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			th, reason := parseExpr(tt.expr, tt.typ)
			require.Empty(t, reason)
			assert.Equal(t, tt.expr, th.source)
			assert.Equal(t, tt.stat, th.stat)
			assert.Equal(t, tt.kind, th.kind)
			assert.Equal(t, tt.p, th.p)
			assert.Equal(t, tt.op, th.op)
			assert.Equal(t, tt.value, th.value)
		})
	}
}

func TestParseExprInvalid(t *testing.T) {
	tests := []struct {
		expr, want string
		typ        xk6ext.MetricType
	}{
		{"", "empty", xk6ext.Trend},
		{"p(95)", "no comparison operator", xk6ext.Trend},
		{"p(95)<", "missing value", xk6ext.Trend},
		{"<200", "missing aggregation", xk6ext.Trend},
		{"p(95)<abc", `"abc" is not a number`, xk6ext.Trend},
		{"p(95)<NaN", "not a number", xk6ext.Trend},
		{"p(95)=<2", "unknown operator", xk6ext.Trend},
		{"p(95)=2", "unknown operator", xk6ext.Trend},
		{"p(95)!2", "unknown operator", xk6ext.Trend},
		{"p(101)<2", `"p(101)" is not valid for a trend`, xk6ext.Trend},
		{"p(-1)<2", "not valid for a trend", xk6ext.Trend},
		{"p95<2", "not valid for a trend", xk6ext.Trend},
		{"P(95)<2", "not valid for a trend", xk6ext.Trend},
		{"rate<2", "use avg, min, max, med, p(N)", xk6ext.Trend},
		{"avg<2", "not valid for a counter metric (use count, rate)", xk6ext.Counter},
		{"min<2", "not valid for a gauge metric (use value)", xk6ext.Gauge},
		{"count<2", "not valid for a rate metric (use rate)", xk6ext.Rate},
		{"p(95)<1<2", "not a number", xk6ext.Trend},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			th, reason := parseExpr(tt.expr, tt.typ)
			assert.Nil(t, th)
			assert.Contains(t, reason, tt.want)
		})
	}
}

func TestParseMetricKey(t *testing.T) {
	tests := []struct {
		key, name, selector, reason string
		tags                        []tagPair
	}{
		{key: "llm_ttft", name: "llm_ttft"},
		{key: " llm_ttft ", name: "llm_ttft"},
		{key: "llm_ttft{model:x}", name: "llm_ttft", selector: "model:x", tags: []tagPair{{"model", "x"}}},
		{key: "llm_ttft{ model : 'x y' , status:\"200\" }", name: "llm_ttft", selector: "model:x y,status:200",
			tags: []tagPair{{"model", "x y"}, {"status", "200"}}},
		{key: "checks{group:::outer::inner}", name: "checks", selector: "group:::outer::inner",
			tags: []tagPair{{"group", "::outer::inner"}}},
		{key: "x{url:http://a:1/}", name: "x", selector: "url:http://a:1/", tags: []tagPair{{"url", "http://a:1/"}}},
		{key: "x{empty:}", name: "x", selector: "empty:", tags: []tagPair{{"empty", ""}}},
		{key: "x{}", reason: "empty submetric selector"},
		{key: "x{a:b", reason: "must end with '}'"},
		{key: "x}", reason: "without '{'"},
		{key: "x{a}", reason: `"a" is not tag:value`},
		{key: "x{:b}", reason: "empty tag name"},
		{key: "x{a:b,a:c}", reason: `tag "a" given twice`},
		{key: "x{a:{b}}", reason: "nested braces"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			name, tags, sel, reason := parseMetricKey(tt.key)
			if tt.reason != "" {
				assert.Contains(t, reason, tt.reason)
				return
			}
			require.Empty(t, reason)
			assert.Equal(t, tt.name, name)
			assert.Equal(t, tt.selector, sel)
			assert.Equal(t, tt.tags, tags)
		})
	}
}

func TestParseThresholds(t *testing.T) {
	reg, _ := testRegistry(t)
	th := mustThresholds(t, reg, `{
		"ttft": ["p(95)<200", {"threshold": "avg<100", "abortOnFail": true, "delayAbortEval": "10s"}],
		"ttft{model:x}": ["max<1000"],
		"ttft{ model : x }": [{"threshold": "min<1", "delayAbortEval": 1500}],
		"failed": []
	}`)
	assert.Equal(t, 4, th.Len())
	require.Len(t, th.sets, 3, "both spellings of the selector share one submetric")
	byName := map[string]*thresholdSet{}
	for _, s := range th.sets {
		byName[s.name] = s
	}
	sub := byName["ttft{model:x}"]
	require.NotNil(t, sub)
	require.Len(t, sub.items, 2)
	srcs := map[string]*threshold{}
	for _, it := range sub.items {
		srcs[it.source] = it
	}
	require.Contains(t, srcs, "min<1")
	assert.Equal(t, 1500*time.Millisecond, srcs["min<1"].delay)
	assert.Zero(t, srcs["max<1000"].delay)
	direct := byName["ttft"]
	require.Len(t, direct.items, 2)
	assert.True(t, direct.items[1].abortOnFail)
	assert.Equal(t, 10*time.Second, direct.items[1].delay)
	assert.False(t, direct.items[0].abortOnFail)
}

func TestParseThresholdsErrors(t *testing.T) {
	reg, _ := testRegistry(t)
	tests := []struct {
		name, js, metric, expr, want string
	}{
		{"unknown metric", `{"nope": ["p(95)<1"]}`, "nope", "", `no metric named "nope"`},
		{"unknown parent of submetric", `{"nope{a:b}": ["p(95)<1"]}`, "nope{a:b}", "", `no metric named "nope"`},
		{"bad selector", `{"ttft{a}": ["p(95)<1"]}`, "ttft{a}", "", "not tag:value"},
		{"not an array", `{"ttft": "p(95)<1"}`, "ttft", "", "must be an array"},
		{"number element", `{"ttft": [5]}`, "ttft", "", "string or an object"},
		{"bad expression", `{"ttft": ["p(95)<x"]}`, "ttft", "p(95)<x", "not a number"},
		{"wrong method for type", `{"failed": ["p(95)<1"]}`, "failed", "p(95)<1", "not valid for a rate metric"},
		{"object without threshold", `{"ttft": [{"abortOnFail": true}]}`, "ttft", "", `lacks "threshold"`},
		{"unknown object field", `{"ttft": [{"threshold": "avg<1", "abortOnFial": true}]}`, "ttft", "", "abortOnFial"},
		{"bad delay", `{"ttft": [{"threshold": "avg<1", "delayAbortEval": "soon"}]}`, "ttft", "avg<1", `"soon" is not a duration`},
		{"negative delay", `{"ttft": [{"threshold": "avg<1", "delayAbortEval": "-1s"}]}`, "ttft", "avg<1", "negative"},
		{"delay of wrong type", `{"ttft": [{"threshold": "avg<1", "delayAbortEval": true}]}`, "ttft", "avg<1", "duration string or milliseconds"},
		{"abortOnFail not bool", `{"ttft": [{"threshold": "avg<1", "abortOnFail": "yes"}]}`, "ttft", "", "bad threshold object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(tt.js), &raw))
			_, err := ParseThresholds(raw, reg)
			var te *ThresholdError
			require.True(t, errors.As(err, &te), "want *ThresholdError, got %v", err)
			assert.Equal(t, tt.metric, te.Metric)
			assert.Equal(t, tt.expr, te.Expr)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), tt.metric, "error names the metric")
		})
	}
}

func TestParseThresholdsNilRegistry(t *testing.T) {
	_, err := ParseThresholds(map[string]json.RawMessage{"x": json.RawMessage(`["count>0"]`)}, nil)
	var te *ThresholdError
	require.ErrorAs(t, err, &te)
	th, err := ParseThresholds(nil, nil)
	require.NoError(t, err)
	assert.Zero(t, th.Len())
}

// FuzzParseThresholds checks the parser never panics and that whatever it accepts
// evaluates to a definite result on an engine.
func FuzzParseThresholds(f *testing.F) {
	for _, s := range []string{
		`["p(95)<200"]`, `["avg <= 1", {"threshold": "max>0", "abortOnFail": true, "delayAbortEval": "1s"}]`,
		`[{"threshold": "p(99.9)===3", "delayAbortEval": 10}]`, `"x"`, `[1]`, `[{}]`, `["p(1e2)<1"]`,
		`["rate<0.1"]`, `["count>=1"]`, `["value!=0"]`,
	} {
		for _, key := range []string{"ttft", "ttft{model:x}", "failed", "reqs", "vus", "x{", "ttft{a:b,c:'d'}"} {
			f.Add(key, s)
		}
	}
	reg, ms := testRegistry(f)
	f.Fuzz(func(t *testing.T, key, list string) {
		th, err := ParseThresholds(map[string]json.RawMessage{key: json.RawMessage(list)}, reg)
		if err != nil {
			var te *ThresholdError
			if !errors.As(err, &te) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		e := NewEngine(reg, th)
		for _, m := range ms {
			e.Ingest([]xk6ext.Sample{sample(m, 1, "model", "x", "a", "b", "c", "d")})
		}
		res, _ := e.EvaluateThresholds(true)
		if len(res) != th.Len() {
			t.Fatalf("%d results for %d thresholds", len(res), th.Len())
		}
	})
}
