package xk6ext

import (
	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/tokens"
)

// ms converts a duration to float milliseconds, as k6 reports time.
func ms[D ~int64](d D) float64 { return float64(d) / 1e6 }

// resultObject builds the JS Result: the probe's JSON fields in snake_case, plus a few
// more. Durations are float milliseconds; a point never reached is 0, as in llm.Result.
// The object keeps r alive (for itl_ms) as long as the script holds it.
func (m *ModuleInstance) resultObject(r *llm.Result, slo tokens.SLO) sobek.Value {
	rt := m.rt
	o := rt.NewObject()
	set := func(k string, v any) { _ = o.Set(k, v) }
	errText := ""
	if r.Err != nil {
		errText = r.Err.Error()
	}
	set("ok", r.OK())
	set("status", r.Status)
	set("error_type", string(r.ErrorType))
	set("error", errText)
	set("timeout_phase", r.TimeoutPhase)
	set("ttfb_ms", ms(r.TTFB))
	set("ttft_ms", ms(r.TTFT))
	set("ttfo_ms", ms(r.TTFO))
	// itl_ms has one entry per chunk: built only when the script reads it, so a
	// request's cost to the VU does not grow with its length unless asked for.
	var itl sobek.Value
	getter := rt.ToValue(func(sobek.FunctionCall) sobek.Value {
		if itl == nil {
			items := make([]any, len(r.ITL))
			for i, d := range r.ITL {
				items[i] = ms(d)
			}
			itl = rt.NewArray(items...)
		}
		return itl
	})
	_ = o.DefineAccessorProperty("itl_ms", getter, nil, sobek.FLAG_TRUE, sobek.FLAG_TRUE)
	set("tpot_ms", ms(r.TPOT))
	set("e2e_ms", ms(r.E2E))
	set("duration_ms", ms(r.Duration))
	set("prompt_tokens", r.PromptTokens)
	set("completion_tokens", r.CompletionTokens)
	set("reasoning_tokens", r.ReasoningTokens)
	set("token_source", string(r.TokenSource))
	set("chunks", r.Chunks)
	set("content_chunks", r.ContentChunks)
	set("finish_reason", r.FinishReason)
	set("text", r.Text)
	set("reasoning", r.Reasoning)
	set("id", r.ID)
	set("model", r.Model)
	set("dialect", string(r.Dialect))
	set("bytes_sent", r.BytesSent)
	set("bytes_received", r.BytesReceived)
	if slo.IsSet() {
		set("goodput", slo.Met(r))
	} else {
		set("goodput", sobek.Null())
	}
	return o
}
