package mockllm

import (
	"encoding/json"
	"slices"
	"time"
)

// enc builds the bytes of one response in one dialect. Everything per request
// (ids, model, the constant head of every chunk) is prepared once in newEnc; the
// per-chunk methods only append to a caller's buffer, so a chunk costs no allocation.
type enc struct {
	d            dialect
	id           string
	model        string
	created      int64
	promptTokens int
	includeUsage bool
	keepText     bool // accumulate the text (non-streamed bodies, TGI's final event)

	head []byte // chat: `data: {"id":…,"choices":[{"index":0,"delta":{`; completions: up to `"choices":[`

	completion int // tokens emitted so far (reasoning included)
	reasoning  int // reasoning tokens emitted so far
	finish     string

	// Escaped JSON text emitted so far, when keepText.
	text, thinking []byte

	// anthropic content blocks
	blockOpen     bool
	blockThinking bool
	blockIndex    int

	// ollama durations
	received, firstAt time.Time
}

func newEnc(d dialect, id, model string, created int64, promptTokens int, includeUsage, keepText bool) *enc {
	e := &enc{d: d, id: id, model: model, created: created, promptTokens: promptTokens,
		includeUsage: includeUsage, keepText: keepText || d == dTGI, blockIndex: -1}
	switch d {
	case dChat:
		e.head = e.appendOpenAIHead([]byte("data: "), "chat.completion.chunk")
		e.head = append(e.head, `[{"index":0,"delta":{`...)
	case dCompletions:
		e.head = e.appendOpenAIHead([]byte("data: "), "text_completion")
	}
	return e
}

// appendOpenAIHead appends `{"id":…,"object":…,"created":…,"model":…,"choices":`.
func (e *enc) appendOpenAIHead(b []byte, object string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.id)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = appendInt(b, e.created)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, e.model)
	return append(b, `,"choices":`...)
}

// contentType of a streamed response.
func (e *enc) contentType() string {
	if e.d == dOllama {
		return "application/x-ndjson"
	}
	return "text/event-stream; charset=utf-8"
}

// prelude is what a stream sends before any token: vLLM's role-only chunk,
// Anthropic's message_start and ping.
func (e *enc) prelude(b []byte) []byte {
	switch e.d {
	case dChat:
		b = append(b, e.head...)
		b = append(b, `"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
	case dAnthropic:
		b = append(b, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"...)
		b = appendJSONString(b, e.id)
		b = append(b, `,"type":"message","role":"assistant","model":`...)
		b = appendJSONString(b, e.model)
		b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
		b = appendInt(b, int64(e.promptTokens))
		b = append(b, `,"output_tokens":1}}}`+"\n\n"...)
		b = append(b, "event: ping\ndata: {\"type\": \"ping\"}\n\n"...)
	}
	return b
}

// chunk appends one streamed chunk carrying the tokens toks (vocab indices). last
// marks the final token chunk (TGI puts its summary on it).
func (e *enc) chunk(b []byte, toks []int, reasoning, last bool) []byte {
	e.completion += len(toks)
	if reasoning {
		e.reasoning += len(toks)
	}
	if e.keepText {
		acc := &e.text
		if reasoning {
			acc = &e.thinking
		}
		for _, t := range toks {
			*acc = append(*acc, vocabJSON[t]...)
		}
	}
	switch e.d {
	case dChat:
		b = append(b, e.head...)
		if reasoning {
			b = append(b, `"reasoning_content":"`...)
		} else {
			b = append(b, `"content":"`...)
		}
		b = appendToks(b, toks)
		b = append(b, `"},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
	case dCompletions:
		b = append(b, e.head...)
		b = append(b, `[{"index":0,"text":"`...)
		b = appendToks(b, toks)
		b = append(b, `","logprobs":null,"finish_reason":null}]}`+"\n\n"...)
	case dAnthropic:
		b = e.openBlock(b, reasoning)
		b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
		b = appendInt(b, int64(e.blockIndex))
		if reasoning {
			b = append(b, `,"delta":{"type":"thinking_delta","thinking":"`...)
		} else {
			b = append(b, `,"delta":{"type":"text_delta","text":"`...)
		}
		b = appendToks(b, toks)
		b = append(b, `"}}`+"\n\n"...)
	case dTGI:
		b = append(b, `data:{"index":`...)
		b = appendInt(b, int64(e.completion))
		b = append(b, `,"token":{"id":`...)
		b = appendInt(b, int64(vocabID(toks[len(toks)-1])))
		b = append(b, `,"text":"`...)
		b = appendToks(b, toks)
		b = append(b, `","logprob":-0.25,"special":false},"generated_text":`...)
		if last {
			b = append(b, '"')
			b = append(b, e.text...)
			b = append(b, `","details":{"finish_reason":"`...)
			b = append(b, e.finishFor()...)
			b = append(b, `","generated_tokens":`...)
			b = appendInt(b, int64(e.completion))
			b = append(b, `,"seed":null}}`+"\n\n"...)
		} else {
			b = append(b, `null,"details":null}`+"\n\n"...)
		}
	case dOllama:
		b = e.appendOllamaHead(b)
		if reasoning {
			b = append(b, `"content":"","thinking":"`...)
		} else {
			b = append(b, `"content":"`...)
		}
		b = appendToks(b, toks)
		b = append(b, `"},"done":false}`+"\n"...)
	}
	return b
}

func appendToks(b []byte, toks []int) []byte {
	for _, t := range toks {
		b = append(b, vocabJSON[t]...)
	}
	return b
}

func (e *enc) appendOllamaHead(b []byte) []byte {
	b = append(b, `{"model":`...)
	b = appendJSONString(b, e.model)
	b = append(b, `,"created_at":"`...)
	b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, `","message":{"role":"assistant",`...)
}

