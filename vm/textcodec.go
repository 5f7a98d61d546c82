package vm

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/internal/whatwg"
)

// TextEncoder and TextDecoder follow the Encoding Standard for UTF-8, the
// only encoding offered. encode's result is a buffer, so its size is
// capped like an ArrayBuffer's (caps.bufferBytes); decode's is a string,
// so its input is capped at caps.stringUnits bytes (a byte never decodes
// to more than one UTF-16 code unit). encodeInto writes through the
// destination's real view, whatever its length property says.

// decoderState is a TextDecoder's options and its stream.
type decoderState struct {
	dec       whatwg.Decoder
	ignoreBOM bool
	bomSeen   bool // the stream's first characters have been seen
}

// utf8Labels are the Encoding Standard's labels of UTF-8.
var utf8Labels = map[string]bool{
	"utf-8": true, "utf8": true, "unicode-1-1-utf-8": true,
	"unicode11utf8": true, "unicode20utf8": true, "x-unicode20utf8": true,
}

// installEncoding defines TextEncoder and TextDecoder, on first use. They
// hand out Uint8Arrays and take buffers, so the buffer globals are
// hardened first: the plan must reach only the guarded constructors from
// what they return.
func (r *run) installEncoding() {
	uint8Array, _ := r.lazy.Get("Uint8Array").(*goja.Object)
	w := r.webObjects()

	enc := r.newWebClass("TextEncoder", 0, func(call goja.ConstructorCall) {
		w.encoders[call.This] = true
	})
	encoderThis := func(call goja.FunctionCall, what string) {
		if o, ok := call.This.(*goja.Object); !ok || !w.encoders[o] {
			r.throwType(what + " called on an object that is not a TextEncoder")
		}
	}
	r.webAccessor(enc.proto, "encoding", func(call goja.FunctionCall) goja.Value {
		encoderThis(call, "TextEncoder.encoding")
		return r.rt.ToValue("utf-8")
	}, nil)
	r.webMethod(enc.proto, "encode", 0, func(call goja.FunctionCall) goja.Value {
		const what = "TextEncoder.prototype.encode"
		encoderThis(call, what)
		var b []byte
		if in := call.Argument(0); !goja.IsUndefined(in) {
			str := r.toStr(in)
			n := int64(0)
			eachRune(str, func(c rune) bool {
				n += int64(utf8.RuneLen(c))
				return n <= r.caps.bufferBytes
			})
			r.checkBytes(n, 1, what)
			b = make([]byte, 0, n)
			eachRune(str, func(c rune) bool {
				b = utf8.AppendRune(b, c)
				return true
			})
		}
		o, err := r.rt.New(uint8Array, r.rt.ToValue(r.rt.NewArrayBuffer(b)))
		if err != nil {
			panic(err)
		}
		return o
	})
	r.webMethod(enc.proto, "encodeInto", 2, func(call goja.FunctionCall) goja.Value {
		const what = "TextEncoder.prototype.encodeInto"
		encoderThis(call, what)
		r.requireArgs(call, 2, what)
		src := r.toStr(call.Argument(0))
		dst, ok := call.Argument(1).(*goja.Object)
		if !ok || !r.isUint8Array(dst) {
			r.throwType(what + ": the destination must be a Uint8Array")
		}
		var view []byte
		if err := r.rt.ExportTo(dst, &view); err != nil {
			r.throwType(what + ": the destination cannot be written")
		}
		read, written := 0, 0
		eachRune(src, func(c rune) bool {
			n := utf8.RuneLen(c)
			if written+n > len(view) {
				return false
			}
			utf8.EncodeRune(view[written:], c)
			written += n
			read++
			if c >= 0x10000 {
				read++
			}
			return true
		})
		res := r.rt.NewObject()
		r.defineData(res, "read", r.rt.ToValue(read))
		r.defineData(res, "written", r.rt.ToValue(written))
		return res
	})
	r.lockClass(enc)
	r.setGlobal("TextEncoder", enc.ctor)

	dec := r.newWebClass("TextDecoder", 0, func(call goja.ConstructorCall) {
		const what = "TextDecoder"
		if label := call.Argument(0); !goja.IsUndefined(label) {
			l := strings.ToLower(strings.Trim(r.usvString(label, maxNameBytes, what), "\t\n\f\r "))
			if !utf8Labels[l] {
				r.throwRange(what + ": only the utf-8 encoding is supported")
			}
		}
		st := &decoderState{}
		switch opts := call.Argument(1).(type) {
		case *goja.Object:
			st.dec.Fatal = r.option(opts, "fatal")
			st.ignoreBOM = r.option(opts, "ignoreBOM")
		default:
			if !goja.IsUndefined(opts) && !goja.IsNull(opts) {
				r.throwType(what + ": the options must be an object")
			}
		}
		w.decoders[call.This] = st
	})
	decoderThis := func(call goja.FunctionCall, what string) *decoderState {
		if o, ok := call.This.(*goja.Object); ok {
			if st := w.decoders[o]; st != nil {
				return st
			}
		}
		r.throwType(what + " called on an object that is not a TextDecoder")
		return nil
	}
	r.webAccessor(dec.proto, "encoding", func(call goja.FunctionCall) goja.Value {
		decoderThis(call, "TextDecoder.encoding")
		return r.rt.ToValue("utf-8")
	}, nil)
	r.webAccessor(dec.proto, "fatal", func(call goja.FunctionCall) goja.Value {
		return r.rt.ToValue(decoderThis(call, "TextDecoder.fatal").dec.Fatal)
	}, nil)
	r.webAccessor(dec.proto, "ignoreBOM", func(call goja.FunctionCall) goja.Value {
		return r.rt.ToValue(decoderThis(call, "TextDecoder.ignoreBOM").ignoreBOM)
	}, nil)
	r.webMethod(dec.proto, "decode", 0, func(call goja.FunctionCall) goja.Value {
		const what = "TextDecoder.prototype.decode"
		st := decoderThis(call, what)
		input := call.Argument(0)
		stream := false
		switch opts := call.Argument(1).(type) {
		case *goja.Object:
			stream = r.option(opts, "stream")
		default:
			if !goja.IsUndefined(opts) && !goja.IsNull(opts) {
				r.throwType(what + ": the options must be an object")
			}
		}
		// The bytes are read after the options, whose getters could write
		// to the buffer, and used at once.
		var src []byte
		if !goja.IsUndefined(input) {
			src = r.bufferBytes(input, what)
		}
		if int64(len(src)) > r.caps.stringUnits {
			r.throwRange(what + ": the input would decode to more characters than the sandbox allows")
		}
		out, ok := st.dec.Decode(nil, src, !stream)
		if !ok {
			st.bomSeen = false
			r.throwType(what + ": the data is not valid utf-8")
		}
		if !st.ignoreBOM && !st.bomSeen && len(out) > 0 {
			out = bytes.TrimPrefix(out, []byte("\uFEFF"))
			st.bomSeen = true
		}
		if !stream {
			st.bomSeen = false
		}
		return r.rt.ToValue(string(out))
	})
	r.lockClass(dec)
	r.setGlobal("TextDecoder", dec.ctor)
}

