package xk6ext

import (
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/tokens"
)

// declOnly is a Host that can only declare metrics, all that samples() needs; any other
// method panics on the nil embedded Host.
type declOnly struct{ Host }

func (declOnly) NewMetric(name string, typ MetricType, vt ValueType) (*Metric, error) {
	return &Metric{Name: name, Type: typ, ValueType: vt}, nil
}

func result(chunks int) *llm.Result {
	r := &llm.Result{Model: "m", Dialect: llm.OpenAIChat, Status: 200, FinishReason: "length",
		TTFB: time.Millisecond, TTFT: 2 * time.Millisecond, E2E: time.Duration(chunks+2) * time.Millisecond,
		Duration: time.Duration(chunks+3) * time.Millisecond, PromptTokens: 5, CompletionTokens: chunks,
		ContentChunks: chunks, Chunks: chunks + 1, TokenSource: llm.SourceUsage, BytesSent: 100, BytesReceived: 1000}
	r.ITL = make([]time.Duration, chunks-1)
	for i := range r.ITL {
		r.ITL[i] = time.Millisecond
	}
	r.TPOT, _ = tokens.TPOT(r)
	return r
}

// TestSamplesAllocsDoNotGrowWithChunks proves the per-request cost is per request: the
// same few allocations for 10 chunks as for 10,000.
func TestSamplesAllocsDoNotGrowWithChunks(t *testing.T) {
	ms, err := NewRecorder(declOnly{}.NewMetric)
	require.NoError(t, err)
	slo := tokens.SLO{TTFT: time.Second}
	client := map[string]string{"team": "a"}
	call := map[string]string{"turn": "1"}
	allocs := func(chunks int) float64 {
		r := result(chunks)
		return testing.AllocsPerRun(50, func() { _ = ms.Samples(r, slo, client, call) })
	}
	small, large := allocs(10), allocs(10_000)
	assert.Equal(t, small, large, "allocations per request must not depend on the chunk count")
	assert.LessOrEqual(t, small, 6.0)

	s := ms.Samples(result(10), slo, client, call)
	// Every catalogue metric once, except llm_itl (once per gap: 9) and llm_ttfo (never
	// reached without a TTFO), plus data_sent and data_received.
	assert.Len(t, s, len(tokens.Catalogue())-2+9+2)
}

func TestMetricType(t *testing.T) {
	for _, d := range tokens.Catalogue() {
		mt := metricType(d.Kind)
		assert.Equal(t, d.Kind.String(), mt.String(), d.Name)
	}
}

// TestResultObjectAllocsDoNotGrowWithChunks: building the JS result costs the same for
// a short and a long answer; itl_ms is built only when read.
func TestResultObjectAllocsDoNotGrowWithChunks(t *testing.T) {
	m := &ModuleInstance{rt: sobek.New()}
	allocs := func(chunks int) float64 {
		r := result(chunks)
		return testing.AllocsPerRun(20, func() { _ = m.resultObject(r, tokens.SLO{}) })
	}
	// 1,000 vs 100,000: the same magnitudes of counts (sobek caches small integers).
	assert.Equal(t, allocs(1000), allocs(100_000))

	o := m.resultObject(result(5), tokens.SLO{}).ToObject(m.rt)
	assert.Same(t, o.Get("itl_ms"), o.Get("itl_ms"), "built once")
	require.NoError(t, m.rt.Set("r", o))
	js, err := m.rt.RunString(`JSON.stringify(r.itl_ms) + ' ' + Array.isArray(r.itl_ms) + ' ' + Object.keys(r).includes('itl_ms')`)
	require.NoError(t, err)
	assert.Equal(t, "[1,1,1,1] true true", js.String())
}
