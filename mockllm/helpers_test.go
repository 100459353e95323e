package mockllm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startServer starts a Server on a loopback port and a client with its own transport,
// both torn down when the test ends.
func startServer(t testing.TB, cfg Config) (*Server, *http.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, "", cfg)
	require.NoError(t, err)
	// Wait for "100 Continue" on requests that ask for it (see TestFaults).
	tr := &http.Transport{ExpectContinueTimeout: 30 * time.Second}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		cancel()
		require.NoError(t, s.Close())
	})
	return s, &http.Client{Transport: tr}
}

func post(t testing.TB, c *http.Client, url, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	return resp
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	Event string
	Data  string
}

// readSSE splits an SSE body into events (data lines joined by "\n"), keeping
// comments out. It reads lines of any length.
func readSSE(r io.Reader) ([]sseEvent, error) {
	br := bufio.NewReader(r)
	var out []sseEvent
	var cur sseEvent
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil && !(err == io.EOF && line != "") {
			if err == io.EOF {
				if len(data) > 0 || cur.Event != "" {
					return out, fmt.Errorf("stream ended inside an event: %w", io.ErrUnexpectedEOF)
				}
				return out, nil
			}
			return out, err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		switch {
		case line == "":
			if len(data) > 0 || cur.Event != "" {
				cur.Data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = sseEvent{}, nil
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				cur.Event = value
			case "data":
				data = append(data, value)
			}
		}
		if err == io.EOF {
			return out, fmt.Errorf("stream ended inside a line: %w", io.ErrUnexpectedEOF)
		}
	}
}

// decoded is a response reduced to what the tests compare across dialects.
type decoded struct {
	Text, Reasoning  string
	Chunks           int // chunks carrying generated text (reasoning or answer)
	ReasoningChunks  int
	RoleChunks       int // role-only / structural chunks before the first token
	Finish           string
	PromptTokens     int // -1 when the response does not say
	CompletionTokens int // -1 when the response does not say
	Ended            bool
	ErrorMessage     string
}

