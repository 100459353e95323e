package examples_test

import (
	"context"
	"time"

	"github.com/tokenstorm/tokenstorm/gotest"
	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/tokens"
)

// sloGate is examples/slo-gate.js written in Go: same load model, client tags, SLOs,
// thresholds and check.
func sloGate(url string) gotest.Scenario {
	return gotest.Scenario{
		VUs:        3,
		Iterations: 12,
		NoShrink:   true, // compared with the script, which runs as written
		Client:     llm.Config{BaseURL: url, Model: "mock-model"},
		ClientTags: map[string]string{"tier": "gold"},
		SLO:        tokens.SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond},
		Thresholds: map[string][]string{
			"llm_goodput":         {"rate>=0.95"},
			"llm_ttft{tier:gold}": {"p(95)<500"},
			"llm_reqs{model:mock-model,dialect:openai-chat,status:200,finish_reason:length,scenario:default}": {"count>=12"},
			"checks{check:request ok}": {"rate==1"},
		},
		Exec: func(ctx context.Context, vu *gotest.VU) error {
			r := vu.Client.Chat(ctx, 16, llm.Message{Role: "user", Content: "Write one sentence about rivers."})
			vu.Check("request ok", r.OK())
			return nil
		},
	}
}

// quickstart is examples/quickstart.js written in Go. An empty BaseURL starts the
// embedded mock, as the script's Client without url does.
func quickstart(d time.Duration) gotest.Scenario {
	return gotest.Scenario{
		VUs:      4,
		Duration: d,
		Client:   llm.Config{Model: "mock-model"},
		Thresholds: map[string][]string{
			"llm_ttft":       {"p(95)<250"},
			"llm_req_failed": {"rate<0.01"},
		},
		Exec: func(ctx context.Context, vu *gotest.VU) error {
			r := vu.Client.Chat(ctx, 32, llm.Message{Role: "user", Content: "Say hello in a few words."})
			vu.Check("request ok", r.OK())
			vu.Check("got tokens", r.CompletionTokens > 0)
			return nil
		},
	}
}
