package llm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const secret = "sk-test-SECRET-0123456789"

// handlerServer serves h after reading the request body: net/http only notices a
// client that went away (cancelling r.Context()) once the body has been consumed.
func handlerServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// waitGone blocks until the client has gone away, bounded so a broken test cannot hang.
func waitGone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func writeChunk(w http.ResponseWriter, payload string) {
	fmt.Fprintf(w, "data: %s\n\n", payload)
	w.(http.Flusher).Flush()
}

const contentChunk = `{"id":"c","choices":[{"index":0,"delta":{"content":"tok "}}]}`

func TestStatusErrors(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		status     int
		retryAfter string
		wantType   ErrorType
		minRetry   time.Duration
		maxRetry   time.Duration
	}{
		{400, "", ErrHTTP4xx, 0, 0},
		{404, "", ErrHTTP4xx, 0, 0},
		{422, "", ErrHTTP4xx, 0, 0},
		{429, "7", ErrRateLimited, 7 * time.Second, 7 * time.Second},
		{429, date, ErrRateLimited, 60 * time.Second, 91 * time.Second},
		{500, "", ErrHTTP5xx, 0, 0},
		{503, "2", ErrHTTP5xx, 2 * time.Second, 2 * time.Second},
	} {
		t.Run(fmt.Sprint(tc.status, tc.retryAfter), func(t *testing.T) {
			srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				// A server that echoes the Authorization header, then a long tail.
				fmt.Fprintf(w, `{"error":"denied for %s"}`, r.Header.Get("Authorization"))
				w.Write([]byte(strings.Repeat("x", 4096)))
			})
			c := newClient(t, Config{BaseURL: srv.URL, APIKey: secret})
			res := c.Do(context.Background(), &Request{Prompt: "x"})
			var se *StatusError
			require.ErrorAs(t, res.Err, &se)
			assert.Equal(t, tc.status, se.StatusCode)
			assert.Equal(t, tc.status, res.Status)
			assert.Equal(t, tc.wantType, res.ErrorType)
			assert.GreaterOrEqual(t, se.RetryAfter, tc.minRetry)
			assert.LessOrEqual(t, se.RetryAfter, tc.maxRetry)
			assert.LessOrEqual(t, len(se.Body), MaxErrorBody)
			assert.Contains(t, se.Body, "denied for Bearer [REDACTED]")
			assert.NotContains(t, res.Err.Error(), secret)
			assert.NotContains(t, fmt.Sprintf("%+v", res), secret)
			assert.False(t, res.OK())
		})
	}
}

