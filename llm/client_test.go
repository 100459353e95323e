package llm

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFixturesOpenAI(t *testing.T) {
	for _, tc := range []struct {
		file    string
		dialect Dialect
		path    string
	}{
		{"llama-chat-stream.txt", OpenAIChat, "/v1/chat/completions"},
		{"llama-completions-stream.txt", OpenAICompletions, "/v1/completions"},
		{"sim-chat-stream.txt", OpenAIChat, "/v1/chat/completions"},
		{"sim-completions-stream.txt", OpenAICompletions, "/v1/completions"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ct, body := fixture(t, tc.file)
			want := refOpenAI(t, body)
			srv := newReplay(t, ct, body)
			c := newClient(t, Config{BaseURL: srv.srv.URL + "/v1", Dialect: tc.dialect, Model: "m", KeepText: true})
			res := c.Do(context.Background(), &Request{Prompt: "hello", MaxTokens: 5})
			require.NoError(t, res.Err)
			assert.True(t, res.OK())
			assert.Equal(t, tc.path, srv.lastPath)
			assert.Equal(t, 200, res.Status)
			assert.Equal(t, want.Text, res.Text)
			assert.Equal(t, want.Finish, res.FinishReason)
			assert.Equal(t, want.Prompt, res.PromptTokens)
			assert.Equal(t, want.Completion, res.CompletionTokens)
			assert.Equal(t, SourceUsage, res.TokenSource)
			assert.Equal(t, want.Chunks, res.Chunks)
			assert.Equal(t, want.ContentChunk, res.ContentChunks)
			assert.Len(t, res.ITL, res.ContentChunks-1)
			assert.NotEmpty(t, res.ID)
			assert.Positive(t, res.TTFB)
			assert.GreaterOrEqual(t, res.TTFT, res.TTFB)
			assert.Equal(t, res.TTFT, res.TTFO, "no reasoning: first answer chunk is first token")
			assert.GreaterOrEqual(t, res.E2E, res.TTFT)
			assert.GreaterOrEqual(t, res.Duration, res.E2E)
			var sum int64
			for _, g := range res.ITL {
				assert.GreaterOrEqual(t, int64(g), int64(0))
				sum += int64(g)
			}
			assert.Equal(t, int64(res.E2E-res.TTFT), sum, "gaps add up to E2E-TTFT")
			assert.Equal(t, (res.E2E-res.TTFT)/4, res.TPOT) // 5 completion tokens
			assert.Greater(t, res.BytesReceived, int64(len(body)-1))
			assert.Greater(t, res.BytesSent, int64(len(srv.lastBody)))

			var sent map[string]any
			require.NoError(t, json.Unmarshal(srv.lastBody, &sent))
			assert.Equal(t, true, sent["stream"])
			assert.Equal(t, map[string]any{"include_usage": true}, sent["stream_options"])
			assert.EqualValues(t, 5, sent["max_tokens"])
			assert.Equal(t, "text/event-stream", srv.lastHeader.Get("Accept"))
		})
	}
}

func TestSimRoleOnlyChunkIsNotFirstToken(t *testing.T) {
	ct, body := fixture(t, "sim-chat-stream.txt")
	srv := newReplay(t, ct, body)
	c := newClient(t, Config{BaseURL: srv.srv.URL + "/v1"})
	res := c.Do(context.Background(), &Request{Prompt: "x"})
	require.NoError(t, res.Err)
	// 8 JSON chunks: role-only, 5 content, finish, usage ([DONE] is not JSON).
	assert.Equal(t, 8, res.Chunks)
	assert.Equal(t, 5, res.ContentChunks)
	assert.Empty(t, res.Text, "KeepText is off")
}

func TestNonStreamFixture(t *testing.T) {
	ct, body := fixture(t, "sim-chat-nonstream.json")
	srv := newReplay(t, ct, body)
	c := newClient(t, Config{BaseURL: srv.srv.URL + "/v1", KeepText: true})
	res := c.Do(context.Background(), &Request{Messages: []Message{{Role: "user", Content: "hi"}}, NoStream: true})
	require.NoError(t, res.Err)
	assert.Equal(t, "Testing, testing 1,", res.Text)
	assert.Equal(t, "length", res.FinishReason)
	assert.Equal(t, 6, res.PromptTokens)
	assert.Equal(t, 5, res.CompletionTokens)
	assert.Equal(t, 1, res.ContentChunks)
	assert.Equal(t, res.TTFT, res.E2E)
	assert.Empty(t, res.ITL)
	var sent map[string]any
	require.NoError(t, json.Unmarshal(srv.lastBody, &sent))
	assert.Equal(t, false, sent["stream"])
	assert.NotContains(t, sent, "stream_options")
}

