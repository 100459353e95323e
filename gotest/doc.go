// Package gotest runs tokenstorm load scenarios as ordinary Go tests, so the same
// scenarios that run under `tokenstorm run` gate a CI pipeline through `go test`.
//
// Three entry points:
//
//   - RunScript runs a k6-style script through the same runner as `tokenstorm run`,
//     in-process, with k6-flag-like overrides (VUs, Iterations, Duration, Env, URL).
//   - Run runs a Scenario written in Go: VUs, iterations or duration or an arrival rate,
//     an Exec function that receives the VU (with its own Client), thresholds in k6
//     syntax and SLOs.
//     It emits exactly the metric names and tags a script would, and its thresholds are
//     parsed and evaluated by the same engine.
//   - MockServer starts the embedded mock LLM for the test's lifetime and hands back its
//     URL and its ground-truth record.
//
// Every crossed threshold is reported with t.Errorf naming the metric, the threshold
// and the observed value; the returned Result gives typed access to every metric for
// further testify assertions. Asking it for a trend or rate without samples, or a check
// that never ran, fails the test rather than compare against zeroes. After a t.Fatalf
// that returns (a recording testing.TB), the Result is still non-nil and reads zero.
//
// # Example
//
//	func TestChatSLO(t *testing.T) {
//		mock := gotest.MockServer(t, mockllm.Config{TTFT: 20 * time.Millisecond})
//		res := gotest.RunScript(t, "../examples/chat.js",
//			gotest.URL(mock.OpenAIURL()), gotest.Iterations(20))
//		assert.Less(t, res.Trend("llm_ttft").P(95), 200.0)
//		assert.Zero(t, res.Rate("llm_req_failed"))
//	}
//
// # Testing conventions
//
// Runs are bounded: scripts by their options or the overrides, Go scenarios by
// Iterations or Duration. Under `go test -short` both shrink: durations and iteration
// counts given through this package are divided by ShortFactor, keeping at least 100ms
// and one iteration per VU (a script's Iterations shrink only when VUs is given too,
// since k6 refuses fewer iterations than VUs). NoShrink opts out. Nothing sleeps for
// synchronisation; the mock and every goroutine are stopped before the test ends
// (t.Cleanup), so goleak stays quiet.
//
// # Concurrency
//
// Functions may be called from parallel tests (t.Parallel): every call has its own
// runner and metrics engine, and Run its own mock when the Scenario names no server. A Scenario's Exec runs concurrently on its VUs, one
// iteration at a time per VU.
package gotest
