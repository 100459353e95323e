package xk6ext_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMockSharedByVUs(t *testing.T) {
	e := newEnv(t)
	prog := e.compile(t, `
import storm from 'k6/x/tokenstorm';
export const url = storm.mock({ ttft: 0, itl: '1ms', tokensPerChunk: 4, reasoning: 4, maxTokens: 9, seed: 3 });
const again = storm.mock({ ttft: 0, itl: '1ms', tokensPerChunk: 4, reasoning: 4, maxTokens: 9, seed: 3 });
const client = new storm.Client({ model: 'mock-model' }); // no url: the same mock
export function info() { return { url, again, client: client.url }; }
export function chat() { return client.chat({ prompt: 'hi' }); }
export function conflict() { storm.mock({ ttft: '1s' }); }
`)
	vu1, err := prog.NewVU(testCtx(t), 1)
	require.NoError(t, err)
	vu2, err := prog.NewVU(testCtx(t), 2)
	require.NoError(t, err)

	i1, i2 := obj(t, call(t, vu1, "info")), obj(t, call(t, vu2, "info"))
	url := i1["url"].(string)
	assert.True(t, strings.HasPrefix(url, "http://127.0.0.1:") && strings.HasSuffix(url, "/v1"), url)
	assert.Equal(t, url, i1["again"], "identical options: the same mock")
	assert.Equal(t, url, i1["client"], "a Client without url uses the mock")
	assert.Equal(t, i1, i2, "one mock per run, shared by VUs")

	r := obj(t, call(t, vu2, "chat"))
	require.Equal(t, true, r["ok"], "error: %v", r["error"])
	assert.EqualValues(t, 9, r["completion_tokens"], "maxTokens is the default output length")
	assert.NotEmpty(t, r["reasoning"], "reasoning option reached the mock")
	assert.Greater(t, num(t, r["ttfo_ms"]), num(t, r["ttft_ms"]), "answer after reasoning")
	assert.LessOrEqual(t, num(t, r["content_chunks"]), 3.0, "4 tokens per chunk: ceil(9/4) chunks")

	err = callErr(t, vu1, "conflict")
	assert.Contains(t, err.Error(), "already running with different options")

	// Close stops it: the port no longer answers.
	require.NoError(t, e.root.Close())
	resp, err := http.Get(strings.TrimSuffix(url, "/v1") + "/health")
	if err == nil {
		resp.Body.Close()
	}
	assert.Error(t, err, "the mock is stopped by RootModule.Close")
	require.NoError(t, e.root.Close(), "Close is safe twice")
}

func TestImplicitMockPerDialect(t *testing.T) {
	e := newEnv(t)
	vu := e.vu(t, `
import { Client } from 'k6/x/tokenstorm';
const chat = new Client();
const tgi = new Client({ dialect: 'tgi' });
export default function () {
  return [chat.url, tgi.url, chat.chat({ prompt: 'x', max_tokens: 2 }).ok, tgi.complete({ prompt: 'x', max_tokens: 2 }).ok];
}
`)
	out := call(t, vu, "default").([]any)
	assert.True(t, strings.HasSuffix(out[0].(string), "/v1"))
	assert.Equal(t, strings.TrimSuffix(out[0].(string), "/v1"), out[1], "TGI is addressed at the root")
	assert.Equal(t, []any{true, true}, out[2:])
}