// openBlock makes sure an Anthropic content block of the right kind is open,
// closing a previous one of the other kind.
func (e *enc) openBlock(b []byte, thinking bool) []byte {
	if e.blockOpen && e.blockThinking == thinking {
		return b
	}
	b = e.closeBlock(b)
	e.blockIndex++
	e.blockOpen, e.blockThinking = true, thinking
	b = append(b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
	b = appendInt(b, int64(e.blockIndex))
	if thinking {
		b = append(b, `,"content_block":{"type":"thinking","thinking":""}}`+"\n\n"...)
	} else {
		b = append(b, `,"content_block":{"type":"text","text":""}}`+"\n\n"...)
	}
	return b
}

func (e *enc) closeBlock(b []byte) []byte {
	if !e.blockOpen {
		return b
	}
	if e.blockThinking {
		b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
		b = appendInt(b, int64(e.blockIndex))
		b = append(b, `,"delta":{"type":"signature_delta","signature":"mock-signature"}}`+"\n\n"...)
	}
	b = append(b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"...)
	b = appendInt(b, int64(e.blockIndex))
	b = append(b, "}\n\n"...)
	e.blockOpen = false
	return b
}

// finishFor spells the finish reason ("length" or "stop") in the dialect's words.
func (e *enc) finishFor() string {
	length := e.finish == "length"
	switch e.d {
	case dAnthropic:
		if length {
			return "max_tokens"
		}
		return "end_turn"
	case dTGI:
		if length {
			return "length"
		}
		return "eos_token"
	}
	return e.finish
}

// end appends what follows the last token: the finish chunk, the usage chunk when
// asked for, and the end marker. now stamps Ollama's durations.
func (e *enc) end(b []byte, now time.Time) []byte {
	switch e.d {
	case dChat:
		b = append(b, e.head...)
		b = append(b, `},"logprobs":null,"finish_reason":"`...)
		b = append(b, e.finish...)
		b = append(b, `"}]}`+"\n\n"...)
		b = e.appendUsageChunk(b, "chat.completion.chunk")
		b = append(b, "data: [DONE]\n\n"...)
	case dCompletions:
		b = append(b, e.head...)
		b = append(b, `[{"index":0,"text":"","logprobs":null,"finish_reason":"`...)
		b = append(b, e.finish...)
		b = append(b, `"}]}`+"\n\n"...)
		b = e.appendUsageChunk(b, "text_completion")
		b = append(b, "data: [DONE]\n\n"...)
	case dAnthropic:
		b = e.closeBlock(b)
		b = append(b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\""...)
		b = append(b, e.finishFor()...)
		b = append(b, `","stop_sequence":null},"usage":{"output_tokens":`...)
		b = appendInt(b, int64(e.completion))
		b = append(b, `}}`+"\n\n"...)
		b = append(b, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	case dTGI:
		// The summary rode on the last token event.
	case dOllama:
		b = e.appendOllamaHead(b)
		b = append(b, `"content":""},`...)
		b = e.appendOllamaDone(b, now)
		b = append(b, '\n')
	}
	return b
}

func (e *enc) appendOllamaDone(b []byte, now time.Time) []byte {
	first := e.firstAt
	if first.IsZero() {
		first = now
	}
	b = append(b, `"done_reason":"`...)
	b = append(b, e.finish...)
	b = append(b, `","done":true,"total_duration":`...)
	b = appendInt(b, int64(now.Sub(e.received)))
	b = append(b, `,"load_duration":0,"prompt_eval_count":`...)
	b = appendInt(b, int64(e.promptTokens))
	b = append(b, `,"prompt_eval_duration":`...)
	b = appendInt(b, int64(first.Sub(e.received)))
	b = append(b, `,"eval_count":`...)
	b = appendInt(b, int64(e.completion))
	b = append(b, `,"eval_duration":`...)
	b = appendInt(b, int64(now.Sub(first)))
	return append(b, '}')
}

func (e *enc) appendUsage(b []byte) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, int64(e.promptTokens))
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, int64(e.promptTokens+e.completion))
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, int64(e.completion))
	if e.reasoning > 0 {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = appendInt(b, int64(e.reasoning))
		b = append(b, '}')
	}
	return append(b, '}')
}

