package vm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/file"
	"github.com/grafana/sobek/parser"
)

// ScriptError is a problem in the user's script: a syntax error, an exception thrown in
// the init context, in an iteration or in setup/teardown, or an unsupported import. File,
// Line and Column locate it (1-based; 0 when unknown); Stack holds the JS stack, one
// "\tat fn (file:line:col)" frame per line, when there is one.
type ScriptError struct {
	File         string
	Line, Column int
	Message      string
	Stack        string
	// Value is the thrown JS value exported to Go (nil for syntax errors).
	Value any
	cause error
}

// Error returns "file:line:col: message", or the message alone when the position is
// unknown.
func (e *ScriptError) Error() string {
	if e.File == "" {
		return e.Message
	}
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Column))
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns the Go error behind the exception, if any (for example an *AbortError
// or a context error).
func (e *ScriptError) Unwrap() error { return e.cause }

// AbortError is returned when the script called exec.test.abort(). k6 ends such a run
// with exit code 108.
type AbortError struct {
	Reason string
}

func (e *AbortError) Error() string {
	if e.Reason == "" {
		return "test aborted"
	}
	return "test aborted: " + e.Reason
}

// ErrInitOnly is wrapped by errors from functions that k6 allows only in the init
// context (open, metric constructors, SharedArray, Host.NewMetric).
var ErrInitOnly = errors.New("only available in the init context")

// ErrNotInInit is wrapped by errors from functions that k6 forbids in the init context
// (check, group).
var ErrNotInInit = errors.New("not supported in the init context")

// errorFromParse converts a sobek parse or compile error into a *ScriptError.
func errorFromParse(err error) *ScriptError {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return scriptErrorAt(list[0].Position, "SyntaxError: "+list[0].Message, err)
	}
	var pe *parser.Error
	if errors.As(err, &pe) {
		return scriptErrorAt(pe.Position, "SyntaxError: "+pe.Message, err)
	}
	var ce *sobek.CompilerSyntaxError
	if errors.As(err, &ce) {
		se := &ScriptError{Message: "SyntaxError: " + ce.Message, cause: err}
		if ce.File != nil {
			p := ce.File.Position(ce.Offset)
			se.File, se.Line, se.Column = p.Filename, p.Line, p.Column
		}
		return se
	}
	var se *ScriptError
	if errors.As(err, &se) {
		return se
	}
	return &ScriptError{Message: err.Error(), cause: err}
}

func scriptErrorAt(p file.Position, msg string, cause error) *ScriptError {
	return &ScriptError{File: p.Filename, Line: p.Line, Column: p.Column, Message: msg, cause: cause}
}

// errorFromJS converts an error returned by sobek while running JS into a *ScriptError
// positioned at the innermost JS frame. Errors that are not JS exceptions (an
// *AbortError interrupt, a context error) are returned inside a ScriptError too, so
// callers can use errors.As for both.
func errorFromJS(err error) error {
	if err == nil {
		return nil
	}
	var se *ScriptError
	if errors.As(err, &se) {
		return se
	}
	var ie *sobek.InterruptedError
	if errors.As(err, &ie) {
		cause, _ := ie.Value().(error)
		if cause == nil {
			cause = fmt.Errorf("%v", ie.Value())
		}
		out := &ScriptError{Message: cause.Error(), cause: cause}
		fillFrames(out, ie.Stack())
		return out
	}
	var ex *sobek.Exception
	if errors.As(err, &ex) {
		return exceptionError(ex)
	}
	var ce *sobek.CompilerSyntaxError
	var pl parser.ErrorList
	if errors.As(err, &ce) || errors.As(err, &pl) {
		return errorFromParse(err)
	}
	return &ScriptError{Message: err.Error(), cause: err}
}

func exceptionError(ex *sobek.Exception) *ScriptError {
	out := &ScriptError{cause: ex.Unwrap()}
	out.Message = jsErrorMessage(ex.Value())
	if v := ex.Value(); v != nil {
		out.Value = v.Export()
	}
	fillFrames(out, ex.Stack())
	return out
}

// jsErrorMessage renders a thrown value the way k6 prints it: "Error: msg" for Error
// objects, the string itself otherwise.
func jsErrorMessage(v sobek.Value) string {
	if v == nil || sobek.IsUndefined(v) {
		return "undefined"
	}
	if o, ok := v.(*sobek.Object); ok {
		// Error objects have a useful toString; plain objects are better as JSON.
		if msg := o.Get("message"); msg != nil && !sobek.IsUndefined(msg) {
			name := "Error"
			if n := o.Get("name"); n != nil && !sobek.IsUndefined(n) {
				name = n.String()
			}
			return name + ": " + msg.String()
		}
		if b, err := o.MarshalJSON(); err == nil {
			return string(b)
		}
	}
	return v.String()
}

// fillFrames sets the position from the innermost frame that has a source position and
// renders the whole stack.
func fillFrames(out *ScriptError, frames []sobek.StackFrame) {
	var b strings.Builder
	for i := range frames {
		f := &frames[i]
		p := f.Position()
		if out.File == "" && p.Filename != "" {
			out.File, out.Line, out.Column = p.Filename, p.Line, p.Column
		}
		b.WriteString("\tat ")
		b.WriteString(f.FuncName())
		if p.Filename != "" {
			b.WriteString(" (")
			b.WriteString(p.Filename)
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Line))
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Column))
			b.WriteByte(')')
		} else {
			b.WriteString(" (native)")
		}
		b.WriteByte('\n')
	}
	out.Stack = b.String()
}
