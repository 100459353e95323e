package llm

// acc accumulates what the chunks of one response say. Parsers append decoded text
// straight into text/reasoning (amortised, reused across requests through a pool) and
// set the rest; nothing here allocates per chunk.
type acc struct {
	text      []byte
	reasoning []byte
	scratch   []byte
	id        []byte

	finish string

	prompt, completion, reasoningTok int
	hasPrompt, hasCompletion         bool

	done   bool   // the dialect's terminator was seen
	errMsg []byte // in-stream error message
	hasErr bool

	// memo is the previous OpenAI chunk's bytes up to its delta's content value, kept
	// when scanning them had no effect (see parseOpenAI); clean and memoAt track that
	// during a scan.
	memo   []byte
	clean  bool
	memoAt int
}

func (a *acc) reset() {
	a.text, a.reasoning, a.scratch, a.id, a.errMsg, a.memo = a.text[:0], a.reasoning[:0], a.scratch[:0], a.id[:0], a.errMsg[:0], a.memo[:0]
	a.finish = ""
	a.prompt, a.completion, a.reasoningTok = 0, 0, 0
	a.hasPrompt, a.hasCompletion, a.done, a.hasErr = false, false, false, false
}

// internFinish returns the finish reason as a string, without allocating for the
// reasons servers actually send.
func internFinish(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "end_turn":
		return "end_turn"
	case "max_tokens":
		return "max_tokens"
	case "stop_sequence":
		return "stop_sequence"
	case "tool_calls":
		return "tool_calls"
	case "tool_use":
		return "tool_use"
	case "content_filter":
		return "content_filter"
	case "eos_token":
		return "eos_token"
	case "function_call":
		return "function_call"
	case "abort":
		return "abort"
	case "load":
		return "load"
	case "":
		return ""
	}
	return string(b)
}

func (a *acc) setFinish(s *jscan) {
	a.scratch = a.scratch[:0]
	var ok bool
	a.scratch, ok = s.str(a.scratch)
	if ok && len(a.scratch) > 0 {
		a.finish = internFinish(a.scratch)
	}
}

func (a *acc) setID(s *jscan) {
	if len(a.id) > 0 {
		s.skip()
		return
	}
	a.id, _ = s.str(a.id[:0])
}

// errorValue reads an "error" member: an object with "message", or a plain string.
func (a *acc) errorValue(s *jscan) {
	switch s.peek() {
	case '"':
		a.errMsg, _ = s.str(a.errMsg[:0])
		a.hasErr = true
	case '{':
		s.open('{')
		a.hasErr = true
		for first := true; s.more('}', &first); {
			if string(s.key()) == "message" && s.peek() == '"' {
				a.errMsg, _ = s.str(a.errMsg[:0])
				continue
			}
			s.skip()
		}
		if len(a.errMsg) == 0 {
			a.errMsg = append(a.errMsg, "unspecified error"...)
		}
	default:
		s.skip() // "error": null
	}
}

// parseOpenAI decodes an OpenAI chat or completions chunk, or a whole non-streaming
// response (choices[].message instead of choices[].delta).
//
// The chunks of one stream repeat the same bytes up to the delta's content (id,
// object, created, model, index, role…), so the bytes up to that value are remembered
// (acc.memo) when scanning them changed nothing; a chunk that starts with the same
// bytes resumes the scan at its content value. Identical bytes scan to the identical
// state, so the result is the same as a full scan (TestOpenAIMemoMatchesFullScan).
func parseOpenAI(s *jscan, a *acc, payload []byte) bool {
	if m := a.memo; len(m) > 0 && len(payload) > len(m) && string(payload[:len(m)]) == string(m) {
		s.reset(payload)
		s.i = len(m)
		a.clean = false
		a.text, _ = s.str(a.text)
		a.openAIDelta(s, false, false)
		a.openAIChoiceMembers(s, false)
		for f := false; s.more(']', &f); {
			a.openAIChoice(s)
		}
		var top openAITop
		return a.openAITopMembers(s, payload, false, &top)
	}
	s.reset(payload)
	a.clean, a.memoAt = true, -1
	if !s.open('{') {
		return false
	}
	var top openAITop
	ok := a.openAITopMembers(s, payload, true, &top)
	a.memo = a.memo[:0]
	if ok && a.memoAt > 0 {
		a.memo = append(a.memo, payload[:a.memoAt]...)
	}
	return ok
}

