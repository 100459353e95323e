package mockllm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

// Stream a chat completion from the mock and compare with its ground truth.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := mockllm.Start(ctx, "", mockllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, RecordTruth: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	body := `{"model":"demo","messages":[{"role":"user","content":"Say hi"}],"stream":true,"max_tokens":4}`
	resp, err := client.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			panic(err)
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	fmt.Printf("text: %q\n", text.String())

	truth, _ := srv.Truth(resp.Header.Get(mockllm.HeaderRequestID))
	fmt.Println("chunks:", len(truth.Chunks), "finish:", truth.FinishReason)
	fmt.Println("server TTFT ≥ 2ms:", truth.Chunks[0].Sub(truth.Received) >= 2*time.Millisecond)
	// Output:
	// text: " tokens tokens the."
	// chunks: 4 finish: length
	// server TTFT ≥ 2ms: true
}

// Force one fault on one request with the X-Mock-Fault header.
func Example_fault() {
	srv, err := mockllm.Start(context.Background(), "", mockllm.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/messages",
		strings.NewReader(`{"model":"claude","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set(mockllm.HeaderFault, string(mockllm.FaultHTTP429))
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"), body.Error.Type)
	// Output: 429 1 rate_limit_error
}
