package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tokenstorm/tokenstorm/llm"
)

// A client measuring one streamed chat completion from an OpenAI-compatible server.
func ExampleClient_Do() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"id":"c1","choices":[{"delta":{"role":"assistant"}}]}`,
			`{"id":"c1","choices":[{"delta":{"content":"Hello"}}]}`,
			`{"id":"c1","choices":[{"delta":{"content":", world"},"finish_reason":"stop"}]}`,
			`{"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()

	c, err := llm.NewClient(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", KeepText: true})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	res := c.Do(context.Background(), &llm.Request{Prompt: "Say hello", MaxTokens: 8})
	fmt.Println(res.OK(), res.Status, res.Text)
	fmt.Println(res.ContentChunks, "content chunks,", len(res.ITL), "gap,", res.CompletionTokens, "tokens from", res.TokenSource)
	fmt.Println("finish:", res.FinishReason, "id:", res.ID, "ttft>0:", res.TTFT > 0)
	// Output:
	// true 200 Hello, world
	// 2 content chunks, 1 gap, 3 tokens from usage
	// finish: stop id: c1 ttft>0: true
}

// Decoding server-sent events directly.
func ExampleDecoder() {
	d := llm.NewSSEDecoder(strings.NewReader(": comment\r\nevent: delta\r\ndata: {\"a\":1}\r\n\r\ndata: line one\ndata: line two\n\n"))
	defer d.Close()
	for d.Next() {
		ev := d.Current()
		fmt.Printf("%q %q\n", ev.Name, ev.Data)
	}
	fmt.Println(d.Err())
	// Output:
	// "delta" "{\"a\":1}"
	// "" "line one\nline two"
	// <nil>
}

// Typed errors are inspected with errors.As.
func ExampleStatusError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		http.Error(w, `{"error":"slow down"}`, http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c, _ := llm.NewClient(llm.Config{BaseURL: srv.URL + "/v1"})
	defer c.Close()
	res := c.Do(context.Background(), &llm.Request{Prompt: "hi"})
	var se *llm.StatusError
	if errors.As(res.Err, &se) {
		fmt.Println(res.ErrorType, se.StatusCode, se.RetryAfter)
	}
	// Output:
	// rate_limited 429 3s
}
