package mockllm

import (
	"sync"
	"time"
)

// Truth is the server's ground-truth record of one request, kept when
// Config.RecordTruth is set, for checking client measurements.
//
// Times carry Go's monotonic reading, so differences between them (and with times
// taken by a client in the same process) are immune to wall-clock steps.
type Truth struct {
	ID      string // response id, also in the X-Request-Id response header
	Dialect string // "openai-chat", "openai-completions", "anthropic", "tgi", "ollama"
	Model   string // as echoed in the response
	Stream  bool
	Status  int // HTTP status sent (0 when the connection was reset before any response)

	Received time.Time // the handler started (before the body was read)
	Admitted time.Time // a running slot was granted (after any queueing); zero if never
	Done     time.Time // the handler returned

	// Chunks holds the emission time of every streamed chunk that carries generated
	// tokens (reasoning and answer, not role-only, finish or usage chunks), taken right
	// after the Write and Flush of that chunk returned: the bytes were handed to the
	// kernel, so a client reading them stamps a later time.
	Chunks []time.Time
	// ReasoningChunks is how many of the first Chunks carry reasoning; the next one, if
	// any, is the first chunk of the answer (TTFO).
	ReasoningChunks int
	// Delays holds the planned delay before each chunk (index 0: prefill from
	// admission; then the gap from the previous chunk), jitter included. Non-streamed
	// requests get the same schedule, without Chunks.
	Delays []time.Duration

	PromptTokens     int // the mock's estimate (see the package doc)
	CompletionTokens int // tokens actually sent (reasoning included)
	ReasoningTokens  int
	FinishReason     string // "length" or "stop"; "" when no finish was sent
	Fault            Fault
	// Aborted is set when the response ended early because the client went away or
	// the server closed.
	Aborted bool
}

// truthStore keeps the last limit records, indexed by id.
type truthStore struct {
	mu    sync.Mutex
	limit int
	ring  []Truth
	next  int // next slot to overwrite once the ring is full
	byID  map[string]int
}

func newTruthStore(limit int) *truthStore {
	return &truthStore{limit: limit, byID: make(map[string]int)}
}

func (t *truthStore) add(tr Truth) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.ring) < t.limit {
		t.byID[tr.ID] = len(t.ring)
		t.ring = append(t.ring, tr)
		return
	}
	old := t.ring[t.next].ID
	if i, ok := t.byID[old]; ok && i == t.next {
		delete(t.byID, old)
	}
	t.ring[t.next] = tr
	t.byID[tr.ID] = t.next
	t.next = (t.next + 1) % t.limit
}

func (t *truthStore) get(id string) (Truth, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.byID[id]
	if !ok {
		return Truth{}, false
	}
	return t.ring[i], true
}

// all returns the records oldest first.
func (t *truthStore) all() []Truth {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Truth, 0, len(t.ring))
	if len(t.ring) < t.limit {
		return append(out, t.ring...)
	}
	out = append(out, t.ring[t.next:]...)
	return append(out, t.ring[:t.next]...)
}
