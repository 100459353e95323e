package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// partsReader returns its parts one Read at a time, as a network would.
type partsReader struct{ parts [][]byte }

func (r *partsReader) Read(p []byte) (int, error) {
	for len(r.parts) > 0 && len(r.parts[0]) == 0 {
		r.parts = r.parts[1:]
	}
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	r.parts[0] = r.parts[0][n:]
	return n, nil
}

func splitAt(b []byte, cuts ...int) io.Reader {
	var parts [][]byte
	prev := 0
	for _, c := range cuts {
		parts = append(parts, b[prev:c])
		prev = c
	}
	return &partsReader{parts: append(parts, b[prev:])}
}

// outcome is everything decoding must reproduce whatever the read boundaries.
type outcome struct {
	Text, Reasoning, Finish, ID string
	Prompt, Completion          int
	HasPrompt, HasCompletion    bool
	Chunks, ContentChunks       int
	Done                        bool
	Err                         string
}

func decodeWith(c *Client, r io.Reader) outcome {
	st := new(reqState)
	st.a.reset()
	res := &Result{}
	err := c.readStream(st, r, res, time.Now(), nil, 0)
	o := outcome{
		Text: string(st.a.text), Reasoning: string(st.a.reasoning), Finish: st.a.finish, ID: string(st.a.id),
		Prompt: st.a.prompt, Completion: st.a.completion, HasPrompt: st.a.hasPrompt, HasCompletion: st.a.hasCompletion,
		Chunks: res.Chunks, ContentChunks: res.ContentChunks, Done: st.a.done,
	}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

type streamCase struct {
	name    string
	dialect Dialect
	body    []byte
}

func streamCases(t testing.TB) []streamCase {
	var cs []streamCase
	for _, f := range []struct {
		file string
		d    Dialect
	}{
		{"llama-chat-stream.txt", OpenAIChat}, {"llama-completions-stream.txt", OpenAICompletions},
		{"sim-chat-stream.txt", OpenAIChat}, {"sim-completions-stream.txt", OpenAICompletions},
	} {
		_, b := fixture(t, f.file)
		cs = append(cs, streamCase{f.file, f.d, b})
	}
	crlf := bytes.ReplaceAll(testReasoningBody, []byte("\n"), []byte("\r\n"))
	// Multi-line data (JSON split over two data: lines), comments, event and id lines,
	// whitespace-only content and no final newline.
	odd := []byte(": keep-alive comment\nevent: chunk\nid: 1\ndata: {\"id\":\"o\",\"choices\":\ndata: [{\"delta\":{\"content\":\"  \"}}]}\n\n" +
		"retry: 100\ndata:{\"choices\":[{\"delta\":{\"content\":\" a\\n\\tb \"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"\\u00e9\\ud83d\\ude00 \"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]")
	cs = append(cs,
		streamCase{"reasoning", OpenAIChat, testReasoningBody},
		streamCase{"reasoning crlf", OpenAIChat, crlf},
		streamCase{"odd framing", OpenAIChat, odd},
		streamCase{"anthropic", Anthropic, testAnthropicBody},
		streamCase{"tgi", TGI, testTGIBody},
		streamCase{"ollama", Ollama, testOllamaBody},
		streamCase{"ollama no final newline", Ollama, bytes.TrimRight(testOllamaBody, "\n")},
	)
	return cs
}

// TestSplitIndependence feeds every stream split at every byte boundary, in random
// multi-splits and one byte per read, and requires the same outcome each time:
// content (whitespace included), usage, finish reason, chunk counts.
func TestSplitIndependence(t *testing.T) {
	for _, sc := range streamCases(t) {
		t.Run(sc.name, func(t *testing.T) {
			c := newClient(t, Config{BaseURL: "http://127.0.0.1:1", Dialect: sc.dialect})
			want := decodeWith(c, bytes.NewReader(sc.body))
			require.Empty(t, want.Err)
			require.NotEmpty(t, want.Text)
			require.True(t, want.Done || want.Finish != "", "stream is complete")
			for i := 0; i <= len(sc.body); i++ {
				if got := decodeWith(c, splitAt(sc.body, i)); got != want {
					require.Equal(t, want, got, "split at %d", i)
				}
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(sc.body))))
			for range 300 {
				n := 1 + rng.IntN(12)
				cuts := make([]int, n)
				for j := range cuts {
					cuts[j] = rng.IntN(len(sc.body) + 1)
				}
				slicesSort(cuts)
				got := decodeWith(c, splitAt(sc.body, cuts...))
				require.Equal(t, want, got, "cuts %v", cuts)
			}
			assert.Equal(t, want, decodeWith(c, iotest.OneByteReader(bytes.NewReader(sc.body))))
			assert.Equal(t, want, decodeWith(c, iotest.HalfReader(bytes.NewReader(sc.body))))
		})
	}
}

