package metrics

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/tokens"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// TestEvaluateAggregations feeds known samples and checks every aggregation method
// against a hand-computed value, through every operator on both sides of it.
func TestEvaluateAggregations(t *testing.T) {
	reg, ms := testRegistry(t)
	clock := newFakeClock()

	// ttft 1..100: avg 50.5, min 1, max 100, med 50.5, p(75) = 1+0.75·99 = 75.25 (k6's
	// linear interpolation at p·(n−1); values chosen to be exact in binary).
	var batch []xk6ext.Sample
	for i := 1; i <= 100; i++ {
		batch = append(batch, sample(ms["ttft"], float64(i)))
	}
	batch = append(batch,
		sample(ms["reqs"], 3), sample(ms["reqs"], 7), // count 10, over 4 s: rate 2.5
		sample(ms["vus"], 9), sample(ms["vus"], 2), sample(ms["vus"], 4), // value 4
		sample(ms["failed"], 1), sample(ms["failed"], 0), sample(ms["failed"], 0), sample(ms["failed"], 2), // rate 0.5
	)
	want := []struct {
		metric, stat string
		v            float64
	}{
		{"ttft", "avg", 50.5}, {"ttft", "min", 1}, {"ttft", "max", 100}, {"ttft", "med", 50.5},
		{"ttft", "p(75)", 75.25}, {"ttft", "p(0)", 1}, {"ttft", "p(100)", 100},
		{"reqs", "count", 10}, {"reqs", "rate", 2.5},
		{"vus", "value", 4},
		{"failed", "rate", 0.5},
	}
	ops := []struct {
		op               string
		below, at, above bool // outcome when the bound is below, at, above the observed value
	}{
		{"<", false, false, true},
		{"<=", false, true, true},
		{">", true, false, false},
		{">=", true, true, false},
		{"==", false, true, false},
		{"===", false, true, false},
		{"!=", true, false, true},
	}
	for _, w := range want {
		for _, o := range ops {
			for _, c := range []struct {
				bound float64
				ok    bool
			}{{w.v - 0.5, o.below}, {w.v, o.at}, {w.v + 0.5, o.above}} {
				expr := fmt.Sprintf("%s %s %v", w.stat, o.op, c.bound)
				t.Run(w.metric+" "+expr, func(t *testing.T) {
					th := mustThresholds(t, reg, fmt.Sprintf(`{%q: [%q]}`, w.metric, expr))
					e := NewEngine(reg, th, WithClock(clock))
					e.SetStart(clock.Now())
					e.SetEnd(clock.Now().Add(4 * time.Second))
					e.Ingest(batch)
					res, abort := e.EvaluateThresholds(false)
					require.Len(t, res, 1)
					assert.False(t, abort)
					r := res[0]
					assert.InDelta(t, w.v, r.Observed, 1e-9)
					assert.Equal(t, c.ok, r.OK)
					assert.Equal(t, w.metric, r.Metric)
					assert.Equal(t, expr, r.Expr)
					assert.Equal(t, w.stat, r.Stat)
				})
			}
		}
	}
}

