package tokens

import "math"

// The sketch is a log-linear histogram keyed by the top bits of the IEEE-754
// representation: the 11 exponent bits and the top sketchSubBits mantissa bits. For
// positive finite doubles that key is monotonic in the value, each binary octave is cut
// into 2^sketchSubBits equal buckets, and a bucket's upper bound is at most
// 1+2^-sketchSubBits times its lower bound. Reporting the bucket midpoint therefore
// errs by at most 2^-(sketchSubBits+1) ≈ 0.049% of the value (for normal doubles,
// |x| ≥ 2.2e-308).
//
// Keying by bits instead of by a logarithm (DDSketch) costs ~1.4× more buckets per
// decade but needs no math.Log on the hot path and, more importantly, is exact integer
// arithmetic: the same value lands in the same bucket on every platform, which is what
// makes a merge of per-worker sketches identical to a single sketch.
const (
	sketchSubBits = 10
	sketchShift   = 52 - sketchSubBits

	// sketchMaxBins bounds the key span kept per sign: 2^15 buckets are 32 binary
	// octaves, about 9.6 decades (for example 1 µs to 1 hour in milliseconds).
	// Values more than that far below the largest magnitude seen are counted in the
	// lowest kept bucket (their reported value is then clamped by Min/Max): the bucket
	// floor depends only on the largest key ever seen, so collapsing is independent of
	// insertion order and merge still equals record-all.
	sketchMaxBins = 1 << 15

	// sketchInitBins is the first allocation of a store; it doubles as needed up to
	// 2·sketchMaxBins (the slack keeps re-centring amortised O(1)).
	sketchInitBins = 256
)

// sketchKey maps a positive finite magnitude to its bucket key.
func sketchKey(abs float64) int { return int(math.Float64bits(abs) >> sketchShift) }

// sketchValue is the representative (midpoint) of bucket key.
func sketchValue(key int) float64 {
	lo := math.Float64frombits(uint64(key) << sketchShift)
	hi := math.Float64frombits(uint64(key+1) << sketchShift)
	if math.IsInf(hi, 0) {
		return lo
	}
	return lo + (hi-lo)/2
}

// binStore counts keys of one sign in a dense slice covering [off, off+len(bins)).
// Counts live only at keys in [minKey, maxKey], and minKey ≥ maxKey-sketchMaxBins+1.
type binStore struct {
	bins           []uint64
	off            int
	minKey, maxKey int
	n              uint64
}

func (s *binStore) reset() {
	clear(s.bins)
	s.n = 0
}

func (s *binStore) add(key int, c uint64) {
	if c == 0 {
		return
	}
	if s.n == 0 {
		if len(s.bins) == 0 {
			s.bins = make([]uint64, sketchInitBins)
		}
		s.off = key - len(s.bins)/2
		s.minKey, s.maxKey = key, key
		s.bins[key-s.off] += c
		s.n = c
		return
	}
	if key > s.maxKey {
		s.maxKey = key
		if floor := key - sketchMaxBins + 1; s.minKey < floor {
			s.collapseBelow(floor)
		}
	}
	if floor := s.maxKey - sketchMaxBins + 1; key < floor {
		key = floor
	}
	if key < s.minKey {
		s.minKey = key
	}
	if s.minKey < s.off || s.maxKey >= s.off+len(s.bins) {
		s.regrow(key == s.maxKey)
	}
	s.bins[key-s.off] += c
	s.n += c
}

// collapseBelow moves every count at a key below floor into floor. Called before the
// slice is re-centred, so all affected keys are still inside it.
func (s *binStore) collapseBelow(floor int) {
	var moved uint64
	lo := max(s.minKey, s.off) - s.off
	hi := min(floor-1, s.maxKey, s.off+len(s.bins)-1) - s.off
	for i := lo; i <= hi; i++ {
		moved += s.bins[i]
		s.bins[i] = 0
	}
	s.minKey = floor
	if moved == 0 {
		return
	}
	if floor < s.off || floor >= s.off+len(s.bins) {
		s.regrow(true)
	}
	s.bins[floor-s.off] += moved
}

