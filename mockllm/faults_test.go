package mockllm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// giveUp is how long a client waits for a token that a stall fault withholds. A
// server that failed to stall would send every token within a few milliseconds, so
// a slow machine can only make this test pass late, never fail wrongly.
const giveUp = 150 * time.Millisecond

var errGaveUp = errors.New("client gave up")

// endMarker is a string only a complete response of the dialect contains.
var endMarker = map[string]string{
	"openai-chat":        "data: [DONE]",
	"openai-completions": "data: [DONE]",
	"anthropic":          "event: message_stop",
	"tgi":                `"details":{"finish_reason"`,
	"ollama":             `"done":true`,
}

// doneFeed collects the Truth of finished requests.
func doneFeed(cfg *Config) <-chan Truth {
	ch := make(chan Truth, 64)
	cfg.OnDone = func(t Truth) { ch <- t }
	return ch
}

func waitTruth(t *testing.T, ch <-chan Truth) Truth {
	t.Helper()
	select {
	case tr := <-ch:
		return tr
	case <-time.After(10 * time.Second):
		require.FailNow(t, "handler did not finish")
	}
	return Truth{}
}

// TestFaults forces each fault through X-Mock-Fault in every dialect, streamed and
// not, and checks what the client sees and what the server recorded.
func TestFaults(t *testing.T) {
	const maxTokens = 7 // 7 chunks: mid-stream faults come after 3
	for _, dc := range dialectCases {
		for _, stream := range []bool{true, false} {
			for _, f := range AllFaults() {
				t.Run(fmt.Sprintf("%s/stream=%v/%s", dc.name, stream, f), func(t *testing.T) {
					t.Parallel()
					cfg := Config{TTFT: time.Millisecond, ITL: 100 * time.Microsecond}
					done := doneFeed(&cfg)
					srv, c := startServer(t, cfg)

					// 30 s bounds a broken test. A stall is given up giveUp after the
					// handler started reading the body, which Go's server announces
					// with "100 Continue": a loaded machine cannot make the client
					// give up before the server saw the request.
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					ctx, giveUpNow := context.WithCancelCause(ctx)
					defer giveUpNow(nil)
					if f == FaultStallFirst || f == FaultStallMid {
						ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
							Got100Continue: func() {
								time.AfterFunc(giveUp, func() { giveUpNow(errGaveUp) })
							},
						})
					}
					gaveUp := func(err error) bool {
						// The client reports the cause, or plain Canceled with that cause.
						return errors.Is(err, errGaveUp) || (errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), errGaveUp))
					}
					req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+dc.path(stream), strings.NewReader(dc.body(stream, maxTokens)))
					require.NoError(t, err)
					req.Header.Set("Expect", "100-continue")
					req.Header.Set(HeaderFault, string(f))
					resp, doErr := c.Do(req)
					var raw []byte
					var readErr error
					if doErr == nil {
						defer resp.Body.Close()
						raw, readErr = io.ReadAll(resp.Body)
					}
					tr := waitTruth(t, done)
					assert.Equal(t, f, tr.Fault)
					if doErr == nil {
						assert.Equal(t, string(f), resp.Header.Get(HeaderFault))
						assert.Equal(t, tr.ID, resp.Header.Get(HeaderRequestID))
					}

					if st := f.Status(); st != 0 {
						require.NoError(t, doErr)
						require.NoError(t, readErr)
						assert.Equal(t, st, resp.StatusCode)
						assert.Equal(t, st, tr.Status)
						assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
						if f == FaultHTTP429 {
							assert.Equal(t, "1", resp.Header.Get("Retry-After"))
						}
						assert.Contains(t, errorMessage(t, dc.name, raw), string(f))
						assert.Empty(t, tr.Chunks)
						return
					}
					if stream {
						checkStreamFault(t, dc, f, resp, doErr, raw, readErr, tr, gaveUp)
					} else {
						checkBodyFault(t, dc, f, resp, doErr, raw, readErr, tr, gaveUp)
					}
				})
			}
		}
	}
}