func TestSubmetricSelection(t *testing.T) {
	reg, ms := testRegistry(t)
	th := mustThresholds(t, reg, `{
		"ttft{model:a}": ["max<=10"],
		"ttft{model:a,status:200}": ["max<=5"],
		"ttft{model:b}": ["min>100"],
		"checks{group:::g}": ["rate==1"]
	}`)
	e := NewEngine(reg, th)
	e.Ingest([]xk6ext.Sample{
		sample(ms["ttft"], 5, "model", "a", "status", "200"),
		sample(ms["ttft"], 10, "model", "a", "status", "500"),
		sample(ms["ttft"], 50, "model", "c"),
		sample(ms["ttft"], 7, "status", "200"), // no model tag: matches neither
		sample(ms["checks"], 1, "group", "::g", "check", "c1"),
		sample(ms["checks"], 0, "group", "", "check", "c1"),
	})
	res, _ := e.EvaluateThresholds(false)
	got := map[string]ThresholdResult{}
	for _, r := range res {
		got[r.Metric] = r
	}
	assert.Equal(t, 10.0, got["ttft{model:a}"].Observed)
	assert.True(t, got["ttft{model:a}"].OK)
	assert.Equal(t, 5.0, got["ttft{model:a,status:200}"].Observed)
	assert.True(t, got["checks{group:::g}"].OK)
	assert.Equal(t, 1.0, got["checks{group:::g}"].Observed)
	_, seen := got["ttft{model:b}"]
	assert.False(t, seen, "a submetric without samples is not evaluated while the test runs")

	res, _ = e.EvaluateThresholds(true)
	got = map[string]ThresholdResult{}
	for _, r := range res {
		got[r.Metric] = r
	}
	require.Contains(t, got, "ttft{model:b}")
	assert.False(t, got["ttft{model:b}"].OK, "at the end an empty trend reads 0, as k6")

	sum := e.Snapshot()
	assert.Equal(t, int64(4), sum.Trend("ttft").Count(), "the parent sees every sample")
	assert.Equal(t, int64(2), sum.Trend("ttft{model:a}").Count())
	assert.Equal(t, int64(0), sum.Trend("ttft{model:b}").Count())
	assert.True(t, sum.Metrics["ttft{model:a}"].Submetric)
	assert.Equal(t, "ttft", sum.Metrics["ttft{model:a}"].Parent)
	assert.Equal(t, "model:a,status:200", sum.Metrics["ttft{model:a,status:200}"].Tags)
}

func TestEmptyMetricThresholds(t *testing.T) {
	reg, _ := testRegistry(t)
	th := mustThresholds(t, reg, `{"ttft": ["p(95)<200"], "reqs": ["count>0"], "failed": ["rate<0.1"]}`)
	e := NewEngine(reg, th)
	res, abort := e.EvaluateThresholds(false)
	assert.Empty(t, res, "empty metrics are skipped while running")
	assert.False(t, abort)
	res, _ = e.EvaluateThresholds(true)
	require.Len(t, res, 3)
	ok := map[string]bool{}
	for _, r := range res {
		ok[r.Metric] = r.OK
		assert.Zero(t, r.Observed)
	}
	assert.Equal(t, map[string]bool{"ttft": true, "reqs": false, "failed": true}, ok)
	// Metrics with thresholds appear in the summary even without samples (k6 does too).
	sum := e.Snapshot()
	assert.Contains(t, sum.Metrics, "ttft")
	assert.Contains(t, sum.Metrics, "reqs")
	assert.NotContains(t, sum.Metrics, "vus")
	assert.True(t, sum.Failed())
}

func TestAbortOnFailDelay(t *testing.T) {
	reg, ms := testRegistry(t)
	clock := newFakeClock()
	th := mustThresholds(t, reg, `{
		"ttft": [{"threshold": "p(95)<100", "abortOnFail": true, "delayAbortEval": "10s"}],
		"failed": ["rate<0.5"]
	}`)
	e := NewEngine(reg, th, WithClock(clock))
	e.SetStart(clock.Now())

	e.Ingest([]xk6ext.Sample{sample(ms["ttft"], 50), sample(ms["failed"], 1)})
	res, abort := e.EvaluateThresholds(false)
	require.Len(t, res, 2)
	assert.False(t, abort, "the failing threshold does not abort: no abortOnFail")

	e.Ingest([]xk6ext.Sample{sample(ms["ttft"], 500)})
	clock.Advance(9 * time.Second)
	_, abort = e.EvaluateThresholds(false)
	assert.False(t, abort, "failing, but delayAbortEval has not passed")
	assert.Equal(t, 9*time.Second, e.Elapsed())

	clock.Advance(time.Second)
	res, abort = e.EvaluateThresholds(false)
	assert.True(t, abort, "failing after delayAbortEval")
	for _, r := range res {
		if r.Metric == "ttft" {
			assert.True(t, r.AbortOnFail)
			assert.False(t, r.OK)
		}
	}

	// Recovery: once it passes again there is nothing to abort for.
	for range 100 {
		e.Ingest([]xk6ext.Sample{sample(ms["ttft"], 1)})
	}
	_, abort = e.EvaluateThresholds(false)
	assert.False(t, abort)
}

func TestAbortWithoutDelay(t *testing.T) {
	reg, ms := testRegistry(t)
	clock := newFakeClock()
	th := mustThresholds(t, reg, `{"reqs": [{"threshold": "count<2", "abortOnFail": true}]}`)
	e := NewEngine(reg, th, WithClock(clock))
	e.SetStart(clock.Now())
	e.Ingest([]xk6ext.Sample{sample(ms["reqs"], 1)})
	_, abort := e.EvaluateThresholds(false)
	assert.False(t, abort)
	e.Ingest([]xk6ext.Sample{sample(ms["reqs"], 1)})
	_, abort = e.EvaluateThresholds(false)
	assert.True(t, abort, "no delay: abort at the first failing evaluation")
}

func TestElapsed(t *testing.T) {
	reg, ms := testRegistry(t)
	clock := newFakeClock()
	e := NewEngine(reg, Thresholds{}, WithClock(clock))
	assert.Zero(t, e.Elapsed(), "not started")
	e.SetStart(clock.Now())
	clock.Advance(2 * time.Second)
	assert.Equal(t, 2*time.Second, e.Elapsed())
	e.Ingest([]xk6ext.Sample{sample(ms["reqs"], 10)})
	assert.Equal(t, 5.0, e.Snapshot().Metrics["reqs"].Values["rate"])
	e.SetEnd(clock.Now().Add(3 * time.Second))
	clock.Advance(time.Hour)
	assert.Equal(t, 5*time.Second, e.Elapsed(), "frozen by SetEnd")
	assert.Equal(t, 2.0, e.Snapshot().Metrics["reqs"].Values["rate"])
	assert.Equal(t, 5*time.Second, e.Snapshot().Duration)
}

func TestGaugeLastIngestedWins(t *testing.T) {
	reg, ms := testRegistry(t)
	e := NewEngine(reg, Thresholds{})
	e.Ingest([]xk6ext.Sample{sample(ms["vus"], 5), sample(ms["vus"], 1)})
	e.Ingest([]xk6ext.Sample{sample(ms["vus"], 3)})
	v := e.Snapshot().Metrics["vus"].Values
	assert.Equal(t, map[string]float64{"value": 3, "min": 1, "max": 5}, v)
}

func TestIngestDropsInvalidSamples(t *testing.T) {
	reg, ms := testRegistry(t)
	e := NewEngine(reg, Thresholds{})
	e.Ingest([]xk6ext.Sample{{Value: 1}, sample(ms["reqs"], 2),
		sample(ms["reqs"], math.NaN()), sample(ms["reqs"], math.Inf(1)), sample(ms["vus"], math.Inf(-1))})
	e.Ingest(nil)
	assert.Equal(t, 2.0, e.Snapshot().Counter("reqs"), "non-finite values are dropped")
	assert.NotContains(t, e.Snapshot().Metrics, "vus")
}

func TestUnregisteredMetricIsAggregated(t *testing.T) {
	// Go-native callers may feed metrics they built themselves.
	e := NewEngine(nil, Thresholds{})
	m := &xk6ext.Metric{Name: "own", Type: xk6ext.Counter}
	e.Ingest([]xk6ext.Sample{{Metric: m, Value: 4}})
	assert.Equal(t, 4.0, e.Snapshot().Counter("own"))
	assert.Equal(t, 4.0, e.Counter("own"))
}

func TestEngineCounter(t *testing.T) {
	reg, ms := testRegistry(t)
	e := NewEngine(reg, Thresholds{})
	assert.Zero(t, e.Counter("reqs"), "declared, no samples")
	e.Ingest([]xk6ext.Sample{sample(ms["reqs"], 2), sample(ms["reqs"], 3), sample(ms["vus"], 7)})
	assert.Equal(t, 5.0, e.Counter("reqs"))
	assert.Zero(t, e.Counter("vus"), "not a counter")
	assert.Zero(t, e.Counter("nope"))
}

