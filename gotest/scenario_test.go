package gotest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/gotest"
	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/mockllm"
	"github.com/tokenstorm/tokenstorm/tokens"
)

func chatOnce(ctx context.Context, vu *gotest.VU) error {
	r := vu.Client.Chat(ctx, 8, llm.Message{Role: "user", Content: "hello"})
	vu.Check("ok", r.OK())
	return nil
}

func TestRunScenarioIterations(t *testing.T) {
	t.Parallel()
	mock := gotest.MockServer(t, mockllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
	res := gotest.Run(t, gotest.Scenario{
		VUs: 3, Iterations: 9, NoShrink: true,
		Client: llm.Config{BaseURL: mock.OpenAIURL()},
		SLO:    tokens.SLO{TTFT: time.Second},
		Thresholds: map[string][]string{
			"llm_req_failed":               {"rate==0"},
			"iterations{scenario:default}": {"count==9"},
		},
		Exec: chatOnce,
	})
	require.Equal(t, 0, res.ExitCode, res.Output)
	assert.Equal(t, 9.0, res.Counter("llm_reqs"))
	assert.Equal(t, 1.0, res.Rate("llm_goodput"))
	assert.Equal(t, 3.0, res.Gauge("vus_max"))
	passes, fails := res.Check("ok")
	assert.Equal(t, int64(9), passes)
	assert.Zero(t, fails)
	assert.Len(t, mock.Truths(), 9)
}

func TestRunScenarioReportsCrossedThreshold(t *testing.T) {
	t.Parallel()
	mock := gotest.MockServer(t, mockllm.Config{TTFT: 30 * time.Millisecond})
	tb := &captureTB{TB: t}
	var res *gotest.Result
	tb.run(func(tb testing.TB) {
		res = gotest.Run(tb, gotest.Scenario{
			Iterations: 2,
			NoShrink:   true,
			Client:     llm.Config{BaseURL: mock.OpenAIURL()},
			Thresholds: map[string][]string{"llm_ttft": {"p(95)<1"}, "llm_reqs": {"count==2"}},
			Exec:       chatOnce,
		})
	})
	require.NotNil(t, res)
	assert.Equal(t, 99, res.ExitCode)
	require.Len(t, tb.errors, 1, "%q", tb.errors)
	assert.Contains(t, tb.errors[0], `llm_ttft "p(95)<1": observed p(95) = `)
	assert.True(t, strings.HasSuffix(tb.errors[0], "ms"), "the observed value is printed as a duration: %q", tb.errors[0])
	// The mock's prefill is 30ms: the observed p(95) cannot be shorter.
	assert.GreaterOrEqual(t, res.Thresholds[indexOf(t, res, "llm_ttft")].Observed, 30.0)
}

func TestRunScenarioArrivalRate(t *testing.T) {
	t.Parallel()
	res := gotest.Run(t, gotest.Scenario{
		Rate: 40, Duration: time.Second, VUs: 4, MaxVUs: 8,
		Exec:     chatOnce, // no BaseURL: the embedded mock
		NoShrink: true,
	})
	started := res.Counter("iterations")
	if res.Has("dropped_iterations") {
		started += res.Counter("dropped_iterations")
	}
	assert.InDelta(t, 40, started, 1)
	assert.True(t, res.Has("schedule_lag"))
}

func TestRunScenarioExecErrorFailsIterationOnly(t *testing.T) {
	t.Parallel()
	res := gotest.Run(t, gotest.Scenario{
		Iterations: 4,
		NoShrink:   true,
		Exec: func(ctx context.Context, vu *gotest.VU) error {
			if vu.Iteration == 0 && vu.ID == 1 {
				return errors.New("boom")
			}
			return chatOnce(ctx, vu)
		},
	})
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, 4.0, res.Counter("iterations"), "a failed iteration still counts, as in k6")
	assert.Equal(t, 3.0, res.Counter("llm_reqs"))
	assert.Contains(t, res.Output, "boom", "the error is logged")
}

func TestRunScenarioInvalid(t *testing.T) {
	t.Parallel()
	for name, sc := range map[string]gotest.Scenario{
		"no exec":       {Iterations: 1},
		"no load model": {Exec: chatOnce},
		"bad threshold": {Iterations: 1, Exec: chatOnce, Thresholds: map[string][]string{"llm_ttft": {"p(95)<<1"}}},
	} {
		t.Run(name, func(t *testing.T) {
			tb := &captureTB{TB: t}
			tb.run(func(tb testing.TB) { gotest.Run(tb, sc) })
			assert.NotEmpty(t, tb.fatal)
		})
	}
}