// TestCredentialHeadersRedacted: credentials set by hand in Config.Headers or
// Request.Headers, not only Config.APIKey, stay out of errors when a server echoes them.
func TestCredentialHeadersRedacted(t *testing.T) {
	const other = "tok-OTHER-9876543210"
	srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"bad %s / %s / token %s"}`, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), other)
	})
	c := newClient(t, Config{BaseURL: srv.URL, Headers: http.Header{"Authorization": {"Bearer " + secret}}})
	res := c.Do(context.Background(), &Request{Prompt: "x", Headers: http.Header{"X-Api-Key": {other}}})
	var se *StatusError
	require.ErrorAs(t, res.Err, &se)
	assert.Equal(t, `{"error":"bad [REDACTED] / [REDACTED] / token [REDACTED]"}`, se.Body)
	assert.NotContains(t, fmt.Sprintf("%+v", res), secret)
	assert.NotContains(t, fmt.Sprintf("%+v", res), other)
}

// hijack runs fn on the raw connection of each request, after the request was read.
func hijack(t *testing.T, fn func(c net.Conn, rw *bufio.ReadWriter)) *httptest.Server {
	return handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		c, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		fn(c, rw)
	})
}

const chunkedHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

func chunked(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

func TestStreamFaults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		h        http.HandlerFunc
		srv      func(t *testing.T) *httptest.Server
		cfg      Config
		wantType ErrorType
		phase    string
		msg      string
		content  int // content chunks measured before the failure
	}{
		{name: "in-stream error", wantType: ErrStream, msg: "boom " + "[REDACTED]", content: 1, h: func(w http.ResponseWriter, r *http.Request) {
			writeChunk(w, contentChunk)
			writeChunk(w, `{"error":{"message":"boom `+secret+`","type":"server_error","code":500}}`)
		}},
		{name: "vllm error response", wantType: ErrStream, msg: "bad input", h: func(w http.ResponseWriter, r *http.Request) {
			writeChunk(w, `{"object":"error","message":"bad input","type":"BadRequestError","code":400}`)
		}},
		{name: "malformed", wantType: ErrDecode, content: 2, h: func(w http.ResponseWriter, r *http.Request) {
			writeChunk(w, contentChunk)
			writeChunk(w, contentChunk)
			writeChunk(w, `{"choices":[{"delta":{"content":"tok`)
		}},
		{name: "truncated", wantType: ErrTruncated, content: 3, h: func(w http.ResponseWriter, r *http.Request) {
			for range 3 {
				writeChunk(w, contentChunk)
			}
		}},
		{name: "oversized line", wantType: ErrStream, msg: "MaxLineBytes", content: 1, h: func(w http.ResponseWriter, r *http.Request) {
			writeChunk(w, contentChunk)
			w.Write([]byte("data: " + strings.Repeat("a", DefaultMaxLineBytes+10)))
			writeChunk(w, contentChunk)
		}},
		{name: "oversized response", wantType: ErrStream, msg: "MaxResponseBytes", cfg: Config{MaxResponseBytes: 64 << 10}, h: func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < 1_000_000 && r.Context().Err() == nil; i++ {
				writeChunk(w, contentChunk)
			}
		}},
		{name: "stall before first token", wantType: ErrTimeout, phase: PhaseFirstToken, cfg: Config{FirstTokenTimeout: 50 * time.Millisecond}, h: func(w http.ResponseWriter, r *http.Request) {
			writeChunk(w, `{"choices":[{"delta":{"role":"assistant"}}]}`) // role-only is no token
			waitGone(r)
		}},
		{name: "stall mid-stream", wantType: ErrTimeout, phase: PhaseIdle, content: 2, cfg: Config{FirstTokenTimeout: time.Minute, IdleTimeout: 50 * time.Millisecond}, h: func(w http.ResponseWriter, r *http.Request) {
			writeChunk(w, contentChunk)
			writeChunk(w, contentChunk)
			waitGone(r)
		}},
		{name: "total", wantType: ErrTimeout, phase: PhaseTotal, cfg: Config{Timeout: 80 * time.Millisecond, IdleTimeout: time.Minute}, h: func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < 10_000 && r.Context().Err() == nil; i++ {
				writeChunk(w, contentChunk)
				select {
				case <-r.Context().Done():
				case <-time.After(2 * time.Millisecond):
				}
			}
		}},
		{name: "cut mid-chunk", wantType: ErrStream, msg: "closed", content: 1, srv: func(t *testing.T) *httptest.Server {
			return hijack(t, func(c net.Conn, rw *bufio.ReadWriter) {
				rw.WriteString(chunkedHead + chunked("data: "+contentChunk+"\n\n") + "40\r\ndata: {\"cho")
				rw.Flush()
			})
		}},
		{name: "reset mid-stream", wantType: ErrNetwork, content: 1, srv: func(t *testing.T) *httptest.Server {
			return hijack(t, func(c net.Conn, rw *bufio.ReadWriter) {
				rw.WriteString(chunkedHead + chunked("data: "+contentChunk+"\n\n"))
				rw.Flush()
				c.(*net.TCPConn).SetLinger(0)
			})
		}},
		{name: "reset before response", wantType: ErrNetwork, srv: func(t *testing.T) *httptest.Server {
			return hijack(t, func(c net.Conn, rw *bufio.ReadWriter) { c.(*net.TCPConn).SetLinger(0) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			if tc.srv != nil {
				srv = tc.srv(t)
			} else {
				srv = handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					tc.h(w, r)
				})
			}
			cfg := tc.cfg
			cfg.BaseURL, cfg.APIKey, cfg.KeepText = srv.URL, secret, true
			c := newClient(t, cfg)
			res := c.Do(context.Background(), &Request{Prompt: "x"})
			require.Error(t, res.Err)
			assert.Equal(t, tc.wantType, res.ErrorType, "err: %v", res.Err)
			assert.Equal(t, tc.phase, res.TimeoutPhase)
			if tc.msg != "" {
				assert.Contains(t, res.Err.Error(), tc.msg)
			}
			if tc.content > 0 {
				assert.Equal(t, tc.content, res.ContentChunks, "what was measured before the failure is kept")
				assert.Positive(t, res.TTFT)
				assert.Equal(t, strings.Repeat("tok ", tc.content), res.Text)
			}
			if tc.phase != "" {
				var te *TimeoutError
				require.ErrorAs(t, res.Err, &te)
				assert.Equal(t, tc.phase, te.Phase)
			}
			assert.NotContains(t, res.Err.Error(), secret)
			assert.Positive(t, res.Duration)
		})
	}
}

func TestIdleTimeoutRearmsWhileChunksFlow(t *testing.T) {
	srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		for range 6 {
			writeChunk(w, contentChunk)
			time.Sleep(40 * time.Millisecond) // scripted server pacing, not synchronisation
		}
		writeChunk(w, `{"choices":[{"delta":{},"finish_reason":"stop"}]}`)
	})
	c := newClient(t, Config{BaseURL: srv.URL, IdleTimeout: 200 * time.Millisecond, FirstTokenTimeout: 5 * time.Second})
	res := c.Do(context.Background(), &Request{Prompt: "x"})
	require.NoError(t, res.Err, "idle deadline must move with each chunk (stream lasted %v)", res.Duration)
	assert.Equal(t, 6, res.ContentChunks)
	assert.GreaterOrEqual(t, res.E2E, 200*time.Millisecond, "the whole stream outlived one idle period")
}

