package tokens

import (
	"encoding/binary"
	"math"
	"strconv"
	"testing"
)

// FuzzStat: Stat never panics, accepts exactly the k6 stat names, and any p(N) it
// accepts lies within [Min, Max] and round-trips through ParsePercentile.
func FuzzStat(f *testing.F) {
	for _, s := range []string{"avg", "min", "med", "max", "count", "sum", "p(90)", "p(99.9)", "p(0)", "p(100)",
		"p(100.5)", "p()", "p(1e2)", "p(-0)", "p(.5)", "p(5.)", "p(0x1p-2)", "rate", "", "p((9))", "p(9)x"} {
		f.Add(s)
	}
	s := NewTrendSink()
	for i := range 100 {
		s.Add(float64(i*i) - 500)
	}
	f.Fuzz(func(t *testing.T, name string) {
		v, ok := s.Stat(name)
		p, isP := ParsePercentile(name)
		switch name {
		case "avg", "min", "med", "max", "count", "sum":
			if !ok {
				t.Fatalf("%q rejected", name)
			}
			return
		}
		if ok != isP {
			t.Fatalf("%q: Stat ok=%v, ParsePercentile ok=%v", name, ok, isP)
		}
		if !ok {
			if v != 0 {
				t.Fatalf("%q rejected with value %v", name, v)
			}
			return
		}
		if p < 0 || p > 100 || math.IsNaN(p) {
			t.Fatalf("%q parsed to %v", name, p)
		}
		if v < s.Min() || v > s.Max() {
			t.Fatalf("%q = %v outside [%v, %v]", name, v, s.Min(), s.Max())
		}
		if q, ok := ParsePercentile("p(" + strconv.FormatFloat(p, 'f', -1, 64) + ")"); !ok || q != p {
			t.Fatalf("%q: %v does not round-trip", name, p)
		}
	})
}

// FuzzTrendMerge: for any samples (as raw float64 bits) and any split, merging equals
// recording everything, in exact mode and across the switch to the sketch.
func FuzzTrendMerge(f *testing.F) {
	enc := func(vs ...float64) []byte {
		b := make([]byte, 0, 8*len(vs))
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	f.Add(enc(1, 2, 3, 4, 5), uint64(0b10110), uint8(3))
	f.Add(enc(-1e300, 0, 1e-300, math.NaN(), math.Inf(1), 5e-324, -0.0), uint64(0x55), uint8(2))
	f.Add(enc(1e-20, 1e20, -1e-20, -1e20, 3, 3, 3, 3, 3), uint64(0xdeadbeef), uint8(0))
	f.Add(enc(-math.MaxFloat64, math.MaxFloat64, 1, -1), uint64(0b0110), uint8(0))
	f.Add(enc(-math.MaxFloat64, math.MaxFloat64, 1, -1), uint64(0b0110), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, split uint64, limit uint8) {
		lim := int(limit % 16)
		all := NewTrendSink(WithExactLimit(lim))
		a, b := NewTrendSink(WithExactLimit(lim)), NewTrendSink(WithExactLimit(lim))
		for i := 0; i+8 <= len(data); i += 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(data[i:]))
			all.Add(v)
			if split>>(uint(i/8)%64)&1 == 1 {
				a.Add(v)
			} else {
				b.Add(v)
			}
		}
		a.Merge(b)
		if a.Count() != all.Count() || a.Min() != all.Min() || a.Max() != all.Max() || a.Exact() != all.Exact() {
			t.Fatalf("count/min/max/mode differ: %v %v %v %v vs %v %v %v %v",
				a.Count(), a.Min(), a.Max(), a.Exact(), all.Count(), all.Min(), all.Max(), all.Exact())
		}
		for _, p := range mergePercentiles {
			x, y := a.Percentile(p), all.Percentile(p)
			if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				t.Fatalf("p(%v): merged %v, record-all %v", p, x, y)
			}
			if all.Count() > 0 && (y < all.Min() || y > all.Max()) {
				t.Fatalf("p(%v) = %v outside [%v, %v]", p, y, all.Min(), all.Max())
			}
		}
	})
}
