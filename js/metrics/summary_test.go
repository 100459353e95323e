package metrics

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// fixtureSummary builds a run with every metric kind, a submetric, thresholds passing
// and failing, and checks at the root and in nested groups.
func fixtureSummary(t *testing.T) *Summary {
	t.Helper()
	reg, ms := testRegistry(t)
	clock := newFakeClock()
	th := mustThresholds(t, reg, `{
		"ttft": ["p(95)<200", "avg<1"],
		"ttft{model:a}": ["max<1000"],
		"failed": [{"threshold": "rate<0.5", "abortOnFail": true}],
		"reqs": ["count>1"]
	}`)
	e := NewEngine(reg, th, WithClock(clock))
	e.SetStart(clock.Now())
	var batch []xk6ext.Sample
	for i := 1; i <= 10; i++ {
		model := "a"
		if i > 5 {
			model = "b"
		}
		batch = append(batch, sample(ms["ttft"], float64(i*10), "model", model))
	}
	batch = append(batch,
		sample(ms["tps"], 52.125),
		sample(ms["reqs"], 4), sample(ms["reqs"], 6),
		sample(ms["data_received"], 1234), sample(ms["data_received"], 1000),
		sample(ms["vus"], 2), sample(ms["vus"], 5), sample(ms["vus"], 3),
		sample(ms["failed"], 0), sample(ms["failed"], 0), sample(ms["failed"], 0), sample(ms["failed"], 1),
		sample(ms["checks"], 1, "check", "status is 200", "group", ""),
		sample(ms["checks"], 1, "check", "status is 200", "group", ""),
		sample(ms["checks"], 0, "check", "has text", "group", "::outer::inner"),
		sample(ms["checks"], 1, "check", "has text", "group", "::outer::inner"),
		sample(ms["group_duration"], 3, "group", "::lonely"),
	)
	e.Ingest(batch)
	e.SetEnd(clock.Now().Add(2 * time.Second))
	return e.Snapshot()
}

func TestSnapshotValues(t *testing.T) {
	s := fixtureSummary(t)
	assert.Equal(t, 2*time.Second, s.Duration)
	assert.Equal(t, map[string]float64{"count": 10, "rate": 5}, s.Metrics["reqs"].Values)
	assert.Equal(t, map[string]float64{"value": 3, "min": 2, "max": 5}, s.Metrics["vus"].Values)
	assert.Equal(t, map[string]float64{"rate": 0.25, "passes": 1, "fails": 3}, s.Metrics["failed"].Values)
	tv := s.Metrics["ttft"].Values
	assert.Equal(t, 55.0, tv["avg"])
	assert.Equal(t, 10.0, tv["min"])
	assert.Equal(t, 55.0, tv["med"])
	assert.Equal(t, 100.0, tv["max"])
	assert.InDelta(t, 91.0, tv["p(90)"], 1e-9)
	assert.InDelta(t, 95.5, tv["p(95)"], 1e-9)
	assert.Equal(t, 10.0, tv["count"])
	assert.Equal(t, map[string]bool{"p(95)<200": true, "avg<1": false}, s.Metrics["ttft"].Thresholds)
	assert.Equal(t, 50.0, s.Metrics["ttft{model:a}"].Values["max"])
	assert.Nil(t, s.Metrics["vus"].Thresholds)

	tr := s.Trend("ttft")
	require.NotNil(t, tr)
	assert.Equal(t, int64(10), tr.Count())
	assert.InDelta(t, 99.1, tr.P(99), 1e-9)
	assert.True(t, tr.Exact())
	v, ok := tr.Stat("p(99.9)")
	assert.True(t, ok)
	assert.InDelta(t, 99.91, v, 1e-9)
	assert.Nil(t, s.Trend("reqs"), "not a trend")
	assert.Nil(t, s.Trend("nope"))
	assert.Equal(t, 0.25, s.Rate("failed"))
	assert.Equal(t, 10.0, s.Counter("reqs"))
	assert.Equal(t, 3.0, s.Gauge("vus"))
	assert.Zero(t, s.Counter("vus"), "wrong type reads 0")
	p, f := s.Check("has text")
	assert.Equal(t, [2]int64{1, 1}, [2]int64{p, f})
	p, f = s.Check("::outer::inner::has text")
	assert.Equal(t, [2]int64{1, 1}, [2]int64{p, f})
	p, f = s.Check("::has text")
	assert.Equal(t, [2]int64{0, 0}, [2]int64{p, f})
	assert.True(t, s.Failed())
	require.Len(t, s.Thresholds, 5)
	for i := 1; i < len(s.Thresholds); i++ {
		assert.LessOrEqual(t, s.Thresholds[i-1].Metric, s.Thresholds[i].Metric, "sorted by metric")
	}
}

