package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

// probe runs `tokenstorm probe <args>` through the real command tree and returns the
// exit code execute would return and what was printed on stdout.
func probe(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"probe"}, args...))
	err := root.Execute()
	var ee *exitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.code, out.String()
	}
	return 2, out.String() + err.Error()
}

func startProbeMock(t *testing.T, cfg mockllm.Config) *mockllm.Server {
	cfg.RecordTruth = true
	srv, err := mockllm.Start(context.Background(), "", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestProbeJSON(t *testing.T) {
	// Registered first, so it runs after the mock's cleanup.
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	srv := startProbeMock(t, mockllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Reasoning: 2})
	for _, d := range []string{"openai-chat", "openai-completions", "anthropic", "tgi", "ollama"} {
		t.Run(d, func(t *testing.T) {
			url := srv.URL() + "/v1"
			if d == "tgi" || d == "ollama" {
				url = srv.URL()
			}
			code, out := probe(t, "--url", url, "--dialect", d, "--model", "m", "--max-tokens", "6", "--json")
			require.Equal(t, 0, code, out)
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(out), &raw))
			keys := make([]string, 0, len(raw))
			for k := range raw {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			want := []string{"chunks", "completion_tokens", "duration_ms", "e2e_ms", "error", "error_type", "finish_reason",
				"itl_ms", "ok", "prompt_tokens", "status", "text", "token_source", "tpot_ms", "ttfb_ms", "ttfo_ms", "ttft_ms"}
			assert.Equal(t, want, keys, "exactly DESIGN.md's keys")
			var o probeJSON
			require.NoError(t, json.Unmarshal([]byte(out), &o))
			assert.True(t, o.OK)
			assert.Equal(t, 200, o.Status)
			assert.Equal(t, 6, o.CompletionTokens)
			assert.Equal(t, "usage", o.TokenSource)
			assert.NotEmpty(t, o.Text)
			assert.Positive(t, o.TTFTms)
			assert.GreaterOrEqual(t, o.E2Ems, o.TTFTms)
			assert.GreaterOrEqual(t, o.Durationms, o.E2Ems)
			assert.NotEmpty(t, o.FinishReason)
			assert.NotNil(t, o.ITLms)
		})
	}
}

func TestProbeHuman(t *testing.T) {
	srv := startProbeMock(t, mockllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Reasoning: 3})
	code, out := probe(t, "--url", srv.URL()+"/v1", "--max-tokens", "12")
	require.Equal(t, 0, code, out)
	for _, s := range []string{"result     ok, HTTP 200", "TTFB", "TTFT", "TTFO", "ITL        p50", "p99", "max", "TPOT", "E2E", "duration",
		"tokens     prompt", "(usage)", "chunks", "finish", "text"} {
		assert.Contains(t, out, s)
	}
}

func TestProbeFailures(t *testing.T) {
	srv := startProbeMock(t, mockllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	for _, tc := range []struct {
		fault, errType string
	}{
		{"http_429", "rate_limited"},
		{"http_503", "http_5xx"},
		{"cut", "truncated"},
		{"malformed", "decode"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			code, out := probe(t, "--url", srv.URL()+"/v1", "--header", "X-Mock-Fault: "+tc.fault, "--json")
			assert.Equal(t, 1, code)
			var o probeJSON
			require.NoError(t, json.Unmarshal([]byte(out), &o), out)
			assert.False(t, o.OK)
			assert.Equal(t, tc.errType, o.ErrorType)
			assert.NotEmpty(t, o.Error)
		})
	}
	code, out := probe(t, "--url", srv.URL()+"/v1", "--header", "X-Mock-Fault: http_400")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "FAILED (http_4xx), HTTP 400")
}

func TestProbeAPIKeyFromEnvNeverPrinted(t *testing.T) {
	const key = "sk-probe-secret-42"
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got = r.Header.Get("Authorization")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":{"message":"bad key %s"}}`, got)
	}))
	defer srv.Close()
	t.Setenv(probeEnvAPIKey, key)
	code, out := probe(t, "--url", srv.URL+"/v1", "--json")
	assert.Equal(t, 1, code)
	assert.Equal(t, "Bearer "+key, got)
	assert.NotContains(t, out, key)
	assert.Contains(t, out, "http_4xx")

	code, _ = probe(t, "--url", srv.URL+"/v1", "--api-key", "sk-flag-key-99")
	assert.Equal(t, 1, code)
	assert.Equal(t, "Bearer sk-flag-key-99", got, "--api-key wins over the environment")
}

func TestProbeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--dialect", "grpc"},
		{"--url", "not a url"},
		{"--header", "no-colon"},
		{"--max-tokens", "-1"},
		{"--bogus-flag"},
		{"extra-arg"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			assert.Equal(t, 2, execute(append([]string{"probe"}, args...)))
		})
	}
}

func TestPercentile(t *testing.T) {
	s := []time.Duration{10, 20, 30, 40, 50}
	assert.Equal(t, time.Duration(30), percentile(s, 0.5))
	assert.Equal(t, time.Duration(49), percentile(s, 0.99)-percentile(s, 0.99)%1)
	assert.Equal(t, time.Duration(50), percentile(s, 1))
	assert.Equal(t, time.Duration(0), percentile(nil, 0.5))
	assert.Equal(t, "ab…", clip("abc", 2))
	assert.Equal(t, "héllo", clip("héllo", 5))
}
