package mockllm_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/mockllm"
)

// TestFaultsThroughClientWhole sends every fault, in every dialect, as a non-streamed
// request through tokenstorm's real client and checks the error_type it reports (the
// streamed cases are llm's TestMockFaults). goleak (TestMain) checks that neither side
// leaves a goroutine behind.
func TestFaultsThroughClientWhole(t *testing.T) {
	srv, err := mockllm.Start(context.Background(), "", mockllm.Config{TTFT: time.Millisecond, ITL: 200 * time.Microsecond, RecordTruth: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	for _, tc := range []struct {
		fault mockllm.Fault
		want  llm.ErrorType
		phase string
	}{
		{mockllm.FaultHTTP400, llm.ErrHTTP4xx, ""},
		{mockllm.FaultHTTP404, llm.ErrHTTP4xx, ""},
		{mockllm.FaultHTTP422, llm.ErrHTTP4xx, ""},
		{mockllm.FaultHTTP429, llm.ErrRateLimited, ""},
		{mockllm.FaultHTTP500, llm.ErrHTTP5xx, ""},
		{mockllm.FaultHTTP503, llm.ErrHTTP5xx, ""},
		// A whole response has no first token before the body: both stalls are
		// first_token timeouts.
		{mockllm.FaultStallFirst, llm.ErrTimeout, llm.PhaseFirstToken},
		{mockllm.FaultStallMid, llm.ErrTimeout, llm.PhaseFirstToken},
		// Half the body under a full Content-Length: the connection closes mid-body.
		{mockllm.FaultCut, llm.ErrStream, ""},
		{mockllm.FaultMalformed, llm.ErrDecode, ""},
		// A 2 MiB body: over the MaxResponseBytes this test sets (1 MiB).
		{mockllm.FaultOversized, llm.ErrStream, ""},
		{mockllm.FaultReset, llm.ErrNetwork, ""},
		// Without a stream there is no in-stream event: the mock answers HTTP 500.
		{mockllm.FaultErrorEvent, llm.ErrHTTP5xx, ""},
	} {
		for _, d := range []llm.Dialect{llm.OpenAIChat, llm.OpenAICompletions, llm.Anthropic, llm.TGI, llm.Ollama} {
			t.Run(string(tc.fault)+"/"+string(d), func(t *testing.T) {
				t.Parallel()
				base := srv.URL() + "/v1"
				if d == llm.TGI || d == llm.Ollama {
					base = srv.URL()
				}
				first := 10 * time.Second
				if tc.phase != "" {
					first = 200 * time.Millisecond
				}
				c, err := llm.NewClient(llm.Config{
					BaseURL: base, Dialect: d, FirstTokenTimeout: first, Timeout: 20 * time.Second,
					MaxResponseBytes: 1 << 20,
					Headers:          http.Header{mockllm.HeaderFault: {string(tc.fault)}},
				})
				require.NoError(t, err)
				defer c.Close()
				res := c.Do(context.Background(), &llm.Request{Prompt: "hello", MaxTokens: 9, NoStream: true})
				require.Error(t, res.Err)
				assert.Equal(t, tc.want, res.ErrorType, "%v", res.Err)
				assert.Equal(t, tc.phase, res.TimeoutPhase)
				// The client turns a panic while decoding into a stream error; make
				// sure a stream error here is the fault, not a recovered panic.
				assert.NotContains(t, res.Err.Error(), "internal error")
				if st := tc.fault.Status(); st != 0 {
					assert.Equal(t, st, res.Status)
				}
			})
		}
	}

	t.Run("no fault", func(t *testing.T) {
		for _, d := range []llm.Dialect{llm.OpenAIChat, llm.OpenAICompletions, llm.Anthropic, llm.TGI, llm.Ollama} {
			base := srv.URL() + "/v1"
			if d == llm.TGI || d == llm.Ollama {
				base = srv.URL()
			}
			c, err := llm.NewClient(llm.Config{BaseURL: base, Dialect: d, MaxResponseBytes: 1 << 20, Timeout: 20 * time.Second})
			require.NoError(t, err)
			res := c.Do(context.Background(), &llm.Request{Prompt: "hello", MaxTokens: 9, NoStream: true})
			c.Close()
			require.NoError(t, res.Err, d)
			tr, ok := srv.Truth(res.ID)
			require.True(t, ok, "%s: the result's id joins the server's record", d)
			assert.Equal(t, tr.CompletionTokens, res.CompletionTokens, d)
			if d != llm.TGI { // TGI reports no prompt count; the client's tokenizer counts it
				assert.Equal(t, tr.PromptTokens, res.PromptTokens, d)
			}
		}
	})
}
