package mockllm

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Bucket bounds (seconds) of vLLM's histograms of the same names, so dashboards and
// scrapers built for vLLM read the mock unchanged.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
		1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	e2eBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120,
		240, 480, 960, 1920, 7680}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1,
		2.5, 5, 7.5, 10, 20, 40, 80}
)

// histogram is a fixed-bucket histogram with lock-free, allocation-free observe.
type histogram struct {
	bounds []float64
	ns     []int64         // bounds in nanoseconds, for integer comparison
	counts []atomic.Uint64 // per bucket (not cumulative); last is +Inf
	sumNS  atomic.Int64
}

func newHistogram(bounds []float64) *histogram {
	h := &histogram{bounds: bounds, ns: make([]int64, len(bounds)), counts: make([]atomic.Uint64, len(bounds)+1)}
	for i, b := range bounds {
		h.ns[i] = int64(b * 1e9)
	}
	return h
}

func (h *histogram) observe(d time.Duration) {
	n := int64(d)
	i := 0
	for i < len(h.ns) && n > h.ns[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNS.Add(n)
}

// metrics are the server-side counters behind /metrics.
type metrics struct {
	promptTokens     atomic.Int64
	generationTokens atomic.Int64
	finishedStop     atomic.Int64
	finishedLength   atomic.Int64
	finishedAbort    atomic.Int64
	ttft             *histogram
	e2e              *histogram
	itl              *histogram
}

func newMetrics() *metrics {
	return &metrics{ttft: newHistogram(ttftBuckets), e2e: newHistogram(e2eBuckets), itl: newHistogram(itlBuckets)}
}

// serveMetrics writes the Prometheus text exposition (format 0.0.4) by hand, in
// vLLM's names, so the mock needs no client library.
func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(s.appendMetrics(nil))
}

func (s *Server) appendMetrics(b []byte) []byte {
	m := s.metrics
	label := `model_name="` + escapeLabel(s.cfg.Model) + `"`
	kv := float64(s.sched.kvTokens.Load()) / float64(s.cfg.KVCacheTokens)
	kv = min(max(kv, 0), 1)

	b = appendGauge(b, "vllm:num_requests_running", "Number of requests in model execution batches.", label, float64(s.sched.nRunning.Load()))
	b = appendGauge(b, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", label, float64(s.sched.nWaiting.Load()))
	b = appendGauge(b, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", label, kv)
	b = appendCounter(b, "vllm:prompt_tokens_total", "Number of prefill tokens processed.", label, m.promptTokens.Load())
	b = appendCounter(b, "vllm:generation_tokens_total", "Number of generation tokens processed.", label, m.generationTokens.Load())

	b = appendHelpType(b, "vllm:request_success_total", "Count of successfully processed requests.", "counter")
	for _, fr := range []struct {
		reason string
		n      int64
	}{{"stop", m.finishedStop.Load()}, {"length", m.finishedLength.Load()}, {"abort", m.finishedAbort.Load()}} {
		b = appendSample(b, "vllm:request_success_total", `finished_reason="`+fr.reason+`",`+label, float64(fr.n))
	}
	b = appendHistogram(b, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", label, m.ttft)
	b = appendHistogram(b, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", label, m.itl)
	b = appendHistogram(b, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", label, m.e2e)
	return b
}

func appendHelpType(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

func appendSample(b []byte, name, labels string, v float64) []byte {
	b = append(b, name...)
	if labels != "" {
		b = append(b, '{')
		b = append(b, labels...)
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

func appendGauge(b []byte, name, help, labels string, v float64) []byte {
	return appendSample(appendHelpType(b, name, help, "gauge"), name, labels, v)
}

func appendCounter(b []byte, name, help, labels string, v int64) []byte {
	return appendSample(appendHelpType(b, name, help, "counter"), name, labels, float64(v))
}

func appendHistogram(b []byte, name, help, labels string, h *histogram) []byte {
	b = appendHelpType(b, name, help, "histogram")
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		le := "+Inf"
		if i < len(h.bounds) {
			le = strconv.FormatFloat(h.bounds[i], 'g', -1, 64)
		}
		b = appendSample(b, name+"_bucket", labels+`,le="`+le+`"`, float64(cum))
	}
	b = appendSample(b, name+"_sum", labels, time.Duration(h.sumNS.Load()).Seconds())
	// The count is the +Inf bucket as read above, so a scrape is self-consistent
	// even while requests finish concurrently.
	return appendSample(b, name+"_count", labels, float64(cum))
}

func appendFloat(b []byte, v float64) []byte {
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// escapeLabel escapes a Prometheus label value.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
