package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
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

// TestMockCommandFlags checks that the flags the issue names reach the server:
// --max-num-seqs (a queue forms), --fault-rate/--faults (faults drawn), --ttft, --itl
// and --reasoning (seen in the stream and in /metrics), and that --addr defaults to
// loopback.
func TestMockCommandFlags(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	assert.Equal(t, "127.0.0.1:8000", newMockCmd().Flags().Lookup("addr").DefValue)

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	post := func(ctx context.Context, url, fault string) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions",
			strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
		require.NoError(t, err)
		if fault != "" {
			req.Header.Set(mockllm.HeaderFault, fault)
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		return resp
	}
	metric := func(url, name string) float64 {
		resp, err := c.Get(url + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
				f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
				require.NoError(t, err)
				return f
			}
		}
		t.Fatalf("%s not in /metrics", name)
		return 0
	}

	// start runs `tokenstorm mock args...` on a free loopback port; stop ends the command
	// (closing the server under any stalled stream) and checks it exited cleanly.
	start := func(t *testing.T, args ...string) (ctx context.Context, url string, stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel) // a failed assertion must not leave the server running
		lines, result := runMock(ctx, t, append([]string{"mock", "--addr", "127.0.0.1:0"}, args...)...)
		url, _ = baseURL(t, lines)
		return ctx, url, func() {
			cancel()
			require.NoError(t, <-result)
			for range lines {
			}
		}
	}

	t.Run("capacity and faults", func(t *testing.T) {
		ctx, url, stop := start(t, "--max-num-seqs", "1", "--ttft", "1h", "--fault-rate", "1", "--faults", "http_503,http_429")

		for range 4 {
			resp := post(ctx, url, "")
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			assert.Contains(t, []int{503, 429}, resp.StatusCode, "--fault-rate 1 faults every request")
			assert.Contains(t, []string{"http_503", "http_429"}, resp.Header.Get(mockllm.HeaderFault))
		}
		// Exempt from the rate, two streams: one runs (in a 1 h prefill), one waits.
		// Headers come back after the server counted each request.
		a, b := post(ctx, url, "none"), post(ctx, url, "none")
		assert.Equal(t, 1.0, metric(url, "vllm:num_requests_running"))
		assert.Equal(t, 1.0, metric(url, "vllm:num_requests_waiting"))

		stop()
		for _, r := range []*http.Response{a, b} {
			_, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
	})

	t.Run("latency and reasoning", func(t *testing.T) {
		ctx, url, stop := start(t, "--ttft", "30ms", "--itl", "10ms", "--reasoning", "2", "--max-tokens", "4")
		resp := post(ctx, url, "")
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, 2, strings.Count(string(raw), `"reasoning_content":"`), "--reasoning 2:\n%s", raw)
		// Timers never fire early, so the server's own histograms give lower bounds.
		assert.Equal(t, 1.0, metric(url, "vllm:time_to_first_token_seconds_count"))
		assert.GreaterOrEqual(t, metric(url, "vllm:time_to_first_token_seconds_sum"), 0.030)
		assert.Equal(t, 3.0, metric(url, "vllm:inter_token_latency_seconds_count"))
		assert.GreaterOrEqual(t, metric(url, "vllm:inter_token_latency_seconds_sum"), 0.030)
		stop()
	})
}
