package tokens

import (
	"strconv"
	"time"

	"github.com/tokenstorm/tokenstorm/llm"
)

// Metric names, as scripts, thresholds and summaries see them (docs/metrics.md).
const (
	MetricReqs             = "llm_reqs"
	MetricReqFailed        = "llm_req_failed"
	MetricTTFB             = "llm_ttfb"
	MetricTTFT             = "llm_ttft"
	MetricTTFO             = "llm_ttfo"
	MetricITL              = "llm_itl"
	MetricTPOT             = "llm_tpot"
	MetricE2E              = "llm_e2e"
	MetricReqDuration      = "llm_req_duration"
	MetricPromptTokens     = "llm_prompt_tokens"
	MetricCompletionTokens = "llm_completion_tokens"
	MetricOutputTPS        = "llm_output_tps"
	MetricGoodput          = "llm_goodput"
)

// Kind is a metric's k6 type.
type Kind int

// Metric kinds, in the order of k6's metric types.
const (
	KindCounter Kind = iota
	KindGauge
	KindTrend
	KindRate
)

// String returns k6's lower-case name of the kind.
func (k Kind) String() string {
	switch k {
	case KindCounter:
		return "counter"
	case KindGauge:
		return "gauge"
	case KindTrend:
		return "trend"
	case KindRate:
		return "rate"
	}
	return "unknown"
}

// Def describes one catalogue metric.
type Def struct {
	Name string
	Kind Kind
	Time bool // values are durations in milliseconds (k6's "time" value type)
	Help string
}

// metricID indexes the catalogue; Visit and the Recorder use it to avoid string lookups.
type metricID uint8

const (
	idReqs metricID = iota
	idReqFailed
	idTTFB
	idTTFT
	idTTFO
	idITL
	idTPOT
	idE2E
	idReqDuration
	idPromptTokens
	idCompletionTokens
	idOutputTPS
	idGoodput
	numMetrics
)

var catalogue = [numMetrics]Def{
	idReqs:             {MetricReqs, KindCounter, false, "requests finished, any outcome"},
	idReqFailed:        {MetricReqFailed, KindRate, false, "request failed: transport, HTTP status, stream error or timeout"},
	idTTFB:             {MetricTTFB, KindTrend, true, "start to response headers"},
	idTTFT:             {MetricTTFT, KindTrend, true, "start to the first chunk carrying generated text, reasoning included"},
	idTTFO:             {MetricTTFO, KindTrend, true, "start to the first chunk of the answer proper, after any reasoning"},
	idITL:              {MetricITL, KindTrend, true, "gap between consecutive content chunks, one sample per gap"},
	idTPOT:             {MetricTPOT, KindTrend, true, "(e2e - ttft) / (completion_tokens - 1), when completion_tokens > 1"},
	idE2E:              {MetricE2E, KindTrend, true, "start to the last content chunk"},
	idReqDuration:      {MetricReqDuration, KindTrend, true, "start to stream closed"},
	idPromptTokens:     {MetricPromptTokens, KindCounter, false, "prompt tokens per request, from usage or the tokenizer"},
	idCompletionTokens: {MetricCompletionTokens, KindCounter, false, "completion tokens per request, from usage or the tokenizer"},
	idOutputTPS:        {MetricOutputTPS, KindTrend, false, "per-request decode rate (completion_tokens - 1) / (e2e - ttft), tokens/s"},
	idGoodput:          {MetricGoodput, KindRate, false, "request met every SLO set on it"},
}

// Catalogue returns every built-in metric in the documented order (docs/metrics.md).
// The slice is fresh; the caller may keep or modify it.
func Catalogue() []Def { return append([]Def(nil), catalogue[:]...) }

// Lookup returns the catalogue entry called name.
func Lookup(name string) (Def, bool) {
	if id, ok := lookupID(name); ok {
		return catalogue[id], true
	}
	return Def{}, false
}

func lookupID(name string) (metricID, bool) {
	for i := range catalogue {
		if catalogue[i].Name == name {
			return metricID(i), true
		}
	}
	return 0, false
}

// SLO holds per-request service-level limits; a zero field is unset.
type SLO struct {
	TTFT, TPOT, E2E time.Duration
}

// IsSet reports whether any limit is set (only then is llm_goodput emitted).
func (s SLO) IsSet() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2E > 0 }

