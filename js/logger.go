package js

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// logHandler writes records the way k6 prints them on a terminal:
//
//	INFO[0003] the message                                   source=console
//
// with the seconds since the run started in brackets, so console output and iteration
// errors read like k6's. It is goroutine-safe: VUs log concurrently.
type logHandler struct {
	out   *terminal
	level slog.Level
	attrs []slog.Attr
}

// terminal serialises everything the run writes to stderr (log lines and the progress
// line), so the two never interleave mid-line.
type terminal struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	// progress is the progress line currently drawn (without "\r"), empty when none.
	progress string
}

// writeLine writes s (ending in "\n") above the progress line: the line is cleared,
// s written, and the progress line redrawn.
func (t *terminal) writeLine(s string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.progress != "" {
		_, _ = io.WriteString(t.w, "\r\x1b[K")
	}
	_, err := io.WriteString(t.w, s)
	if t.progress != "" {
		_, _ = io.WriteString(t.w, "\r"+t.progress)
	}
	return err
}

// setProgress redraws the progress line; "" clears it for good.
func (t *terminal) setProgress(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s == "" {
		if t.progress != "" {
			_, _ = io.WriteString(t.w, "\r\x1b[K")
		}
	} else {
		_, _ = io.WriteString(t.w, "\r\x1b[K"+s)
	}
	t.progress = s
}

func newLogHandler(out *terminal, level slog.Level) *logHandler {
	return &logHandler{out: out, level: level}
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	lvl := "INFO"
	switch {
	case r.Level >= slog.LevelError:
		lvl = "ERRO"
	case r.Level >= slog.LevelWarn:
		lvl = "WARN"
	case r.Level < slog.LevelInfo:
		lvl = "DEBU"
	}
	secs := int(time.Since(h.out.start) / time.Second)
	fmt.Fprintf(&b, "%s[%04d] %-40s", lvl, secs, r.Message)
	write := func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \t\"=") {
			v = fmt.Sprintf("%q", v)
		}
		b.WriteString(" ")
		b.WriteString(a.Key)
		b.WriteString("=")
		b.WriteString(v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteString("\n")
	return h.out.writeLine(b.String())
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

// WithGroup flattens groups: k6's log lines have no nesting.
func (h *logHandler) WithGroup(string) slog.Handler { return h }
