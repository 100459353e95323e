package metrics_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tokenstorm/tokenstorm/js/metrics"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// A Go-native run: declare metrics, parse k6 thresholds, feed samples, read results.
func Example() {
	reg := metrics.NewRegistry()
	ttft, _ := reg.NewMetric("llm_ttft", xk6ext.Trend, xk6ext.Time)
	failed, _ := reg.NewMetric("llm_req_failed", xk6ext.Rate, xk6ext.Default)

	th, err := metrics.ParseThresholds(map[string]json.RawMessage{
		"llm_ttft":              json.RawMessage(`["p(95)<200"]`),
		"llm_ttft{model:small}": json.RawMessage(`["max<50"]`),
		"llm_req_failed":        json.RawMessage(`[{"threshold": "rate<0.1", "abortOnFail": true}]`),
	}, reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	e := metrics.NewEngine(reg, th)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e.SetStart(start)
	for i, model := range []string{"small", "small", "large", "large"} {
		tags := map[string]string{"model": model}
		e.Ingest([]xk6ext.Sample{
			{Metric: ttft, Value: float64(20 + 40*i), Tags: tags},
			{Metric: failed, Value: 0, Tags: tags},
		})
	}
	e.SetEnd(start.Add(10 * time.Second))

	results, abort := e.EvaluateThresholds(true)
	for _, r := range results {
		fmt.Printf("%s %s: ok=%v (%s=%g)\n", r.Metric, r.Expr, r.OK, r.Stat, r.Observed)
	}
	fmt.Println("abort:", abort)
	sum := e.Snapshot()
	fmt.Printf("p(95)=%.1f med=%.0f\n", sum.Trend("llm_ttft").P(95), sum.Trend("llm_ttft").Med())
	// Output:
	// llm_req_failed rate<0.1: ok=true (rate=0)
	// llm_ttft p(95)<200: ok=true (p(95)=134)
	// llm_ttft{model:small} max<50: ok=false (max=60)
	// abort: false
	// p(95)=134.0 med=80
}

// Invalid thresholds are typed errors naming the metric and the expression; a runner
// maps them to k6's exit code 104.
func ExampleParseThresholds_error() {
	reg := metrics.NewRegistry()
	_, _ = reg.NewMetric("llm_reqs", xk6ext.Counter, xk6ext.Default)
	_, err := metrics.ParseThresholds(map[string]json.RawMessage{
		"llm_reqs": json.RawMessage(`["p(95)<1"]`),
	}, reg)
	fmt.Println(err)
	// Output:
	// invalid threshold "p(95)<1" on "llm_reqs": aggregation method "p(95)" is not valid for a counter metric (use count, rate)
}

func ExampleFormatDuration() {
	for _, ms := range []float64{0.042, 12.345, 1500, 95000} {
		fmt.Println(metrics.FormatDuration(ms, ""))
	}
	fmt.Println(metrics.FormatBytes(123456))
	// Output:
	// 42µs
	// 12.35ms
	// 1.5s
	// 1m35s
	// 123 kB
}
