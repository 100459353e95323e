package llm_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/mockllm"
)

func startMock(t *testing.T, cfg mockllm.Config) *mockllm.Server {
	t.Helper()
	cfg.RecordTruth = true
	srv, err := mockllm.Start(context.Background(), "", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv
}

func base(srv *mockllm.Server, d llm.Dialect) string {
	switch d {
	case llm.TGI, llm.Ollama:
		return srv.URL()
	}
	return srv.URL() + "/v1"
}

var allDialects = []llm.Dialect{llm.OpenAIChat, llm.OpenAICompletions, llm.Anthropic, llm.TGI, llm.Ollama}

// TestMockEveryDialect checks each dialect, streamed and not, against the mock's
// ground truth: token counts, finish, the number of content chunks, and that each
// chunk was stamped no earlier than the server sent it.
func TestMockEveryDialect(t *testing.T) {
	srv := startMock(t, mockllm.Config{TTFT: 3 * time.Millisecond, ITL: time.Millisecond, Reasoning: 2, TokensPerChunk: 2})
	for _, d := range allDialects {
		for _, stream := range []bool{true, false} {
			t.Run(string(d)+map[bool]string{true: " stream", false: " whole"}[stream], func(t *testing.T) {
				c, err := llm.NewClient(llm.Config{BaseURL: base(srv, d), Dialect: d, Model: "m", KeepText: true, Timeout: 30 * time.Second})
				require.NoError(t, err)
				defer c.Close()
				res := c.Do(context.Background(), &llm.Request{
					Messages:  []llm.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "Say something"}},
					MaxTokens: 9, NoStream: !stream,
				})
				require.NoError(t, res.Err)
				require.NotEmpty(t, res.ID)
				tr, ok := srv.Truth(res.ID)
				require.True(t, ok, "the result's id joins the server's record")
				assert.Equal(t, tr.CompletionTokens, res.CompletionTokens)
				assert.Equal(t, llm.SourceUsage, res.TokenSource)
				assert.NotEmpty(t, res.Text)
				assert.NotEmpty(t, res.FinishReason)
				if stream {
					require.Len(t, tr.Chunks, res.ContentChunks)
					assert.Len(t, res.ITL, res.ContentChunks-1)
					// The server stamps a chunk after its Flush returned, so a fast client
					// may stamp the same chunk a little earlier; but chunk i is only
					// written after chunk i-1 was stamped, so the client's stamp of chunk
					// i can never precede the server's stamp of chunk i-1.
					assert.False(t, res.Start.Add(res.TTFT).Before(tr.Received), "TTFT before the request arrived")
					at := res.TTFT
					for i, g := range res.ITL {
						at += g
						assert.False(t, res.Start.Add(at).Before(tr.Chunks[i]), "chunk %d stamped before chunk %d was sent", i+1, i)
					}
					if tr.ReasoningChunks > 0 && tr.ReasoningChunks < len(tr.Chunks) {
						assert.NotEmpty(t, res.Reasoning)
						assert.GreaterOrEqual(t, res.TTFO, res.TTFT, "answer after reasoning")
					}
					if res.CompletionTokens > 1 {
						assert.Equal(t, (res.E2E-res.TTFT)/time.Duration(res.CompletionTokens-1), res.TPOT)
					}
				}
			})
		}
	}
}

