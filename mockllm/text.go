package mockllm

import (
	"strconv"
	"unicode/utf8"
)

// vocab is the generated text's vocabulary: words with their leading spaces, so that
// clients that drop whitespace at read boundaries show it, plus multi-byte UTF-8
// (2-, 3- and 4-byte sequences) and characters that JSON must escape.
var vocab = []string{
	" the", " storm", " of", " tokens", " flows", " through", " a", " quiet", " server",
	",", ".", " and", " every", " chunk", " arrives", " on", " time", " café",
	" naïve", " déjà", " vu", " данные", " модель", " 東京", " トークン", " 🚀", " ✓",
	"\n", " \"quoted\"", " back\\slash", "\ttab", " 42", " ünïcödé", " ok",
}

// vocabJSON holds vocab escaped for the inside of a JSON string, computed once so
// that building a chunk copies bytes and escapes nothing.
var vocabJSON = func() [][]byte {
	out := make([][]byte, len(vocab))
	for i, w := range vocab {
		out[i] = appendJSONInner(nil, w)
	}
	return out
}()

// vocabID gives each word a stable pseudo token id (TGI reports ids).
func vocabID(i int) int { return 1000 + i }

// estimateTokens is the prompt token estimate: ceil(bytes / 4), the usual rule of
// thumb for English BPE; cheap and deterministic, not a tokenizer.
func estimateTokens(nbytes int) int { return (nbytes + 3) / 4 }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a quoted JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendJSONInner(b, s)
	return append(b, '"')
}

// appendJSONInner appends s escaped for the inside of a JSON string. Invalid UTF-8
// becomes U+FFFD, as encoding/json does.
func appendJSONInner(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }
