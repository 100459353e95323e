package tokens

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/llm"
)

const msec = time.Millisecond

type sample struct {
	name string
	v    float64
}

func collect(r *llm.Result, slo SLO) []sample {
	var out []sample
	Visit(r, slo, func(name string, v float64) { out = append(out, sample{name, v}) })
	return out
}

// Hand-built results covering reasoning, one token, failures and multi-token chunks.
var (
	resReasoning = &llm.Result{
		Model: "m", Dialect: llm.OpenAIChat, Status: 200, FinishReason: "stop",
		TTFB: 20 * msec, TTFT: 100 * msec, TTFO: 300 * msec,
		ITL: []time.Duration{50 * msec, 150 * msec, 100 * msec, 100 * msec},
		E2E: 500 * msec, Duration: 510 * msec,
		PromptTokens: 12, CompletionTokens: 9, ReasoningTokens: 4, TokenSource: llm.SourceUsage,
		Chunks: 7, ContentChunks: 5,
	}
	resOneToken = &llm.Result{
		Status: 200, FinishReason: "length", TTFB: 10 * msec, TTFT: 80 * msec, TTFO: 80 * msec,
		E2E: 80 * msec, Duration: 81 * msec, PromptTokens: 3, CompletionTokens: 1,
	}
	resNetwork = &llm.Result{
		Err: errors.New("dial tcp: connection refused"), ErrorType: llm.ErrNetwork, Duration: 2 * msec,
	}
	resRateLimited = &llm.Result{
		Status: 429, Err: errors.New("429"), ErrorType: llm.ErrRateLimited, TTFB: 3 * msec, Duration: 4 * msec,
	}
	// 12 tokens in 4 chunks of 3: three ITL gaps, TPOT over 11 token intervals.
	resPacked = &llm.Result{
		Status: 200, FinishReason: "stop", TTFB: 5 * msec, TTFT: 50 * msec, TTFO: 50 * msec,
		ITL: []time.Duration{30 * msec, 30 * msec, 50 * msec}, E2E: 160 * msec, Duration: 161 * msec,
		PromptTokens: 7, CompletionTokens: 12, Chunks: 4, ContentChunks: 4,
	}
	// Cut mid-stream: failed, but the first token and two gaps were reached.
	resTruncated = &llm.Result{
		Status: 200, Err: errors.New("stream ended without finish"), ErrorType: llm.ErrTruncated,
		TTFB: 5 * msec, TTFT: 40 * msec, TTFO: 40 * msec, ITL: []time.Duration{10 * msec, 10 * msec},
		E2E: 60 * msec, Duration: 70 * msec, CompletionTokens: 3, TokenSource: llm.SourceTokenizer,
	}
)

func TestVisit(t *testing.T) {
	slo := SLO{TTFT: 200 * msec, TPOT: 60 * msec}
	tests := []struct {
		name string
		r    *llm.Result
		slo  SLO
		want []sample
	}{
		{"reasoning then answer", resReasoning, SLO{}, []sample{
			{MetricReqs, 1}, {MetricReqFailed, 0}, {MetricTTFB, 20}, {MetricTTFT, 100}, {MetricTTFO, 300},
			{MetricITL, 50}, {MetricITL, 150}, {MetricITL, 100}, {MetricITL, 100},
			{MetricTPOT, 50}, {MetricE2E, 500}, {MetricReqDuration, 510},
			{MetricPromptTokens, 12}, {MetricCompletionTokens, 9}, {MetricOutputTPS, 20},
		}},
		{"reasoning with SLO met", resReasoning, slo, []sample{
			{MetricReqs, 1}, {MetricReqFailed, 0}, {MetricTTFB, 20}, {MetricTTFT, 100}, {MetricTTFO, 300},
			{MetricITL, 50}, {MetricITL, 150}, {MetricITL, 100}, {MetricITL, 100},
			{MetricTPOT, 50}, {MetricE2E, 500}, {MetricReqDuration, 510},
			{MetricPromptTokens, 12}, {MetricCompletionTokens, 9}, {MetricOutputTPS, 20}, {MetricGoodput, 1},
		}},
		{"one token: no TPOT, no output_tps, no ITL", resOneToken, SLO{}, []sample{
			{MetricReqs, 1}, {MetricReqFailed, 0}, {MetricTTFB, 10}, {MetricTTFT, 80}, {MetricTTFO, 80},
			{MetricE2E, 80}, {MetricReqDuration, 81}, {MetricPromptTokens, 3}, {MetricCompletionTokens, 1},
		}},
		{"network failure: only count, failure and duration", resNetwork, slo, []sample{
			{MetricReqs, 1}, {MetricReqFailed, 1}, {MetricReqDuration, 2}, {MetricGoodput, 0},
		}},
		{"429: headers reached", resRateLimited, SLO{}, []sample{
			{MetricReqs, 1}, {MetricReqFailed, 1}, {MetricTTFB, 3}, {MetricReqDuration, 4},
		}},
		{"several tokens per chunk: gaps per chunk, TPOT per token", resPacked, SLO{}, []sample{
			{MetricReqs, 1}, {MetricReqFailed, 0}, {MetricTTFB, 5}, {MetricTTFT, 50}, {MetricTTFO, 50},
			{MetricITL, 30}, {MetricITL, 30}, {MetricITL, 50},
			{MetricTPOT, 10}, {MetricE2E, 160}, {MetricReqDuration, 161},
			{MetricPromptTokens, 7}, {MetricCompletionTokens, 12}, {MetricOutputTPS, 100},
		}},
		{"truncated: points reached are kept, goodput fails", resTruncated, slo, []sample{
			{MetricReqs, 1}, {MetricReqFailed, 1}, {MetricTTFB, 5}, {MetricTTFT, 40}, {MetricTTFO, 40},
			{MetricITL, 10}, {MetricITL, 10}, {MetricTPOT, 10}, {MetricE2E, 60}, {MetricReqDuration, 70},
			{MetricCompletionTokens, 3}, {MetricOutputTPS, 100}, {MetricGoodput, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(tt.r, tt.slo)
			require.Len(t, got, len(tt.want), "%v", got)
			for i := range got {
				assert.Equal(t, tt.want[i].name, got[i].name, "sample %d", i)
				assert.InDelta(t, tt.want[i].v, got[i].v, 1e-9, "sample %d (%s)", i, got[i].name)
			}
		})
	}
}

func TestVisitNamesAreInCatalogue(t *testing.T) {
	kinds := map[string]Kind{}
	for _, d := range Catalogue() {
		kinds[d.Name] = d.Kind
	}
	for _, r := range []*llm.Result{resReasoning, resOneToken, resNetwork, resRateLimited, resPacked, resTruncated} {
		Visit(r, SLO{E2E: time.Second}, func(name string, v float64) {
			k, ok := kinds[name]
			require.True(t, ok, name)
			if k == KindRate {
				assert.Contains(t, []float64{0, 1}, v, name)
			}
		})
	}
}

func TestCatalogue(t *testing.T) {
	want := []string{MetricReqs, MetricReqFailed, MetricTTFB, MetricTTFT, MetricTTFO, MetricITL, MetricTPOT,
		MetricE2E, MetricReqDuration, MetricPromptTokens, MetricCompletionTokens, MetricOutputTPS, MetricGoodput}
	cat := Catalogue()
	require.Len(t, cat, len(want))
	for i, d := range cat {
		assert.Equal(t, want[i], d.Name)
		assert.NotEmpty(t, d.Help)
		got, ok := Lookup(d.Name)
		assert.True(t, ok)
		assert.Equal(t, d, got)
		wantTime := d.Kind == KindTrend && d.Name != MetricOutputTPS
		assert.Equal(t, wantTime, d.Time, d.Name)
	}
	cat[0].Name = "changed"
	assert.Equal(t, MetricReqs, Catalogue()[0].Name, "Catalogue returns a copy")
	_, ok := Lookup("http_reqs")
	assert.False(t, ok)
	assert.Equal(t, "counter gauge trend rate unknown",
		KindCounter.String()+" "+KindGauge.String()+" "+KindTrend.String()+" "+KindRate.String()+" "+Kind(9).String())
}

func TestSLOMet(t *testing.T) {
	ok := func(mod func(r *llm.Result)) *llm.Result {
		r := *resPacked // TTFT 50ms, TPOT 10ms, E2E 160ms
		mod(&r)
		return &r
	}
	tests := []struct {
		name string
		slo  SLO
		r    *llm.Result
		want bool
	}{
		{"unset SLO: success meets it", SLO{}, resPacked, true},
		{"unset SLO: failure does not", SLO{}, resNetwork, false},
		{"TTFT under", SLO{TTFT: 60 * msec}, resPacked, true},
		{"TTFT equal is met", SLO{TTFT: 50 * msec}, resPacked, true},
		{"TTFT over", SLO{TTFT: 49 * msec}, resPacked, false},
		{"TTFT limit, no token", SLO{TTFT: time.Hour}, ok(func(r *llm.Result) { r.TTFT, r.E2E, r.CompletionTokens = 0, 0, 0 }), false},
		{"TPOT equal is met", SLO{TPOT: 10 * msec}, resPacked, true},
		{"TPOT over", SLO{TPOT: 9 * msec}, resPacked, false},
		{"TPOT with one token is met", SLO{TPOT: time.Nanosecond}, resOneToken, true},
		{"E2E under", SLO{E2E: 160 * msec}, resPacked, true},
		{"E2E over", SLO{E2E: 159 * msec}, resPacked, false},
		{"E2E falls back to duration", SLO{E2E: 100 * msec}, ok(func(r *llm.Result) { r.E2E, r.Duration = 0, 101*msec }), false},
		{"all met", SLO{TTFT: 50 * msec, TPOT: 10 * msec, E2E: 160 * msec}, resPacked, true},
		{"one of three missed", SLO{TTFT: 50 * msec, TPOT: 10 * msec, E2E: 150 * msec}, resPacked, false},
		{"failed request fails every SLO", SLO{TTFT: time.Hour}, resTruncated, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.slo.Met(tt.r))
		})
	}
	assert.False(t, SLO{}.IsSet())
	assert.True(t, SLO{E2E: 1}.IsSet())
}

func TestTags(t *testing.T) {
	dst := map[string]string{"scenario": "default", TagModel: "stale", TagErrorType: "stale"}
	Tags(resReasoning, dst)
	assert.Equal(t, map[string]string{"scenario": "default", TagModel: "m", TagDialect: "openai-chat",
		TagStatus: "200", TagFinishReason: "stop"}, dst)
	Tags(resNetwork, dst)
	assert.Equal(t, map[string]string{"scenario": "default", TagStatus: "0", TagErrorType: "network"}, dst)
	Tags(&llm.Result{Status: 1234}, dst)
	assert.Equal(t, "1234", dst[TagStatus])
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	slo := SLO{TTFT: time.Second, TPOT: time.Second}
	results := []*llm.Result{resReasoning, resOneToken, resNetwork, resRateLimited, resPacked, resTruncated}
	t.Run("Visit", func(t *testing.T) {
		var sum float64
		allocs := testing.AllocsPerRun(100, func() {
			for _, r := range results {
				Visit(r, slo, func(_ string, v float64) { sum += v })
			}
		})
		assert.Zero(t, allocs)
		assert.NotZero(t, sum)
	})
	t.Run("Tags", func(t *testing.T) {
		dst := make(map[string]string, 8)
		allocs := testing.AllocsPerRun(100, func() {
			for _, r := range results {
				Tags(r, dst)
			}
		})
		assert.Zero(t, allocs)
	})
	t.Run("Recorder.Add", func(t *testing.T) {
		rec := NewRecorder(slo, WithExactLimit(0))
		for range 100 { // warm-up: the sketches' bucket ranges
			for _, r := range results {
				rec.Add(r)
			}
		}
		allocs := testing.AllocsPerRun(100, func() {
			for _, r := range results {
				rec.Add(r)
			}
		})
		assert.Zero(t, allocs)
	})
}

