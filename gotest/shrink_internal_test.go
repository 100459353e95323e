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