// openAITop is what the top-level members say about an in-stream error.
type openAITop struct {
	objectIsError bool
	topMsg        []byte
}

// openAITopMembers scans the members of the top-level object (first: none read yet),
// then checks that nothing follows it.
func (a *acc) openAITopMembers(s *jscan, payload []byte, first bool, top *openAITop) bool {
	for s.more('}', &first) {
		switch string(s.key()) {
		case "id":
			if len(a.id) == 0 {
				a.clean = false
			}
			a.setID(s)
		case "choices":
			if !s.open('[') {
				continue
			}
			for f2 := true; s.more(']', &f2); {
				a.openAIChoice(s)
			}
		case "usage":
			a.clean = false
			a.openAIUsage(s)
		case "error":
			a.clean = false
			a.errorValue(s)
		case "object":
			a.scratch, _ = s.str(a.scratch[:0])
			top.objectIsError = string(a.scratch) == "error"
			if top.objectIsError {
				a.clean = false
			}
		case "message":
			if s.peek() == '"' {
				a.clean = false
				start := s.i
				s.skip()
				top.topMsg = payload[start:s.i]
				continue
			}
			s.skip()
		default:
			s.skip()
		}
	}
	if !s.end() {
		return false
	}
	if top.objectIsError && !a.hasErr {
		// vLLM's older in-stream ErrorResponse: {"object":"error","message":…}.
		a.hasErr = true
		if top.topMsg != nil {
			var t jscan
			t.reset(top.topMsg)
			a.errMsg, _ = t.str(a.errMsg[:0])
		}
		if len(a.errMsg) == 0 {
			a.errMsg = append(a.errMsg, "unspecified error"...)
		}
	}
	return true
}

func (a *acc) openAIChoice(s *jscan) {
	if !s.open('{') {
		return
	}
	a.openAIChoiceMembers(s, true)
}

func (a *acc) openAIChoiceMembers(s *jscan, first bool) {
	for s.more('}', &first) {
		switch string(s.key()) {
		case "delta", "message":
			if !s.open('{') {
				continue
			}
			a.openAIDelta(s, true, false)
		case "text":
			a.clean = false
			a.text, _ = s.str(a.text)
		case "finish_reason":
			if s.peek() != 'n' {
				a.clean = false
			}
			a.setFinish(s)
		default:
			s.skip()
		}
	}
}

// openAIDelta scans the members of a delta (or message) object.
func (a *acc) openAIDelta(s *jscan, first, gotReasoning bool) {
	for s.more('}', &first) {
		switch string(s.key()) {
		case "content":
			if a.clean && a.memoAt < 0 {
				a.memoAt = s.i
			}
			a.clean = false
			a.text, _ = s.str(a.text)
		case "reasoning_content", "reasoning":
			a.clean = false
			// Some servers send both names for the same text; keep one.
			if gotReasoning {
				s.skip()
				continue
			}
			var ok bool
			a.reasoning, ok = s.str(a.reasoning)
			gotReasoning = ok
		default:
			s.skip()
		}
	}
}

func (a *acc) openAIUsage(s *jscan) {
	if !s.open('{') {
		return
	}
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "prompt_tokens":
			a.prompt, a.hasPrompt = s.num(), true
		case "completion_tokens":
			a.completion, a.hasCompletion = s.num(), true
		case "completion_tokens_details":
			if !s.open('{') {
				continue
			}
			for f2 := true; s.more('}', &f2); {
				if string(s.key()) == "reasoning_tokens" {
					a.reasoningTok = s.num()
					continue
				}
				s.skip()
			}
		default:
			s.skip()
		}
	}
}

// parseAnthropic decodes one Messages API stream event (its JSON carries its own
// "type", so the SSE event name is not needed) or a whole non-streaming message.
func parseAnthropic(s *jscan, a *acc, payload []byte) bool {
	s.reset(payload)
	if !s.open('{') {
		return false
	}
	for first := true; s.more('}', &first); {
		k := s.key()
		switch string(k) {
		case "type":
			a.scratch, _ = s.str(a.scratch[:0])
			switch string(a.scratch) {
			case "message_stop":
				a.done = true
			case "error":
				a.hasErr = true
			}
		case "message":
			// message_start: {"message":{"id","usage":{…}}}
			if !s.open('{') {
				continue
			}
			for f2 := true; s.more('}', &f2); {
				a.anthropicMessageField(s, s.key())
			}
		case "delta":
			if !s.open('{') {
				continue
			}
			for f2 := true; s.more('}', &f2); {
				switch string(s.key()) {
				case "text":
					a.text, _ = s.str(a.text)
				case "thinking":
					a.reasoning, _ = s.str(a.reasoning)
				case "stop_reason":
					a.setFinish(s)
				default:
					s.skip()
				}
			}
		case "error":
			a.errorValue(s)
		default:
			// Top level of a non-streaming message has the same fields as
			// message_start's message.
			a.anthropicMessageField(s, k)
		}
	}
	if a.hasErr && len(a.errMsg) == 0 {
		a.errMsg = append(a.errMsg, "unspecified error"...)
	}
	return s.end()
}

