package tokens

import (
	"math"
	"time"
)

// CounterSink is k6's Counter aggregation: the sum of the values added ("count" in k6's
// summary) and its rate over the test duration. The zero value is ready to use. Not
// safe for concurrent use: one per worker, Merge after the join.
type CounterSink struct {
	n      int64
	sum, c float64 // Neumaier compensated sum
}

// Add adds v.
func (s *CounterSink) Add(v float64) {
	s.n++
	s.sum, s.c = neumaier(s.sum, s.c, v)
}

// Sum is the total of the values added: what k6 prints as a counter's "count".
func (s *CounterSink) Sum() float64 { return s.sum + s.c }

// Count is how many values were added (not a k6 statistic; useful for averages).
func (s *CounterSink) Count() int64 { return s.n }

// Rate is k6's counter "rate": Sum per second of elapsed test time, 0 when elapsed ≤ 0.
func (s *CounterSink) Rate(elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return s.Sum() / elapsed.Seconds()
}

// Merge adds everything o recorded.
func (s *CounterSink) Merge(o *CounterSink) {
	if o == nil {
		return
	}
	s.n += o.n
	s.sum, s.c = neumaier(s.sum, s.c, o.sum)
	s.c += o.c
}

// Reset empties the sink.
func (s *CounterSink) Reset() { *s = CounterSink{} }

// neumaier adds v to the compensated pair (sum, c).
func neumaier(sum, c, v float64) (float64, float64) {
	t := sum + v
	if math.Abs(sum) >= math.Abs(v) {
		c += (sum - t) + v
	} else {
		c += (v - t) + sum
	}
	return t, c
}

// GaugeSink is k6's Gauge aggregation: the last value, plus the min and max seen.
//
// "Last" across workers needs an order that does not depend on which sink is merged
// into which, so every value carries a stamp: Add stamps it with a process-wide
// monotonic clock, AddAt takes the caller's stamp. Merge keeps the value with the
// larger stamp; on equal stamps the larger value wins, so Merge is commutative and
// associative. The zero value is ready to use. Not safe for concurrent use.
type GaugeSink struct {
	n        int64
	v        float64
	stampI   int64
	min, max float64
}

// monoEpoch anchors Add's stamps; time.Since on it reads the monotonic clock.
var monoEpoch = time.Now()

// Add sets the gauge to v, stamped now (monotonic).
func (s *GaugeSink) Add(v float64) { s.AddAt(v, int64(time.Since(monoEpoch))) }

// AddAt sets the gauge to v with the caller's stamp (any monotonic order, for example
// nanoseconds since the test started). A value with an older stamp than the current one
// still counts for Min and Max but does not replace the value.
func (s *GaugeSink) AddAt(v float64, stamp int64) {
	if s.n == 0 {
		s.min, s.max = v, v
		s.v, s.stampI = v, stamp
	} else {
		s.min = min(s.min, v)
		s.max = max(s.max, v)
		if later(stamp, v, s.stampI, s.v) {
			s.v, s.stampI = v, stamp
		}
	}
	s.n++
}

// later reports whether (stamp a, value va) comes after (b, vb) in the gauge's order.
func later(a int64, va float64, b int64, vb float64) bool {
	if a != b {
		return a > b
	}
	return va >= vb
}

// Value is the last value (0 when nothing was added).
func (s *GaugeSink) Value() float64 { return s.v }

// Min is the smallest value seen, 0 when empty.
func (s *GaugeSink) Min() float64 { return s.min }

// Max is the largest value seen, 0 when empty.
func (s *GaugeSink) Max() float64 { return s.max }

// Count is how many values were added.
func (s *GaugeSink) Count() int64 { return s.n }

// Stamp is the stamp of the current value.
func (s *GaugeSink) Stamp() int64 { return s.stampI }

// Merge folds o in: the later-stamped value wins (see GaugeSink).
func (s *GaugeSink) Merge(o *GaugeSink) {
	if o == nil || o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = *o
		return
	}
	s.min = min(s.min, o.min)
	s.max = max(s.max, o.max)
	if later(o.stampI, o.v, s.stampI, s.v) {
		s.v, s.stampI = o.v, o.stampI
	}
	s.n += o.n
}

// Reset empties the sink.
func (s *GaugeSink) Reset() { *s = GaugeSink{} }

// RateSink is k6's Rate aggregation: the fraction of non-zero values. The zero value is
// ready to use. Not safe for concurrent use.
type RateSink struct {
	trues, total int64
}

// Add records v; any non-zero value (NaN included, as in k6) counts as true.
func (s *RateSink) Add(v float64) { s.AddBool(v != 0) }

// AddBool records one boolean.
func (s *RateSink) AddBool(b bool) {
	if b {
		s.trues++
	}
	s.total++
}

// Trues is how many true values were recorded (k6's "passes").
func (s *RateSink) Trues() int64 { return s.trues }

// Total is how many values were recorded.
func (s *RateSink) Total() int64 { return s.total }

// Rate is Trues/Total, 0 when empty.
func (s *RateSink) Rate() float64 {
	if s.total == 0 {
		return 0
	}
	return float64(s.trues) / float64(s.total)
}

// Merge adds everything o recorded.
func (s *RateSink) Merge(o *RateSink) {
	if o == nil {
		return
	}
	s.trues += o.trues
	s.total += o.total
}

// Reset empties the sink.
func (s *RateSink) Reset() { *s = RateSink{} }
