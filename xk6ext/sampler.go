package xk6ext

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// A Sampler draws integers, typically output lengths for max_tokens. Samplers are not
// goroutine-safe: each VU builds its own in the init context.
type Sampler interface {
	Sample() int64
}

// Lognormal samples round(exp(ln(Median) + Sigma·N(0,1))), clamped to [Min, Max]. The
// median of the unclamped distribution is Median, which is how output-length
// distributions are usually described (ShareGPT answers: median ≈ 200, sigma ≈ 1).
type Lognormal struct {
	Median, Sigma float64
	Min, Max      int64 // Max 0 = no upper bound
	rng           *rand.Rand
	mu            float64
}

// NewLognormal validates its parameters. seed makes the sequence reproducible.
func NewLognormal(median, sigma float64, lo, hi int64, seed uint64) (*Lognormal, error) {
	switch {
	case !(median > 0) || math.IsInf(median, 0):
		return nil, errors.New("median must be a positive number")
	case !(sigma >= 0) || math.IsInf(sigma, 0):
		return nil, errors.New("sigma must be a non-negative number")
	case lo < 0:
		return nil, errors.New("min must not be negative")
	case hi != 0 && hi < lo:
		return nil, fmt.Errorf("max (%d) is below min (%d)", hi, lo)
	}
	return &Lognormal{Median: median, Sigma: sigma, Min: lo, Max: hi,
		rng: newRand(seed), mu: math.Log(median)}, nil
}

// Sample draws one value.
func (l *Lognormal) Sample() int64 {
	x := math.Exp(l.mu + l.Sigma*l.rng.NormFloat64())
	return clamp(x, l.Min, l.Max)
}

// Uniform samples integers uniformly from [Min, Max], both included.
type Uniform struct {
	Min, Max int64
	rng      *rand.Rand
}

// NewUniform validates its parameters.
func NewUniform(lo, hi int64, seed uint64) (*Uniform, error) {
	if lo < 0 {
		return nil, errors.New("min must not be negative")
	}
	if hi < lo {
		return nil, fmt.Errorf("max (%d) is below min (%d)", hi, lo)
	}
	return &Uniform{Min: lo, Max: hi, rng: newRand(seed)}, nil
}

// Sample draws one value.
func (u *Uniform) Sample() int64 { return u.Min + u.rng.Int64N(u.Max-u.Min+1) }

// Constant always yields N. It exists so a script can swap distributions without
// changing the code that calls sample().
type Constant struct{ N int64 }

// Sample returns N.
func (c Constant) Sample() int64 { return c.N }

func clamp(x float64, lo, hi int64) int64 {
	if x > math.MaxInt64/2 {
		x = math.MaxInt64 / 2
	}
	v := int64(math.Round(x))
	if v < lo {
		v = lo
	}
	if hi != 0 && v > hi {
		v = hi
	}
	return v
}

// newRand returns a PCG generator. Seeds go through a SplitMix64 step so that nearby
// seeds (VU 1, VU 2, …) give unrelated streams.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(splitmix(seed), splitmix(seed^0x9e3779b97f4a7c15)))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
