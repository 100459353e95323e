package xk6ext_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/mockllm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// BenchmarkRequest measures what the module adds to one streamed request: the same
// 16-token chat against a zero-latency mock, made from plain Go with llm.Client and
// from JS through client.chat (argument parsing, the Result object, metric samples).
//
//	go test -run '^$' -bench BenchmarkRequest -benchmem ./xk6ext/
func BenchmarkRequest(b *testing.B) {
	ctx := context.Background()
	srv, err := mockllm.Start(ctx, "127.0.0.1:0", mockllm.Config{TTFT: -1, ITL: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	base := srv.URL() + "/v1"

	b.Run("go", func(b *testing.B) {
		c, err := llm.NewClient(llm.Config{BaseURL: base, KeepText: true})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hello"}}, MaxTokens: 16}
		b.ReportAllocs()
		for b.Loop() {
			if r := c.Do(ctx, req); !r.OK() {
				b.Fatal(r.Err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/req")
	})

	script := `
import { Client } from 'k6/x/tokenstorm';
const client = new Client({ url: __ENV.URL });
const req = { messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 };
export function one() { if (!client.chat(req).ok) throw new Error('failed'); }
export async function four() {
  const rs = await Promise.all([client.chatAsync(req), client.chatAsync(req), client.chatAsync(req), client.chatAsync(req)]);
  if (!rs.every((r) => r.ok)) throw new Error('failed');
}
`
	for _, c := range []struct {
		name, fn string
		reqs     int
	}{{"js-chat", "one", 1}, {"js-chatAsync-x4", "four", 4}} {
		b.Run(c.name, func(b *testing.B) {
			root := xk6ext.NewRootModule()
			defer root.Close()
			dir := b.TempDir()
			path := filepath.Join(dir, "bench.js")
			if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
				b.Fatal(err)
			}
			var samples atomic.Int64
			prog, err := vm.Compile(path, vm.Config{
				Env: map[string]string{"URL": base},
				Modules: map[string]vm.ModuleFactory{xk6ext.ImportPath: func(h xk6ext.Host) (vm.Exports, error) {
					ex, err := root.Instantiate(h)
					return vm.Exports(ex), err
				}},
				Emit: func(s []xk6ext.Sample) { samples.Add(int64(len(s))) },
			})
			if err != nil {
				b.Fatal(err)
			}
			vu, err := prog.NewVU(ctx, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if _, err := vu.Call(ctx, c.fn); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*c.reqs), "ns/req")
			b.ReportMetric(float64(samples.Load())/float64(b.N*c.reqs), "samples/req")
		})
	}
}
