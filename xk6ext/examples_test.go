package xk6ext_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExamplesRun runs one iteration of every example script's default function on
// each of two VUs, against the embedded mock (LLM_URL is unset), and requires every request to
// succeed and every check to pass. The runner's own tests run them with their options.
func TestExamplesRun(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("..", "examples", "*.js"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(scripts), 7)
	for _, path := range scripts {
		t.Run(filepath.Base(path), func(t *testing.T) {
			e := newEnv(t)
			abs, err := filepath.Abs(path)
			require.NoError(t, err)
			prog := e.compileFile(t, abs)
			for id := int64(1); id <= 2; id++ {
				vu, err := prog.NewVU(testCtx(t), id)
				require.NoError(t, err)
				raw, err := vu.Options()
				require.NoError(t, err)
				var opts map[string]any
				require.NoError(t, json.Unmarshal(raw, &opts), "options are plain JSON")
				assert.Contains(t, opts, "thresholds", "every example shows thresholds")
				_, err = vu.Call(testCtx(t), "default")
				require.NoError(t, err)
			}
			reqs := e.sink.named("llm_reqs")
			assert.NotEmpty(t, reqs)
			for _, s := range e.sink.named("llm_req_failed") {
				assert.Zero(t, s.Value, "failed request: %v", s.Tags)
			}
			for _, s := range e.sink.named("checks") {
				assert.Equal(t, 1.0, s.Value, "check failed: %v", s.Tags)
			}
		})
	}
}
