package mockllm

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParseRequest: any body, in any dialect, is either accepted with sane numbers
// or refused with errBadRequest; never a panic.
func FuzzParseRequest(f *testing.F) {
	for _, dc := range dialectCases {
		f.Add(uint8(0), []byte(dc.body(true, 5)))
		f.Add(uint8(1), []byte(dc.body(false, 3)))
	}
	for _, s := range []string{
		`{"prompt":[1,2,3],"max_tokens":2}`,
		`{"prompt":[[1,2],[3]]}`,
		`{"prompt":["a"],"n":1}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url"}]}],"max_completion_tokens":4}`,
		`{"messages":[{"content":null}],"options":{"num_predict":-1}}`,
		`{"inputs":"","parameters":{"max_new_tokens":1048577}}`,
		`{"system":[{"type":"text","text":"be brief"}],"messages":[{"content":"x"}],"max_tokens":1}`,
		`[]`, `null`, `{"messages":{}}`, "\xff",
	} {
		for d := range numDialects {
			f.Add(uint8(d), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		d := dialect(sel % uint8(numDialects))
		stream := sel&0x80 != 0
		g, err := parseRequest(d, body, stream)
		if err != nil {
			if !errors.Is(err, errBadRequest) {
				t.Fatalf("%s: error %v does not wrap errBadRequest", d, err)
			}
			return
		}
		if g.promptTokens < 0 || g.maxTokens < 0 || g.maxTokens > MaxOutputTokens {
			t.Fatalf("%s: accepted %+v", d, g)
		}
		if !json.Valid(body) {
			t.Fatalf("%s: accepted invalid JSON %q", d, body)
		}
		if d == dTGI && g.stream != stream {
			t.Fatalf("tgi: stream %v, route said %v", g.stream, stream)
		}
	})
}

// FuzzJSONString: the hand-written escaper produces a JSON string that decodes to the
// input (invalid UTF-8 becoming U+FFFD, as encoding/json does).
func FuzzJSONString(f *testing.F) {
	for _, w := range vocab {
		f.Add(w)
	}
	f.Add("\x00\x1f\u2028\"\\\xff\xfe")
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q → %s: %v", s, b, err)
		}
		// encoding/json turns each invalid byte into U+FFFD; so must we.
		var sb strings.Builder
		for _, r := range s {
			sb.WriteRune(r)
		}
		want := sb.String()
		if got != want {
			t.Fatalf("%q → %s → %q", s, b, got)
		}
	})
}

// TestChunkAllocs: building a chunk allocates nothing, in every dialect.
func TestChunkAllocs(t *testing.T) {
	toks := []int{0, 17, 27}
	for d := range numDialects {
		t.Run(d.String(), func(t *testing.T) {
			e := newEnc(d, "id-1", "m", 1, 5, true, false)
			e.received = time.Now()
			buf := make([]byte, 0, 4096)
			n := testing.AllocsPerRun(200, func() {
				e.text = e.text[:0] // TGI keeps its text for the final event
				buf = e.chunk(buf[:0], toks, d == dChat, false)
				buf = e.chunk(buf[:0], toks, false, false)
			})
			assert.Zero(t, n)
		})
	}
	t.Run("histogram", func(t *testing.T) {
		h := newHistogram(itlBuckets)
		assert.Zero(t, testing.AllocsPerRun(200, func() { h.observe(3 * time.Millisecond) }))
	})
}

// discardWriter is a minimal flushing ResponseWriter that allocates nothing.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      {}

// TestHandlerAllocsPerChunk: a 401-token stream allocates no more than a 1-token
// stream, handler included: the per-chunk path is allocation-free.
func TestHandlerAllocsPerChunk(t *testing.T) {
	for _, dc := range dialectCases {
		t.Run(dc.name, func(t *testing.T) {
			srv := New(Config{TTFT: -1, ITL: -1, Reasoning: 1})
			defer srv.Close()
			allocs := func(tokens int) float64 {
				body := []byte(dc.body(true, tokens))
				req := httptest.NewRequest(http.MethodPost, dc.path(true), nil)
				w := &discardWriter{h: http.Header{}}
				return testing.AllocsPerRun(20, func() {
					r := req.Clone(req.Context())
					r.Body = httpBody(body)
					clear(w.h)
					srv.ServeHTTP(w, r)
				})
			}
			one, many := allocs(1), allocs(401)
			require.Greater(t, one, 0.0)
			// TGI keeps the generated text for its final event: its buffer grows
			// log2(n) times, not n times.
			slack := 1.0
			if dc.name == "tgi" {
				slack = 12
			}
			t.Logf("allocs per request: 1 token %.0f, 401 tokens %.0f", one, many)
			assert.LessOrEqual(t, many-one, slack, "1 token: %.0f allocs, 401 tokens: %.0f", one, many)
		})
	}
}

type nopBody struct{ *bytes.Reader }

func (nopBody) Close() error { return nil }

func httpBody(b []byte) nopBody { return nopBody{bytes.NewReader(b)} }
