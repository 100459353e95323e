package gotest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/gotest"
	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/mockllm"
)

// tagSubmetrics select on the winner of every collision in testdata/tags.js; a sample
// whose tags lost or won the wrong way is not counted in them.
var tagSubmetrics = []string{
	"llm_reqs{model:alias,team:scenario,tier:client,who:call,call:yes,scenario:load,group:}",
	"iterations{team:scenario,tier:scenario,scenario:load}",
}

// The script and the Go scenario put the same tags on their samples when tags collide:
// the result's < the scenario's < the client's < the call's, and checks carry the VU's.
func TestTagPrecedenceMatchesScript(t *testing.T) {
	t.Parallel()
	mock := gotest.MockServer(t, mockllm.Config{})
	script := gotest.RunScript(t, "testdata/tags.js", gotest.URL(mock.OpenAIURL()), gotest.NoShrink())
	goRes := gotest.Run(t, gotest.Scenario{
		Name: "load", Iterations: 2, NoShrink: true,
		Tags:       map[string]string{"team": "scenario", "tier": "scenario"},
		Client:     llm.Config{BaseURL: mock.OpenAIURL(), Model: "mock-model"},
		ClientTags: map[string]string{"tier": "client", "model": "alias", "who": "client"},
		Thresholds: map[string][]string{
			tagSubmetrics[0]: {"count==2"},
			tagSubmetrics[1]: {"count==2"},
			"checks{check:ok,team:scenario,tier:scenario,scenario:load}": {"rate==1"},
		},
		Exec: func(ctx context.Context, vu *gotest.VU) error {
			r := vu.Client.Do(ctx, &llm.Request{
				Messages: []llm.Message{{Role: "user", Content: "hello"}}, MaxTokens: 4,
			}, map[string]string{"who": "call", "call": "yes"})
			vu.Check("ok", r.OK())
			return nil
		},
	})
	require.Len(t, mock.Truths(), 4)
	for _, res := range []*gotest.Result{script, goRes} {
		assert.Equal(t, 0, res.ExitCode, res.Output)
		for _, sub := range tagSubmetrics {
			assert.Equal(t, 2.0, res.Counter(sub), sub)
		}
		assert.Equal(t, 1.0, res.Rate("checks{check:ok,team:scenario,tier:scenario,scenario:load}"))
	}
	assert.Equal(t, outcomes(script), outcomes(goRes))
}

// outcomes maps each threshold ("metric expr") to whether it held.
func outcomes(res *gotest.Result) map[string]bool {
	m := make(map[string]bool, len(res.Thresholds))
	for _, th := range res.Thresholds {
		m[th.Metric+" "+th.Expr] = th.OK
	}
	return m
}