func slicesSort(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func TestOddFramingContent(t *testing.T) {
	var sc streamCase
	for _, c := range streamCases(t) {
		if c.name == "odd framing" {
			sc = c
		}
	}
	c := newClient(t, Config{BaseURL: "http://127.0.0.1:1"})
	got := decodeWith(c, bytes.NewReader(sc.body))
	assert.Equal(t, "   a\n\tb é😀 ", got.Text)
	assert.Equal(t, "o", got.ID)
	assert.Equal(t, "length", got.Finish)
	assert.Equal(t, 3, got.ContentChunks)
}

// TestZeroAllocsPerChunk decodes streams of 100 and 1,000 chunks with warmed-up
// buffers: the allocations per request must not grow with the number of chunks.
func TestZeroAllocsPerChunk(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: allocation counting runs each stream many times")
	}
	mk := map[Dialect]func(i int) string{
		OpenAIChat: func(i int) string {
			return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok\u00e9n\n"},"finish_reason":null}]}` + "\n\n"
		},
		Anthropic: func(i int) string {
			return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" token\"}}\n\n"
		},
		TGI: func(i int) string {
			return `data:{"index":1,"token":{"id":1,"text":" token","logprob":-0.1,"special":false},"generated_text":null,"details":null}` + "\n\n"
		},
		Ollama: func(i int) string {
			return `{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":" token"},"done":false}` + "\n"
		},
	}
	for d, chunk := range mk {
		t.Run(string(d), func(t *testing.T) {
			c := newClient(t, Config{BaseURL: "http://127.0.0.1:1", Dialect: d})
			body := func(n int) []byte {
				var b bytes.Buffer
				for i := range n {
					b.WriteString(chunk(i))
				}
				return b.Bytes()
			}
			small, large := body(100), body(1000)
			st := new(reqState)
			r := bytes.NewReader(nil)
			run := func(b []byte) func() {
				return func() {
					st.a.reset()
					r.Reset(b)
					res := &Result{}
					if err := c.readStream(st, r, res, time.Now(), nil, 2000); err != nil {
						t.Fatal(err)
					}
				}
			}
			run(large)() // grow the buffers once
			aSmall := testing.AllocsPerRun(20, run(small))
			aLarge := testing.AllocsPerRun(20, run(large))
			t.Logf("allocs per stream: 100 chunks %.0f, 1000 chunks %.0f", aSmall, aLarge)
			assert.Equal(t, aSmall, aLarge, "allocations grow with the number of chunks")
			assert.LessOrEqual(t, aLarge, 2.0) // the Result's ITL slice
		})
	}
}

func TestDecoderLimits(t *testing.T) {
	d := NewSSEDecoder(strings.NewReader("data: 12345\n\ndata: 123456789\n\n"), WithMaxLineBytes(11))
	require.True(t, d.Next())
	assert.Equal(t, "12345", string(d.Current().Data))
	assert.False(t, d.Next())
	var se *StreamError
	require.ErrorAs(t, d.Err(), &se)
	assert.Contains(t, se.Message, "MaxLineBytes")
	require.NoError(t, d.Close())
	require.NoError(t, d.Close())

	d = NewNDJSONDecoder(strings.NewReader(strings.Repeat("{}\n", 100)), WithMaxResponseBytes(50))
	n := 0
	for d.Next() {
		n++
	}
	require.ErrorAs(t, d.Err(), &se)
	assert.Contains(t, se.Message, "MaxResponseBytes")
	assert.Less(t, n, 25)
}

