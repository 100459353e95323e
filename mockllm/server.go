package mockllm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the mock LLM server: an http.Handler, and optionally its own listener
// (Start). All methods are safe for concurrent use.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	sched   scheduler
	metrics *metrics
	truth   *truthStore // nil unless cfg.RecordTruth
	nonce   string      // keeps response ids unique across servers
	reqs    atomic.Uint64

	closing   chan struct{}
	closeOnce sync.Once
	closeErr  error

	// Set by Start only.
	srv *http.Server
	url string
	wg  sync.WaitGroup
}

var _ http.Handler = (*Server)(nil)

// New returns a Server with cfg (zero fields take their defaults). Serve it with any
// http.Server or httptest.Server, or use Start. Call Close when done so that
// handlers blocked in a stall or a queue return.
func New(cfg Config) *Server {
	cfg = cfg.normalize()
	var nb [4]byte
	_, _ = rand.Read(nb[:])
	s := &Server{
		cfg:     cfg,
		mux:     http.NewServeMux(),
		sched:   scheduler{max: cfg.MaxNumSeqs},
		metrics: newMetrics(),
		nonce:   hex.EncodeToString(nb[:]),
		closing: make(chan struct{}),
	}
	if cfg.RecordTruth {
		s.truth = newTruthStore(cfg.TruthLimit)
	}
	gen := func(d dialect, stream bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, d, stream) }
	}
	s.mux.HandleFunc("POST /v1/chat/completions", gen(dChat, false))
	s.mux.HandleFunc("POST /v1/completions", gen(dCompletions, false))
	s.mux.HandleFunc("POST /v1/messages", gen(dAnthropic, false))
	s.mux.HandleFunc("POST /generate_stream", gen(dTGI, true))
	s.mux.HandleFunc("POST /generate", gen(dTGI, false))
	s.mux.HandleFunc("POST /api/chat", gen(dOllama, false))
	s.mux.HandleFunc("GET /v1/models", s.serveModels)
	s.mux.HandleFunc("GET /health", s.serveHealth)
	s.mux.HandleFunc("GET /metrics", s.serveMetrics)
	return s
}

// Start listens on addr ("" means 127.0.0.1:0, a free loopback port) and serves s in
// the background until ctx is done or Close is called.
func Start(ctx context.Context, addr string, cfg Config) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	s := New(cfg)
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(ln) // returns ErrServerClosed after shutdown
	}()
	go func() {
		defer s.wg.Done()
		select {
		case <-ctx.Done():
			s.shutdown()
		case <-s.closing:
		}
	}()
	return s, nil
}

// URL returns the server root, e.g. "http://127.0.0.1:41234" ("" for a Server made by
// New). OpenAI-compatible and Anthropic clients use URL()+"/v1"; TGI and Ollama
// clients use the root.
func (s *Server) URL() string { return s.url }

// Close stops the server: blocked handlers return, the listener closes, and, for a
// started Server, Close waits for its goroutines. Safe to call more than once.
func (s *Server) Close() error {
	s.shutdown()
	s.wg.Wait()
	return s.closeErr
}

func (s *Server) shutdown() {
	s.closeOnce.Do(func() {
		close(s.closing)
		if s.srv == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			s.closeErr = errors.Join(err, s.srv.Close())
		}
	})
}

// ServeHTTP routes to the dialects' endpoints, /v1/models, /health and /metrics.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Truth returns the ground-truth record of the response with this id (the
// X-Request-Id header), when Config.RecordTruth is set and the record is still kept.
func (s *Server) Truth(id string) (Truth, bool) {
	if s.truth == nil {
		return Truth{}, false
	}
	return s.truth.get(id)
}

// Truths returns the kept ground-truth records, oldest first.
func (s *Server) Truths() []Truth {
	if s.truth == nil {
		return nil
	}
	return s.truth.all()
}

// Running and Waiting return the current number of running and queued requests (the
// values /metrics reports).
func (s *Server) Running() int { return int(s.sched.nRunning.Load()) }

// Waiting returns the number of requests queued for a running slot.
func (s *Server) Waiting() int { return int(s.sched.nWaiting.Load()) }

func (s *Server) serveModels(w http.ResponseWriter, _ *http.Request) {
	b := []byte(`{"object":"list","data":[{"id":`)
	b = appendJSONString(b, s.cfg.Model)
	b = append(b, `,"object":"model","created":0,"owned_by":"tokenstorm","max_model_len":`...)
	b = appendInt(b, MaxOutputTokens)
	b = append(b, `}]}`...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}`))
}