func TestRecorder(t *testing.T) {
	slo := SLO{TTFT: 60 * msec}
	rec := NewRecorder(slo)
	for _, r := range []*llm.Result{resReasoning, resOneToken, resNetwork, resPacked} {
		rec.Add(r)
	}
	assert.Equal(t, slo, rec.SLO())
	assert.Equal(t, 4.0, rec.Counter(MetricReqs).Sum())
	assert.Equal(t, 0.25, rec.Rate(MetricReqFailed).Rate())
	assert.Equal(t, 22.0, rec.Counter(MetricCompletionTokens).Sum())
	assert.Equal(t, int64(7), rec.Trend(MetricITL).Count())
	assert.Equal(t, int64(3), rec.Trend(MetricTTFT).Count())
	assert.Equal(t, 80.0, rec.Trend(MetricTTFT).Med())
	assert.Equal(t, int64(2), rec.Trend(MetricTPOT).Count())
	// Only resPacked (TTFT 50ms) meets TTFT ≤ 60ms.
	assert.Equal(t, int64(1), rec.Goodput().Trues())
	assert.Equal(t, int64(4), rec.Goodput().Total())
	assert.Same(t, rec.Goodput(), rec.Rate(MetricGoodput))
	assert.Nil(t, rec.Trend(MetricReqs), "a counter is not a trend")
	assert.Nil(t, rec.Rate("nope"))
	assert.Nil(t, rec.Counter(MetricTTFT))
}

// Per-worker recorders merged after the join equal one recorder that saw everything.
func TestRecorderMergeEqualsRecordAll(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	slo := SLO{TTFT: 80 * msec, TPOT: 12 * msec}
	const limit = 50
	all := NewRecorder(slo, WithExactLimit(limit))
	workers := []*Recorder{NewRecorder(slo, WithExactLimit(limit)), NewRecorder(slo, WithExactLimit(limit)), NewRecorder(slo, WithExactLimit(limit))}
	for range 300 {
		res := randomResult(r)
		all.Add(res)
		workers[r.IntN(len(workers))].Add(res)
	}
	m := NewRecorder(slo, WithExactLimit(limit))
	m.Merge(nil) // a worker that never started
	for _, w := range workers {
		m.Merge(w)
	}
	for _, d := range Catalogue() {
		switch d.Kind {
		case KindTrend:
			requireSameTrend(t, all.Trend(d.Name), m.Trend(d.Name), d.Name)
		case KindRate:
			assert.Equal(t, *all.Rate(d.Name), *m.Rate(d.Name), d.Name)
		case KindCounter:
			assert.Equal(t, all.Counter(d.Name).Count(), m.Counter(d.Name).Count(), d.Name)
			assert.InEpsilon(t, all.Counter(d.Name).Sum(), m.Counter(d.Name).Sum(), 1e-12, d.Name)
		}
	}
	assert.False(t, m.Trend(MetricITL).Exact(), "enough gaps to cross the limit")
}

func randomResult(r *rand.Rand) *llm.Result {
	if r.IntN(10) == 0 {
		return &llm.Result{ErrorType: llm.ErrTimeout, Err: errors.New("timeout"), TimeoutPhase: "first_token",
			Status: 200, TTFB: time.Duration(r.IntN(20)+1) * msec, Duration: time.Second}
	}
	ttft := time.Duration(20+r.IntN(100)) * msec
	n := 1 + r.IntN(20)
	gaps := make([]time.Duration, n-1)
	e2e := ttft
	for i := range gaps {
		gaps[i] = time.Duration(r.ExpFloat64() * float64(10*msec))
		e2e += gaps[i]
	}
	return &llm.Result{Status: 200, FinishReason: "stop", TTFB: ttft / 2, TTFT: ttft, TTFO: ttft, ITL: gaps,
		E2E: e2e, Duration: e2e + msec, PromptTokens: 1 + r.IntN(500), CompletionTokens: n, ContentChunks: n}
}