// eachRune calls f with the code points of s, lone surrogates replaced
// by U+FFFD (Web IDL's USVString), until f returns false. It converts
// nothing: a long string costs no copy.
func eachRune(s goja.String, f func(rune) bool) {
	rd := s.Reader()
	for {
		c, _, err := rd.ReadRune()
		switch {
		case err == io.EOF:
			return
		case err != nil:
			c = utf8.RuneError
		}
		if !f(c) {
			return
		}
	}
}

// option reads a boolean member of an options dictionary once.
func (r *run) option(opts *goja.Object, name string) bool {
	v := opts.Get(name)
	return v != nil && v.ToBoolean()
}

// isUint8Array reports whether o is a Uint8Array (not a
// Uint8ClampedArray, which exports as the same Go type), by its internal
// slot.
func (r *run) isUint8Array(o *goja.Object) bool {
	if !isTypedArray(o) || r.guards.buffers == nil {
		return false
	}
	return r.guards.buffers.typedTag(goja.FunctionCall{This: o}).String() == "Uint8Array"
}

// bufferBytes returns the bytes an ArrayBuffer, a typed array or a
// DataView views, sharing their memory: read them before any code of
// the plan's runs again.
func (r *run) bufferBytes(v goja.Value, what string) []byte {
	o, ok := v.(*goja.Object)
	switch {
	case !ok:
	case o.ExportType() == arrayBufferType:
		return o.Export().(goja.ArrayBuffer).Bytes()
	case isTypedArray(o) || r.guards.dataViews[o]:
		var b []byte
		if err := r.rt.ExportTo(o, &b); err != nil {
			r.throwType(what + ": the buffer cannot be read")
		}
		return b
	}
	r.throwType(what + ": the input must be an ArrayBuffer, a typed array or a DataView")
	return nil
}
