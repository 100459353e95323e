// Package llm is tokenstorm's streaming LLM client: one Client type speaks five wire
// dialects (OpenAI chat and completions, Anthropic messages, TGI, Ollama), streams or
// not, and measures every request into a Result with per-chunk monotonic timing
// (TTFB, TTFT, TTFO, inter-chunk gaps, TPOT, E2E, duration), token counts from the
// server's usage or an offline BPE tokenizer, and a typed, classified error.
//
// # Example
//
//	c, err := llm.NewClient(llm.Config{
//		BaseURL:           "http://127.0.0.1:8000/v1",
//		Dialect:           llm.OpenAIChat,
//		Model:             "meta-llama/Llama-3.1-8B-Instruct",
//		FirstTokenTimeout: 30 * time.Second,
//		IdleTimeout:       10 * time.Second,
//	})
//	if err != nil {
//		return err // a *ConfigError naming the field
//	}
//	defer c.Close()
//	res := c.Do(ctx, &llm.Request{Prompt: "Write a haiku.", MaxTokens: 64})
//	if !res.OK() {
//		var se *llm.StatusError
//		if errors.As(res.Err, &se) && se.RetryAfter > 0 { … }
//		log.Printf("%s: %v", res.ErrorType, res.Err)
//	}
//	fmt.Println(res.TTFT, res.TPOT, res.CompletionTokens, res.TokenSource)
//
// # Timing
//
// Do takes time.Now() once, just before the request is written; every other point is
// a monotonic offset from it. Each chunk is stamped with the arrival time of the bytes
// that completed it, before any JSON is decoded: on Linux, with the Client's own
// transport, the kernel's receive timestamp of the newest bytes of the read that
// delivered it (SO_TIMESTAMPNS, placed on the monotonic axis), elsewhere or with
// Config.NoKernelTimestamps the time that read returned. The kernel stamp leaves out
// the wait of the reading goroutine for a CPU, which under load is most of a
// user-space stamp's error (docs/benchmarks.md, BenchmarkAccuracy). Chunks that arrive
// in the same read share a stamp (the client cannot know better). TTFB is stamped the
// same way. ITL has one gap per pair of consecutive content chunks; TPOT divides by
// tokens, not chunks, so servers that pack several tokens into one chunk are measured
// correctly.
//
// # Decoding
//
// The SSE/NDJSON Decoder and the JSON scanner are written here rather than taken from
// a library so that decoding allocates nothing per chunk and its result does not depend
// on how the bytes were split into reads (tested at every split point and fuzzed).
// OpenAI-style chunks of one stream repeat their bytes up to the content value; the
// parser remembers that prefix and resumes the next chunk's scan after it when the
// bytes are identical (fuzzed against full scans). A
// line longer than Config.MaxLineBytes or a response larger than
// Config.MaxResponseBytes ends the request with a *StreamError.
//
// # Tokens
//
// When the server reports usage, its counts are used (TokenSource "usage"). Otherwise
// the answer and reasoning text, which the client keeps internally whatever KeepText
// says, are counted at the end of the request with github.com/tiktoken-go/tokenizer
// (Config.Encoding, default cl100k_base; "none" disables counting). The prompt is
// counted the same way when the server gives no prompt count, without any chat
// template, so it is an estimate. Config.CompareTokenizer counts both ways to expose
// the discrepancy.
//
// # Errors
//
// Result.ErrorType is one of network, timeout, http_4xx, http_5xx, rate_limited,
// stream, decode, truncated; Result.Err is a *StatusError, *StreamError, *DecodeError,
// *TruncatedError, *TimeoutError (with its phase) or *NetworkError. Nothing is retried,
// with one exception: a request whose reused keep-alive connection turns out to have
// been closed by the server (EOF or reset before any response byte, as llama.cpp's
// server does after each streamed response) is sent once more on a fresh connection.
// The API key is never part of an error or a Result; server error bodies that echo it
// are redacted.
//
// # Concurrency
//
// A Client is safe for concurrent use by any number of goroutines. Do blocks until the
// response is fully read or fails, starts no goroutine that outlives it (its phase
// timers are stopped before it returns) and honours ctx throughout. A Decoder is not
// safe for concurrent use. Result values are owned by the caller.
package llm
