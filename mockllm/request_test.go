package mockllm

import (
	"io"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPromptTokens(t *testing.T) {
	tests := []struct {
		name string
		d    dialect
		body string
		want int
	}{
		{"chat string", dChat, `{"messages":[{"role":"user","content":"12345678"}]}`, 2},
		{"chat parts", dChat, `{"messages":[{"role":"system","content":"1234"},{"role":"user","content":[{"type":"text","text":"12345"},{"type":"image_url","image_url":{"url":"x"}}]}]}`, 3},
		{"chat empty", dChat, `{"messages":[{"role":"user","content":null}]}`, 0},
		{"completions string", dCompletions, `{"prompt":"123456789"}`, 3},
		{"completions one-string array", dCompletions, `{"prompt":["1234"]}`, 1},
		{"completions token ids", dCompletions, `{"prompt":[5,6,7,8,9]}`, 5},
		{"completions nested ids", dCompletions, `{"prompt":[[5,6,7]]}`, 3},
		{"anthropic system blocks", dAnthropic, `{"system":[{"type":"text","text":"1234"}],"messages":[{"role":"user","content":"1234"}]}`, 2},
		{"tgi", dTGI, `{"inputs":"1234567890123"}`, 4},
		{"ollama", dOllama, `{"messages":[{"role":"user","content":"1"}]}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := parseRequest(tt.d, []byte(tt.body), false)
			require.NoError(t, err)
			assert.Equal(t, tt.want, g.promptTokens)
		})
	}
}

func TestMaxTokensFields(t *testing.T) {
	tests := []struct {
		name   string
		d      dialect
		body   string
		want   int
		stream bool
	}{
		{"chat max_tokens", dChat, `{"messages":[{"content":"x"}],"max_tokens":9}`, 9, false},
		{"chat max_completion_tokens wins", dChat, `{"messages":[{"content":"x"}],"max_tokens":9,"max_completion_tokens":4}`, 4, false},
		{"chat absent", dChat, `{"messages":[{"content":"x"}],"stream":true}`, 0, true},
		{"tgi", dTGI, `{"inputs":"x","parameters":{"max_new_tokens":6}}`, 6, true},
		{"ollama num_predict", dOllama, `{"messages":[{"content":"x"}],"options":{"num_predict":3}}`, 3, true},
		{"ollama unlimited", dOllama, `{"messages":[{"content":"x"}],"stream":false,"options":{"num_predict":-1}}`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := parseRequest(tt.d, []byte(tt.body), tt.name == "tgi")
			require.NoError(t, err)
			assert.Equal(t, tt.want, g.maxTokens)
			assert.Equal(t, tt.stream, g.stream)
		})
	}
}

// TestOutputLen: a length distribution shortens outputs (finish "stop") unless the
// request sets ignore_eos; absent max_tokens falls back to Config.MaxTokens.
func TestOutputLen(t *testing.T) {
	srv, c := startServer(t, Config{TTFT: -1, ITL: -1, MaxTokens: 5,
		OutputLen: func(*rand.Rand, int) int { return 2 }})
	for _, tt := range []struct {
		body   string
		tokens int
		finish string
	}{
		{`{"prompt":"x","max_tokens":8}`, 2, "stop"},
		{`{"prompt":"x","max_tokens":8,"ignore_eos":true}`, 8, "length"},
		{`{"prompt":"x","max_tokens":2}`, 2, "length"},
		{`{"prompt":"x","max_tokens":1}`, 1, "length"},
		{`{"prompt":"x","ignore_eos":true}`, 5, "length"},
	} {
		t.Run(tt.body, func(t *testing.T) {
			resp := post(t, c, srv.URL()+"/v1/completions", tt.body)
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			d, err := decodeOpenAIBody(raw)
			require.NoError(t, err)
			assert.Equal(t, tt.tokens, d.CompletionTokens)
			assert.Equal(t, tt.finish, d.Finish)
		})
	}
}

// TestTruthLimit: the ground-truth ring keeps the newest records only.
func TestTruthLimit(t *testing.T) {
	srv, c := startServer(t, Config{TTFT: -1, ITL: -1, RecordTruth: true, TruthLimit: 3})
	var ids []string
	for range 5 {
		resp := post(t, c, srv.URL()+"/v1/completions", `{"prompt":"x","max_tokens":1}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ids = append(ids, resp.Header.Get(HeaderRequestID))
	}
	all := srv.Truths()
	require.Len(t, all, 3)
	for i, tr := range all {
		assert.Equal(t, ids[2+i], tr.ID, "oldest first")
	}
	for i, id := range ids {
		_, ok := srv.Truth(id)
		assert.Equal(t, i >= 2, ok, id)
	}

	plain, _ := startServer(t, Config{})
	_, ok := plain.Truth(ids[4])
	assert.False(t, ok)
	assert.Nil(t, plain.Truths(), "no records without RecordTruth")
}
