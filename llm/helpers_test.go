package llm

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) != "" {
		runBenchServer() // this binary re-executed as the benchmarks' server
		return
	}
	goleak.VerifyTestMain(m)
}

// fixture returns the headers' content type and the body of a recorded raw HTTP
// response in testdata/ (raw .txt), or the whole file (.json).
func fixture(t testing.TB, name string) (string, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	if strings.HasSuffix(name, ".json") {
		return "application/json", raw
	}
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	require.True(t, ok, "fixture %s has no header/body separator", name)
	ct := "text/event-stream"
	for _, l := range strings.Split(string(head), "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Content-Type") {
			ct = strings.TrimSpace(v)
		}
	}
	return ct, body
}

// writeEvents writes body one line-group at a time, flushing after each blank line so
// the client sees real chunk boundaries.
func writeEvents(w http.ResponseWriter, body []byte, sep string) {
	f, _ := w.(http.Flusher)
	for len(body) > 0 {
		i := bytes.Index(body, []byte(sep))
		if i < 0 {
			w.Write(body)
			break
		}
		w.Write(body[:i+len(sep)])
		if f != nil {
			f.Flush()
		}
		body = body[i+len(sep):]
	}
}

// replay serves body with content type ct for every request, recording the last
// request body and headers.
type replay struct {
	srv    *httptest.Server
	ct     string
	body   []byte
	status int
	hdr    http.Header

	lastBody   []byte
	lastHeader http.Header
	lastPath   string
}

func newReplay(t testing.TB, ct string, body []byte) *replay {
	r := &replay{ct: ct, body: body, status: 200}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b := new(bytes.Buffer)
		b.ReadFrom(req.Body)
		r.lastBody, r.lastHeader, r.lastPath = b.Bytes(), req.Header.Clone(), req.URL.Path
		for k, v := range r.hdr {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", r.ct)
		w.WriteHeader(r.status)
		sep := "\n\n"
		if strings.Contains(r.ct, "ndjson") || strings.Contains(r.ct, "json") {
			sep = "\n"
		}
		writeEvents(w, r.body, sep)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func newClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// refOpenAI decodes an OpenAI SSE body with encoding/json, line by line: an independent
// reference for our scanner.
type refResult struct {
	Text, Reasoning      string
	Finish               string
	Prompt, Completion   int
	Chunks, ContentChunk int
}

func refOpenAI(t testing.TB, body []byte) refResult {
	t.Helper()
	var r refResult
	for _, l := range strings.Split(string(body), "\n") {
		l = strings.TrimRight(l, "\r")
		p, ok := strings.CutPrefix(l, "data: ")
		if !ok || p == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
				Text         string  `json:"text"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(p), &c))
		r.Chunks++
		got := false
		for _, ch := range c.Choices {
			s := ch.Delta.Content + ch.Text
			r.Text += s
			r.Reasoning += ch.Delta.ReasoningContent
			got = got || s != "" || ch.Delta.ReasoningContent != ""
			if ch.FinishReason != nil {
				r.Finish = *ch.FinishReason
			}
		}
		if got {
			r.ContentChunk++
		}
		if c.Usage != nil {
			r.Prompt, r.Completion = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
	}
	return r
}

// sse joins JSON payloads into an SSE body ending in [DONE].
func sse(done bool, payloads ...string) []byte {
	var b bytes.Buffer
	for _, p := range payloads {
		b.WriteString("data: ")
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	if done {
		b.WriteString("data: [DONE]\n\n")
	}
	return b.Bytes()
}

// anthropicSSE builds an event-typed Anthropic stream from (event, data) pairs.
func anthropicSSE(pairs ...string) []byte {
	var b bytes.Buffer
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("event: " + pairs[i] + "\ndata: " + pairs[i+1] + "\n\n")
	}
	return b.Bytes()
}

// Scripted streams for the dialects without recorded fixtures.
var testAnthropicBody = anthropicSSE(
	"message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}`,
	"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
	"ping", `{"type": "ping"}`,
	"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":0}`,
	"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}`,
	"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" world!\n"}}`,
	"content_block_stop", `{"type":"content_block_stop","index":1}`,
	"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
	"message_stop", `{"type":"message_stop"}`,
)
var testTGIBody = []byte(`data:{"index":1,"token":{"id":1,"text":"Hello","logprob":-0.1,"special":false},"generated_text":null,"details":null}

data:{"index":2,"token":{"id":2,"text":" world","logprob":-0.1,"special":false},"generated_text":null,"details":null}

data:{"index":3,"token":{"id":2,"text":"</s>","logprob":-0.1,"special":true},"generated_text":"Hello world","details":{"finish_reason":"eos_token","generated_tokens":3,"seed":null}}

`)
var testOllamaBody = []byte(`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}
{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}
{"model":"m","message":{"role":"assistant","content":" there"},"done":false}
{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1,"prompt_eval_count":7,"eval_count":4}
`)
var testReasoningBody = sse(true,
	`{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant"}}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"Think"}}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"ing","reasoning":"ing"}}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"content":"Answer"}}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":3}}}`,
)