// regrow re-allocates (or re-centres) the slice so that [minKey, maxKey] fits, leaving
// slack on the side the store is growing towards.
func (s *binStore) regrow(up bool) {
	span := s.maxKey - s.minKey + 1
	n := len(s.bins)
	for n < 2*span {
		n *= 2
	}
	n = min(n, 2*sketchMaxBins)
	var off int
	if up {
		off = s.minKey
	} else {
		off = s.maxKey - n + 1
	}
	// Only keys in [minKey, maxKey] that were inside the old window carry counts; keys
	// added by the caller after this call are not yet counted.
	lo, hi := max(s.minKey, s.off), min(s.maxKey, s.off+len(s.bins)-1)
	if n == len(s.bins) {
		// Full size already: slide the counts in place (copy is a memmove).
		if lo <= hi {
			copy(s.bins[lo-off:hi-off+1], s.bins[lo-s.off:hi-s.off+1])
			clearOutside(s.bins, lo-off, hi-off)
		} else {
			clear(s.bins)
		}
		s.off = off
		return
	}
	nb := make([]uint64, n)
	if lo <= hi {
		copy(nb[lo-off:hi-off+1], s.bins[lo-s.off:hi-s.off+1])
	}
	s.bins, s.off = nb, off
}

// clearOutside zeroes b outside [lo, hi].
func clearOutside(b []uint64, lo, hi int) {
	clear(b[:lo])
	clear(b[hi+1:])
}

// merge adds every count of o.
func (s *binStore) merge(o *binStore) {
	if o.n == 0 {
		return
	}
	// Adding o's largest key first collapses s once rather than repeatedly; after it
	// no key of o can raise s.maxKey, so the floor is fixed and keys inside s's live
	// range are plain increments.
	s.add(o.maxKey, o.bins[o.maxKey-o.off])
	floor := s.maxKey - sketchMaxBins + 1
	for k := o.minKey; k < o.maxKey; k++ {
		c := o.bins[k-o.off]
		if c == 0 {
			continue
		}
		if kk := max(k, floor); kk >= s.minKey {
			s.bins[kk-s.off] += c
			s.n += c
			continue
		}
		s.add(k, c)
	}
}

// sketch holds the negative and positive stores and the zero count.
type sketch struct {
	neg, pos binStore
	zeros    uint64
}

func (k *sketch) reset() {
	k.neg.reset()
	k.pos.reset()
	k.zeros = 0
}

func (k *sketch) add(v float64) {
	switch {
	case v > 0:
		k.pos.add(sketchKey(v), 1)
	case v < 0:
		k.neg.add(sketchKey(-v), 1)
	default:
		k.zeros++
	}
}

func (k *sketch) merge(o *sketch) {
	k.neg.merge(&o.neg)
	k.pos.merge(&o.pos)
	k.zeros += o.zeros
}

// valueAt returns the representative of the i-th smallest sample (0-based). Sorted
// order is the negative store from its largest magnitude down, then zeros, then the
// positive store upwards.
func (k *sketch) valueAt(i uint64) float64 {
	if i < k.neg.n {
		// i-th most negative: walk magnitudes downwards.
		var seen uint64
		for key := k.neg.maxKey; key >= k.neg.minKey; key-- {
			seen += k.neg.bins[key-k.neg.off]
			if seen > i {
				return -sketchValue(key)
			}
		}
		return -sketchValue(k.neg.minKey)
	}
	i -= k.neg.n
	if i < k.zeros {
		return 0
	}
	i -= k.zeros
	var seen uint64
	for key := k.pos.minKey; key <= k.pos.maxKey; key++ {
		seen += k.pos.bins[key-k.pos.off]
		if seen > i {
			return sketchValue(key)
		}
	}
	return sketchValue(k.pos.maxKey)
}
