package mockllm

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const chatBody = `{"messages":[{"role":"user","content":"abcdefgh"}],"stream":true,"max_tokens":5}` // 2 prompt tokens

// openStream sends a streamed chat request and returns once its headers arrived; the
// server has queued or admitted it by then. cancel ends it from the client side.
func openStream(t *testing.T, c *http.Client, url string, hdr ...string) (resp *http.Response, cancel context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(chatBody))
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err = c.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp, cancel
}

// TestCapacity: with MaxNumSeqs=2, four requests held in prefill leave 2 running and
// 2 waiting; a finished one hands its slot to the oldest waiter.
func TestCapacity(t *testing.T) {
	cfg := Config{MaxNumSeqs: 2, KVCacheTokens: 100}
	done := doneFeed(&cfg)
	srv, c := startServer(t, cfg)

	var ids []string
	var cancels []context.CancelFunc
	for range 4 {
		resp, cancel := openStream(t, c, srv.URL(), HeaderTTFT, "1h")
		ids = append(ids, resp.Header.Get(HeaderRequestID))
		cancels = append(cancels, cancel)
	}
	fams := scrape(t, c, srv.URL())
	assert.Equal(t, 2.0, gauge(t, fams, "vllm:num_requests_running"))
	assert.Equal(t, 2.0, gauge(t, fams, "vllm:num_requests_waiting"))
	assert.Equal(t, 2, srv.Running())
	assert.Equal(t, 2, srv.Waiting())

	cancels[0]()
	first := waitTruth(t, done)
	assert.Equal(t, ids[0], first.ID)
	assert.True(t, first.Aborted)
	// Request 3 took the freed slot.
	fams = scrape(t, c, srv.URL())
	assert.Equal(t, 2.0, gauge(t, fams, "vllm:num_requests_running"))
	assert.Equal(t, 1.0, gauge(t, fams, "vllm:num_requests_waiting"))

	// The newest waiter leaves the queue first, so no slot can reach it.
	cancels[3]()
	last := waitTruth(t, done)
	assert.Equal(t, ids[3], last.ID)
	assert.True(t, last.Admitted.IsZero(), "the newest waiter was never admitted")
	assert.Equal(t, 0, srv.Waiting())
	cancels[1]()
	cancels[2]()
	got := map[string]Truth{}
	for range 2 {
		tr := waitTruth(t, done)
		got[tr.ID] = tr
	}
	assert.False(t, got[ids[1]].Admitted.IsZero())
	assert.False(t, got[ids[2]].Admitted.IsZero(), "the oldest waiter was admitted")
	assert.True(t, got[ids[2]].Admitted.After(got[ids[1]].Admitted))
	fams = scrape(t, c, srv.URL())
	assert.Zero(t, gauge(t, fams, "vllm:num_requests_running"))
	assert.Zero(t, gauge(t, fams, "vllm:num_requests_waiting"))
	assert.Zero(t, gauge(t, fams, "vllm:kv_cache_usage_perc"))
	// Every request ended as an abort, the one that left the queue included (vLLM
	// counts aborts wherever the request was).
	for _, s := range fams["vllm:request_success_total"].samples {
		want := 0.0
		if s.labels["finished_reason"] == "abort" {
			want = 4
		}
		assert.Equal(t, want, s.value, s.labels["finished_reason"])
	}
}

// TestKVCacheUsage: two sequences held after the prefill occupy their prompt tokens.
func TestKVCacheUsage(t *testing.T) {
	cfg := Config{KVCacheTokens: 8, TTFT: -1}
	done := doneFeed(&cfg)
	srv, c := startServer(t, cfg)
	_, c1 := openStream(t, c, srv.URL(), HeaderFault, string(FaultStallFirst))
	_, c2 := openStream(t, c, srv.URL(), HeaderFault, string(FaultStallFirst))
	// The stall comes after admission, where the prompt tokens are counted; scrape
	// until both got there (each scrape is a real round trip, not a sleep).
	var kv float64
	for range 1000 {
		kv = gauge(t, scrape(t, c, srv.URL()), "vllm:kv_cache_usage_perc")
		if kv == 0.5 {
			break
		}
	}
	assert.Equal(t, 0.5, kv, "2 sequences × 2 prompt tokens / 8")
	c1()
	c2()
	waitTruth(t, done)
	waitTruth(t, done)
	assert.Zero(t, gauge(t, scrape(t, c, srv.URL()), "vllm:kv_cache_usage_perc"))
}

