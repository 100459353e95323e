package tokens_test

import (
	"fmt"
	"time"

	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/tokens"
)

// k6's p(N) interpolates between the two nearest samples.
func ExampleTrendSink() {
	var s tokens.TrendSink
	for v := 1; v <= 10; v++ {
		s.Add(float64(v))
	}
	for _, stat := range []string{"count", "avg", "med", "p(90)", "p(99.9)", "max"} {
		v, _ := s.Stat(stat)
		fmt.Printf("%s=%.3f ", stat, v)
	}
	fmt.Println(s.Exact())
	// Output: count=10.000 avg=5.500 med=5.500 p(90)=9.100 p(99.9)=9.991 max=10.000 true
}

// Each worker records into its own Recorder; the owner merges them after the join.
func ExampleRecorder() {
	slo := tokens.SLO{TTFT: 150 * time.Millisecond}
	workers := []*tokens.Recorder{tokens.NewRecorder(slo), tokens.NewRecorder(slo)}
	for i := range 4 {
		ttft := time.Duration(100+50*i) * time.Millisecond // 100, 150, 200, 250 ms
		workers[i%2].Add(&llm.Result{
			Status: 200, FinishReason: "stop",
			TTFT: ttft, E2E: ttft + 90*time.Millisecond, Duration: ttft + 91*time.Millisecond,
			ITL:              []time.Duration{30 * time.Millisecond, 30 * time.Millisecond, 30 * time.Millisecond},
			CompletionTokens: 10,
		})
	}
	total := tokens.NewRecorder(slo)
	for _, w := range workers {
		total.Merge(w)
	}
	ttft := total.Trend(tokens.MetricTTFT)
	fmt.Printf("reqs=%v ttft med=%v p(90)=%v\n", total.Counter(tokens.MetricReqs).Sum(), ttft.Med(), ttft.Percentile(90))
	fmt.Printf("tpot avg=%vms output_tps avg=%.0f goodput=%.2f\n",
		total.Trend(tokens.MetricTPOT).Avg(), total.Trend(tokens.MetricOutputTPS).Avg(), total.Goodput().Rate())
	// Output:
	// reqs=4 ttft med=175 p(90)=235
	// tpot avg=10ms output_tps avg=100 goodput=0.50
}

// Visit hands each metric value of a result to a registry of one's own.
func ExampleVisit() {
	r := &llm.Result{
		Status: 200, TTFB: 5 * time.Millisecond, TTFT: 40 * time.Millisecond,
		ITL: []time.Duration{20 * time.Millisecond}, E2E: 60 * time.Millisecond, Duration: 61 * time.Millisecond,
		PromptTokens: 8, CompletionTokens: 3,
	}
	tokens.Visit(r, tokens.SLO{E2E: time.Second}, func(name string, v float64) {
		fmt.Printf("%s=%g\n", name, v)
	})
	// Output:
	// llm_reqs=1
	// llm_req_failed=0
	// llm_ttfb=5
	// llm_ttft=40
	// llm_itl=20
	// llm_tpot=10
	// llm_e2e=60
	// llm_req_duration=61
	// llm_prompt_tokens=8
	// llm_completion_tokens=3
	// llm_output_tps=100
	// llm_goodput=1
}

func ExampleTags() {
	tags := map[string]string{"scenario": "chat"}
	tokens.Tags(&llm.Result{Model: "qwen", Dialect: llm.OpenAIChat, Status: 429, ErrorType: llm.ErrRateLimited}, tags)
	fmt.Println(tags)
	// Output: map[dialect:openai-chat error_type:rate_limited model:qwen scenario:chat status:429]
}