// Met reports whether r succeeded and met every set limit (limits are inclusive):
//   - TTFT: a first token arrived, no later than the limit. A successful request that
//     produced no token has no TTFT and fails a TTFT limit.
//   - TPOT: with fewer than two completion tokens there is no decode phase to judge, so
//     the limit is met (vLLM's --goodput counts such requests' TPOT as 0, likewise).
//   - E2E: the last content chunk arrived within the limit; a request with no content
//     chunk is judged on its Duration instead.
func (s SLO) Met(r *llm.Result) bool {
	if !r.OK() {
		return false
	}
	if s.TTFT > 0 && (r.TTFT <= 0 || r.TTFT > s.TTFT) {
		return false
	}
	if s.TPOT > 0 {
		if tpot, ok := TPOT(r); ok && tpot > s.TPOT {
			return false
		}
	}
	if s.E2E > 0 {
		e2e := r.E2E
		if e2e <= 0 {
			e2e = r.Duration
		}
		if e2e > s.E2E {
			return false
		}
	}
	return true
}

// TPOT is (E2E − TTFT) / (CompletionTokens − 1), defined only when the request produced
// more than one completion token and its last content chunk came after its first.
func TPOT(r *llm.Result) (time.Duration, bool) {
	if r.CompletionTokens <= 1 || r.TTFT <= 0 || r.E2E <= r.TTFT {
		return 0, false
	}
	return (r.E2E - r.TTFT) / time.Duration(r.CompletionTokens-1), true
}

// ms converts a duration to k6's time unit.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Visit calls fn once for each metric value r yields, without allocating:
//
//   - llm_reqs (1) and llm_req_failed (1 or 0): always;
//   - llm_ttfb, llm_ttft, llm_ttfo, llm_e2e, llm_req_duration: when that point was
//     reached (the duration is non-zero), whether or not the request failed later;
//   - llm_itl: once per gap in r.ITL;
//   - llm_tpot and llm_output_tps: when TPOT is defined (see TPOT);
//   - llm_prompt_tokens, llm_completion_tokens: when the count is non-zero;
//   - llm_goodput (1 or 0): only when slo.IsSet().
//
// Times are in milliseconds. The order is the catalogue's.
func Visit(r *llm.Result, slo SLO, fn func(name string, v float64)) {
	visit(r, slo, func(id metricID, v float64) { fn(catalogue[id].Name, v) })
}

func visit(r *llm.Result, slo SLO, fn func(id metricID, v float64)) {
	fn(idReqs, 1)
	if r.OK() {
		fn(idReqFailed, 0)
	} else {
		fn(idReqFailed, 1)
	}
	if r.TTFB > 0 {
		fn(idTTFB, ms(r.TTFB))
	}
	if r.TTFT > 0 {
		fn(idTTFT, ms(r.TTFT))
	}
	if r.TTFO > 0 {
		fn(idTTFO, ms(r.TTFO))
	}
	for _, g := range r.ITL {
		fn(idITL, ms(g))
	}
	tpot, hasTPOT := TPOT(r)
	if hasTPOT {
		fn(idTPOT, ms(tpot))
	}
	if r.E2E > 0 {
		fn(idE2E, ms(r.E2E))
	}
	if r.Duration > 0 {
		fn(idReqDuration, ms(r.Duration))
	}
	if r.PromptTokens > 0 {
		fn(idPromptTokens, float64(r.PromptTokens))
	}
	if r.CompletionTokens > 0 {
		fn(idCompletionTokens, float64(r.CompletionTokens))
	}
	if hasTPOT {
		// From the exact durations rather than the rounded TPOT.
		fn(idOutputTPS, float64(r.CompletionTokens-1)/(r.E2E-r.TTFT).Seconds())
	}
	if slo.IsSet() {
		if slo.Met(r) {
			fn(idGoodput, 1)
		} else {
			fn(idGoodput, 0)
		}
	}
}

// Tag names set by Tags.
const (
	TagModel        = "model"
	TagDialect      = "dialect"
	TagStatus       = "status"
	TagFinishReason = "finish_reason"
	TagErrorType    = "error_type"
)

// statusText holds the decimal strings of every HTTP status so Tags never allocates.
var statusText = func() (t [1000]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// Tags writes r's tags into dst: status always ("0" when no response arrived); model,
// dialect, finish_reason and error_type when non-empty, and deleted from dst when
// empty, so a map reused across results never carries a stale value. Other keys in dst
// (scenario, group, user tags) are left alone. It does not allocate once dst has room
// for the keys.
func Tags(r *llm.Result, dst map[string]string) {
	setOrDelete(dst, TagModel, r.Model)
	setOrDelete(dst, TagDialect, string(r.Dialect))
	if r.Status >= 0 && r.Status < len(statusText) {
		dst[TagStatus] = statusText[r.Status]
	} else {
		dst[TagStatus] = strconv.Itoa(r.Status)
	}
	setOrDelete(dst, TagFinishReason, r.FinishReason)
	setOrDelete(dst, TagErrorType, string(r.ErrorType))
}

func setOrDelete(dst map[string]string, k, v string) {
	if v == "" {
		delete(dst, k)
		return
	}
	dst[k] = v
}