// TestDecodeSlowsWithRunning: each decode step costs ITL + ITLPerRunning × running.
func TestDecodeSlowsWithRunning(t *testing.T) {
	cfg := Config{TTFT: -1, ITL: time.Millisecond, ITLPerRunning: 500 * time.Microsecond, TokensPerChunk: 2, RecordTruth: true}
	srv, c := startServer(t, cfg)
	// Two stalled sequences hold running slots from before their headers arrive.
	openStream(t, c, srv.URL(), HeaderFault, string(FaultStallFirst))
	openStream(t, c, srv.URL(), HeaderFault, string(FaultStallFirst))
	resp := post(t, c, srv.URL()+"/v1/chat/completions", chatBody)
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	tr, ok := srv.Truth(resp.Header.Get(HeaderRequestID))
	require.True(t, ok)
	step := time.Millisecond + 3*500*time.Microsecond // 3 running
	assert.Equal(t, []time.Duration{step, 2 * step, step}, tr.Delays, "chunks of 2, 2 and 1 tokens")
}

// TestJitterReproducible: the same seed replays the same delays, lengths and text; a
// different seed does not; every delay stays within the jitter band.
func TestJitterReproducible(t *testing.T) {
	run := func(seed int64) ([]Truth, []string) {
		cfg := Config{Seed: seed, Jitter: 0.5, TTFT: 2 * time.Millisecond, ITL: 200 * time.Microsecond, RecordTruth: true,
			OutputLen: func(r *rand.Rand, maxTokens int) int { return 1 + r.IntN(maxTokens) }}
		srv, c := startServer(t, cfg)
		var texts []string
		for range 5 {
			resp := post(t, c, srv.URL()+"/v1/completions", `{"prompt":"x","max_tokens":6}`)
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			d, err := decodeOpenAIBody(raw)
			require.NoError(t, err)
			texts = append(texts, d.Text)
		}
		return srv.Truths(), texts
	}
	a, ta := run(11)
	b, tb := run(11)
	c, tc := run(12)
	require.Len(t, a, 5)
	for i := range a {
		assert.Equal(t, a[i].Delays, b[i].Delays, "request %d", i)
		assert.Equal(t, a[i].CompletionTokens, b[i].CompletionTokens)
		assert.Equal(t, a[i].FinishReason, b[i].FinishReason)
		for j, d := range a[i].Delays {
			nominal := 200 * time.Microsecond
			if j == 0 {
				nominal = 2 * time.Millisecond
			}
			assert.InDelta(t, float64(nominal), float64(d), 0.5*float64(nominal)+1, "request %d delay %d", i, j)
		}
	}
	assert.Equal(t, ta, tb)
	assert.NotEqual(t, ta, tc)
	assert.NotEqual(t, a[0].Delays, c[0].Delays)
	lengths := map[int]bool{}
	for _, tr := range append(a, c...) {
		lengths[tr.CompletionTokens] = true
		assert.Equal(t, tr.CompletionTokens == 6, tr.FinishReason == "length")
	}
	assert.Greater(t, len(lengths), 1, "OutputLen drew several lengths")
}

