package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

// runMock runs `tokenstorm <args>` through the real command tree with ctx, and
// returns the printed lines as they come and the command's result.
func runMock(ctx context.Context, t *testing.T, args ...string) (lines <-chan string, result <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	root := newRootCmd()
	root.SetOut(pw)
	root.SetArgs(args)
	res := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		pw.Close()
		res <- err
	}()
	ls := make(chan string, 64)
	go func() {
		defer close(ls)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			ls <- sc.Text()
		}
	}()
	return ls, res
}

// baseURL reads the banner and returns the root URL it names.
func baseURL(t *testing.T, lines <-chan string) (string, []string) {
	t.Helper()
	var got []string
	for l := range lines {
		got = append(got, l)
		if strings.HasPrefix(strings.TrimSpace(l), "metrics") {
			break
		}
	}
	require.NotEmpty(t, got, "no banner")
	i := strings.Index(got[0], "http://")
	require.GreaterOrEqual(t, i, 0, got[0])
	return strings.Fields(got[0][i:])[0], got
}

func TestMockCommand(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, result := runMock(ctx, t, "mock", "--addr", ":0", "--model", "cli-model", "--ttft", "0", "--itl", "0",
		"--tokens-per-chunk", "2", "--max-tokens", "5")
	url, banner := baseURL(t, lines)
	assert.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), "an empty host binds loopback: %s", url)
	joined := strings.Join(banner, "\n")
	for _, want := range []string{"openai-chat", url + "/v1", "anthropic", "tgi", "ollama", url + "/metrics", `"cli-model"`} {
		assert.Contains(t, joined, want)
	}

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	resp, err := c.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	body := string(raw)
	assert.Equal(t, 3, strings.Count(body, `"content":"`)-1, "5 tokens in chunks of 2, after the role chunk:\n%s", body)
	assert.Contains(t, body, `"model":"cli-model"`)
	assert.Contains(t, body, `"finish_reason":"length"`)
	assert.True(t, strings.HasSuffix(body, "data: [DONE]\n\n"))

	cancel()
	require.NoError(t, <-result)
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	assert.Contains(t, rest, "tokenstorm mock: stopped")
}

// TestMockCommandSignal stops the command with a real SIGTERM, sent while the command
// is known to hold the signal (its banner is printed after it subscribed).
func TestMockCommandSignal(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	lines, result := runMock(context.Background(), t, "mock", "--addr", "127.0.0.1:0")
	baseURL(t, lines)
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGTERM))
	require.NoError(t, <-result)
	for range lines {
	}
}

func TestMockCommandErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"jitter out of range", []string{"mock", "--jitter", "2"}, 2},
		{"negative ttft", []string{"mock", "--ttft", "-1ms"}, 2},
		{"unknown fault", []string{"mock", "--faults", "http_400,meteor"}, 2},
		{"zero tokens per chunk", []string{"mock", "--tokens-per-chunk", "0"}, 2},
		{"bad addr", []string{"mock", "--addr", "nope"}, 2},
		{"stray argument", []string{"mock", "extra"}, 2},
		{"port in use", []string{"mock", "--addr", ln.Addr().String()}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.code, execute(tt.args))
		})
	}
}

func TestMockConfig(t *testing.T) {
	c, err := mockConfig(mockConfigDefaults(t), []string{"cut", "reset"})
	require.NoError(t, err)
	assert.Len(t, c.Faults, 2)
	zero := mockConfigDefaults(t)
	zero.TTFT, zero.ITL = 0, 0
	c, err = mockConfig(zero, nil)
	require.NoError(t, err)
	assert.Negative(t, int64(c.TTFT), "--ttft 0 means no delay, not the default")
	assert.Negative(t, int64(c.ITL))
}

func mockConfigDefaults(t *testing.T) (c mockllm.Config) {
	t.Helper()
	cmd := newMockCmd()
	require.NoError(t, cmd.ParseFlags(nil))
	c.Model, _ = cmd.Flags().GetString("model")
	c.TTFT, _ = cmd.Flags().GetDuration("ttft")
	c.ITL, _ = cmd.Flags().GetDuration("itl")
	c.TokensPerChunk, _ = cmd.Flags().GetInt("tokens-per-chunk")
	c.MaxTokens, _ = cmd.Flags().GetInt("max-tokens")
	return c
}
