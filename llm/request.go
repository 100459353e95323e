package llm

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one generation request. Fields a dialect does not use are converted: a
// Prompt sent to a chat dialect becomes one user message, Messages sent to a
// completions-style dialect are joined with newlines into the prompt.
type Request struct {
	// Model overrides Config.Model.
	Model string
	// Messages are used by the chat dialects (openai-chat, anthropic, ollama).
	Messages []Message
	// Prompt is used by openai-completions and tgi.
	Prompt string
	// MaxTokens caps the output; 0 leaves it to the server (Anthropic requires a value
	// and gets DefaultAnthropicMaxTokens).
	MaxTokens int
	// NoStream sends a non-streaming request.
	NoStream bool
	// Params are extra body fields (temperature, top_p, seed, ignore_eos, …), merged
	// as-is at the top level of the body and winning over generated fields. For TGI
	// they are merged into "parameters", where TGI expects them.
	Params map[string]any
	// Headers are added to this request, over Config.Headers.
	Headers http.Header
}

func (r *Request) messages() []Message {
	if len(r.Messages) == 0 && r.Prompt != "" {
		return []Message{{Role: "user", Content: r.Prompt}}
	}
	return r.Messages
}

func (r *Request) prompt() string {
	if r.Prompt != "" || len(r.Messages) == 0 {
		return r.Prompt
	}
	parts := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

// promptText is what the tokenizer counts as the prompt when the server reports no
// prompt usage: the contents, without any chat template (which the client cannot know).
func (r *Request) promptText(d Dialect) string {
	switch d {
	case OpenAICompletions, TGI:
		return r.prompt()
	}
	var b strings.Builder
	for i, m := range r.messages() {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Content)
	}
	return b.String()
}

// path returns the endpoint path under the base URL.
func path(d Dialect, stream bool) string {
	switch d {
	case OpenAICompletions:
		return "/completions"
	case Anthropic:
		return "/messages"
	case TGI:
		if stream {
			return "/generate_stream"
		}
		return "/generate"
	case Ollama:
		return "/api/chat"
	}
	return "/chat/completions"
}

// body builds the JSON body for the dialect.
func buildBody(cfg *Config, r *Request, model string) ([]byte, error) {
	stream := !r.NoStream
	b := map[string]any{}
	switch cfg.Dialect {
	case OpenAIChat, OpenAICompletions:
		b["model"] = model
		if cfg.Dialect == OpenAIChat {
			b["messages"] = r.messages()
		} else {
			b["prompt"] = r.prompt()
		}
		b["stream"] = stream
		if stream && !cfg.NoIncludeUsage {
			b["stream_options"] = map[string]any{"include_usage": true}
		}
		if r.MaxTokens > 0 {
			b["max_tokens"] = r.MaxTokens
		}
	case Anthropic:
		b["model"] = model
		var system []string
		msgs := make([]Message, 0, len(r.messages()))
		for _, m := range r.messages() {
			if m.Role == "system" {
				system = append(system, m.Content)
				continue
			}
			msgs = append(msgs, m)
		}
		if len(system) > 0 {
			b["system"] = strings.Join(system, "\n")
		}
		b["messages"] = msgs
		b["max_tokens"] = DefaultAnthropicMaxTokens
		if r.MaxTokens > 0 {
			b["max_tokens"] = r.MaxTokens
		}
		b["stream"] = stream
	case TGI:
		params := map[string]any{"details": true}
		if r.MaxTokens > 0 {
			params["max_new_tokens"] = r.MaxTokens
		}
		for k, v := range r.Params {
			params[k] = v
		}
		b["inputs"] = r.prompt()
		b["parameters"] = params
		b["stream"] = stream
		return json.Marshal(b)
	case Ollama:
		b["model"] = model
		b["messages"] = r.messages()
		b["stream"] = stream
		if r.MaxTokens > 0 {
			b["options"] = map[string]any{"num_predict": r.MaxTokens}
		}
	}
	for k, v := range r.Params {
		b[k] = v
	}
	return json.Marshal(b)
}
