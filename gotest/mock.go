package gotest

import (
	"context"
	"testing"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

// Mock is an embedded mock LLM server running for one test.
type Mock struct {
	// Server is the running mock: its Truth records give the server-side emission time
	// of every chunk (cfg.RecordTruth is always on), Running and Waiting its queue.
	*mockllm.Server
}

// OpenAIURL is the base URL OpenAI-compatible clients take (URL()+"/v1").
func (m *Mock) OpenAIURL() string { return m.URL() + "/v1" }

// MockServer starts the embedded mock on 127.0.0.1 for the lifetime of t, recording
// ground truth, and stops it in t.Cleanup.
func MockServer(t testing.TB, cfg mockllm.Config) *Mock {
	t.Helper()
	cfg.RecordTruth = true
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := mockllm.Start(ctx, "127.0.0.1:0", cfg)
	if err != nil {
		cancel()
		t.Fatalf("gotest: starting the mock LLM: %v", err)
		return nil
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("gotest: closing the mock LLM: %v", err)
		}
		cancel()
	})
	return &Mock{Server: srv}
}