// TestMockFaults sends every mock fault, in every dialect, streamed and not, through the
// client and checks the error_type (and timeout phase) it reports. A fault means
// something else without a stream, so each case has an expectation for both.
func TestMockFaults(t *testing.T) {
	srv := startMock(t, mockllm.Config{TTFT: time.Millisecond, ITL: 500 * time.Microsecond})
	type want struct {
		typ   llm.ErrorType
		phase string
	}
	for _, tc := range []struct {
		fault         mockllm.Fault
		stream, whole want
	}{
		{mockllm.FaultHTTP400, want{llm.ErrHTTP4xx, ""}, want{llm.ErrHTTP4xx, ""}},
		{mockllm.FaultHTTP404, want{llm.ErrHTTP4xx, ""}, want{llm.ErrHTTP4xx, ""}},
		{mockllm.FaultHTTP422, want{llm.ErrHTTP4xx, ""}, want{llm.ErrHTTP4xx, ""}},
		{mockllm.FaultHTTP429, want{llm.ErrRateLimited, ""}, want{llm.ErrRateLimited, ""}},
		{mockllm.FaultHTTP500, want{llm.ErrHTTP5xx, ""}, want{llm.ErrHTTP5xx, ""}},
		{mockllm.FaultHTTP503, want{llm.ErrHTTP5xx, ""}, want{llm.ErrHTTP5xx, ""}},
		// A whole response has no token before its body: both stalls are first_token.
		{mockllm.FaultStallFirst, want{llm.ErrTimeout, llm.PhaseFirstToken}, want{llm.ErrTimeout, llm.PhaseFirstToken}},
		{mockllm.FaultStallMid, want{llm.ErrTimeout, llm.PhaseIdle}, want{llm.ErrTimeout, llm.PhaseFirstToken}},
		// Whole: half the body under a full Content-Length, the connection closes mid-body.
		{mockllm.FaultCut, want{llm.ErrTruncated, ""}, want{llm.ErrStream, ""}},
		{mockllm.FaultMalformed, want{llm.ErrDecode, ""}, want{llm.ErrDecode, ""}},
		// A 2 MiB line, or body: over the 1 MiB limits set below.
		{mockllm.FaultOversized, want{llm.ErrStream, ""}, want{llm.ErrStream, ""}},
		{mockllm.FaultReset, want{llm.ErrNetwork, ""}, want{llm.ErrNetwork, ""}},
		// Without a stream there is no in-stream event: the mock answers HTTP 500.
		{mockllm.FaultErrorEvent, want{llm.ErrStream, ""}, want{llm.ErrHTTP5xx, ""}},
	} {
		for _, d := range allDialects {
			for _, whole := range []bool{false, true} {
				w, mode := tc.stream, "stream"
				if whole {
					w, mode = tc.whole, "whole"
				}
				t.Run(string(tc.fault)+"/"+string(d)+"/"+mode, func(t *testing.T) {
					// Short phase deadlines only where a stall is the fault: building the
					// oversized line takes the mock a while, during which no byte flows.
					first, idle := 10*time.Second, 10*time.Second
					if w.phase != "" {
						first, idle = 300*time.Millisecond, 100*time.Millisecond
					}
					c, err := llm.NewClient(llm.Config{
						BaseURL: base(srv, d), Dialect: d,
						FirstTokenTimeout: first, IdleTimeout: idle, Timeout: 20 * time.Second,
						MaxResponseBytes: 1 << 20,
						Headers:          http.Header{mockllm.HeaderFault: {string(tc.fault)}},
					})
					require.NoError(t, err)
					defer c.Close()
					res := c.Do(context.Background(), &llm.Request{Prompt: "hello", MaxTokens: 12, NoStream: whole})
					require.Error(t, res.Err)
					assert.Equal(t, w.typ, res.ErrorType, "%v", res.Err)
					assert.Equal(t, w.phase, res.TimeoutPhase)
					// The client turns a panic while decoding into a stream error; make
					// sure a stream error here is the fault, not a recovered panic.
					assert.NotContains(t, res.Err.Error(), "internal error")
					st := tc.fault.Status()
					if whole && tc.fault == mockllm.FaultErrorEvent {
						st = http.StatusInternalServerError
					}
					if st != 0 {
						var se *llm.StatusError
						require.True(t, errors.As(res.Err, &se))
						assert.Equal(t, st, se.StatusCode)
						if st == 429 {
							assert.Equal(t, time.Second, se.RetryAfter)
						}
					}
				})
			}
		}
	}
}
