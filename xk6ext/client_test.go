package xk6ext_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/mockllm"
	"github.com/tokenstorm/tokenstorm/tokens"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func TestChatResult(t *testing.T) {
	e := newEnv(t)
	srv := e.startMock(t, mockllm.Config{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, Seed: 1})
	vu := e.vu(t, `
import storm from 'k6/x/tokenstorm';
const client = new storm.Client({ url: __ENV.MOCK_URL, model: 'm1' });
export function chat() {
  return client.chat({ messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12 });
}
export function complete() {
  return client.complete({ prompt: 'once upon a time', max_tokens: 5, temperature: 0 });
}
export function props() { return [client.url, client.model, client.dialect]; }
`)
	assert.Equal(t, []any{e.vars["MOCK_URL"], "m1", "openai-chat"}, call(t, vu, "props"))

	r := obj(t, call(t, vu, "chat"))
	require.Equal(t, true, r["ok"], "error: %v", r["error"])
	tr, err := truthOf(srv, r["id"].(string))
	require.NoError(t, err)
	assert.Equal(t, "openai-chat", tr.Dialect)
	assert.EqualValues(t, 200, r["status"])
	assert.Equal(t, "", r["error_type"])
	assert.Equal(t, "", r["error"])
	assert.EqualValues(t, 12, r["completion_tokens"])
	assert.EqualValues(t, tr.CompletionTokens, r["completion_tokens"])
	assert.EqualValues(t, tr.PromptTokens, r["prompt_tokens"])
	assert.Equal(t, "usage", r["token_source"])
	assert.Equal(t, "length", r["finish_reason"])
	assert.NotEmpty(t, r["text"])
	assert.Len(t, r["itl_ms"], len(tr.Chunks)-1)
	assert.EqualValues(t, len(tr.Chunks), r["content_chunks"])
	for _, k := range []string{"ttfb_ms", "ttft_ms", "e2e_ms", "duration_ms", "tpot_ms"} {
		assert.Greater(t, num(t, r[k]), 0.0, k)
	}
	assert.LessOrEqual(t, num(t, r["ttfb_ms"]), num(t, r["ttft_ms"]))
	assert.LessOrEqual(t, num(t, r["ttft_ms"]), num(t, r["e2e_ms"]))
	assert.LessOrEqual(t, num(t, r["e2e_ms"]), num(t, r["duration_ms"]))
	assert.GreaterOrEqual(t, num(t, r["ttft_ms"]), 5.0, "the mock's TTFT is 5ms")
	assert.Nil(t, r["goodput"], "no SLO set")
	assert.Greater(t, num(t, r["bytes_received"]), 0.0)

	c := obj(t, call(t, vu, "complete"))
	require.Equal(t, true, c["ok"], "error: %v", c["error"])
	tr, err = truthOf(srv, c["id"].(string))
	require.NoError(t, err)
	assert.Equal(t, "openai-completions", tr.Dialect, "complete() uses /completions")
	assert.EqualValues(t, 5, c["completion_tokens"])
}

