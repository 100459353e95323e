package xk6ext_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/mockllm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

const threeRequests = `
import { Client } from 'k6/x/tokenstorm';
const reuse = new Client({ url: __ENV.URL });
const fresh = new Client({ url: __ENV.URL, connectionReuse: false });
export function run(which) {
  const c = which === 'fresh' ? fresh : reuse;
  const out = [];
  for (let i = 0; i < 3; i++) { const r = c.chat({ prompt: 'x', max_tokens: 2 }); out.push(r.ok || r.error); }
  return out;
}
`

// countingMock serves the mock over plain HTTP (or TLS) and counts new connections.
func countingMock(t *testing.T, tlsOn bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(mockllm.New(mockllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	if tlsOn {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &conns
}

func TestConnectionReuse(t *testing.T) {
	cases := []struct {
		name      string
		opts      []xk6ext.Option
		which     string
		wantConns int64
	}{
		{"reused by default", nil, "reuse", 1},
		{"connectionReuse false", nil, "fresh", 3},
		{"run-wide noConnectionReuse", []xk6ext.Option{xk6ext.WithNoConnectionReuse()}, "reuse", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, conns := countingMock(t, false)
			e := newEnv(t, c.opts...)
			e.vars["URL"] = srv.URL + "/v1"
			vu := e.vu(t, threeRequests)
			assert.Equal(t, []any{true, true, true}, call(t, vu, "run", c.which))
			assert.Equal(t, c.wantConns, conns.Load())
		})
	}
}

func TestInsecureSkipTLSVerify(t *testing.T) {
	srv, _ := countingMock(t, true)
	for _, insecure := range []bool{false, true} {
		var opts []xk6ext.Option
		if insecure {
			opts = append(opts, xk6ext.WithInsecureSkipTLSVerify())
		}
		e := newEnv(t, opts...)
		e.vars["URL"] = srv.URL + "/v1"
		out := call(t, e.vu(t, threeRequests), "run", "reuse").([]any)
		if insecure {
			assert.Equal(t, []any{true, true, true}, out)
		} else {
			require.IsType(t, "", out[0], "a self-signed certificate fails without the option")
			assert.Contains(t, out[0], "certificate")
		}
	}
}

// TestClientInIterationReusesConnections: k6 VUs keep their connections across
// iterations, so a Client built inside the default function must not dial every time.
func TestClientInIterationReusesConnections(t *testing.T) {
	srv, conns := countingMock(t, false)
	e := newEnv(t)
	e.vars["URL"] = srv.URL + "/v1"
	vu := e.vu(t, `
import { Client } from 'k6/x/tokenstorm';
export default function () { return new Client({ url: __ENV.URL }).chat({ prompt: 'x', max_tokens: 2 }).ok; }
`)
	for range 3 {
		assert.Equal(t, true, call(t, vu, "default"))
	}
	assert.Equal(t, int64(1), conns.Load())
}