func TestDialects(t *testing.T) {
	anth, tgi, ollama, reasoningChat := testAnthropicBody, testTGIBody, testOllamaBody, testReasoningBody
	for _, tc := range []struct {
		name       string
		dialect    Dialect
		base       string
		ct         string
		body       []byte
		noStream   bool
		path       string
		text       string
		reasoning  string
		finish     string
		prompt     int
		completion int
		source     TokenSource
		content    int
		id         string
	}{
		{"openai-chat reasoning", OpenAIChat, "/v1", "text/event-stream", reasoningChat, false, "/v1/chat/completions", "Answer", "Thinking", "stop", 3, 4, SourceUsage, 3, "c1"},
		{"anthropic stream", Anthropic, "/v1", "text/event-stream", anth, false, "/v1/messages", "Hello world!\n", "Let me think", "end_turn", 25, 15, SourceUsage, 3, "msg_01"},
		{"anthropic whole", Anthropic, "/v1", "application/json", []byte(`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Hi!"}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":4}}`), true, "/v1/messages", "Hi!", "hm", "end_turn", 9, 4, SourceUsage, 1, "msg_1"},
		{"tgi stream", TGI, "", "text/event-stream", tgi, false, "/generate_stream", "Hello world", "", "eos_token", -1, 3, SourceUsage, 2, ""},
		{"tgi whole", TGI, "", "application/json", []byte(`{"generated_text":"Hi there","details":{"finish_reason":"length","generated_tokens":2}}`), true, "/generate", "Hi there", "", "length", -1, 2, SourceUsage, 1, ""},
		{"ollama stream", Ollama, "", "application/x-ndjson", ollama, false, "/api/chat", "Hi there", "hmm", "stop", 7, 4, SourceUsage, 3, ""},
		{"ollama whole", Ollama, "", "application/json", []byte(`{"model":"m","message":{"role":"assistant","content":"Hi"},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":1}`), true, "/api/chat", "Hi", "", "stop", 5, 1, SourceUsage, 1, ""},
		{"completions no usage", OpenAICompletions, "/v1", "text/event-stream", sse(true, `{"id":"x","choices":[{"text":"Hello"}]}`, `{"id":"x","choices":[{"text":" world, hello world"}]}`, `{"id":"x","choices":[{"text":"","finish_reason":"length"}]}`), false, "/v1/completions", "Hello world, hello world", "", "length", -1, -1, SourceTokenizer, 2, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newReplay(t, tc.ct, tc.body)
			c := newClient(t, Config{BaseURL: srv.srv.URL + tc.base, Dialect: tc.dialect, Model: "m", KeepText: true})
			res := c.Do(context.Background(), &Request{Prompt: "Say hello", MaxTokens: 8, NoStream: tc.noStream})
			require.NoError(t, res.Err)
			assert.Equal(t, tc.path, srv.lastPath)
			assert.Equal(t, tc.text, res.Text)
			assert.Equal(t, tc.reasoning, res.Reasoning)
			assert.Equal(t, tc.finish, res.FinishReason)
			assert.Equal(t, tc.content, res.ContentChunks)
			assert.Equal(t, tc.id, res.ID)
			prompt, completion := tc.prompt, tc.completion
			if prompt < 0 {
				prompt = CountTokens(DefaultEncoding, "Say hello")
			}
			if completion < 0 {
				completion = CountTokens(DefaultEncoding, tc.text) + CountTokens(DefaultEncoding, tc.reasoning)
			}
			assert.Equal(t, prompt, res.PromptTokens)
			assert.Equal(t, completion, res.CompletionTokens)
			assert.Equal(t, tc.source, res.TokenSource)
			if tc.reasoning != "" && !tc.noStream {
				// Both may arrive in one read and share a stamp; never the other way round.
				assert.LessOrEqual(t, res.TTFT, res.TTFO)
				assert.NotZero(t, res.TTFO)
			} else {
				assert.Equal(t, res.TTFT, res.TTFO)
			}
			var sent map[string]any
			require.NoError(t, json.Unmarshal(srv.lastBody, &sent))
			assert.Equal(t, !tc.noStream, sent["stream"])
			switch tc.dialect {
			case Anthropic:
				assert.EqualValues(t, 8, sent["max_tokens"])
				assert.Equal(t, DefaultAnthropicVersion, srv.lastHeader.Get("anthropic-version"))
			case TGI:
				assert.Equal(t, "Say hello", sent["inputs"])
				assert.Equal(t, map[string]any{"details": true, "max_new_tokens": 8.0}, sent["parameters"])
			case Ollama:
				assert.Equal(t, map[string]any{"num_predict": 8.0}, sent["options"])
				assert.Equal(t, []any{map[string]any{"role": "user", "content": "Say hello"}}, sent["messages"])
			}
		})
	}
}

