package llm

// Dialect selects the wire protocol a Client speaks.
type Dialect string

// The dialects. The base URL is what users write for that server: for OpenAI-compatible
// servers it ends in /v1 (http://127.0.0.1:8000/v1); for TGI and Ollama it is the root.
const (
	OpenAIChat        Dialect = "openai-chat"        // POST {base}/chat/completions, SSE
	OpenAICompletions Dialect = "openai-completions" // POST {base}/completions, SSE
	Anthropic         Dialect = "anthropic"          // POST {base}/messages, event-typed SSE
	TGI               Dialect = "tgi"                // POST {base}/generate_stream, SSE
	Ollama            Dialect = "ollama"             // POST {base}/api/chat, NDJSON
)
