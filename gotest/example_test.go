package gotest_test

// Living documentation: the shortest useful tests, run with the rest of the suite.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tokenstorm/tokenstorm/gotest"
	"github.com/tokenstorm/tokenstorm/mockllm"
)

// A k6-style script as a Go test: the same file `tokenstorm run` takes, pointed at a mock
// started for this test. Crossed thresholds fail the test by themselves; the Result
// answers further questions.
func TestExampleRunScript(t *testing.T) {
	t.Parallel()
	mock := gotest.MockServer(t, mockllm.Config{TTFT: 20 * time.Millisecond})
	res := gotest.RunScript(t, "testdata/slo.js", gotest.URL(mock.OpenAIURL()), gotest.Iterations(4))
	assert.Less(t, res.Trend("llm_ttft").P(95), 1000.0)
	assert.Zero(t, res.Rate("llm_req_failed"))
}