func (e *enc) appendUsageChunk(b []byte, object string) []byte {
	if !e.includeUsage {
		return b
	}
	b = append(b, "data: "...)
	b = e.appendOpenAIHead(b, object)
	b = append(b, `[],"usage":`...)
	b = e.appendUsage(b)
	return append(b, "}\n\n"...)
}

// errorEvent appends the dialect's in-stream error and, where the dialect has one,
// the end marker.
func (e *enc) errorEvent(b []byte, msg string) []byte {
	switch e.d {
	case dChat, dCompletions:
		b = append(b, `data: {"error":{"message":`...)
		b = appendJSONString(b, msg)
		b = append(b, `,"type":"InternalServerError","param":null,"code":500}}`+"\n\n"...)
		b = append(b, "data: [DONE]\n\n"...)
	case dAnthropic:
		b = append(b, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"...)
		b = appendJSONString(b, msg)
		b = append(b, "}}\n\n"...)
	case dTGI:
		b = append(b, `data:{"error":`...)
		b = appendJSONString(b, msg)
		b = append(b, `,"error_type":"generation"}`+"\n\n"...)
	case dOllama:
		b = append(b, `{"error":`...)
		b = appendJSONString(b, msg)
		b = append(b, "}\n"...)
	}
	return b
}

// malformed appends one event whose JSON is cut short.
func (e *enc) malformed(b []byte) []byte {
	switch e.d {
	case dChat:
		b = append(b, e.head...)
		b = append(b, `"content":"brok`+"\n\n"...)
	case dCompletions:
		b = append(b, e.head...)
		b = append(b, `[{"index":0,"text":"brok`+"\n\n"...)
	case dAnthropic:
		b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"brok\n\n"...)
	case dTGI:
		b = append(b, `data:{"index":0,"token":{"id":0,"text":"brok`+"\n\n"...)
	case dOllama:
		b = e.appendOllamaHead(b)
		b = append(b, `"content":"brok`+"\n"...)
	}
	return b
}

// oversized appends one line of at least n bytes that is valid JSON carrying no
// text, so only a client's line limit can object to it.
func (e *enc) oversized(b []byte, n int) []byte {
	pad := func(b []byte) []byte {
		b = append(b, `"padding":"`...)
		b = appendPadding(b, n)
		return append(b, '"')
	}
	switch e.d {
	case dChat:
		b = append(b, e.head...)
		b = append(b, `},"logprobs":null,"finish_reason":null}],`...)
		b = pad(b)
		b = append(b, "}\n\n"...)
	case dCompletions:
		b = append(b, e.head...)
		b = append(b, `[{"index":0,"text":"","logprobs":null,"finish_reason":null}],`...)
		b = pad(b)
		b = append(b, "}\n\n"...)
	case dAnthropic:
		b = append(b, "event: ping\ndata: {\"type\":\"ping\","...)
		b = pad(b)
		b = append(b, "}\n\n"...)
	case dTGI:
		b = append(b, `data:{"index":0,"token":{"id":0,"text":"","logprob":0,"special":true},"generated_text":null,"details":null,`...)
		b = pad(b)
		b = append(b, "}\n\n"...)
	case dOllama:
		b = e.appendOllamaHead(b)
		b = append(b, `"content":""},"done":false,`...)
		b = pad(b)
		b = append(b, "}\n"...)
	}
	return b
}

