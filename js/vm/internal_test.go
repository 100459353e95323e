package vm

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func TestResolvePath(t *testing.T) {
	tests := []struct {
		dir, spec, want, err string
	}{
		{"/s", "./a.js", "/s/a.js", ""},
		{"/s/sub", "../a.js", "/s/a.js", ""},
		{"/s", "/abs/x.js", "/abs/x.js", ""},
		{"/s", "file:///abs/./x.js", "/abs/x.js", ""},
		{"/s", "file://rel.js", "", "must be absolute"},
		{"/s", "", "", "empty path"},
		{"/s", "./a\x00.js", "", "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := resolvePath(tt.dir, tt.spec)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"./a.js", "../../x", "/abs", "file:///x", "file://x", "", "a\x00b", "./../.."} {
		f.Add("/base/dir", s)
	}
	f.Fuzz(func(t *testing.T, dir, spec string) {
		if !filepath.IsAbs(dir) {
			dir = "/" + dir
		}
		got, err := resolvePath(dir, spec)
		if err != nil {
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("resolvePath(%q, %q) = %q: not absolute and clean", dir, spec, got)
		}
		kind, target := classify(dir, spec, nil)
		if kind == specFile && target != got {
			t.Fatalf("classify and resolvePath disagree: %q vs %q", target, got)
		}
	})
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"k6", "k6/http", "k6/x/tokenstorm", "./a.js", "https://x/y.js", "lodash", "", "k6/metrics"} {
		f.Add(s)
	}
	mods := map[string]ModuleFactory{"k6/x/tokenstorm": func(xk6ext.Host) (Exports, error) { return Exports{}, nil }}
	f.Fuzz(func(t *testing.T, spec string) {
		kind, target := classify("/d", spec, mods)
		switch kind {
		case specCore, specModule:
			if target != spec {
				t.Fatalf("native %q resolved to %q", spec, target)
			}
		case specUnsupported:
			if target == "" {
				t.Fatalf("no explanation for %q", spec)
			}
		}
	})
}

func TestParseStack(t *testing.T) {
	stack, file, line, col := parseStack("Error: x\n\tat helper (/a/b.js:3:9(12))\n\tat /a/c:d.js:10:2(4)\n\tat native\n")
	assert.Equal(t, "/a/b.js", file)
	assert.Equal(t, 3, line)
	assert.Equal(t, 9, col)
	assert.Equal(t, "\tat helper (/a/b.js:3:9)\n\tat <anonymous> (/a/c:d.js:10:2)\n\tat <anonymous> (native)\n", stack)
}

func FuzzParseStack(f *testing.F) {
	f.Add("Error: x\n\tat helper (/a/b.js:3:9(12))\n")
	f.Add("at (:1:1)")
	f.Add("at f (a:b:c)")
	f.Add("\tat x (/p:99999999999:1(2))")
	f.Fuzz(func(t *testing.T, s string) {
		stack, file, line, col := parseStack(s)
		if line < 0 || col < 0 {
			t.Fatalf("negative position %d:%d", line, col)
		}
		if file != "" && !strings.Contains(stack, file) {
			t.Fatalf("position file %q not in stack %q", file, stack)
		}
	})
}

// The per-sample paths (checks, iteration samples, Emit of untagged samples) allocate
// nothing once the VU's tag maps are built.
func TestHotPathsDoNotAllocate(t *testing.T) {
	p := &Program{cfg: Config{Emit: func([]xk6ext.Sample) {}, Tags: map[string]string{"a": "b"}}, reg: newLocalRegistry()}
	require.NoError(t, p.declareBuiltins())
	vu := &VU{p: p}
	vu.scenario = &executor.Scenario{Name: "s"}
	vu.publishTags()
	now := time.Now()
	m := &xk6ext.Metric{Name: "m"}

	vu.emitCheck("c", true, now, nil) // builds the cached tag map
	assert.Zero(t, testing.AllocsPerRun(100, func() { vu.emitCheck("c", true, now, nil) }), "check")
	vu.groupPath = "::g"
	vu.publishTags()
	vu.emitCheck("c", true, now, nil)
	vu.groupPath = ""
	vu.publishTags()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		vu.groupPath = "::g"
		vu.publishTags()
		vu.emitCheck("c", true, now, nil)
		vu.groupPath = ""
		vu.publishTags()
	}), "check inside a group, entering and leaving it")
	assert.Zero(t, testing.AllocsPerRun(100, func() { vu.emitIteration(now, now) }), "iteration samples")
	samples := make([]xk6ext.Sample, 1)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		samples[0] = xk6ext.Sample{Metric: m, Time: now, Value: 1}
		vu.Emit(samples...)
	}), "untagged Emit")
	tags := map[string]string{"x": "y"}
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		samples[0] = xk6ext.Sample{Metric: m, Time: now, Value: 1, Tags: tags}
		vu.Emit(samples...)
	}), "tagged Emit merges into the sample's own map")
	assert.Equal(t, map[string]string{"x": "y", "a": "b", "scenario": "s", "group": ""}, tags)
}

func TestEventLoopGenerations(t *testing.T) {
	l := newEventLoop()
	enq := l.register()
	l.reset()
	assert.NotPanics(t, func() { enq(func() error { t.Fatal("stale callback ran"); return nil }) })
	assert.True(t, l.idle())
	require.NoError(t, l.run(context.Background()))

	ran := 0
	e1, e2 := l.register(), l.register()
	go e1(func() error { ran++; return nil })
	go e2(func() error { ran++; return nil })
	require.NoError(t, l.run(context.Background()))
	assert.Equal(t, 2, ran)
	assert.True(t, l.idle())

	ctx, cancel := context.WithCancel(context.Background())
	_ = l.register()
	cancel()
	assert.ErrorIs(t, l.run(ctx), context.Canceled)
}