func TestCompareTokenizerAndReasoningTokens(t *testing.T) {
	body := sse(true,
		`{"id":"c","choices":[{"delta":{"content":"one two three"}}]}`,
		`{"id":"c","choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":7}}`)
	srv := newReplay(t, "text/event-stream", body)
	c := newClient(t, Config{BaseURL: srv.srv.URL, CompareTokenizer: true})
	res := c.Do(context.Background(), &Request{Prompt: "x"})
	require.NoError(t, res.Err)
	assert.Equal(t, 7, res.CompletionTokens)
	assert.Equal(t, 7, res.UsageCompletionTokens)
	assert.Equal(t, CountTokens(DefaultEncoding, "one two three"), res.TokenizerCompletionTokens)
	assert.Equal(t, SourceUsage, res.TokenSource)
}

func TestParamsAndHeaders(t *testing.T) {
	srv := newReplay(t, "text/event-stream", sse(true, `{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}`))
	c := newClient(t, Config{BaseURL: srv.srv.URL + "/v1", Model: "cfg-model", APIKey: "sk-secret-123",
		Headers: map[string][]string{"X-Team": {"a"}}, NoIncludeUsage: true})
	res := c.Do(context.Background(), &Request{
		Model: "req-model", Prompt: "p", MaxTokens: 3,
		Params:  map[string]any{"temperature": 0.5, "max_tokens": 9, "ignore_eos": true},
		Headers: map[string][]string{"X-Team": {"b"}},
	})
	require.NoError(t, res.Err)
	assert.Equal(t, "req-model", res.Model)
	var sent map[string]any
	require.NoError(t, json.Unmarshal(srv.lastBody, &sent))
	assert.Equal(t, "req-model", sent["model"])
	assert.EqualValues(t, 9, sent["max_tokens"], "Params win over generated fields")
	assert.Equal(t, 0.5, sent["temperature"])
	assert.Equal(t, true, sent["ignore_eos"])
	assert.NotContains(t, sent, "stream_options")
	assert.Equal(t, "Bearer sk-secret-123", srv.lastHeader.Get("Authorization"))
	assert.Equal(t, "b", srv.lastHeader.Get("X-Team"))
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		field string
	}{
		{"no url", Config{}, "BaseURL"},
		{"relative url", Config{BaseURL: "/v1"}, "BaseURL"},
		{"ftp", Config{BaseURL: "ftp://x/v1"}, "BaseURL"},
		{"dialect", Config{BaseURL: "http://127.0.0.1", Dialect: "grpc"}, "Dialect"},
		{"timeout", Config{BaseURL: "http://127.0.0.1", Timeout: -1}, "Timeout"},
		{"idle", Config{BaseURL: "http://127.0.0.1", IdleTimeout: -1}, "IdleTimeout"},
		{"line", Config{BaseURL: "http://127.0.0.1", MaxLineBytes: -1}, "MaxLineBytes"},
		{"encoding", Config{BaseURL: "http://127.0.0.1", Encoding: "bogus"}, "Encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewClient(tc.cfg)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	c, err := NewClient(Config{BaseURL: "http://127.0.0.1:1/v1/"})
	require.NoError(t, err)
	defer c.Close()
	cfg := c.Config()
	assert.Equal(t, OpenAIChat, cfg.Dialect)
	assert.Equal(t, DefaultMaxLineBytes, cfg.MaxLineBytes)
	assert.Equal(t, DefaultMaxResponseBytes, cfg.MaxResponseBytes)
	assert.Equal(t, DefaultEncoding, cfg.Encoding)
	assert.Equal(t, "http://127.0.0.1:1/v1", cfg.BaseURL)
	c.Close() // twice is fine
}

func TestStreamRequestAnsweredWithJSON(t *testing.T) {
	_, body := fixture(t, "sim-chat-nonstream.json")
	srv := newReplay(t, "application/json", body)
	c := newClient(t, Config{BaseURL: srv.srv.URL + "/v1", KeepText: true})
	res := c.Do(context.Background(), &Request{Prompt: "hi"}) // asks for a stream
	require.NoError(t, res.Err)
	assert.Equal(t, "Testing, testing 1,", res.Text)
	assert.Equal(t, 5, res.CompletionTokens)
}

func TestJSONNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{{"12", 12}, {"1e3", 1000}, {"1.5e1", 10}, {"25E-1", 2}, {"-3", -3}, {"0", 0}, {"null", 0}} {
		var s jscan
		s.reset([]byte(tc.in))
		assert.Equal(t, tc.want, s.num(), tc.in)
		assert.True(t, s.end(), tc.in)
	}
	for _, bad := range []string{"1e", "-", "1.", "x"} {
		var s jscan
		s.reset([]byte(bad))
		s.num()
		assert.False(t, s.end(), bad)
	}
}