func TestGroupTree(t *testing.T) {
	g := fixtureSummary(t).RootGroup
	require.NotNil(t, g)
	assert.Equal(t, "", g.Name)
	assert.Equal(t, "", g.Path)
	assert.Equal(t, "d41d8cd98f00b204e9800998ecf8427e", g.ID, "md5 of the empty path, as k6")
	require.Len(t, g.Checks, 1)
	assert.Equal(t, Check{Name: "status is 200", Path: "::status is 200", ID: pathID("::status is 200"), Passes: 2}, *g.Checks[0])
	require.Len(t, g.Groups, 2)
	outer := g.Groups[0]
	assert.Equal(t, "outer", outer.Name)
	assert.Equal(t, "::outer", outer.Path)
	assert.Empty(t, outer.Checks)
	require.Len(t, outer.Groups, 1)
	inner := outer.Groups[0]
	assert.Equal(t, "inner", inner.Name)
	assert.Equal(t, "::outer::inner", inner.Path)
	require.Len(t, inner.Checks, 1)
	assert.Equal(t, "::outer::inner::has text", inner.Checks[0].Path)
	assert.Equal(t, "lonely", g.Groups[1].Name, "group_duration samples make groups appear")
}

func TestHandleSummaryDataShape(t *testing.T) {
	s := fixtureSummary(t)
	data := s.HandleSummaryData(SummaryOptions{StdoutTTY: true})
	// Round-trip through JSON, as a script sees it.
	raw, err := json.Marshal(data)
	require.NoError(t, err)
	var d struct {
		Metrics map[string]struct {
			Type       string                     `json:"type"`
			Contains   string                     `json:"contains"`
			Values     map[string]float64         `json:"values"`
			Thresholds map[string]map[string]bool `json:"thresholds"`
		} `json:"metrics"`
		RootGroup map[string]json.RawMessage `json:"root_group"`
		Options   struct {
			SummaryTrendStats []string `json:"summaryTrendStats"`
			SummaryTimeUnit   string   `json:"summaryTimeUnit"`
			NoColor           bool     `json:"noColor"`
		} `json:"options"`
		State map[string]any `json:"state"`
	}
	dec := json.NewDecoder(bytesReader(raw))
	require.NoError(t, dec.Decode(&d))
	assert.Len(t, data, 4, "metrics, root_group, options, state")

	ttft := d.Metrics["ttft"]
	assert.Equal(t, "trend", ttft.Type)
	assert.Equal(t, "time", ttft.Contains)
	assert.ElementsMatch(t, []string{"avg", "min", "med", "max", "p(90)", "p(95)"}, keys(ttft.Values))
	assert.Equal(t, map[string]map[string]bool{"p(95)<200": {"ok": true}, "avg<1": {"ok": false}}, ttft.Thresholds)
	assert.Equal(t, "counter", d.Metrics["reqs"].Type)
	assert.Equal(t, "default", d.Metrics["reqs"].Contains)
	assert.Equal(t, map[string]float64{"count": 10, "rate": 5}, d.Metrics["reqs"].Values)
	assert.Equal(t, "data", d.Metrics["data_received"].Contains)
	assert.Equal(t, map[string]float64{"value": 3, "min": 2, "max": 5}, d.Metrics["vus"].Values)
	assert.Equal(t, "gauge", d.Metrics["vus"].Type)
	assert.Equal(t, map[string]float64{"rate": 0.25, "passes": 1, "fails": 3}, d.Metrics["failed"].Values)
	assert.Equal(t, "rate", d.Metrics["failed"].Type)
	assert.Nil(t, d.Metrics["vus"].Thresholds, "no thresholds key without thresholds")
	sub := d.Metrics["ttft{model:a}"]
	assert.Equal(t, "trend", sub.Type)
	assert.Equal(t, 50.0, sub.Values["max"])

	assert.Equal(t, DefaultTrendStats, d.Options.SummaryTrendStats)
	assert.Equal(t, "", d.Options.SummaryTimeUnit)
	assert.False(t, d.Options.NoColor)
	assert.Equal(t, map[string]any{"isStdOutTTY": true, "isStdErrTTY": false, "testRunDurationMs": 2000.0}, d.State)

	var root struct {
		Name, Path, ID string
		Groups         []map[string]any
		Checks         []map[string]any
	}
	require.NoError(t, json.Unmarshal(raw, &struct {
		R *struct {
			Name, Path, ID string
			Groups         []map[string]any
			Checks         []map[string]any
		} `json:"root_group"`
	}{R: (*struct {
		Name, Path, ID string
		Groups         []map[string]any
		Checks         []map[string]any
	})(&root)}))
	assert.ElementsMatch(t, []string{"name", "path", "id", "groups", "checks"}, keysOf(d.RootGroup))
	assert.Equal(t, "d41d8cd98f00b204e9800998ecf8427e", root.ID)
	require.Len(t, root.Checks, 1)
	assert.Equal(t, map[string]any{"name": "status is 200", "path": "::status is 200",
		"id": pathID("::status is 200"), "passes": 2.0, "fails": 0.0}, root.Checks[0])
	require.Len(t, root.Groups, 2)
	assert.Equal(t, "outer", root.Groups[0]["name"])
	inner := root.Groups[0]["groups"].([]any)[0].(map[string]any)
	assert.Equal(t, "::outer::inner", inner["path"])
	assert.Len(t, inner["checks"].([]any), 1)

	// summaryTrendStats decides the trend values.
	data = s.HandleSummaryData(SummaryOptions{TrendStats: []string{"p(99)", "count"}, TimeUnit: "ms", NoColor: true})
	vals := data["metrics"].(map[string]any)["ttft"].(map[string]any)["values"].(map[string]any)
	assert.Len(t, vals, 2)
	assert.InDelta(t, 99.1, vals["p(99)"].(float64), 1e-9)
	assert.Equal(t, 10.0, vals["count"])
	opts := data["options"].(map[string]any)
	assert.Equal(t, "ms", opts["summaryTimeUnit"])
	assert.Equal(t, true, opts["noColor"])
}