func checkStreamFault(t *testing.T, dc dialectCase, f Fault, resp *http.Response, doErr error, raw []byte, readErr error, tr Truth, gaveUp func(error) bool) {
	require.NoError(t, doErr, "stream faults happen after the headers")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	d, decErr := dc.decodeStream(bytes.NewReader(raw))
	switch f {
	case FaultStallFirst:
		require.True(t, gaveUp(readErr), "%v", readErr)
		require.NoError(t, decErr)
		assert.Zero(t, d.Chunks, "no token before the client gave up")
		assert.Equal(t, dc.roleChunks, d.RoleChunks, "the prelude still went out")
		assert.Empty(t, tr.Chunks)
		assert.True(t, tr.Aborted)
	case FaultStallMid:
		require.True(t, gaveUp(readErr), "%v", readErr)
		assert.Equal(t, DefaultFaultAfterChunks, d.Chunks)
		assert.Len(t, tr.Chunks, DefaultFaultAfterChunks)
		assert.True(t, tr.Aborted)
	case FaultCut:
		require.NoError(t, readErr, "a cut stream ends cleanly at the HTTP level")
		assert.NoError(t, decErr)
		assert.Equal(t, DefaultFaultAfterChunks, d.Chunks)
		assert.False(t, d.Ended)
		assert.Empty(t, d.Finish)
		assert.NotContains(t, string(raw), endMarker[dc.name])
		assert.Empty(t, tr.FinishReason)
	case FaultMalformed:
		require.NoError(t, readErr)
		require.Error(t, decErr, "one chunk is broken JSON")
		assert.Contains(t, string(raw), endMarker[dc.name], "the stream goes on after the broken chunk")
		assert.Len(t, tr.Chunks, maxTokensFor(dc))
		assert.Equal(t, "length", tr.FinishReason)
	case FaultOversized:
		require.NoError(t, readErr)
		require.NoError(t, decErr, "the long line is valid JSON without text")
		assert.True(t, d.Ended)
		assert.Equal(t, 7, d.Chunks)
		assert.GreaterOrEqual(t, longestLine(raw), OversizedLineBytes)
	case FaultReset:
		require.Error(t, readErr)
		assert.False(t, gaveUp(readErr), "%v", readErr)
		assert.Equal(t, DefaultFaultAfterChunks, d.Chunks)
		assert.Len(t, tr.Chunks, DefaultFaultAfterChunks)
		assert.True(t, tr.Aborted)
	case FaultErrorEvent:
		require.NoError(t, readErr)
		require.NoError(t, decErr)
		assert.Equal(t, DefaultFaultAfterChunks, d.Chunks)
		assert.NotEmpty(t, d.ErrorMessage)
		assert.Empty(t, d.Finish)
		assert.Empty(t, tr.FinishReason)
	default:
		t.Fatalf("fault %s not covered", f)
	}
}

func maxTokensFor(dialectCase) int { return 7 }

func checkBodyFault(t *testing.T, dc dialectCase, f Fault, resp *http.Response, doErr error, raw []byte, readErr error, tr Truth, gaveUp func(error) bool) {
	switch f {
	case FaultStallFirst, FaultStallMid:
		require.True(t, gaveUp(doErr), "no response before the client gave up: %v", doErr)
		assert.True(t, tr.Aborted)
	case FaultReset:
		require.Error(t, doErr)
		assert.False(t, gaveUp(doErr), "%v", doErr)
		assert.True(t, tr.Aborted)
	case FaultCut:
		require.NoError(t, doErr)
		require.ErrorIs(t, readErr, io.ErrUnexpectedEOF)
		assert.Less(t, len(raw), int(resp.ContentLength))
	case FaultMalformed:
		require.NoError(t, doErr)
		require.NoError(t, readErr)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.False(t, json.Valid(raw))
	case FaultOversized:
		require.NoError(t, doErr)
		require.NoError(t, readErr)
		assert.GreaterOrEqual(t, len(raw), OversizedLineBytes)
		d, err := dc.decodeBody(raw)
		require.NoError(t, err)
		assert.NotEmpty(t, d.Text)
	case FaultErrorEvent:
		require.NoError(t, doErr)
		require.NoError(t, readErr)
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		assert.NotEmpty(t, errorMessage(t, dc.name, raw))
	default:
		t.Fatalf("fault %s not covered", f)
	}
}

func longestLine(b []byte) int {
	n := 0
	for _, l := range bytes.Split(b, []byte("\n")) {
		n = max(n, len(l))
	}
	return n
}

