package render

import (
	"math/big"
	"strconv"
	"strings"
)

// writeCanonicalNumber writes the JSON number text num in TOON's canonical
// form (spec §2), exactly: the digits are the document's, never a float's.
// A number n with 1e-6 <= |n| < 1e21, or zero, is written in plain decimal
// with no leading zeros, no trailing fractional zeros, no fraction if it is
// whole, and no minus on zero (1.50 → 1.5, 1e3 → 1000, -0.0 → 0). Any other
// number is written in exponent form with one digit before the point, a
// lowercase e and a signed exponent (1e21 → 1e+21, 0.00000012 → 1.2e-7).
func writeCanonicalNumber(b *strings.Builder, num string) {
	i := 0
	neg := num[0] == '-'
	if neg {
		i++
	}
	intEnd := digitsAt(num, i)
	intPart := num[i:intEnd]
	frac := ""
	j := intEnd
	if j < len(num) && num[j] == '.' {
		k := digitsAt(num, j+1)
		frac = num[j+1 : k]
		j = k
	}
	exp := ""
	if j < len(num) { // e or E
		exp = num[j+1:]
	}

	// The value is ±0.digits × 10^point, digits without leading or trailing
	// zeros.
	digits := strings.TrimLeft(intPart+frac, "0")
	trimmed := strings.TrimRight(digits, "0")
	if trimmed == "" {
		b.WriteByte('0')
		return
	}
	// point = len(digits) + exp - len(frac): the trailing zeros of digits
	// stay counted, they only moved from the digits to the exponent.
	offset := int64(len(digits) - len(frac))
	digits = trimmed
	if neg {
		b.WriteByte('-')
	}
	e, small := smallExponent(exp)
	if !small {
		writeExponentForm(b, digits, bigPoint(exp, offset))
		return
	}
	point := e + offset
	n := int64(len(digits))
	switch {
	case point < -5 || point > 21:
		writeExponentForm(b, digits, strconv.FormatInt(point-1, 10))
	case point >= n:
		b.WriteString(digits)
		for range point - n {
			b.WriteByte('0')
		}
	case point > 0:
		b.WriteString(digits[:point])
		b.WriteByte('.')
		b.WriteString(digits[point:])
	default:
		b.WriteString("0.")
		for range -point {
			b.WriteByte('0')
		}
		b.WriteString(digits)
	}
}

// smallExponent parses the exponent text of a JSON number ("", "5", "+5",
// "-05"), reporting false when it has too many digits for an int64 to hold
// it with room for arithmetic.
func smallExponent(exp string) (int64, bool) {
	if exp == "" {
		return 0, true
	}
	sign := int64(1)
	switch exp[0] {
	case '-':
		sign = -1
		exp = exp[1:]
	case '+':
		exp = exp[1:]
	}
	exp = strings.TrimLeft(exp, "0")
	if len(exp) > 15 {
		return 0, false
	}
	n, _ := strconv.ParseInt("0"+exp, 10, 64)
	return sign * n, true
}

// bigPoint returns exp + offset - 1, the exponent of the exponent form, for
// an exponent too long for smallExponent.
func bigPoint(exp string, offset int64) string {
	var e big.Int
	e.SetString(strings.TrimPrefix(exp, "+"), 10)
	return e.Add(&e, big.NewInt(offset-1)).String()
}

// writeExponentForm writes d[.ddd]e±x for the digits and the decimal
// exponent x of the first digit.
func writeExponentForm(b *strings.Builder, digits, x string) {
	b.WriteByte(digits[0])
	if len(digits) > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteByte('e')
	if x[0] != '-' {
		b.WriteByte('+')
	}
	b.WriteString(x)
}
