// Every example script runs here as a Go test through gotest.RunScript, against the
// embedded mock, with assertions on what each one demonstrates. Run them with
//
//	go test ./examples/
package examples_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tokenstorm/tokenstorm/gotest"
	"github.com/tokenstorm/tokenstorm/mockllm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// exampleTests checks each example script; TestEveryExampleIsTested keeps it complete.
var exampleTests = map[string]func(t *testing.T){
	"quickstart.js": func(t *testing.T) {
		res := gotest.RunScript(t, "quickstart.js", gotest.Duration(2*time.Second))
		assert.Greater(t, res.Counter("llm_reqs"), 0.0)
		passes, fails := res.Check("request ok")
		assert.Positive(t, passes)
		assert.Zero(t, fails)
		assert.Equal(t, 4.0, res.Gauge("vus_max"))

		// The same scenario in Go emits the same metrics and passes the same thresholds.
		goRes := gotest.Run(t, quickstart(2*time.Second))
		assert.Equal(t, res.Metrics(), goRes.Metrics())
		assert.Equal(t, outcomes(res), outcomes(goRes))
	},
	"slo-gate.js": func(t *testing.T) {
		mockCfg := mockllm.Config{TTFT: 10 * time.Millisecond, ITL: 2 * time.Millisecond, Seed: 1}
		script := gotest.RunScript(t, "slo-gate.js", gotest.URL(gotest.MockServer(t, mockCfg).OpenAIURL()), gotest.NoShrink())
		goRes := gotest.Run(t, sloGate(gotest.MockServer(t, mockCfg).OpenAIURL()))

		require.Equal(t, 0, script.ExitCode)
		assert.Equal(t, script.Metrics(), goRes.Metrics(), "same metric names")
		assert.Equal(t, outcomes(script), outcomes(goRes), "same thresholds, same outcomes")
		// The submetrics select on every tag the module sets (model, dialect, status,
		// finish_reason), the client's tag and the scenario's: equal counts mean equal tags.
		for sub, stat := range map[string]string{
			"llm_reqs{model:mock-model,dialect:openai-chat,status:200,finish_reason:length,scenario:default}": "count",
			"checks{check:request ok}": "passes",
		} {
			for _, res := range []*gotest.Result{script, goRes} {
				m := res.Summary().Metric(sub)
				require.NotNil(t, m, "%s is in the summary (a threshold names it)", sub)
				assert.Equal(t, 12.0, m.Values[stat], sub)
			}
		}
		assert.Equal(t, 12.0, script.Counter("llm_reqs"))
		assert.Equal(t, int64(12), script.Trend("llm_ttft{tier:gold}").Count())
		assert.Equal(t, int64(12), goRes.Trend("llm_ttft{tier:gold}").Count())
		assert.Equal(t, script.Counter("llm_completion_tokens"), goRes.Counter("llm_completion_tokens"))
	},
	"chat.js": func(t *testing.T) {
		// chat.js is meant for a real server named by LLM_URL: point it at a mock we own.
		mock := gotest.MockServer(t, mockllm.Config{TTFT: 10 * time.Millisecond, ITL: 2 * time.Millisecond})
		res := gotest.RunScript(t, "chat.js", gotest.URL(mock.OpenAIURL()), gotest.Env("LLM_MODEL", "mock-model"))
		assert.Equal(t, 10.0, res.Counter("llm_reqs"))
		assert.Len(t, mock.Truths(), 10, "every request went to the server named by LLM_URL")
		assert.Equal(t, 1.0, res.Rate("llm_goodput"))
	},
	"arrival-rate.js": func(t *testing.T) {
		res := gotest.RunScript(t, "arrival-rate.js", gotest.NoShrink())
		// 20 iterations/s for 5 s, however long each request takes.
		started := res.Counter("iterations") + droppedOrZero(res)
		assert.InDelta(t, 100, started, 2, "constant-arrival-rate delivers its rate")
		assert.True(t, res.Has("schedule_lag"), "the runner reports its own lag behind schedule")
	},
	"ramping.js": func(t *testing.T) {
		res := gotest.RunScript(t, "ramping.js", gotest.NoShrink())
		assert.Equal(t, 6.0, res.Gauge("vus_max"))
		assert.Greater(t, res.Counter("llm_reqs"), 10.0)
		assert.Equal(t, int64(res.Counter("llm_reqs")), res.Trend("llm_ttft").Count())
	},
	"dataset.js": func(t *testing.T) {
		res := gotest.RunScript(t, "dataset.js")
		n := res.Counter("iterations")
		assert.Equal(t, n, res.Counter("llm_reqs"))
		passes, fails := res.Check("ok")
		assert.Equal(t, int64(n), passes)
		assert.Zero(t, fails)
	},
	"async.js": func(t *testing.T) {
		res := gotest.RunScript(t, "async.js", gotest.NoShrink())
		assert.Equal(t, 32.0, res.Counter("llm_reqs"), "8 iterations × 4 concurrent streams")
		passes, fails := res.Check("streams overlapped")
		assert.Equal(t, int64(8), passes)
		assert.Zero(t, fails)
	},
	"multi-turn.js": func(t *testing.T) {
		res := gotest.RunScript(t, "multi-turn.js", gotest.NoShrink())
		// Submetrics exist for the thresholds the script declares (k6 semantics).
		for _, turn := range []string{"1", "3"} {
			assert.Equal(t, int64(6), res.Trend("llm_ttft{turn:"+turn+"}").Count(), "turn %s", turn)
		}
		// Later turns resend the history, so their prefill (and TTFT) is longer.
		assert.Greater(t, res.Trend("llm_ttft{turn:3}").Med(), res.Trend("llm_ttft{turn:1}").Med())
	},
}

// outcomes maps each threshold ("metric expr") to whether it held.
func outcomes(res *gotest.Result) map[string]bool {
	m := make(map[string]bool, len(res.Thresholds))
	for _, th := range res.Thresholds {
		m[th.Metric+" "+th.Expr] = th.OK
	}
	return m
}

func droppedOrZero(res *gotest.Result) float64 {
	if res.Has("dropped_iterations") {
		return res.Counter("dropped_iterations")
	}
	return 0
}

func TestExamples(t *testing.T) {
	for name, test := range exampleTests {
		t.Run(strings.TrimSuffix(name, ".js"), func(t *testing.T) {
			t.Parallel()
			test(t)
		})
	}
}

func TestEveryExampleIsTested(t *testing.T) {
	scripts, err := filepath.Glob("*.js")
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, s := range scripts {
		assert.Contains(t, exampleTests, s, "examples/%s has no test in exampleTests", s)
	}
}
