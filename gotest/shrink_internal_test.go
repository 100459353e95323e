package gotest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestShrink(t *testing.T) {
	assert.Equal(t, time.Second, shrinkDuration(10*time.Second))
	assert.Equal(t, 100*time.Millisecond, shrinkDuration(500*time.Millisecond), "never below 100ms")
	assert.Equal(t, 50*time.Millisecond, shrinkDuration(50*time.Millisecond), "never above what was asked")
	assert.Equal(t, int64(10), shrinkCount(100))
	assert.Equal(t, int64(1), shrinkCount(5), "at least one iteration")

	s := Scenario{VUs: 4, Iterations: 12, Duration: 10 * time.Second}
	s.shrinkBy(true)
	assert.Equal(t, int64(4), s.Iterations, "every VU keeps an iteration")
	assert.Equal(t, time.Second, s.Duration)

	s = Scenario{VUs: 4, Iterations: 12, NoShrink: true}
	s.shrinkBy(true)
	assert.Equal(t, int64(12), s.Iterations)
}

// RunScript's overrides shrink as documented: Duration always, Iterations only beside
// VUs (the script's own vus are unknown), never with NoShrink or without -short.
func TestConfigShrink(t *testing.T) {
	build := func(opts ...Option) *config {
		var c config
		for _, o := range opts {
			o(&c)
		}
		return &c
	}
	for _, tc := range []struct {
		name     string
		opts     []Option
		short    bool
		wantDur  *time.Duration
		wantIter *int64
	}{
		{"duration", []Option{Duration(5 * time.Second)}, true, ptr(500 * time.Millisecond), nil},
		{"not short", []Option{Duration(5 * time.Second), Iterations(100), VUs(2)}, false, ptr(5 * time.Second), ptr(int64(100))},
		{"iterations beside vus", []Option{Iterations(100), VUs(2)}, true, nil, ptr(int64(10))},
		{"one per vu", []Option{Iterations(12), VUs(4)}, true, nil, ptr(int64(4))},
		{"iterations alone", []Option{Iterations(100)}, true, nil, ptr(int64(100))},
		{"no shrink", []Option{Duration(5 * time.Second), Iterations(100), VUs(2), NoShrink()}, true, ptr(5 * time.Second), ptr(int64(100))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := build(tc.opts...)
			c.shrinkBy(tc.short)
			assert.Equal(t, tc.wantDur, c.duration)
			assert.Equal(t, tc.wantIter, c.iterations)
		})
	}
}

func ptr[T any](v T) *T { return &v }
