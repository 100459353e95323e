package xk6ext_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

// TestStopMidStream: when the iteration's context ends while streams are open, the
// requests return, nothing is emitted for them (they measured the stop, not the
// server), and no goroutine is left behind (goleak in TestMain).
func TestStopMidStream(t *testing.T) {
	e := newEnv(t)
	e.startMock(t, mockllm.Config{})
	vu := e.vu(t, `
import { Client } from 'k6/x/tokenstorm';
const client = new Client({ url: __ENV.MOCK_URL });
const stalled = { prompt: 'x', headers: { 'X-Mock-Fault': 'stall_first' } };
export async function async() { await Promise.all([client.chatAsync(stalled), client.chatAsync(stalled)]); }
export function sync() { client.chat(stalled); }
`)
	for _, fn := range []string{"sync", "async"} {
		t.Run(fn, func(t *testing.T) {
			// The deadline only ends a stream that would otherwise never end; what is
			// asserted does not depend on when it fires.
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			_, _ = vu.Call(ctx, fn)
			if fn == "async" {
				// Close joins the request goroutines, so anything they emit is in by now.
				require.NoError(t, e.root.Close())
			}
			assert.Empty(t, e.sink.named("llm_reqs"), "an interrupted request is not a measurement")
		})
	}
}

// TestClientPerIteration: Clients built inside the default function, many with
// distinct options, all work; the VU keeps a bounded set of llm clients for reuse and
// closes the rest at iteration end.
func TestClientPerIteration(t *testing.T) {
	e := newEnv(t)
	srv := e.startMock(t, mockllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	vu := e.vu(t, `
import { Client } from 'k6/x/tokenstorm';
export default function () {
  let ok = 0;
  for (let i = 0; i < 40; i++) {
    const c = new Client({ url: __ENV.MOCK_URL, headers: { 'X-Trace': 'n' + i } });
    if (c.chat({ prompt: 'x', max_tokens: 1 }).ok) ok++;
  }
  return ok;
}
`)
	for range 2 {
		assert.EqualValues(t, 40, call(t, vu, "default"))
	}
	require.Len(t, srv.Truths(), 80)
}
