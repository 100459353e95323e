// Package mockllm is an embedded mock LLM inference server: a real HTTP server that
// speaks the wire protocols tokenstorm's clients speak, with a latency and capacity
// model, fault injection, vLLM-named Prometheus metrics and, for tests, the
// server-side emission time of every chunk.
//
// # Endpoints
//
//	POST /v1/chat/completions   OpenAI chat (SSE when "stream": true)
//	POST /v1/completions        OpenAI completions (prompt: string, strings, token ids)
//	POST /v1/messages           Anthropic messages (event-typed SSE when "stream": true)
//	POST /generate_stream       TGI (SSE); POST /generate for one JSON object
//	POST /api/chat              Ollama (NDJSON unless "stream": false)
//	GET  /v1/models, /health, /metrics
//
// Streams look like real servers' (see the captures in llm/testdata): OpenAI streams
// open with vLLM's role-only chunk ({"role":"assistant","content":""}), carry
// TokensPerChunk tokens per chunk, then a finish chunk with an empty delta, a usage chunk with
// "choices": [] when stream_options.include_usage is set, then "data: [DONE]".
// Anthropic streams send message_start and ping, one content block per kind
// (thinking, then text), message_delta with stop_reason and usage, message_stop.
// Finish reasons are "length" when the output reached max tokens and "stop" otherwise
// (Anthropic "max_tokens"/"end_turn", TGI "length"/"eos_token").
//
// # Model
//
// A streamed request's headers (and the role chunk or message_start) are sent at once,
// before any queueing. The request then waits for one of MaxNumSeqs running slots
// (FIFO), then for the prefill, TTFT + PrefillPerToken × prompt tokens, after which
// the first token exists. Each further token costs ITL + ITLPerRunning × running
// sequences, sampled at each chunk; a chunk of k tokens is sent after k such steps
// (the first chunk after the prefill and k-1 steps). Jitter scales every delay by a
// uniform factor in [1-Jitter, 1+Jitter] drawn from a per-request source seeded with
// (Seed, request number), which also draws the output length, the rate faults and
// the text, so a sequential replay is exactly reproducible.
//
// Prompt tokens are estimated as ceil(bytes / 4) of the prompt text (message contents
// and system prompt; completions token-id prompts count exactly). The generated text
// is words from a small fixed vocabulary with leading spaces, multi-byte UTF-8 and
// characters JSON must escape, so clients' whitespace and UTF-8 handling is exercised.
//
// Faults are drawn at FaultRate, or forced per request with the X-Mock-Fault header;
// X-Mock-TTFT and X-Mock-ITL override the latency of one request. Every response
// carries X-Request-Id, the key of its Truth record.
//
// # Example
//
//	ctx, cancel := context.WithCancel(context.Background())
//	defer cancel()
//	srv, err := mockllm.Start(ctx, "", mockllm.Config{TTFT: 50 * time.Millisecond, MaxNumSeqs: 8, RecordTruth: true})
//	if err != nil { … }
//	defer srv.Close()
//	// point an OpenAI client at srv.URL()+"/v1", then compare its TTFT with
//	truth, _ := srv.Truth(resp.Header.Get("X-Request-Id"))
//	serverTTFT := truth.Chunks[0].Sub(truth.Received)
//
// # Concurrency
//
// A Server is safe for concurrent use; each request runs on its handler goroutine and
// starts no other. Counters are atomics and the queue takes one short mutex per
// request, so the per-chunk path takes no lock and allocates nothing (beyond Truth
// records when RecordTruth is set). Close makes every blocked handler return and, for
// a Server from Start, joins the serving goroutines.
package mockllm