// appendPadding appends n bytes of 'x'.
func appendPadding(b []byte, n int) []byte {
	b = slices.Grow(b, n)
	l := len(b)
	b = b[:l+n]
	copy(b[l:], "x")
	for filled := 1; filled < n; filled *= 2 {
		copy(b[l+filled:], b[l:l+filled])
	}
	return b
}

// body appends the whole non-streamed response.
func (e *enc) body(b []byte, now time.Time) []byte {
	switch e.d {
	case dChat:
		b = e.appendOpenAIHead(b, "chat.completion")
		b = append(b, `[{"index":0,"message":{"role":"assistant","content":"`...)
		b = append(b, e.text...)
		b = append(b, '"')
		if e.reasoning > 0 {
			b = append(b, `,"reasoning_content":"`...)
			b = append(b, e.thinking...)
			b = append(b, '"')
		}
		b = append(b, `},"logprobs":null,"finish_reason":"`...)
		b = append(b, e.finish...)
		b = append(b, `"}],"usage":`...)
		b = e.appendUsage(b)
		b = append(b, '}')
	case dCompletions:
		b = e.appendOpenAIHead(b, "text_completion")
		b = append(b, `[{"index":0,"text":"`...)
		b = append(b, e.text...)
		b = append(b, `","logprobs":null,"finish_reason":"`...)
		b = append(b, e.finish...)
		b = append(b, `"}],"usage":`...)
		b = e.appendUsage(b)
		b = append(b, '}')
	case dAnthropic:
		b = append(b, `{"id":`...)
		b = appendJSONString(b, e.id)
		b = append(b, `,"type":"message","role":"assistant","model":`...)
		b = appendJSONString(b, e.model)
		b = append(b, `,"content":[`...)
		if e.reasoning > 0 {
			b = append(b, `{"type":"thinking","thinking":"`...)
			b = append(b, e.thinking...)
			b = append(b, `","signature":"mock-signature"}`...)
			if e.completion > e.reasoning {
				b = append(b, ',')
			}
		}
		if e.completion > e.reasoning {
			b = append(b, `{"type":"text","text":"`...)
			b = append(b, e.text...)
			b = append(b, `"}`...)
		}
		b = append(b, `],"stop_reason":"`...)
		b = append(b, e.finishFor()...)
		b = append(b, `","stop_sequence":null,"usage":{"input_tokens":`...)
		b = appendInt(b, int64(e.promptTokens))
		b = append(b, `,"output_tokens":`...)
		b = appendInt(b, int64(e.completion))
		b = append(b, "}}"...)
	case dTGI:
		b = append(b, `{"generated_text":"`...)
		b = append(b, e.text...)
		b = append(b, `","details":{"finish_reason":"`...)
		b = append(b, e.finishFor()...)
		b = append(b, `","generated_tokens":`...)
		b = appendInt(b, int64(e.completion))
		b = append(b, `,"seed":null,"prefill":[],"tokens":[]}}`...)
	case dOllama:
		b = append(b, `{"model":`...)
		b = appendJSONString(b, e.model)
		b = append(b, `,"created_at":"`...)
		b = now.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","message":{"role":"assistant","content":"`...)
		b = append(b, e.text...)
		b = append(b, '"')
		if e.reasoning > 0 {
			b = append(b, `,"thinking":"`...)
			b = append(b, e.thinking...)
			b = append(b, '"')
		}
		b = append(b, "},"...)
		b = e.appendOllamaDone(b, now)
	}
	return b
}

// errorBody returns an HTTP error body in the dialect's shape.
func errorBody(d dialect, status int, msg string) []byte {
	var v any
	switch d {
	case dAnthropic:
		typ := "api_error"
		switch status {
		case 400, 422:
			typ = "invalid_request_error"
		case 404:
			typ = "not_found_error"
		case 413:
			typ = "request_too_large"
		case 429:
			typ = "rate_limit_error"
		case 503:
			typ = "overloaded_error"
		}
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case dTGI:
		typ := "generation"
		switch status {
		case 400, 413, 422:
			typ = "validation"
		case 429, 503:
			typ = "overloaded"
		}
		v = map[string]any{"error": msg, "error_type": typ}
	case dOllama:
		v = map[string]any{"error": msg}
	default:
		typ := "InternalServerError"
		switch status {
		case 400, 413, 422:
			typ = "BadRequestError"
		case 404:
			typ = "NotFoundError"
		case 429:
			typ = "RateLimitError"
		case 503:
			typ = "ServiceUnavailableError"
		}
		v = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}}
	}
	b, _ := json.Marshal(v) // maps of strings and ints cannot fail
	return b
}
