package llm

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// jscan is a pull scanner over one JSON document that extracts the handful of fields a
// dialect needs without allocating: strings are unescaped into caller-owned buffers and
// everything else is skipped while still being checked for well-formedness, so a
// malformed chunk is reported as a decode error rather than silently accepted.
//
// encoding/json (reflection, an allocation per string) was two thirds of a plain Go
// client's per-chunk cost (docs/benchmarks.md), hence this scanner.
type jscan struct {
	b   []byte
	i   int
	bad bool
}

// maxDepth bounds nesting so a hostile `[[[[…` line cannot grow the stack.
const maxDepth = 128

func (s *jscan) reset(b []byte) { s.b, s.i, s.bad = b, 0, false }

func (s *jscan) fail() bool { s.bad = true; return false }

func (s *jscan) ws() {
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return
		}
		s.i++
	}
}

// end reports whether only whitespace is left (a complete document).
func (s *jscan) end() bool {
	s.ws()
	if s.i != len(s.b) {
		return s.fail()
	}
	return !s.bad
}

// open consumes c ('{' or '['). A null in its place returns false without failing.
func (s *jscan) open(c byte) bool {
	if s.bad {
		return false
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	if s.null() {
		return false
	}
	return s.fail()
}

// more advances to the next element of the object or array closed by c.
func (s *jscan) more(c byte, first *bool) bool {
	if s.bad {
		return false
	}
	s.ws()
	if s.i >= len(s.b) {
		return s.fail()
	}
	if s.b[s.i] == c {
		s.i++
		return false
	}
	if !*first {
		if s.b[s.i] != ',' {
			return s.fail()
		}
		s.i++
		s.ws()
	}
	*first = false
	return true
}

// key reads an object key and the colon after it. Keys are returned raw (escapes not
// decoded): the keys dialects use never contain escapes.
func (s *jscan) key() []byte {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.fail()
		return nil
	}
	start := s.i + 1
	j := closingQuote(s.b, start)
	if j < 0 {
		s.fail()
		return nil
	}
	k := s.b[start:j]
	s.i = j + 1
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		s.fail()
		return nil
	}
	s.i++
	return k
}

func (s *jscan) lit(l string) bool {
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

// null consumes a null literal if one is next.
func (s *jscan) null() bool {
	s.ws()
	return s.lit("null")
}

// boolean reads true/false (null reads as false).
func (s *jscan) boolean() bool {
	s.ws()
	switch {
	case s.lit("true"):
		return true
	case s.lit("false"), s.lit("null"):
		return false
	}
	s.fail()
	return false
}

// str appends the unescaped string value to dst. ok is false for null (or on error).
func (s *jscan) str(dst []byte) ([]byte, bool) {
	if s.bad {
		return dst, false
	}
	s.ws()
	if s.i >= len(s.b) {
		s.fail()
		return dst, false
	}
	if s.b[s.i] != '"' {
		if !s.null() {
			s.fail()
		}
		return dst, false
	}
	s.i++
	for {
		j := special(s.b, s.i)
		dst = append(dst, s.b[s.i:j]...)
		if j >= len(s.b) {
			s.i = j
			s.fail()
			return dst, false
		}
		if s.b[j] == '"' {
			s.i = j + 1
			return dst, true
		}
		// escape
		if j+1 >= len(s.b) {
			s.i = j
			s.fail()
			return dst, false
		}
		c := s.b[j+1]
		s.i = j + 2
		switch c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				s.fail()
				return dst, false
			}
			if utf16.IsSurrogate(r) {
				// A pair decodes to one rune; a lone surrogate becomes U+FFFD as in
				// encoding/json.
				save := s.i
				if s.lit(`\u`) {
					if r2, ok := s.hex4(); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							dst = utf8.AppendRune(dst, d)
							continue
						}
					}
				}
				s.i = save
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default:
			s.fail()
			return dst, false
		}
	}
}

func (s *jscan) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// num reads a JSON number as an int (fraction and exponent are validated and dropped;
// token counts are integers). null reads as 0.
func (s *jscan) num() int {
	if s.bad {
		return 0
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == 'n' {
		if s.lit("null") {
			return 0
		}
		s.fail()
		return 0
	}
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	start := s.i
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if n < 1<<40 {
			n = n*10 + int(s.b[s.i]-'0')
		}
		s.i++
	}
	if s.i == start {
		s.fail()
		return 0
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return 0
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		negExp := false
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			negExp = s.b[s.i] == '-'
			s.i++
		}
		start := s.i
		if !s.digits() {
			return 0
		}
		// 1e3 is a valid count; scale it (bounded) rather than read it as 1.
		e := 0
		for _, c := range s.b[start:s.i] {
			if e < 100 {
				e = e*10 + int(c-'0')
			}
		}
		for ; e > 0 && n != 0; e-- {
			if negExp {
				n /= 10
			} else if n < 1<<40 {
				n *= 10
			}
		}
	}
	if neg {
		return -n
	}
	return n
}

func (s *jscan) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == start {
		return s.fail()
	}
	return true
}

// skip consumes any value, checking its syntax.
func (s *jscan) skip() { s.skipDepth(0) }

func (s *jscan) skipDepth(depth int) {
	if s.bad {
		return
	}
	if depth > maxDepth {
		s.fail()
		return
	}
	s.ws()
	if s.i >= len(s.b) {
		s.fail()
		return
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.i++
		for first := true; s.more('}', &first); {
			s.key()
			s.skipDepth(depth + 1)
		}
	case c == '[':
		s.i++
		for first := true; s.more(']', &first); {
			s.skipDepth(depth + 1)
		}
	case c == '"':
		s.skipString()
	case c == 't':
		if !s.lit("true") {
			s.fail()
		}
	case c == 'f':
		if !s.lit("false") {
			s.fail()
		}
	case c == 'n':
		if !s.lit("null") {
			s.fail()
		}
	case c == '-' || (c >= '0' && c <= '9'):
		s.num()
	default:
		s.fail()
	}
}

func (s *jscan) skipString() {
	j := closingQuote(s.b, s.i+1)
	if j < 0 {
		s.i = len(s.b)
		s.fail()
		return
	}
	s.i = j + 1
}

// closingQuote returns the index of the quote that ends the string whose contents
// start at i, or -1; a backslash skips the byte it escapes.
func closingQuote(b []byte, i int) int {
	for {
		i = special(b, i)
		if i >= len(b) {
			return -1
		}
		if b[i] == '"' {
			return i
		}
		i += 2
	}
}

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// special returns the index of the first quote or backslash at or after i, or len(b).
// It tests eight bytes at a time (SWAR: a byte equal to c turns into a zero byte of
// x^c, which (v-lo)&^v&hi flags; the lowest flag is exact), since most of a chunk's
// bytes are inside strings that hold neither.
func special(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (swarLo * '"')
		e := x ^ (swarLo * '\\')
		if m := ((q-swarLo)&^q | (e-swarLo)&^e) & swarHi; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// peekString reports whether the next value is a string.
func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}
