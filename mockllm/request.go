package mockllm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxOutputTokens is the largest max_tokens accepted (a stand-in for a context
// length); larger requests get HTTP 400, as vLLM answers for an oversized request.
const MaxOutputTokens = 1 << 20

// dialect is the wire protocol of one route.
type dialect uint8

const (
	dChat dialect = iota
	dCompletions
	dAnthropic
	dTGI
	dOllama
	numDialects
)

// String returns the dialect's name as tokenstorm's clients spell it (llm.Dialect).
func (d dialect) String() string {
	switch d {
	case dChat:
		return "openai-chat"
	case dCompletions:
		return "openai-completions"
	case dAnthropic:
		return "anthropic"
	case dTGI:
		return "tgi"
	case dOllama:
		return "ollama"
	}
	return "unknown"
}

// genRequest is what the generator needs from any dialect's request body.
type genRequest struct {
	model        string
	stream       bool
	maxTokens    int // 0: not given
	includeUsage bool
	ignoreEOS    bool
	promptTokens int
}

// errBadRequest marks a request body the mock refuses (HTTP 400).
var errBadRequest = errors.New("bad request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBadRequest}, args...)...)
}

// textBytes is a message content that may be a string or an array of typed parts
// ({"type":"text","text":…}); it keeps only the number of text bytes.
type textBytes int

func (t *textBytes) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*t = 0
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = textBytes(len(s))
		return nil
	case b[0] == '[':
		var parts []struct {
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		n := 0
		for _, p := range parts {
			n += len(p.Text) + len(p.Thinking)
		}
		*t = textBytes(n)
		return nil
	}
	return badRequest("content must be a string or an array of parts")
}

// promptField is a completions prompt: a string, an array of strings, an array of
// token ids, or an array of arrays of token ids. It keeps the prompt token count:
// token ids count exactly, text by estimateTokens.
type promptField struct {
	tokens int
	seen   bool
}

func (p *promptField) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	p.seen = true
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		p.seen = false
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		p.tokens = estimateTokens(len(s))
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return badRequest("prompt must be a string or an array")
	}
	if len(items) > 1 {
		// One prompt per request keeps a response one choice long (n=1 only).
		if first := bytes.TrimSpace(items[0]); len(first) > 0 && (first[0] == '"' || first[0] == '[') {
			return badRequest("only one prompt per request is supported")
		}
	}
	for _, it := range items {
		it = bytes.TrimSpace(it)
		switch {
		case len(it) > 0 && it[0] == '"':
			var s string
			if err := json.Unmarshal(it, &s); err != nil {
				return err
			}
			p.tokens += estimateTokens(len(s))
		case len(it) > 0 && it[0] == '[':
			var ids []int64
			if err := json.Unmarshal(it, &ids); err != nil {
				return badRequest("prompt token arrays must hold integers")
			}
			p.tokens += len(ids)
		default:
			var id int64
			if err := json.Unmarshal(it, &id); err != nil {
				return badRequest("prompt array items must be strings or token ids")
			}
			p.tokens++
		}
	}
	return nil
}

// messages is a chat message list, reduced to the text bytes of each content.
type messages []struct {
	Role    string    `json:"role"`
	Content textBytes `json:"content"`
}

