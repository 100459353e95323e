package vm_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

const benchScript = `
import { check } from 'k6';
export default function () {}
export function withCheck() {
  check(1, { 'is one': (v) => v === 1 });
}
`

// BenchmarkIteration measures the per-iteration cost of the VU machinery (context,
// interrupt watch, event loop, iteration samples) for an empty default function and for
// one calling check(), beside a plain Go function call doing the equivalent work.
func BenchmarkIteration(b *testing.B) {
	path := writeBench(b)
	var n int
	emit := func(s []xk6ext.Sample) { n += len(s) }
	p, err := vm.Compile(path, vm.Config{Emit: emit})
	if err != nil {
		b.Fatal(err)
	}
	for _, exec := range []string{"default", "withCheck"} {
		b.Run("js-"+exec, func(b *testing.B) {
			vu, err := p.NewVU(context.Background(), 1)
			if err != nil {
				b.Fatal(err)
			}
			it := executor.Iteration{Scenario: &executor.Scenario{Name: "b", Exec: exec}}
			b.ReportAllocs()
			for b.Loop() {
				if err := vu.RunIteration(context.Background(), it); err != nil {
					b.Fatal(err)
				}
				it.InVU++
			}
		})
	}
	b.Run("go-func", func(b *testing.B) {
		m := &xk6ext.Metric{Name: "checks"}
		tags := map[string]string{"check": "is one"}
		buf := make([]xk6ext.Sample, 1)
		fn := func(v int) bool {
			ok := v == 1
			buf[0] = xk6ext.Sample{Metric: m, Value: 1, Tags: tags}
			emit(buf)
			return ok
		}
		b.ReportAllocs()
		for b.Loop() {
			_ = fn(1)
		}
	})
}

// BenchmarkVUMemory reports the heap each initialised VU holds for a small script.
func BenchmarkVUMemory(b *testing.B) {
	path := writeBench(b)
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("vus=%d", n), func(b *testing.B) {
			for b.Loop() {
				p, err := vm.Compile(path, vm.Config{})
				if err != nil {
					b.Fatal(err)
				}
				before := heapInUse()
				vus := make([]*vm.VU, n)
				for i := range vus {
					if vus[i], err = p.NewVU(context.Background(), int64(i+1)); err != nil {
						b.Fatal(err)
					}
				}
				after := heapInUse()
				b.ReportMetric(float64(after-before)/float64(n), "bytes/VU")
				runtime.KeepAlive(vus)
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func writeBench(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	path := dir + "/bench.js"
	if err := writeFile(path, benchScript); err != nil {
		b.Fatal(err)
	}
	return path
}
