package llm

import (
	"bytes"
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// Event is one decoded server-sent event or NDJSON line. Its slices point into the
// Decoder's buffers and are valid until the next call of Next.
type Event struct {
	// Name is the SSE "event:" field (empty when absent and for NDJSON).
	Name []byte
	// Data is the payload: the SSE data lines joined with "\n", or the NDJSON line.
	Data []byte
	// At is when the read that delivered the last byte of the payload's line returned
	// (or, for a Client's response on Linux, the kernel's receive time of that read's
	// newest bytes): the chunk's arrival time, taken before any JSON decoding.
	At time.Time
}

// Decoder reads a stream of server-sent events (text/event-stream) or newline-delimited
// JSON. It is shaped like bufio.Scanner: call Next until it returns false, use Current,
// then check Err. It allocates nothing per event once its buffers have grown to the
// stream's line size, and its output does not depend on how the bytes were split into
// reads: a line is only handed out once its terminator (or EOF) has been read.
//
// Lines end in LF or CRLF (a lone CR is not treated as a terminator: no LLM server sends
// one, and supporting it would force a read-ahead that delays every chunk). Comments
// (":" lines), "id:" and "retry:" fields are ignored; a final event without its blank
// line is still dispatched at EOF, because servers that omit the final newline exist.
//
// A Decoder is not safe for concurrent use.
type Decoder struct {
	r        io.Reader
	ndjson   bool
	maxLine  int
	maxTotal int64

	buf        []byte
	rpos, wpos int
	eof        bool
	rerr       error // read error, reported once the complete lines before it are out
	readAt     time.Time
	total      int64

	ev      Event
	data    []byte
	name    []byte
	hasData bool

	err    error
	closed bool

	// progress, when set, receives the time of every read as nanoseconds since base,
	// for an idle timer running on another goroutine: idle means no bytes, not no
	// events, so a large line arriving slowly is not idle.
	progress *atomic.Int64
	base     time.Time
	// arr, when set, is the connection the bytes come from: reads are then stamped
	// with the kernel's receive time of the newest bytes (see arrivalConn).
	arr *arrivalConn
}

// DecoderOption configures a Decoder.
type DecoderOption func(*Decoder)

// WithMaxLineBytes bounds one line (an SSE field line or an NDJSON line); a longer line
// fails the stream with a *StreamError. Default DefaultMaxLineBytes.
func WithMaxLineBytes(n int) DecoderOption {
	return func(d *Decoder) {
		if n > 0 {
			d.maxLine = n
		}
	}
}

// WithMaxResponseBytes bounds the whole stream; reading more fails with a *StreamError.
// Default DefaultMaxResponseBytes.
func WithMaxResponseBytes(n int64) DecoderOption {
	return func(d *Decoder) {
		if n > 0 {
			d.maxTotal = n
		}
	}
}

// initialBuf is the read buffer a Decoder starts with; it grows (up to the line limit)
// only for longer lines. Small, because an idle open stream should cost little memory.
const initialBuf = 4096

// NewSSEDecoder returns a Decoder of server-sent events read from r.
func NewSSEDecoder(r io.Reader, opts ...DecoderOption) *Decoder {
	d := &Decoder{}
	d.reset(r, false, opts...)
	return d
}

// NewNDJSONDecoder returns a Decoder of newline-delimited JSON read from r; blank lines
// are skipped.
func NewNDJSONDecoder(r io.Reader, opts ...DecoderOption) *Decoder {
	d := &Decoder{}
	d.reset(r, true, opts...)
	return d
}

func (d *Decoder) reset(r io.Reader, ndjson bool, opts ...DecoderOption) {
	buf, data, name := d.buf, d.data, d.name
	*d = Decoder{r: r, ndjson: ndjson, maxLine: DefaultMaxLineBytes, maxTotal: DefaultMaxResponseBytes}
	for _, o := range opts {
		o(d)
	}
	if cap(buf) < initialBuf {
		buf = make([]byte, initialBuf)
	}
	d.buf, d.data, d.name = buf[:cap(buf)], data[:0], name[:0]
}

// Next advances to the next event. It returns false at the end of the stream or on an
// error, which Err then reports.
func (d *Decoder) Next() bool {
	if d.err != nil || d.closed {
		return false
	}
	if d.ndjson {
		return d.nextNDJSON()
	}
	d.data = d.data[:0]
	d.name = d.name[:0]
	d.hasData = false
	for {
		line, ok := d.line()
		if !ok {
			if d.err == nil && d.hasData {
				return d.dispatch()
			}
			return false
		}
		if len(line) == 0 {
			if d.hasData {
				return d.dispatch()
			}
			d.name = d.name[:0]
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if d.hasData {
				d.data = append(d.data, '\n')
			}
			d.data = append(d.data, value...)
			d.hasData = true
			d.ev.At = d.readAt
		case "event":
			d.name = append(d.name[:0], value...)
		}
	}
}

func (d *Decoder) dispatch() bool {
	d.ev.Data = d.data
	d.ev.Name = d.name
	return true
}

func (d *Decoder) nextNDJSON() bool {
	for {
		line, ok := d.line()
		if !ok {
			return false
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		d.ev.Data = line
		d.ev.Name = nil
		d.ev.At = d.readAt
		return true
	}
}

// line returns the next line without its terminator. The returned slice is valid until
// the next call.
func (d *Decoder) line() ([]byte, bool) {
	for {
		if i := bytes.IndexByte(d.buf[d.rpos:d.wpos], '\n'); i >= 0 {
			line := d.buf[d.rpos : d.rpos+i]
			d.rpos += i + 1
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			if len(line) > d.maxLine {
				d.err = d.lineTooLong()
				return nil, false
			}
			return line, true
		}
		if d.rerr != nil {
			// Complete lines read before the error were handed out above; a partial
			// line is not an event.
			d.err = d.rerr
			return nil, false
		}
		if d.eof {
			if d.rpos < d.wpos {
				line := d.buf[d.rpos:d.wpos]
				d.rpos = d.wpos
				if n := len(line); n > 0 && line[n-1] == '\r' {
					line = line[:n-1]
				}
				if len(line) > d.maxLine {
					d.err = d.lineTooLong()
					return nil, false
				}
				return line, true
			}
			return nil, false
		}
		if d.wpos-d.rpos > d.maxLine+1 {
			d.err = d.lineTooLong()
			return nil, false
		}
		if d.rpos > 0 {
			d.wpos = copy(d.buf, d.buf[d.rpos:d.wpos])
			d.rpos = 0
		}
		if d.wpos == len(d.buf) {
			limit := d.maxLine + 2
			if len(d.buf) >= limit {
				d.err = d.lineTooLong()
				return nil, false
			}
			nb := make([]byte, min(2*len(d.buf), limit))
			copy(nb, d.buf[:d.wpos])
			d.buf = nb
		}
		n, err := d.r.Read(d.buf[d.wpos:])
		if n > 0 {
			d.readAt = d.arr.stamp(time.Now())
			if d.progress != nil {
				d.progress.Store(int64(d.readAt.Sub(d.base)))
			}
			d.wpos += n
			d.total += int64(n)
			if d.total > d.maxTotal {
				d.err = &StreamError{Message: "response exceeds MaxResponseBytes (" + strconv.FormatInt(d.maxTotal, 10) + ")"}
				return nil, false
			}
		}
		if err != nil {
			if err != io.EOF {
				d.rerr = err
				continue
			}
			d.eof = true
		}
	}
}

func (d *Decoder) lineTooLong() error {
	return &StreamError{Message: "line exceeds MaxLineBytes (" + strconv.Itoa(d.maxLine) + ")"}
}

// Current returns the event Next found. The pointer and its slices are valid until the
// next call of Next.
func (d *Decoder) Current() *Event { return &d.ev }

// Err returns the error that stopped Next, or nil at a clean end of stream.
func (d *Decoder) Err() error { return d.err }

// BytesRead returns how many bytes were read from the underlying reader.
func (d *Decoder) BytesRead() int64 { return d.total }

// Close closes the underlying reader if it is an io.Closer. It is safe to call twice.
func (d *Decoder) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	if c, ok := d.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