// bytes is the total text length of the messages' contents.
func (ms messages) bytes() int {
	n := 0
	for _, m := range ms {
		n += int(m.Content)
	}
	return n
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatRequest struct {
	Model               string         `json:"model"`
	Messages            messages       `json:"messages"`
	Stream              bool           `json:"stream"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	StreamOptions       *streamOptions `json:"stream_options"`
	N                   *int           `json:"n"`
	IgnoreEOS           bool           `json:"ignore_eos"`
}

type completionsRequest struct {
	Model         string         `json:"model"`
	Prompt        promptField    `json:"prompt"`
	Stream        bool           `json:"stream"`
	MaxTokens     *int           `json:"max_tokens"`
	StreamOptions *streamOptions `json:"stream_options"`
	N             *int           `json:"n"`
	IgnoreEOS     bool           `json:"ignore_eos"`
}

type anthropicRequest struct {
	Model     string    `json:"model"`
	Messages  messages  `json:"messages"`
	System    textBytes `json:"system"`
	MaxTokens *int      `json:"max_tokens"`
	Stream    bool      `json:"stream"`
}

type tgiRequest struct {
	Inputs     *string `json:"inputs"`
	Parameters struct {
		MaxNewTokens *int `json:"max_new_tokens"`
	} `json:"parameters"`
}

type ollamaRequest struct {
	Model    string   `json:"model"`
	Messages messages `json:"messages"`
	Stream   *bool    `json:"stream"`
	Options  struct {
		NumPredict *int `json:"num_predict"`
	} `json:"options"`
}

// parseRequest decodes a request body of dialect d. stream is the route's choice for
// TGI (/generate_stream vs /generate) and ignored by the other dialects, whose body
// says. Errors wrap errBadRequest.
func parseRequest(d dialect, body []byte, stream bool) (genRequest, error) {
	var g genRequest
	var maxTok *int
	switch d {
	case dChat:
		var r chatRequest
		if err := unmarshal(body, &r); err != nil {
			return g, err
		}
		if len(r.Messages) == 0 {
			return g, badRequest("messages must not be empty")
		}
		if r.N != nil && *r.N != 1 {
			return g, badRequest("only n=1 is supported")
		}
		g = genRequest{model: r.Model, stream: r.Stream, ignoreEOS: r.IgnoreEOS, promptTokens: estimateTokens(r.Messages.bytes())}
		g.includeUsage = r.Stream && r.StreamOptions != nil && r.StreamOptions.IncludeUsage
		maxTok = r.MaxTokens
		if r.MaxCompletionTokens != nil {
			maxTok = r.MaxCompletionTokens
		}
	case dCompletions:
		var r completionsRequest
		if err := unmarshal(body, &r); err != nil {
			return g, err
		}
		if !r.Prompt.seen {
			return g, badRequest("prompt is required")
		}
		if r.N != nil && *r.N != 1 {
			return g, badRequest("only n=1 is supported")
		}
		g = genRequest{model: r.Model, stream: r.Stream, ignoreEOS: r.IgnoreEOS, promptTokens: r.Prompt.tokens}
		g.includeUsage = r.Stream && r.StreamOptions != nil && r.StreamOptions.IncludeUsage
		maxTok = r.MaxTokens
	case dAnthropic:
		var r anthropicRequest
		if err := unmarshal(body, &r); err != nil {
			return g, err
		}
		if len(r.Messages) == 0 {
			return g, badRequest("messages: at least one message is required")
		}
		g = genRequest{model: r.Model, stream: r.Stream, promptTokens: estimateTokens(int(r.System) + r.Messages.bytes())}
		maxTok = r.MaxTokens
	case dTGI:
		var r tgiRequest
		if err := unmarshal(body, &r); err != nil {
			return g, err
		}
		if r.Inputs == nil {
			return g, badRequest("inputs is required")
		}
		g = genRequest{stream: stream, promptTokens: estimateTokens(len(*r.Inputs))}
		maxTok = r.Parameters.MaxNewTokens
	case dOllama:
		var r ollamaRequest
		if err := unmarshal(body, &r); err != nil {
			return g, err
		}
		if len(r.Messages) == 0 {
			return g, badRequest("messages must not be empty")
		}
		g = genRequest{model: r.Model, stream: r.Stream == nil || *r.Stream, promptTokens: estimateTokens(r.Messages.bytes())}
		// Ollama's num_predict of -1 means "until the model stops": the default here.
		if p := r.Options.NumPredict; p != nil && *p >= 0 {
			maxTok = p
		}
	default:
		return g, badRequest("unknown dialect")
	}
	if maxTok != nil {
		if *maxTok < 1 {
			return g, badRequest("max tokens must be at least 1, got %d", *maxTok)
		}
		if *maxTok > MaxOutputTokens {
			return g, badRequest("max tokens %d exceeds the limit of %d", *maxTok, MaxOutputTokens)
		}
		g.maxTokens = *maxTok
	}
	return g, nil
}

func unmarshal(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		if errors.Is(err, errBadRequest) {
			return err
		}
		return badRequest("invalid JSON body: %v", err)
	}
	return nil
}