// events decodes all events of b read through r.
func events(r io.Reader, ndjson bool, maxLine int) ([]string, bool) {
	var d *Decoder
	if ndjson {
		d = NewNDJSONDecoder(r, WithMaxLineBytes(maxLine))
	} else {
		d = NewSSEDecoder(r, WithMaxLineBytes(maxLine))
	}
	defer d.Close()
	var out []string
	for d.Next() {
		ev := d.Current()
		out = append(out, string(ev.Name)+"\x00"+string(ev.Data))
	}
	return out, d.Err() != nil
}

func fuzzDecoder(f *testing.F, ndjson bool) {
	for _, sc := range streamCases(f) {
		f.Add(sc.body, uint64(7))
	}
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n: c\nevent: x\ndata:\n\n"), uint64(3))
	f.Add([]byte(strings.Repeat("x", 300)+"\n\n"), uint64(1))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		want, wantErr := events(bytes.NewReader(b), ndjson, 256)
		rng := rand.New(rand.NewPCG(seed, 0))
		var cuts []int
		for range rng.IntN(8) {
			cuts = append(cuts, rng.IntN(len(b)+1))
		}
		slicesSort(cuts)
		got, gotErr := events(splitAt(b, cuts...), ndjson, 256)
		if wantErr != gotErr || fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("read boundaries changed the events:\nwhole %q (err %v)\nsplit %q (err %v) cuts %v", want, wantErr, got, gotErr, cuts)
		}
		for _, e := range got {
			if len(e) > 2*256+1 {
				t.Fatalf("event larger than the line limit allows: %d", len(e))
			}
		}
	})
}

func FuzzSSEDecoder(f *testing.F)    { fuzzDecoder(f, false) }
func FuzzNDJSONDecoder(f *testing.F) { fuzzDecoder(f, true) }

// fuzzParser checks one dialect's chunk parser two ways: arbitrary bytes never panic,
// and a chunk that encoding/json builds from (text, reasoning, finish) decodes back to
// exactly those values.
func fuzzParser(f *testing.F, build func(text, reasoning, finish string) any, parse func(*jscan, *acc, []byte) bool, hasReasoning bool) {
	for _, sc := range streamCases(f) {
		for _, l := range strings.Split(string(sc.body), "\n") {
			f.Add([]byte(strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " ")), "a\"\\\n\u2028é😀", "t", "stop")
		}
	}
	f.Add([]byte(`{"a":[[[[[[[[`), "", "", "")
	f.Fuzz(func(t *testing.T, raw []byte, text, reasoning, finish string) {
		var s jscan
		var a acc
		parse(&s, &a, raw) // must not panic

		if !utf8.ValidString(text) || !utf8.ValidString(reasoning) || !utf8.ValidString(finish) {
			return
		}
		if !hasReasoning {
			reasoning = ""
		}
		b, err := json.Marshal(build(text, reasoning, finish))
		if err != nil {
			t.Skip("unencodable input")
		}
		a.reset()
		if !parse(&s, &a, b) {
			t.Fatalf("valid chunk rejected: %s", b)
		}
		if string(a.text) != text || string(a.reasoning) != reasoning {
			t.Fatalf("got text %q reasoning %q from %s", a.text, a.reasoning, b)
		}
		if finish != "" && a.finish != finish {
			t.Fatalf("finish %q from %s", a.finish, b)
		}
	})
}