func TestConnectTimeout(t *testing.T) {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done() // a dial that never completes
		return nil, ctx.Err()
	}}
	defer tr.CloseIdleConnections()
	c := newClient(t, Config{BaseURL: "http://127.0.0.1:9/v1", Transport: tr, ConnectTimeout: 30 * time.Millisecond})
	res := c.Do(context.Background(), &Request{Prompt: "x"})
	assert.Equal(t, ErrTimeout, res.ErrorType, "%v", res.Err)
	assert.Equal(t, PhaseConnect, res.TimeoutPhase)
	assert.Zero(t, res.Status)
}

func TestContextCancellation(t *testing.T) {
	srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, contentChunk)
		waitGone(r)
	})
	// Cancel right after the client has read the first bytes of the body.
	started := make(chan struct{})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := newClient(t, Config{BaseURL: srv.URL, Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := tr.RoundTrip(r)
		if err == nil {
			resp.Body = &signalBody{ReadCloser: resp.Body, ch: started}
		}
		return resp, err
	})})

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res := c.Do(ctx, &Request{Prompt: "x"})
	assert.Equal(t, ErrNetwork, res.ErrorType)
	assert.ErrorIs(t, res.Err, context.Canceled)
	assert.Equal(t, 1, res.ContentChunks)

	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	srv2 := handlerServer(t, func(w http.ResponseWriter, r *http.Request) { waitGone(r) })
	c2 := newClient(t, Config{BaseURL: srv2.URL})
	res = c2.Do(ctx2, &Request{Prompt: "x"})
	assert.Equal(t, ErrTimeout, res.ErrorType)
	assert.Equal(t, PhaseTotal, res.TimeoutPhase)
}

// keepAliveCloser is a raw HTTP/1.1 server that advertises keep-alive but, like
// llama.cpp's server, does not serve a second request on a connection: it closes the
// connection when the next request arrives, without answering.
func keepAliveCloser(t *testing.T, answerFirst bool) (addr string, conns *atomic.Int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	conns = new(atomic.Int32)
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				req.Body.Close()
				if !answerFirst {
					c.(*net.TCPConn).SetLinger(0)
					return
				}
				body := "data: " + contentChunk + "\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
				resp := "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(body) + "0\r\n\r\n"
				c.Write([]byte(resp))
				// The next request on this connection is read and dropped.
				if req2, err := http.ReadRequest(br); err == nil {
					req2.Body.Close()
				}
				c.(*net.TCPConn).SetLinger(0)
			}()
		}
	}()
	return ln.Addr().String(), conns
}

func TestStaleKeepAliveIsRetriedOnce(t *testing.T) {
	addr, conns := keepAliveCloser(t, true)
	c := newClient(t, Config{BaseURL: "http://" + addr})
	for i := range 5 {
		res := c.Do(context.Background(), &Request{Prompt: "x"})
		require.NoError(t, res.Err, "request %d", i)
		assert.Equal(t, 1, res.ContentChunks)
	}
	assert.GreaterOrEqual(t, conns.Load(), int32(5), "every request needed a fresh connection")
}

func TestRealFailureIsNotHiddenByStaleRetry(t *testing.T) {
	addr, conns := keepAliveCloser(t, false)
	c := newClient(t, Config{BaseURL: "http://" + addr})
	res := c.Do(context.Background(), &Request{Prompt: "x"})
	assert.Equal(t, ErrNetwork, res.ErrorType, "%v", res.Err)
	assert.Equal(t, int32(1), conns.Load(), "a fresh connection that fails is not retried")
}

func TestConnectionReuse(t *testing.T) {
	for _, noReuse := range []bool{false, true} {
		t.Run(fmt.Sprint("noReuse=", noReuse), func(t *testing.T) {
			var newConns atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeChunk(w, `{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}`)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					newConns.Add(1)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			c := newClient(t, Config{BaseURL: srv.URL, NoConnectionReuse: noReuse})
			for range 4 {
				require.NoError(t, c.Do(context.Background(), &Request{Prompt: "x"}).Err)
			}
			if noReuse {
				assert.Equal(t, int32(4), newConns.Load())
			} else {
				assert.Equal(t, int32(1), newConns.Load())
			}
		})
	}
}

func TestHTTP2(t *testing.T) {
	var proto atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		writeChunk(w, contentChunk)
		writeChunk(w, `{"choices":[{"delta":{},"finish_reason":"stop"}]}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	c := newClient(t, Config{BaseURL: srv.URL + "/v1", TLSClientConfig: tlsCfg})
	res := c.Do(context.Background(), &Request{Prompt: "x"})
	require.NoError(t, res.Err)
	assert.Equal(t, int32(2), proto.Load())
	assert.Equal(t, 1, res.ContentChunks)
}

func TestNetworkErrorBeforeConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := newClient(t, Config{BaseURL: "http://" + addr, APIKey: secret})
	res := c.Do(context.Background(), &Request{Prompt: "x"})
	assert.Equal(t, ErrNetwork, res.ErrorType)
	var ne *NetworkError
	assert.True(t, errors.As(res.Err, &ne))
	assert.NotContains(t, res.Err.Error(), secret)
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// signalBody closes ch after the first read that returned data.
type signalBody struct {
	io.ReadCloser
	ch   chan struct{}
	once bool
}

func (b *signalBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.once {
		b.once = true
		close(b.ch)
	}
	return n, err
}
