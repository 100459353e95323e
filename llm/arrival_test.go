package llm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A kernel stamp is wall-clock time: bytes received before the request started (a
// server writing to an idle keep-alive connection just as it is reused) or a forward
// step of the wall clock between receive and now would put the response before its
// own request. Times since the start never go below zero.
func TestArrivalSinceNeverBeforeStart(t *testing.T) {
	start := time.Now()
	now := start.Add(3 * time.Millisecond)
	for _, tc := range []struct {
		name string
		last time.Duration // kernel stamp relative to start; 0: none
		want time.Duration
	}{
		{"no stamp", 0, 3 * time.Millisecond},
		{"stamp after start", time.Millisecond, time.Millisecond},
		{"stamp before start", -time.Second, 0},
		{"stamp in the future", time.Hour, 3 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &arrivalConn{}
			if tc.last != 0 {
				c.last.Store(start.Add(tc.last).UnixNano())
			}
			got := c.since(start, now)
			assert.GreaterOrEqual(t, got, time.Duration(0))
			assert.InDelta(t, float64(tc.want), float64(got), float64(time.Microsecond))
		})
	}
	var nilConn *arrivalConn
	assert.Equal(t, 3*time.Millisecond, nilConn.since(start, now))
}