// anthropicMessageField handles one member of a message object: message_start's
// "message", or the top level of a non-streaming response.
func (a *acc) anthropicMessageField(s *jscan, key []byte) {
	switch string(key) {
	case "id":
		a.setID(s)
	case "usage":
		if !s.open('{') {
			return
		}
		for f := true; s.more('}', &f); {
			switch string(s.key()) {
			case "input_tokens":
				if n := s.num(); n > 0 || !a.hasPrompt {
					a.prompt, a.hasPrompt = n, true
				}
			case "output_tokens":
				a.completion, a.hasCompletion = s.num(), true
			default:
				s.skip()
			}
		}
	case "stop_reason":
		a.setFinish(s)
	case "content":
		// non-streaming: [{"type":"text","text":…},{"type":"thinking","thinking":…}]
		if !s.open('[') {
			return
		}
		for f := true; s.more(']', &f); {
			if !s.open('{') {
				continue
			}
			for f2 := true; s.more('}', &f2); {
				switch string(s.key()) {
				case "text":
					a.text, _ = s.str(a.text)
				case "thinking":
					a.reasoning, _ = s.str(a.reasoning)
				default:
					s.skip()
				}
			}
		}
	default:
		s.skip()
	}
}

// parseTGI decodes a /generate_stream event or a /generate response.
func parseTGI(s *jscan, a *acc, payload []byte, stream bool) bool {
	s.reset(payload)
	if !s.open('{') {
		return false
	}
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "token":
			if !s.open('{') {
				continue
			}
			special := false
			a.scratch = a.scratch[:0]
			for f2 := true; s.more('}', &f2); {
				switch string(s.key()) {
				case "text":
					a.scratch, _ = s.str(a.scratch[:0])
				case "special":
					special = s.boolean()
				default:
					s.skip()
				}
			}
			if !special {
				a.text = append(a.text, a.scratch...)
			}
		case "generated_text":
			if stream {
				// The last event repeats the whole text; the tokens already carried it.
				s.skip()
				continue
			}
			a.text, _ = s.str(a.text)
		case "details":
			if !s.open('{') {
				continue
			}
			a.done = true
			for f2 := true; s.more('}', &f2); {
				switch string(s.key()) {
				case "finish_reason":
					a.setFinish(s)
				case "generated_tokens":
					a.completion, a.hasCompletion = s.num(), true
				default:
					s.skip()
				}
			}
		case "error":
			a.errorValue(s)
		default:
			s.skip()
		}
	}
	return s.end()
}

// parseOllama decodes one /api/chat NDJSON line or the non-streaming response.
func parseOllama(s *jscan, a *acc, payload []byte) bool {
	s.reset(payload)
	if !s.open('{') {
		return false
	}
	for first := true; s.more('}', &first); {
		switch string(s.key()) {
		case "message":
			if !s.open('{') {
				continue
			}
			for f2 := true; s.more('}', &f2); {
				switch string(s.key()) {
				case "content":
					a.text, _ = s.str(a.text)
				case "thinking":
					a.reasoning, _ = s.str(a.reasoning)
				default:
					s.skip()
				}
			}
		case "response": // /api/generate shape, accepted for convenience
			a.text, _ = s.str(a.text)
		case "done":
			if s.boolean() {
				a.done = true
			}
		case "done_reason":
			a.setFinish(s)
		case "prompt_eval_count":
			a.prompt, a.hasPrompt = s.num(), true
		case "eval_count":
			a.completion, a.hasCompletion = s.num(), true
		case "error":
			a.errorValue(s)
		default:
			s.skip()
		}
	}
	if a.done && a.finish == "" {
		a.finish = "stop"
	}
	return s.end()
}