func FuzzParseOpenAI(f *testing.F) {
	fuzzParser(f, func(text, reasoning, finish string) any {
		return map[string]any{"id": "x", "object": "chat.completion.chunk", "choices": []any{
			map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": text, "reasoning_content": reasoning}, "finish_reason": finish},
		}, "usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 4}}
	}, parseOpenAI, true)
}

func FuzzParseAnthropic(f *testing.F) {
	fuzzParser(f, func(text, reasoning, finish string) any {
		return map[string]any{"type": "message", "id": "m", "content": []any{
			map[string]any{"type": "thinking", "thinking": reasoning},
			map[string]any{"type": "text", "text": text},
		}, "stop_reason": finish, "usage": map[string]any{"input_tokens": 1, "output_tokens": 2}}
	}, parseAnthropic, true)
}

func FuzzParseTGI(f *testing.F) {
	fuzzParser(f, func(text, _, finish string) any {
		return map[string]any{"index": 1, "token": map[string]any{"id": 1, "text": text, "logprob": -0.5, "special": false},
			"generated_text": nil, "details": map[string]any{"finish_reason": finish, "generated_tokens": 1}}
	}, func(s *jscan, a *acc, b []byte) bool { return parseTGI(s, a, b, true) }, false)
}

func FuzzParseOllama(f *testing.F) {
	fuzzParser(f, func(text, reasoning, finish string) any {
		return map[string]any{"model": "m", "message": map[string]any{"role": "assistant", "content": text, "thinking": reasoning},
			"done": finish != "", "done_reason": finish, "eval_count": 3}
	}, parseOllama, true)
}

// FuzzClosingQuote checks the eight-bytes-at-a-time string scan against a byte-by-byte
// reference at every start offset.
func FuzzClosingQuote(f *testing.F) {
	for _, s := range []string{``, `"`, `abc"`, `a\"b"`, `\\"`, `\\\"x"`, `0123456789abcdef"`, `01234567\"9abcdef"tail`,
		`déjà vu \u00e9 \n"`, `aaaaaaa\`, `aaaaaaaa\"aaaaaaaaaaaaaaaa"`} {
		f.Add([]byte(s))
	}
	ref := func(b []byte, i int) int {
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				return i
			case '\\':
				i++
			}
		}
		return -1
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := 0; i <= len(b); i++ {
			if got, want := closingQuote(b, i), ref(b, i); got != want {
				t.Fatalf("closingQuote(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	})
}

// openAIMemoSeeds are chunk pairs whose second chunk shares (or nearly shares) the
// first one's prefix up to the content value.
func openAIMemoSeeds() [][2]string {
	c := func(delta string) string {
		return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}]}`
	}
	return [][2]string{
		{c(`{"content":"a"}`), c(`{"content":"b"}`)},
		{c(`{"content":"a"}`), c(`{"content":"\u00e9\n"}`)},
		{c(`{"role":"assistant","content":""}`), c(`{"content":"x"}`)},
		{c(`{"content":"a"}`), c(`{"content":"b","reasoning_content":"r"}`)},
		{c(`{"content":"a"}`), c(`{"content":"b"}`) + ` x`},
		{c(`{"content":"a"}`), c(`{"content":"b"`)},
		{c(`{"content":"a"}`), `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`},
		{c(`{"content":"a"}`), `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"b"}}],"object":"error","message":"boom"}`},
		{`{"id":"x","object":"error","choices":[{"delta":{"content":"a"}}]}`, `{"id":"x","object":"error","choices":[{"delta":{"content":"b"}}]}`},
		{`{"choices":[{"finish_reason":"stop","delta":{"content":"a"}}]}`, `{"choices":[{"finish_reason":"stop","delta":{"content":"b"}}]}`},
		{`{"choices":[{"text":"t","delta":{"content":"a"}}]}`, `{"choices":[{"text":"t","delta":{"content":"b"}}]}`},
		// Review cases: escaped quotes and backslashes in and before the content,
		// multi-byte UTF-8 across the SWAR word boundary, a content value that spells
		// the memo itself, whitespace after the colon, null content, a second choice.
		{c(`{"content":"a\\\"b"}`), c(`{"content":"\"\\\"}\u00e9\ud83d\ude00"}`)},
		{`{"id":"a\"b","choices":[{"delta":{"content":"x"}}]}`, `{"id":"a\"b","choices":[{"delta":{"content":"日本語のテキスト😀"}}]}`},
		{c(`{"content":"a"}`), c(`{"content":"{\"id\":\"chatcmpl-1\",\"choices\":[{\"delta\":{\"content\":"}`)},
		{c(`{"content": "a"}`), c(`{"content":  "b"}`)},
		{c(`{"content":"a"}`), c(`{"content":null}`)},
		{c(`{"content":"a"}`), c(`{"content":"b"}`)[:len(c(`{"content":"b"}`))-2] + `,{"index":1,"delta":{"content":"c"},"finish_reason":"stop"}]}`},
		{`{"choices":[{"delta":{}},{"delta":{"content":"a"}}]}`, `{"choices":[{"delta":{}},{"delta":{"content":"b","content":"c"}}]}`},
	}
}

// memoCheck parses each payload twice, with the memo of the previous chunks and with
// none, and fails if anything the parser reports differs.
func memoCheck(t *testing.T, payloads [][]byte) {
	t.Helper()
	var s1, s2 jscan
	var withMemo, fresh acc
	withMemo.reset()
	fresh.reset()
	for i, p := range payloads {
		fresh.memo = fresh.memo[:0]
		ok1 := parseOpenAI(&s1, &withMemo, p)
		ok2 := parseOpenAI(&s2, &fresh, p)
		if ok1 != ok2 || string(withMemo.text) != string(fresh.text) || string(withMemo.reasoning) != string(fresh.reasoning) ||
			withMemo.finish != fresh.finish || string(withMemo.id) != string(fresh.id) || withMemo.hasErr != fresh.hasErr ||
			string(withMemo.errMsg) != string(fresh.errMsg) || withMemo.prompt != fresh.prompt || withMemo.completion != fresh.completion ||
			withMemo.hasPrompt != fresh.hasPrompt || withMemo.hasCompletion != fresh.hasCompletion {
			t.Fatalf("chunk %d %q: memo and full scan differ: ok %v/%v text %q/%q finish %q/%q err %v %q/%v %q",
				i, p, ok1, ok2, withMemo.text, fresh.text, withMemo.finish, fresh.finish, withMemo.hasErr, withMemo.errMsg, fresh.hasErr, fresh.errMsg)
		}
		if !ok1 {
			// readStream ends the stream at a decode error; start over as a new one.
			withMemo.reset()
			fresh.reset()
		}
	}
}

func TestOpenAIMemoMatchesFullScan(t *testing.T) {
	for i, pair := range openAIMemoSeeds() {
		t.Run(fmt.Sprint("pair ", i), func(t *testing.T) {
			memoCheck(t, [][]byte{[]byte(pair[0]), []byte(pair[1]), []byte(pair[1]), []byte(pair[0])})
		})
	}
	for _, name := range []string{"sim-chat-stream.txt", "llama-chat-stream.txt"} {
		t.Run(name, func(t *testing.T) {
			_, body := fixture(t, name)
			var payloads [][]byte
			d := NewSSEDecoder(bytes.NewReader(body))
			for d.Next() {
				if ev := d.Current(); !bytes.Equal(ev.Data, doneMarker) {
					payloads = append(payloads, bytes.Clone(ev.Data))
				}
			}
			require.NoError(t, d.Err())
			require.NotEmpty(t, payloads)
			memoCheck(t, payloads)
		})
	}
	t.Run("bench stream", func(t *testing.T) {
		var payloads [][]byte
		d := NewSSEDecoder(bytes.NewReader(benchStream(50)))
		for d.Next() {
			if ev := d.Current(); !bytes.Equal(ev.Data, doneMarker) {
				payloads = append(payloads, bytes.Clone(ev.Data))
			}
		}
		memoCheck(t, payloads)
		var s jscan
		var a acc
		a.reset()
		for _, p := range payloads[:3] {
			require.True(t, parseOpenAI(&s, &a, p))
		}
		assert.True(t, bytes.HasPrefix(payloads[3], a.memo) && len(a.memo) > 100,
			"the repeated prefix of a vLLM stream is remembered: %q", a.memo)
	})
}

// FuzzOpenAIMemo: whatever two chunks follow each other, resuming after the first
// one's remembered prefix gives what a full scan of the second gives.
func FuzzOpenAIMemo(f *testing.F) {
	for _, pair := range openAIMemoSeeds() {
		f.Add([]byte(pair[0]), []byte(pair[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		memoCheck(t, [][]byte{a, b, b})
	})
}