// TestConcurrentIngest runs Ingest, EvaluateThresholds and Snapshot from many
// goroutines (under -race in CI) and checks the totals are exact.
func TestConcurrentIngest(t *testing.T) {
	reg, ms := testRegistry(t)
	th := mustThresholds(t, reg, `{"ttft{model:a}": ["p(95)<1000"], "reqs": ["count>0"]}`)
	e := NewEngine(reg, th)
	const workers, batches, per = 8, 200, 10
	var wg sync.WaitGroup
	done := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-done:
				return
			default:
				e.EvaluateThresholds(false)
				s := e.Snapshot()
				if tv := s.Trend("ttft"); tv != nil {
					_ = tv.P(99)
				}
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			model := "a"
			if w%2 == 1 {
				model = "b"
			}
			buf := make([]xk6ext.Sample, 0, per*3)
			tags := map[string]string{"model": model}
			chk := map[string]string{"check": "ok", "group": "::g"}
			for b := range batches {
				buf = buf[:0]
				for i := range per {
					buf = append(buf,
						xk6ext.Sample{Metric: ms["ttft"], Value: float64(i), Tags: tags},
						xk6ext.Sample{Metric: ms["reqs"], Value: 1, Tags: tags},
						xk6ext.Sample{Metric: ms["checks"], Value: float64((b + i) % 2), Tags: chk})
				}
				e.Ingest(buf)
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()

	s := e.Snapshot()
	const total = workers * batches * per
	assert.Equal(t, float64(total), s.Counter("reqs"))
	assert.Equal(t, int64(total), s.Trend("ttft").Count())
	assert.Equal(t, int64(total/2), s.Trend("ttft{model:a}").Count())
	passes, fails := s.Check("ok")
	assert.Equal(t, int64(total/2), passes)
	assert.Equal(t, int64(total/2), fails)
	assert.Equal(t, 0.5, s.Rate("checks"))
}

// TestIngestAllocs proves the steady-state hot path does not allocate, with and without
// submetrics and with checks. Trend samples stay below the exact limit here, whose
// slice growth is amortised; the sink's own AllocsPerRun test covers Add.
func TestIngestAllocs(t *testing.T) {
	reg, ms := testRegistry(t)
	th := mustThresholds(t, reg, `{"ttft{model:a}": ["p(95)<1"], "ttft{model:b,status:200}": ["avg<1"], "failed": ["rate<1"]}`)
	e := NewEngine(reg, th)
	tags := map[string]string{"model": "a", "status": "200"}
	chk := map[string]string{"check": "ok", "group": ""}
	batch := []xk6ext.Sample{
		{Metric: ms["reqs"], Value: 1, Tags: tags},
		{Metric: ms["vus"], Value: 1, Tags: tags},
		{Metric: ms["failed"], Value: 0, Tags: tags},
		{Metric: ms["checks"], Value: 1, Tags: chk},
		{Metric: ms["group_duration"], Value: 1, Tags: chk},
	}
	e.Ingest(batch) // first sight of each series allocates
	allocs := testing.AllocsPerRun(1000, func() { e.Ingest(batch) })
	assert.Zero(t, allocs)

	trend := []xk6ext.Sample{{Metric: ms["ttft"], Value: 1, Tags: tags}}
	for range 5000 { // let the exact-mode slices grow first
		e.Ingest(trend)
	}
	allocs = testing.AllocsPerRun(100, func() { e.Ingest(trend) })
	assert.LessOrEqual(t, allocs, 0.1, "trend ingest amortised to ~0 allocs")
}

func TestWithTrendOptions(t *testing.T) {
	reg, ms := testRegistry(t)
	batch := make([]xk6ext.Sample, 0, 3000)
	for i := range 3000 {
		batch = append(batch, sample(ms["ttft"], float64(i+1)))
	}
	tests := []struct {
		name  string
		opts  []Option
		exact bool
	}{
		{"default keeps 3000 exact", nil, true},
		{"sketch from the first sample", []Option{WithTrendOptions(tokens.WithExactLimit(0))}, false},
		{"limit below the count", []Option{WithTrendOptions(tokens.WithExactLimit(1000))}, false},
		{"limit above the count", []Option{WithTrendOptions(tokens.WithExactLimit(5000))}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(reg, Thresholds{}, tt.opts...)
			e.Ingest(batch)
			tv := e.Snapshot().Trend("ttft")
			require.NotNil(t, tv)
			assert.Equal(t, tt.exact, tv.Exact(), "the snapshot keeps the live sink's mode")
			assert.Equal(t, int64(3000), tv.Count())
			// p(50) of 1..3000 is 1500.5; the sketch stays within its relative error.
			assert.InEpsilon(t, 1500.5, tv.Med(), tokens.SketchRelativeError)
			if tt.exact {
				assert.Equal(t, 1500.5, tv.Med())
			}
		})
	}
}

