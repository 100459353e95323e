package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"reflect"
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
			assert.Equal(t, want, keys, "exactly the documented keys")
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

			// Against the server's record of this request (the last one).
			truths := srv.Truths()
			require.NotEmpty(t, truths)
			tr := truths[len(truths)-1]
			assert.Equal(t, d, tr.Dialect)
			assert.Equal(t, tr.CompletionTokens, o.CompletionTokens)
			if d != "tgi" { // TGI reports no prompt count: the tokenizer counts the prompt
				assert.Equal(t, tr.PromptTokens, o.PromptTokens)
			}
			assert.Equal(t, (len(defaultProbePrompt)+3)/4, tr.PromptTokens, "--prompt default sent (the mock estimates bytes/4)")
			assert.Len(t, o.ITLms, len(tr.Chunks)-1, "one gap per pair of content chunks")
			// The client starts before the server receives and reads a chunk after it
			// was written, so its TTFT is at least the server's planned prefill.
			assert.GreaterOrEqual(t, o.TTFTms, ms(tr.Delays[0]))
			if d != "tgi" { // TGI's body names no model
				assert.Equal(t, "m", tr.Model, "--model sent")
			}
		})
	}
}

// TestProbeFlagsReachTheServer: --prompt, --model, --max-tokens and --header arrive.
func TestProbeFlagsReachTheServer(t *testing.T) {
	srv := startProbeMock(t, mockllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	code, out := probe(t, "--url", srv.URL()+"/v1", "--model", "probe-model", "--prompt", strings.Repeat("x", 40),
		"--max-tokens", "3", "--header", "X-Mock-TTFT: 30ms", "--json")
	require.Equal(t, 0, code, out)
	truths := srv.Truths()
	require.Len(t, truths, 1)
	tr := truths[0]
	assert.Equal(t, "probe-model", tr.Model)
	assert.Equal(t, 10, tr.PromptTokens, "40 bytes of prompt")
	assert.Equal(t, 3, tr.CompletionTokens)
	assert.Equal(t, 30*time.Millisecond, tr.Delays[0], "the X-Mock-TTFT header replaced the prefill")
}

// TestProbeRecordedServers replays captured responses of llama.cpp and a vLLM simulator
// (llm/testdata) through the probe: real servers' streams, not the mock's.
func TestProbeRecordedServers(t *testing.T) {
	for _, tc := range []struct {
		file, dialect string
		prompt        int
	}{
		{"llama-chat-stream.txt", "openai-chat", 30},
		{"llama-completions-stream.txt", "openai-completions", 5},
		{"sim-chat-stream.txt", "openai-chat", 12},
		{"sim-completions-stream.txt", "openai-completions", 4},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "llm", "testdata", tc.file))
			require.NoError(t, err)
			head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
			require.True(t, ok)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				for _, l := range strings.Split(string(head), "\r\n")[1:] {
					if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Content-Type") {
						w.Header().Set(k, strings.TrimSpace(v))
					}
				}
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			code, out := probe(t, "--url", srv.URL+"/v1", "--dialect", tc.dialect, "--max-tokens", "5", "--json")
			require.Equal(t, 0, code, out)
			var o probeJSON
			require.NoError(t, json.Unmarshal([]byte(out), &o))
			assert.True(t, o.OK)
			assert.Equal(t, "length", o.FinishReason)
			assert.Equal(t, 5, o.CompletionTokens)
			assert.Equal(t, tc.prompt, o.PromptTokens)
			assert.Equal(t, "usage", o.TokenSource)
			assert.NotEmpty(t, o.Text)
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

// TestProbeHeaderCredentialsNeverPrinted: servers echo credentials in error bodies;
// those given with --header (the client only knows its APIKey) are hidden too, in both
// output forms.
func TestProbeHeaderCredentialsNeverPrinted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":{"message":"bad credentials %q %q %q"}}`,
			r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Other"))
	}))
	defer srv.Close()
	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", asJSON), func(t *testing.T) {
			args := []string{"--url", srv.URL + "/v1", "--header", "Authorization: Bearer sk-hdr-secret-1",
				"--header", "x-api-key: sk-hdr-secret-2", "--header", "X-Other: visible-value"}
			if asJSON {
				args = append(args, "--json")
			}
			code, out := probe(t, args...)
			assert.Equal(t, 1, code)
			assert.NotContains(t, out, "sk-hdr-secret-1")
			assert.NotContains(t, out, "sk-hdr-secret-2")
			assert.Contains(t, out, "[REDACTED]")
			assert.Contains(t, out, "visible-value", "other headers are not secrets")
		})
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := parseHeaders([]string{" x-a : 1 ", "X-A:2", "Authorization: Bearer k", "X-Empty:"})
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2"}, h.Values("X-A"))
	assert.Equal(t, "Bearer k", h.Get("Authorization"))
	assert.Equal(t, []string{""}, h.Values("X-Empty"))
	for _, bad := range []string{"no-colon", ":v", " : v", "Bad Name: v", "X(y): v", "X: a\x01b", "X: a\nb", "Ünï: v"} {
		_, err := parseHeaders([]string{bad})
		assert.Error(t, err, "%q", bad)
	}
}

// FuzzParseHeaders: any --header value is refused or round-trips through the HTTP
// wire format unchanged (net/textproto checks names and values on the way back).
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"X-Mock-Fault: cut", "Authorization: Bearer sk", "a:b:c", "no-colon", "Bad Name: v",
		"X: a\x01b", "X:\t tab\t", "x:" + strings.Repeat("v", 300), ":", "X-Ü: v", "X: ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHeaders([]string{s})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--header") {
				t.Fatalf("%q: error %q does not name the flag", s, err)
			}
			return
		}
		if len(h) != 1 {
			t.Fatalf("%q: %d headers", s, len(h))
		}
		var buf bytes.Buffer
		require.NoError(t, h.Write(&buf))
		buf.WriteString("\r\n")
		back, err := textproto.NewReader(bufio.NewReader(&buf)).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("%q: accepted, but the wire form %q does not parse: %v", s, buf.String(), err)
		}
		if !reflect.DeepEqual(http.Header(back), h) {
			t.Fatalf("%q: %v came back as %v", s, h, back)
		}
	})
}

func TestProbeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--dialect", "grpc"},
		{"--url", "not a url"},
		{"--header", "no-colon"},
		{"--header", "Bad Name: v"},
		{"--header", "X: a\x01b"},
		{"--max-tokens", "-1"},
		{"--bogus-flag"},
		{"extra-arg"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			assert.Equal(t, 2, execute(append([]string{"probe"}, args...)))
		})
	}
}

func TestClip(t *testing.T) {
	assert.Equal(t, "ab…", clip("abc", 2))
	assert.Equal(t, "héllo", clip("héllo", 5))
	assert.Equal(t, "hé…", clip("héllo", 2))
}
