package whatwg

import "unicode/utf8"

// Decoder is the Encoding Standard's UTF-8 decoder, which may be fed a
// stream in pieces. An invalid or truncated sequence becomes one U+FFFD
// per maximal subpart (where Go's own decoding gives one per byte), or,
// when Fatal, an error. The zero value is ready to use.
type Decoder struct {
	Fatal bool

	cp           rune
	needed, seen int
	lower, upper byte
}

// Decode appends the UTF-8 of src's characters to dst. With flush, src
// ends the stream: an incomplete sequence at its end is an error. ok is
// false when Fatal and src holds an error; dst is then incomplete and the
// decoder is reset.
func (d *Decoder) Decode(dst, src []byte, flush bool) (out []byte, ok bool) {
	if d.lower == 0 {
		d.lower, d.upper = 0x80, 0xBF
	}
	for i := 0; i < len(src); i++ {
		b := src[i]
		if d.needed == 0 {
			switch {
			case b < 0x80:
				dst = append(dst, b)
			case b >= 0xC2 && b <= 0xDF:
				d.needed, d.cp = 1, rune(b&0x1F)
			case b >= 0xE0 && b <= 0xEF:
				if b == 0xE0 {
					d.lower = 0xA0
				} else if b == 0xED {
					d.upper = 0x9F
				}
				d.needed, d.cp = 2, rune(b&0xF)
			case b >= 0xF0 && b <= 0xF4:
				if b == 0xF0 {
					d.lower = 0x90
				} else if b == 0xF4 {
					d.upper = 0x8F
				}
				d.needed, d.cp = 3, rune(b&7)
			default:
				if dst, ok = d.fail(dst); !ok {
					return dst, false
				}
			}
			continue
		}
		if b < d.lower || b > d.upper {
			// The byte starts over: it is read again after the error.
			d.reset()
			if dst, ok = d.fail(dst); !ok {
				return dst, false
			}
			i--
			continue
		}
		d.lower, d.upper = 0x80, 0xBF
		d.cp = d.cp<<6 | rune(b&0x3F)
		d.seen++
		if d.seen == d.needed {
			dst = utf8.AppendRune(dst, d.cp)
			d.reset()
		}
	}
	if flush && d.needed != 0 {
		d.reset()
		return d.fail(dst)
	}
	return dst, true
}

func (d *Decoder) reset() {
	d.cp, d.needed, d.seen = 0, 0, 0
	d.lower, d.upper = 0x80, 0xBF
}

func (d *Decoder) fail(dst []byte) ([]byte, bool) {
	if d.Fatal {
		d.reset()
		return dst, false
	}
	return utf8.AppendRune(dst, utf8.RuneError), true
}

// DecodeUTF8 decodes a whole byte string with replacement, appending to
// dst. A byte order mark is kept.
func DecodeUTF8(dst, src []byte) []byte {
	if utf8.Valid(src) {
		return append(dst, src...)
	}
	var d Decoder
	out, _ := d.Decode(dst, src, true)
	return out
}
