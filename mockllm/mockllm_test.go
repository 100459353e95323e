package mockllm

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testPrompt = "hello world, this is a test" // 27 bytes: 7 estimated tokens

type dialectCase struct {
	name          string
	path          func(stream bool) string
	body          func(stream bool, maxTokens int) string
	decodeStream  func(io.Reader) (decoded, error)
	decodeBody    func([]byte) (decoded, error)
	streamType    string
	finishLength  string
	reasoning     bool // has a place for reasoning tokens
	streamUsage   bool // the stream reports prompt and completion tokens
	roleChunks    int  // structural events before the first token
	bodyHasPrompt bool // the non-streamed body reports prompt tokens
}

func fixed(p string) func(bool) string { return func(bool) string { return p } }

var dialectCases = []dialectCase{
	{
		name: "openai-chat", path: fixed("/v1/chat/completions"),
		body: func(stream bool, n int) string {
			opts := ""
			if stream {
				opts = `,"stream_options":{"include_usage":true}`
			}
			return fmt.Sprintf(`{"model":"m1","messages":[{"role":"user","content":%q}],"stream":%v,"max_tokens":%d%s}`, testPrompt, stream, n, opts)
		},
		decodeStream: decodeOpenAIStream, decodeBody: decodeOpenAIBody,
		streamType: "text/event-stream", finishLength: "length", reasoning: true, streamUsage: true, roleChunks: 1, bodyHasPrompt: true,
	},
	{
		name: "openai-completions", path: fixed("/v1/completions"),
		body: func(stream bool, n int) string {
			opts := ""
			if stream {
				opts = `,"stream_options":{"include_usage":true}`
			}
			return fmt.Sprintf(`{"model":"m1","prompt":%q,"stream":%v,"max_tokens":%d%s}`, testPrompt, stream, n, opts)
		},
		decodeStream: decodeOpenAIStream, decodeBody: decodeOpenAIBody,
		streamType: "text/event-stream", finishLength: "length", streamUsage: true, bodyHasPrompt: true,
	},
	{
		name: "anthropic", path: fixed("/v1/messages"),
		body: func(stream bool, n int) string {
			return fmt.Sprintf(`{"model":"m1","max_tokens":%d,"messages":[{"role":"user","content":[{"type":"text","text":%q}]}],"stream":%v}`, n, testPrompt, stream)
		},
		decodeStream: decodeAnthropicStream, decodeBody: decodeAnthropicBody,
		streamType: "text/event-stream", finishLength: "max_tokens", reasoning: true, streamUsage: true, roleChunks: 1, bodyHasPrompt: true,
	},
	{
		name: "tgi",
		path: func(stream bool) string {
			if stream {
				return "/generate_stream"
			}
			return "/generate"
		},
		body: func(_ bool, n int) string {
			return fmt.Sprintf(`{"inputs":%q,"parameters":{"max_new_tokens":%d,"details":true}}`, testPrompt, n)
		},
		decodeStream: decodeTGIStream, decodeBody: decodeTGIBody,
		streamType: "text/event-stream", finishLength: "length",
	},
	{
		name: "ollama", path: fixed("/api/chat"),
		body: func(stream bool, n int) string {
			return fmt.Sprintf(`{"model":"m1","messages":[{"role":"user","content":%q}],"stream":%v,"options":{"num_predict":%d}}`, testPrompt, stream, n)
		},
		decodeStream: decodeOllamaStream, decodeBody: decodeOllamaBody,
		streamType: "application/x-ndjson", finishLength: "length", reasoning: true, streamUsage: true, bodyHasPrompt: true,
	},
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TestDialects decodes every dialect, streamed and not, with plain encoding/json, and
// checks the stream against the non-streamed body of the same request on a twin
// server (same seed, so the same text) and against the server's ground truth.
func TestDialects(t *testing.T) {
	const maxTokens = 7
	for _, dc := range dialectCases {
		for _, perChunk := range []int{1, 3} {
			for _, reasoning := range []int{0, 2} {
				t.Run(fmt.Sprintf("%s/per_chunk=%d/reasoning=%d", dc.name, perChunk, reasoning), func(t *testing.T) {
					cfg := Config{Seed: 7, TTFT: time.Millisecond, ITL: 100 * time.Microsecond,
						TokensPerChunk: perChunk, Reasoning: reasoning, RecordTruth: true}
					wantR := 0
					if dc.reasoning {
						wantR = reasoning
					}
					wantChunks := ceilDiv(wantR, perChunk) + ceilDiv(maxTokens-wantR, perChunk)

					srvA, cA := startServer(t, cfg)
					resp := post(t, cA, srvA.URL()+dc.path(true), dc.body(true, maxTokens))
					defer resp.Body.Close()
					require.Equal(t, http.StatusOK, resp.StatusCode)
					assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), dc.streamType), resp.Header.Get("Content-Type"))
					id := resp.Header.Get(HeaderRequestID)
					require.NotEmpty(t, id)
					st, err := dc.decodeStream(resp.Body)
					require.NoError(t, err)

					srvB, cB := startServer(t, cfg)
					respB := post(t, cB, srvB.URL()+dc.path(false), dc.body(false, maxTokens))
					defer respB.Body.Close()
					require.Equal(t, http.StatusOK, respB.StatusCode)
					assert.Equal(t, "application/json", respB.Header.Get("Content-Type"))
					raw, err := io.ReadAll(respB.Body)
					require.NoError(t, err)
					nb, err := dc.decodeBody(raw)
					require.NoError(t, err, "%s", raw)

					assert.True(t, st.Ended, "stream has its end marker")
					assert.Equal(t, dc.finishLength, st.Finish)
					assert.Equal(t, dc.finishLength, nb.Finish)
					assert.Equal(t, wantChunks, st.Chunks)
					assert.Equal(t, ceilDiv(wantR, perChunk), st.ReasoningChunks)
					assert.Equal(t, dc.roleChunks, st.RoleChunks)
					assert.NotEmpty(t, st.Text)
					assert.Equal(t, nb.Text, st.Text, "same seed, same request number: same text")
					assert.Equal(t, nb.Reasoning, st.Reasoning)
					assert.Equal(t, wantR > 0, st.Reasoning != "")
					if dc.streamUsage {
						assert.Equal(t, maxTokens, st.CompletionTokens)
						assert.Equal(t, 7, st.PromptTokens)
					}
					if dc.name == "tgi" {
						assert.Equal(t, maxTokens, st.CompletionTokens)
					}
					assert.Equal(t, maxTokens, nb.CompletionTokens)
					if dc.bodyHasPrompt {
						assert.Equal(t, 7, nb.PromptTokens)
					}

					tr, ok := srvA.Truth(id)
					require.True(t, ok)
					assert.Equal(t, dc.name, tr.Dialect)
					assert.Equal(t, http.StatusOK, tr.Status)
					assert.True(t, tr.Stream)
					assert.Equal(t, 7, tr.PromptTokens)
					assert.Equal(t, maxTokens, tr.CompletionTokens)
					assert.Equal(t, wantR, tr.ReasoningTokens)
					assert.Equal(t, "length", tr.FinishReason)
					assert.False(t, tr.Aborted)
					require.Len(t, tr.Chunks, wantChunks)
					require.Len(t, tr.Delays, wantChunks)
					assert.Equal(t, ceilDiv(wantR, perChunk), tr.ReasoningChunks)
					assert.False(t, tr.Admitted.Before(tr.Received))
					// The first chunk waits at least the prefill plus the decode steps of
					// its extra tokens; later ones at least their decode steps.
					assert.GreaterOrEqual(t, tr.Delays[0], time.Millisecond+time.Duration(min(perChunk, max(wantR, 1))-1)*100*time.Microsecond)
					assert.GreaterOrEqual(t, tr.Chunks[0].Sub(tr.Admitted), tr.Delays[0])
					for i := 1; i < len(tr.Chunks); i++ {
						assert.GreaterOrEqual(t, tr.Chunks[i].Sub(tr.Chunks[i-1]), tr.Delays[i], "chunk %d", i)
					}
					assert.False(t, tr.Done.Before(tr.Chunks[len(tr.Chunks)-1]))

					trB := srvB.Truths()
					require.Len(t, trB, 1)
					assert.False(t, trB[0].Stream)
					assert.Empty(t, trB[0].Chunks)
					assert.Len(t, trB[0].Delays, wantChunks)
					assert.Equal(t, tr.Delays, trB[0].Delays, "same seed: same schedule")
				})
			}
		}
	}
}