// errorMessage extracts the message of an HTTP error body in the dialect's shape.
func errorMessage(t *testing.T, dialect string, raw []byte) string {
	t.Helper()
	switch dialect {
	case "anthropic":
		var m struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, strictUnmarshal(raw, &m), "%s", raw)
		assert.Equal(t, "error", m.Type)
		assert.NotEmpty(t, m.Error.Type)
		return m.Error.Message
	case "tgi", "ollama":
		var m struct {
			Error string `json:"error"`
		}
		require.NoError(t, strictUnmarshal(raw, &m), "%s", raw)
		return m.Error
	default:
		var m struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		require.NoError(t, strictUnmarshal(raw, &m), "%s", raw)
		assert.NotZero(t, m.Error.Code)
		return m.Error.Message
	}
}

func TestBadRequests(t *testing.T) {
	srv, c := startServer(t, Config{})
	tests := []struct {
		name, path, body string
		hdr              []string
	}{
		{"not json", "/v1/chat/completions", `{`, nil},
		{"no messages", "/v1/chat/completions", `{"model":"m","messages":[]}`, nil},
		{"n=2", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"n":2}`, nil},
		{"max_tokens 0", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":0}`, nil},
		{"max_tokens huge", "/v1/completions", `{"prompt":"x","max_tokens":99999999}`, nil},
		{"no prompt", "/v1/completions", `{"model":"m"}`, nil},
		{"two prompts", "/v1/completions", `{"prompt":["a","b"]}`, nil},
		{"anthropic no messages", "/v1/messages", `{"max_tokens":5}`, nil},
		{"tgi no inputs", "/generate", `{"parameters":{}}`, nil},
		{"ollama bad content", "/api/chat", `{"messages":[{"role":"user","content":5}]}`, nil},
		{"unknown fault", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, []string{HeaderFault, "meteor"}},
		{"bad ttft", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, []string{HeaderTTFT, "soon"}},
		{"negative itl", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, []string{HeaderITL, "-1ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, c, srv.URL()+tt.path, tt.body, tt.hdr...)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
			assert.True(t, json.Valid(raw), "%s", raw)
		})
	}
	t.Run("body too large", func(t *testing.T) {
		srv, c := startServer(t, Config{MaxBodyBytes: 64})
		resp := post(t, c, srv.URL()+"/v1/chat/completions", `{"messages":[{"role":"user","content":"`+strings.Repeat("x", 100)+`"}]}`)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	})
	t.Run("wrong method", func(t *testing.T) {
		resp, err := c.Get(srv.URL() + "/v1/chat/completions")
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
}

// TestFaultRate checks that rate-drawn faults follow the seed and that "none" exempts
// a request.
func TestFaultRate(t *testing.T) {
	run := func(hdr ...string) []Fault {
		cfg := Config{Seed: 3, TTFT: -1, ITL: -1, FaultRate: 0.5, Faults: []Fault{FaultHTTP500, FaultHTTP503}, RecordTruth: true}
		srv, c := startServer(t, cfg)
		var got []Fault
		for range 40 {
			resp := post(t, c, srv.URL()+"/v1/completions", `{"prompt":"x","max_tokens":2}`, hdr...)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			tr, ok := srv.Truth(resp.Header.Get(HeaderRequestID))
			require.True(t, ok)
			if tr.Fault != FaultNone {
				assert.Equal(t, tr.Fault.Status(), resp.StatusCode)
			} else {
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			}
			got = append(got, tr.Fault)
		}
		return got
	}
	a, b := run(), run()
	assert.Equal(t, a, b, "same seed, same faults")
	n := 0
	for _, f := range a {
		if f != FaultNone {
			n++
		}
	}
	assert.Greater(t, n, 5)
	assert.Less(t, n, 35)
	for _, f := range run(HeaderFault, "none") {
		assert.Equal(t, FaultNone, f)
	}
}

func TestFaultValid(t *testing.T) {
	for _, f := range AllFaults() {
		assert.True(t, f.Valid(), f)
		assert.Equal(t, strings.HasPrefix(string(f), "http_"), f.Status() != 0, f)
	}
	assert.True(t, FaultNone.Valid())
	assert.False(t, Fault("meteor").Valid())
	assert.True(t, errors.Is(badRequest("x"), errBadRequest))
}
