package llm

import (
	"sync"
	"unsafe"

	"github.com/tiktoken-go/tokenizer"
)

// codecs caches one codec per encoding for the whole process: loading a vocabulary takes
// tens of milliseconds and megabytes, and codecs are read-only once built.
var codecs struct {
	mu sync.Mutex
	m  map[string]tokenizer.Codec
}

func codecFor(enc string) (tokenizer.Codec, error) {
	codecs.mu.Lock()
	defer codecs.mu.Unlock()
	if c, ok := codecs.m[enc]; ok {
		return c, nil
	}
	c, err := tokenizer.Get(tokenizer.Encoding(enc))
	if err != nil {
		return nil, err
	}
	if codecs.m == nil {
		codecs.m = map[string]tokenizer.Codec{}
	}
	codecs.m[enc] = c
	return c, nil
}

// countTokens counts b's tokens with the encoding; -1 when counting is off or fails.
func countTokens(enc string, b []byte) int {
	if enc == EncodingNone {
		return -1
	}
	if len(b) == 0 {
		return 0
	}
	c, err := codecFor(enc)
	if err != nil {
		return -1
	}
	// Count does not retain its input, so the bytes need not be copied into a string.
	n, err := c.Count(unsafe.String(&b[0], len(b)))
	if err != nil {
		return -1
	}
	return n
}

// CountTokens counts the tokens of s with a tiktoken encoding (as Config.Encoding). It
// returns -1 for EncodingNone or an unknown encoding.
func CountTokens(encoding, s string) int {
	return countTokens(encoding, []byte(s))
}