type openAIChunk struct {
	Choices []struct {
		Delta struct {
			Role             *string `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"delta"`
		Message struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"message"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}

func decodeOpenAIStream(body io.Reader) (decoded, error) {
	d := decoded{PromptTokens: -1, CompletionTokens: -1}
	evs, err := readSSE(body)
	for _, ev := range evs {
		if d.Ended {
			return d, fmt.Errorf("event after [DONE]: %q", ev.Data)
		}
		if ev.Data == "[DONE]" {
			d.Ended = true
			continue
		}
		var c openAIChunk
		if err := strictUnmarshal([]byte(ev.Data), &c); err != nil {
			return d, fmt.Errorf("chunk %q: %w", trunc(ev.Data), err)
		}
		if c.Error != nil {
			d.ErrorMessage = c.Error.Message
			continue
		}
		if c.Usage != nil {
			d.PromptTokens, d.CompletionTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			text := ""
			switch {
			case ch.Text != nil:
				text = *ch.Text
			case ch.Delta.Content != nil:
				text = *ch.Delta.Content
			}
			if ch.Delta.ReasoningContent != nil && *ch.Delta.ReasoningContent != "" {
				d.Reasoning += *ch.Delta.ReasoningContent
				d.Chunks++
				d.ReasoningChunks++
			} else if text != "" {
				d.Text += text
				d.Chunks++
			} else if ch.FinishReason == nil && d.Chunks == 0 {
				d.RoleChunks++
			}
			if ch.FinishReason != nil {
				d.Finish = *ch.FinishReason
			}
		}
	}
	return d, err
}

func decodeOpenAIBody(body []byte) (decoded, error) {
	var c openAIChunk
	if err := strictUnmarshal(body, &c); err != nil {
		return decoded{}, err
	}
	d := decoded{PromptTokens: -1, CompletionTokens: -1, Ended: true}
	if c.Usage != nil {
		d.PromptTokens, d.CompletionTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	if len(c.Choices) != 1 {
		return d, fmt.Errorf("want 1 choice, got %d", len(c.Choices))
	}
	ch := c.Choices[0]
	d.Text = ch.Message.Content
	if ch.Text != nil {
		d.Text = *ch.Text
	}
	d.Reasoning = ch.Message.ReasoningContent
	if ch.FinishReason != nil {
		d.Finish = *ch.FinishReason
	}
	return d, nil
}

func decodeAnthropicStream(body io.Reader) (decoded, error) {
	d := decoded{PromptTokens: -1, CompletionTokens: -1}
	evs, err := readSSE(body)
	var blockType string
	for _, ev := range evs {
		var m struct {
			Type    string `json:"type"`
			Message struct {
				Usage struct {
					InputTokens int `json:"input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			ContentBlock struct {
				Type string `json:"type"`
			} `json:"content_block"`
			Delta struct {
				Type       string `json:"type"`
				Text       string `json:"text"`
				Thinking   string `json:"thinking"`
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := strictUnmarshal([]byte(ev.Data), &m); err != nil {
			return d, fmt.Errorf("event %s %q: %w", ev.Event, trunc(ev.Data), err)
		}
		if ev.Event != m.Type {
			return d, fmt.Errorf("event name %q but type %q", ev.Event, m.Type)
		}
		switch m.Type {
		case "message_start":
			d.PromptTokens = m.Message.Usage.InputTokens
			d.RoleChunks++
		case "content_block_start":
			blockType = m.ContentBlock.Type
		case "content_block_delta":
			switch m.Delta.Type {
			case "text_delta":
				if blockType != "text" {
					return d, fmt.Errorf("text_delta in a %q block", blockType)
				}
				d.Text += m.Delta.Text
				d.Chunks++
			case "thinking_delta":
				if blockType != "thinking" {
					return d, fmt.Errorf("thinking_delta in a %q block", blockType)
				}
				d.Reasoning += m.Delta.Thinking
				d.Chunks++
				d.ReasoningChunks++
			}
		case "content_block_stop":
			blockType = ""
		case "message_delta":
			d.Finish = m.Delta.StopReason
			d.CompletionTokens = m.Usage.OutputTokens
		case "message_stop":
			d.Ended = true
		case "error":
			d.ErrorMessage = m.Error.Message
		}
	}
	return d, err
}

func decodeAnthropicBody(body []byte) (decoded, error) {
	var m struct {
		Type    string `json:"type"`
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := strictUnmarshal(body, &m); err != nil {
		return decoded{}, err
	}
	d := decoded{Finish: m.StopReason, PromptTokens: m.Usage.InputTokens, CompletionTokens: m.Usage.OutputTokens, Ended: true}
	for _, c := range m.Content {
		d.Text += c.Text
		d.Reasoning += c.Thinking
	}
	return d, nil
}

type tgiEvent struct {
	Token *struct {
		ID      int     `json:"id"`
		Text    string  `json:"text"`
		Special bool    `json:"special"`
		Logprob float64 `json:"logprob"`
	} `json:"token"`
	GeneratedText *string `json:"generated_text"`
	Details       *struct {
		FinishReason    string `json:"finish_reason"`
		GeneratedTokens int    `json:"generated_tokens"`
	} `json:"details"`
	Error     string `json:"error"`
	ErrorType string `json:"error_type"`
}

func decodeTGIStream(body io.Reader) (decoded, error) {
	d := decoded{PromptTokens: -1, CompletionTokens: -1}
	evs, err := readSSE(body)
	for _, ev := range evs {
		var m tgiEvent
		if err := strictUnmarshal([]byte(ev.Data), &m); err != nil {
			return d, fmt.Errorf("event %q: %w", trunc(ev.Data), err)
		}
		if m.Error != "" {
			d.ErrorMessage = m.Error
			continue
		}
		if m.Token != nil && !m.Token.Special {
			d.Text += m.Token.Text
			d.Chunks++
		}
		if m.GeneratedText != nil {
			if *m.GeneratedText != d.Text {
				return d, fmt.Errorf("generated_text %q differs from the streamed text %q", *m.GeneratedText, d.Text)
			}
			d.Ended = true
		}
		if m.Details != nil {
			d.Finish = m.Details.FinishReason
			d.CompletionTokens = m.Details.GeneratedTokens
		}
	}
	return d, err
}

func decodeTGIBody(body []byte) (decoded, error) {
	var m tgiEvent
	if err := strictUnmarshal(body, &m); err != nil {
		return decoded{}, err
	}
	d := decoded{PromptTokens: -1, CompletionTokens: -1, Ended: true}
	if m.GeneratedText != nil {
		d.Text = *m.GeneratedText
	}
	if m.Details != nil {
		d.Finish, d.CompletionTokens = m.Details.FinishReason, m.Details.GeneratedTokens
	}
	return d, nil
}

type ollamaObject struct {
	Model     string `json:"model"`
	CreatedAt string `json:"created_at"`
	Message   struct {
		Role     string `json:"role"`
		Content  string `json:"content"`
		Thinking string `json:"thinking"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
	TotalDuration   int64  `json:"total_duration"`
	Error           string `json:"error"`
}

func (o ollamaObject) into(d *decoded) {
	d.Text += o.Message.Content
	d.Reasoning += o.Message.Thinking
	if o.Done {
		d.Ended = true
		d.Finish = o.DoneReason
		d.PromptTokens, d.CompletionTokens = o.PromptEvalCount, o.EvalCount
	}
}

func decodeOllamaStream(body io.Reader) (decoded, error) {
	d := decoded{PromptTokens: -1, CompletionTokens: -1}
	br := bufio.NewReader(body)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				return d, fmt.Errorf("unterminated line %q: %w", trunc(string(line)), io.ErrUnexpectedEOF)
			}
			var o ollamaObject
			if err := strictUnmarshal(line, &o); err != nil {
				return d, fmt.Errorf("line %q: %w", trunc(string(line)), err)
			}
			if o.Error != "" {
				d.ErrorMessage = o.Error
				continue
			}
			if d.Ended {
				return d, fmt.Errorf("object after done")
			}
			if o.Message.Content != "" || o.Message.Thinking != "" {
				d.Chunks++
				if o.Message.Thinking != "" {
					d.ReasoningChunks++
				}
			}
			o.into(&d)
		}
		if err == io.EOF {
			return d, nil
		}
		if err != nil {
			return d, err
		}
	}
}

func decodeOllamaBody(body []byte) (decoded, error) {
	var o ollamaObject
	if err := strictUnmarshal(body, &o); err != nil {
		return decoded{}, err
	}
	d := decoded{PromptTokens: -1, CompletionTokens: -1}
	o.into(&d)
	return d, nil
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