func TestDialects(t *testing.T) {
	e := newEnv(t)
	srv := e.startMock(t, mockllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	vu := e.vu(t, `
import { Client } from 'k6/x/tokenstorm';
const clients = {
  'anthropic': new Client({ url: __ENV.MOCK_URL, dialect: 'anthropic', model: 'm' }),
  'ollama': new Client({ url: __ENV.MOCK_ROOT, dialect: 'ollama', model: 'm' }),
  'tgi': new Client({ url: __ENV.MOCK_ROOT, dialect: 'tgi' }),
};
export function run(d) {
  const c = clients[d];
  return d === 'tgi' ? c.complete({ prompt: 'p', max_tokens: 4 })
                     : c.chat({ prompt: 'p', max_tokens: 4 });
}
`)
	for _, d := range []string{"anthropic", "ollama", "tgi"} {
		t.Run(d, func(t *testing.T) {
			r := obj(t, call(t, vu, "run", d))
			require.Equal(t, true, r["ok"], "error: %v", r["error"])
			assert.Equal(t, d, r["dialect"])
			assert.EqualValues(t, 4, r["completion_tokens"])
			tr, err := truthOf(srv, r["id"].(string))
			require.NoError(t, err, "the mock saw the request")
			assert.Equal(t, 4, tr.CompletionTokens)
		})
	}
}

func TestMetricsAndTags(t *testing.T) {
	e := newEnv(t)
	e.startMock(t, mockllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
	vu := e.vu(t, `
import storm from 'k6/x/tokenstorm';
const client = new storm.Client({ url: __ENV.MOCK_URL, model: 'tagged', tags: { team: 'a', kind: 'client' } });
const slo = new storm.Client({ url: __ENV.MOCK_URL, model: 'slo', slo: { ttft: '10s', tpot: 10000 } });
export function plain() {
  return client.chat({ messages: [{ role: 'user', content: 'x' }], max_tokens: 6, tags: { kind: 'call' } });
}
export function withSLO() {
  return [slo.chat({ prompt: 'x', max_tokens: 3 }),
          slo.chat({ prompt: 'x', max_tokens: 3, slo: { ttft: '1us' } })];
}
`)
	r := obj(t, call(t, vu, "plain"))
	require.Equal(t, true, r["ok"], "error: %v", r["error"])

	for _, d := range tokens.Catalogue() {
		if d.Name == tokens.MetricGoodput {
			continue
		}
		assert.Contains(t, e.sink.metrics, d.Name, "declared in init")
	}
	emitted := e.sink.names()
	for _, n := range []string{"llm_reqs", "llm_req_failed", "llm_ttfb", "llm_ttft", "llm_itl", "llm_tpot",
		"llm_e2e", "llm_req_duration", "llm_prompt_tokens", "llm_completion_tokens", "llm_output_tps",
		xk6ext.MetricDataSent, xk6ext.MetricDataReceived} {
		assert.Contains(t, emitted, n)
	}
	assert.NotContains(t, emitted, tokens.MetricGoodput, "no SLO, no goodput")
	assert.Equal(t, xk6ext.Time, e.sink.metrics["llm_ttft"].ValueType)
	assert.Equal(t, xk6ext.Trend, e.sink.metrics["llm_ttft"].Type)
	assert.Equal(t, xk6ext.Rate, e.sink.metrics["llm_req_failed"].Type)
	assert.Equal(t, xk6ext.Data, e.sink.metrics[xk6ext.MetricDataReceived].ValueType)

	itl := e.sink.named("llm_itl")
	assert.Len(t, itl, len(r["itl_ms"].([]any)), "one llm_itl sample per gap")
	ttft := e.sink.named("llm_ttft")
	require.Len(t, ttft, 1)
	assert.InDelta(t, num(t, r["ttft_ms"]), ttft[0].Value, 1e-9)
	tags := ttft[0].Tags
	assert.Equal(t, "tagged", tags["model"])
	assert.Equal(t, "openai-chat", tags["dialect"])
	assert.Equal(t, "200", tags["status"])
	assert.Equal(t, "length", tags["finish_reason"])
	assert.Equal(t, "a", tags["team"], "client tag")
	assert.Equal(t, "call", tags["kind"], "the call's tag wins over the client's")
	assert.NotContains(t, tags, "error_type")
	failed := e.sink.named("llm_req_failed")
	require.Len(t, failed, 1)
	assert.Equal(t, 0.0, failed[0].Value)
	ct := e.sink.named("llm_completion_tokens")
	require.Len(t, ct, 1)
	assert.Equal(t, 6.0, ct[0].Value)
	sent := e.sink.named(xk6ext.MetricDataSent)
	require.Len(t, sent, 1)
	assert.Equal(t, num(t, r["bytes_sent"]), sent[0].Value)
	assert.Greater(t, sent[0].Value, 0.0)

	res := call(t, vu, "withSLO").([]any)
	assert.Equal(t, true, obj(t, res[0])["goodput"], "met a generous SLO")
	assert.Equal(t, false, obj(t, res[1])["goodput"], "missed a 1µs TTFT")
	good := e.sink.named(tokens.MetricGoodput)
	require.Len(t, good, 2)
	assert.Equal(t, []float64{1, 0}, []float64{good[0].Value, good[1].Value})
}

func TestFailures(t *testing.T) {
	e := newEnv(t)
	e.startMock(t, mockllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	vu := e.vu(t, `
import storm from 'k6/x/tokenstorm';
const client = new storm.Client({ url: __ENV.MOCK_URL, apiKey: 'sk-secret-123', firstTokenTimeout: '100ms' });
export function fault(f) {
  return client.chat({ prompt: 'x', max_tokens: 8, headers: { 'X-Mock-Fault': f } });
}
`)
	cases := []struct {
		fault, errType string
		status         int
	}{
		{"http_500", "http_5xx", 500},
		{"http_429", "rate_limited", 429},
		{"http_400", "http_4xx", 400},
		{"stall_first", "timeout", 200},
		{"cut", "truncated", 200},
		{"malformed", "decode", 200},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			before := len(e.sink.named("llm_req_failed"))
			r := obj(t, call(t, vu, "fault", c.fault))
			assert.Equal(t, false, r["ok"])
			assert.Equal(t, c.errType, r["error_type"])
			assert.EqualValues(t, c.status, r["status"])
			assert.NotEmpty(t, r["error"])
			assert.NotContains(t, r["error"], "sk-secret-123")
			if c.fault == "stall_first" {
				assert.Equal(t, "first_token", r["timeout_phase"])
				assert.Zero(t, num(t, r["ttft_ms"]), "no token arrived")
			}
			failed := e.sink.named("llm_req_failed")
			require.Len(t, failed, before+1)
			last := failed[len(failed)-1]
			assert.Equal(t, 1.0, last.Value)
			assert.Equal(t, c.errType, last.Tags["error_type"])
		})
	}
}

func TestAsyncStreamsOverlap(t *testing.T) {
	e := newEnv(t)
	srv := e.startMock(t, mockllm.Config{TTFT: 20 * time.Millisecond, ITL: 2 * time.Millisecond})
	vu := e.vu(t, `
import { Client } from 'k6/x/tokenstorm';
const client = new Client({ url: __ENV.MOCK_URL });
export default async function () {
  const rs = await Promise.all([0, 1, 2, 3].map((i) =>
    client.chatAsync({ prompt: 'q' + i, max_tokens: 10, tags: { stream: String(i) } })));
  const c = await client.completeAsync({ prompt: 'after', max_tokens: 2 });
  return { ids: rs.map((r) => r.id), ok: rs.every((r) => r.ok) && c.ok };
}
export async function bad() {
  try {
    await client.chatAsync({ messages: 'nope' });
    return 'resolved';
  } catch (e) {
    return String(e);
  }
}
`)
	out := obj(t, call(t, vu, "default"))
	require.Equal(t, true, out["ok"])
	ids := out["ids"].([]any)
	require.Len(t, ids, 4)
	// Ground truth from the server: every request arrived before any of them finished,
	// so all four streams were in flight at once.
	var firstEnd, lastStart time.Time
	for _, id := range ids {
		tr, err := truthOf(srv, id.(string))
		require.NoError(t, err)
		require.NotEmpty(t, tr.Chunks)
		end := tr.Chunks[len(tr.Chunks)-1]
		if firstEnd.IsZero() || end.Before(firstEnd) {
			firstEnd = end
		}
		if tr.Received.After(lastStart) {
			lastStart = tr.Received
		}
	}
	assert.True(t, lastStart.Before(firstEnd), "streams overlapped: last start %v, first end %v", lastStart, firstEnd)
	streams := map[string]bool{}
	for _, s := range e.sink.named("llm_reqs") {
		streams[s.Tags["stream"]] = true
	}
	assert.Len(t, streams, 5, "4 tagged streams + the untagged completion")

	assert.Contains(t, call(t, vu, "bad"), `"messages"`, "invalid arguments reject the promise")
}

func TestRequestFields(t *testing.T) {
	e := newEnv(t)
	e.startMock(t, mockllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	vu := e.vu(t, `
import { Client } from 'k6/x/tokenstorm';
const c = new Client({ url: __ENV.MOCK_URL, model: 'base', keepText: false });
export function nostream() { return c.chat({ prompt: 'x', max_tokens: 4, stream: false, model: 'other' }); }
export function passthrough() { return c.chat({ prompt: 'x', max_completion_tokens: 3 }); }
`)
	r := obj(t, call(t, vu, "nostream"))
	require.Equal(t, true, r["ok"], "error: %v", r["error"])
	assert.EqualValues(t, 4, r["completion_tokens"])
	assert.Equal(t, "other", r["model"], "the call's model overrides the client's")
	assert.Equal(t, "", r["text"], "keepText: false")

	r = obj(t, call(t, vu, "passthrough"))
	require.Equal(t, true, r["ok"], "error: %v", r["error"])
	assert.EqualValues(t, 3, r["completion_tokens"], "unknown keys reach the request body")
	ttft := e.sink.named("llm_ttft")
	require.NotEmpty(t, ttft)
	assert.Equal(t, "base", ttft[len(ttft)-1].Tags["model"])
}