func TestExportJSONShape(t *testing.T) {
	s := fixtureSummary(t)
	raw, err := s.ExportJSON(SummaryOptions{})
	require.NoError(t, err)
	var d struct {
		RootGroup struct {
			Name   string                     `json:"name"`
			Path   string                     `json:"path"`
			ID     string                     `json:"id"`
			Groups map[string]json.RawMessage `json:"groups"`
			Checks map[string]map[string]any  `json:"checks"`
		} `json:"root_group"`
		Metrics map[string]map[string]any `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))

	ttft := d.Metrics["ttft"]
	assert.ElementsMatch(t, []string{"avg", "min", "med", "max", "p(90)", "p(95)", "thresholds"}, keysOf(ttft))
	assert.Equal(t, map[string]any{"p(95)<200": false, "avg<1": true}, ttft["thresholds"],
		"export thresholds map expression → failed")
	assert.Equal(t, 100.0, ttft["max"])
	assert.Equal(t, map[string]any{"count": 10.0, "rate": 5.0, "thresholds": map[string]any{"count>1": false}}, d.Metrics["reqs"])
	assert.Equal(t, map[string]any{"value": 3.0, "min": 2.0, "max": 5.0}, d.Metrics["vus"])
	assert.Equal(t, map[string]any{"passes": 1.0, "fails": 3.0, "value": 0.25,
		"thresholds": map[string]any{"rate<0.5": false}}, d.Metrics["failed"])
	assert.Equal(t, map[string]any{"passes": 3.0, "fails": 1.0, "value": 0.75}, d.Metrics["checks"])
	assert.Contains(t, d.Metrics, "ttft{model:a}")

	assert.Equal(t, "d41d8cd98f00b204e9800998ecf8427e", d.RootGroup.ID)
	assert.Equal(t, map[string]map[string]any{"status is 200": {"name": "status is 200", "path": "::status is 200",
		"id": pathID("::status is 200"), "passes": 2.0, "fails": 0.0}}, d.RootGroup.Checks)
	assert.ElementsMatch(t, []string{"outer", "lonely"}, keysOf(d.RootGroup.Groups))
	var outer struct {
		Path   string                     `json:"path"`
		Groups map[string]json.RawMessage `json:"groups"`
	}
	require.NoError(t, json.Unmarshal(d.RootGroup.Groups["outer"], &outer))
	assert.Equal(t, "::outer", outer.Path)
	assert.Contains(t, outer.Groups, "inner")

	raw, err = s.ExportJSON(SummaryOptions{TrendStats: []string{"min", "p(99.9)"}})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &d))
	assert.ElementsMatch(t, []string{"min", "p(99.9)"}, keysOf(d.Metrics["tps"]))
}

func TestValidateTrendStatsAndTimeUnit(t *testing.T) {
	assert.NoError(t, ValidateTrendStats([]string{"avg", "min", "med", "max", "count", "p(90)", "p(99.99)", "p(0)", "p(100)"}))
	for _, bad := range []string{"sum", "p(101)", "p95", "mean", "", "P(90)"} {
		err := ValidateTrendStats([]string{"avg", bad})
		var se *StatError
		require.ErrorAs(t, err, &se, bad)
		assert.Equal(t, bad, se.Stat)
	}
	for _, u := range []string{"", "s", "ms", "us"} {
		assert.NoError(t, ValidateTimeUnit(u), u)
	}
	assert.Error(t, ValidateTimeUnit("min"))
}

func TestEmptySummary(t *testing.T) {
	s := NewEngine(NewRegistry(), Thresholds{}).Snapshot()
	assert.Empty(t, s.Metrics)
	raw, err := s.ExportJSON(SummaryOptions{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"metrics":{},"root_group":{"name":"","path":"","id":"d41d8cd98f00b204e9800998ecf8427e","groups":{},"checks":{}}}`, string(raw))
	data := s.HandleSummaryData(SummaryOptions{})
	assert.Len(t, data["root_group"].(map[string]any)["checks"], 0)
	assert.NotContains(t, s.Text(SummaryOptions{NoColor: true}), "THRESHOLDS")
	// A zero Summary (not from an engine) is usable too.
	var z Summary
	assert.NotPanics(t, func() { _ = z.Text(SummaryOptions{}); _, _ = z.ExportJSON(SummaryOptions{}) })
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