// TestTrendMemoryBounded: past the exact limit a trend series switches to the sketch,
// whose size does not grow with the sample count, and stays within its error bound.
func TestTrendMemoryBounded(t *testing.T) {
	reg, ms := testRegistry(t)
	th := mustThresholds(t, reg, `{"ttft{model:a}": ["p(99)<1e9"]}`)
	e := NewEngine(reg, th)
	tags := map[string]string{"model": "a"}
	batch := make([]xk6ext.Sample, 1000)
	n := tokens.DefaultExactLimit + 34_464 // 100,000
	for i := 0; i < n; i += len(batch) {
		for j := range batch {
			batch[j] = xk6ext.Sample{Metric: ms["ttft"], Value: float64(i + j + 1), Tags: tags}
		}
		e.Ingest(batch)
	}
	s := e.Snapshot()
	for _, name := range []string{"ttft", "ttft{model:a}"} {
		tv := s.Trend(name)
		require.NotNil(t, tv, name)
		assert.False(t, tv.Exact(), "%s switched to the sketch", name)
		assert.Equal(t, int64(n), tv.Count())
		assert.Equal(t, 1.0, tv.Min())
		assert.Equal(t, float64(n), tv.Max())
		exact := 1 + 0.99*float64(n-1)
		assert.InEpsilon(t, exact, tv.P(99), tokens.SketchRelativeError, name)
	}
}

// TestSubmetricMemo: the per-batch match memo must follow the tag map's identity within
// a batch and be forgotten between batches, when a caller may refill the same map.
func TestSubmetricMemo(t *testing.T) {
	reg, ms := testRegistry(t)
	th := mustThresholds(t, reg, `{"ttft{model:a}": ["max<1e9"], "ttft{model:b}": ["max<1e9"]}`)
	e := NewEngine(reg, th)
	a := map[string]string{"model": "a"}
	b := map[string]string{"model": "b"}
	e.Ingest([]xk6ext.Sample{
		{Metric: ms["ttft"], Value: 1, Tags: a}, {Metric: ms["ttft"], Value: 1, Tags: a},
		{Metric: ms["ttft"], Value: 1, Tags: b}, {Metric: ms["ttft"], Value: 1, Tags: nil},
		{Metric: ms["ttft"], Value: 1, Tags: b}, {Metric: ms["ttft"], Value: 1, Tags: a},
	}) // ends on map a, so the next batch starts where the memo holds a's match
	a["model"] = "b" // the same map, refilled for the next batch
	e.Ingest([]xk6ext.Sample{{Metric: ms["ttft"], Value: 1, Tags: a}})
	s := e.Snapshot()
	assert.Equal(t, int64(3), s.Trend("ttft{model:a}").Count())
	assert.Equal(t, int64(3), s.Trend("ttft{model:b}").Count())
	assert.Equal(t, int64(7), s.Trend("ttft").Count())
}

// TestManySubmetrics covers series with more submetrics than the memo has bits.
func TestManySubmetrics(t *testing.T) {
	reg, ms := testRegistry(t)
	var js strings.Builder
	js.WriteString("{")
	for i := range maxMemoSubs + 6 {
		if i > 0 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, `"reqs{n:%d}": ["count>0"]`, i)
	}
	js.WriteString("}")
	e := NewEngine(reg, mustThresholds(t, reg, js.String()))
	for i := range maxMemoSubs + 6 {
		e.Ingest([]xk6ext.Sample{sample(ms["reqs"], float64(i+1), "n", fmt.Sprint(i))})
	}
	s := e.Snapshot()
	for i := range maxMemoSubs + 6 {
		assert.Equal(t, float64(i+1), s.Counter(fmt.Sprintf("reqs{n:%d}", i)))
	}
	res, _ := e.EvaluateThresholds(true)
	for _, r := range res {
		assert.True(t, r.OK, r.Metric)
	}
}