// TestClientGoesAway: a handler returns when its client leaves, wherever it waits.
func TestClientGoesAway(t *testing.T) {
	for _, tt := range []struct {
		name string
		hdr  []string
	}{
		{"in prefill", []string{HeaderTTFT, "1h"}},
		{"in decode", []string{HeaderITL, "1h"}},
		{"in stall", []string{HeaderFault, string(FaultStallMid)}},
		{"in queue", []string{HeaderTTFT, "1h"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{TTFT: -1, ITL: -1}
			if tt.name == "in queue" {
				cfg.MaxNumSeqs = 1
			}
			done := doneFeed(&cfg)
			srv, c := startServer(t, cfg)
			if tt.name == "in queue" {
				openStream(t, c, srv.URL(), tt.hdr...) // holds the only slot
			}
			resp, cancel := openStream(t, c, srv.URL(), tt.hdr...)
			if tt.name == "in decode" {
				// Wait for the first token, so the handler is between tokens.
				br := bufio.NewReader(resp.Body)
				for {
					line, err := br.ReadString('\n')
					require.NoError(t, err)
					if strings.Contains(line, `"content":"`) && !strings.Contains(line, `"role"`) {
						break
					}
				}
			}
			cancel()
			tr := waitTruth(t, done)
			assert.Equal(t, resp.Header.Get(HeaderRequestID), tr.ID)
			assert.True(t, tr.Aborted)
			assert.Empty(t, tr.FinishReason)
		})
	}
}

// TestCloseEndsStalledHandlers: Close returns while streams stall, and is idempotent.
func TestCloseEndsStalledHandlers(t *testing.T) {
	cfg := Config{MaxNumSeqs: 1}
	done := doneFeed(&cfg)
	srv, err := Start(context.Background(), "", cfg)
	require.NoError(t, err)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	r1, _ := openStream(t, c, srv.URL(), HeaderFault, string(FaultStallFirst))
	r2, _ := openStream(t, c, srv.URL()) // queued behind it
	require.NoError(t, srv.Close())
	require.NoError(t, srv.Close())
	for range 2 {
		assert.True(t, waitTruth(t, done).Aborted)
	}
	for _, r := range []*http.Response{r1, r2} {
		_, err := io.Copy(io.Discard, r.Body)
		assert.NoError(t, err, "the stream ends (without its end marker)")
	}
	_, err = c.Get(srv.URL() + "/health")
	assert.Error(t, err, "the listener is closed")
}

// TestStartStopsOnContext: cancelling Start's context stops the server.
func TestStartStopsOnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Start(ctx, "127.0.0.1:0", Config{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(srv.URL(), "http://127.0.0.1:"))
	cancel()
	require.NoError(t, srv.Close()) // joins the goroutines that the cancel stopped
	_, err = http.Get(srv.URL() + "/health")
	assert.Error(t, err)

	_, err = Start(context.Background(), "256.0.0.1:0", Config{})
	assert.Error(t, err)
}

// TestHandlerWithoutStart: New's Server serves through any http.Server.
func TestHandlerWithoutStart(t *testing.T) {
	srv := New(Config{TTFT: -1, ITL: -1})
	assert.Empty(t, srv.URL())
	hs := &http.Server{Handler: srv}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"x","max_tokens":2}`))
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	d, err := decodeOpenAIBody(raw)
	require.NoError(t, err)
	assert.Equal(t, 2, d.CompletionTokens)
	require.NoError(t, srv.Close())
	require.NoError(t, hs.Close())
	http.DefaultClient.CloseIdleConnections()
}

// TestPrefillPerToken: the prefill is TTFT + PrefillPerToken × prompt tokens, and
// X-Mock-TTFT replaces the whole of it.
func TestPrefillPerToken(t *testing.T) {
	srv, c := startServer(t, Config{TTFT: 2 * time.Millisecond, PrefillPerToken: 100 * time.Microsecond, ITL: -1, RecordTruth: true})
	for _, tt := range []struct {
		prompt string
		hdr    []string
		want   time.Duration
	}{
		{strings.Repeat("x", 40), nil, 2*time.Millisecond + 10*100*time.Microsecond}, // 10 tokens
		{strings.Repeat("x", 400), nil, 2*time.Millisecond + 100*100*time.Microsecond},
		{strings.Repeat("x", 400), []string{HeaderTTFT, "1ms"}, time.Millisecond},
	} {
		resp := post(t, c, srv.URL()+"/v1/completions", `{"prompt":"`+tt.prompt+`","max_tokens":2}`, tt.hdr...)
		_, err := io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		tr, ok := srv.Truth(resp.Header.Get(HeaderRequestID))
		require.True(t, ok)
		assert.Equal(t, tt.want, tr.Delays[0], "%d-byte prompt %v", len(tt.prompt), tt.hdr)
	}
}
