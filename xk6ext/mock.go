package xk6ext

import (
	"errors"
	"fmt"
	"time"

	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

// mockState is the run's embedded mock: started at most once, by storm.mock(options) or
// by the first Client without a url.
type mockState struct {
	srv *mockllm.Server
	cfg string // the options it was started with, for comparing later calls
}

// ErrMockConflict is returned when storm.mock is called with options other than those
// the running mock was started with: one run has one mock.
var ErrMockConflict = errors.New("the embedded mock is already running with different options (call storm.mock once, before any Client without url, or with identical options)")

// startMock returns the root URL of the run's mock, starting it with cfg on first use.
// explicit says the script asked for these options (storm.mock); an implicit start (a
// Client without url) accepts whatever mock is running.
func (r *RootModule) startMock(cfg mockllm.Config, explicit bool) (string, error) {
	key := fmt.Sprintf("%+v", cfg)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", ErrClosed
	}
	if r.mock.srv != nil {
		if explicit && key != r.mock.cfg {
			return "", ErrMockConflict
		}
		return r.mock.srv.URL(), nil
	}
	srv, err := mockllm.Start(r.ctx, "127.0.0.1:0", cfg)
	if err != nil {
		return "", fmt.Errorf("tokenstorm: starting the embedded mock: %w", err)
	}
	r.mock = mockState{srv: srv, cfg: key}
	return srv.URL(), nil
}

// defaultMockConfig is what a Client without url gets when no storm.mock call came
// first: mockllm's own defaults.
func defaultMockConfig() mockllm.Config { return mockllm.Config{} }

func (r *RootModule) closeMock() error {
	r.mu.Lock()
	srv := r.mock.srv
	r.mock.srv = nil
	r.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

func (m *ModuleInstance) addMock(o *sobek.Object) { m.set(o, "mock", m.jsMock) }

// jsMock implements storm.mock(options): the embedded mock's OpenAI base URL.
func (m *ModuleInstance) jsMock(call sobek.FunctionCall) sobek.Value {
	cfg, err := m.mockConfig(call.Argument(0))
	if err != nil {
		m.throw(err)
	}
	u, err := m.root.startMock(cfg, true)
	if err != nil {
		m.throw(err)
	}
	return m.rt.ToValue(u + "/v1")
}

func (m *ModuleInstance) mockConfig(v sobek.Value) (mockllm.Config, error) {
	var cfg mockllm.Config
	or, err := newOptReader(m.rt, "mock", "", v)
	if err != nil {
		return cfg, err
	}
	if cfg.Model, err = or.str("model", ""); err != nil {
		return cfg, err
	}
	durs := []struct {
		key string
		dst *time.Duration
	}{{"ttft", &cfg.TTFT}, {"prefillPerToken", &cfg.PrefillPerToken}, {"itl", &cfg.ITL}, {"itlPerRunning", &cfg.ITLPerRunning}}
	for _, d := range durs {
		v, set, err := or.duration(d.key)
		if err != nil {
			return cfg, err
		}
		if set && v == 0 {
			v = -1 // mockllm reads 0 as "default" and a negative value as "no delay"
		}
		*d.dst = v
	}
	n, _, err := or.integer("maxNumSeqs", 0, 0, 1<<31-1)
	if err != nil {
		return cfg, err
	}
	cfg.MaxNumSeqs = int(n)
	if cfg.Jitter, _, err = or.number("jitter", 0); err != nil {
		return cfg, err
	}
	if cfg.Jitter < 0 || cfg.Jitter >= 1 {
		return cfg, or.errf("jitter", "must be in [0, 1), got %v", cfg.Jitter)
	}
	if cfg.Seed, _, err = or.integer("seed", 0, -1<<53, 1<<53); err != nil {
		return cfg, err
	}
	if n, _, err = or.integer("tokensPerChunk", 0, 0, 1<<20); err != nil {
		return cfg, err
	}
	cfg.TokensPerChunk = int(n)
	if cfg.FaultRate, _, err = or.number("faultRate", 0); err != nil {
		return cfg, err
	}
	if cfg.FaultRate < 0 || cfg.FaultRate > 1 {
		return cfg, or.errf("faultRate", "must be in [0, 1], got %v", cfg.FaultRate)
	}
	if fv := or.get("faults"); fv != nil {
		var names []string
		if err := m.rt.ExportTo(fv, &names); err != nil {
			return cfg, or.errf("faults", "must be an array of fault names")
		}
		for i, f := range names {
			if !mockllm.Fault(f).Valid() || f == "" {
				return cfg, or.errf(fmt.Sprintf("faults[%d]", i), "unknown fault %q", f)
			}
			cfg.Faults = append(cfg.Faults, mockllm.Fault(f))
		}
	}
	if n, _, err = or.integer("reasoning", 0, 0, 1<<20); err != nil {
		return cfg, err
	}
	cfg.Reasoning = int(n)
	if n, _, err = or.integer("maxTokens", 0, 0, 1<<20); err != nil {
		return cfg, err
	}
	cfg.MaxTokens = int(n)
	return cfg, or.unknown()
}
