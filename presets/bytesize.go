package presets

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// byteUnits are the suffixes ParseByteSize accepts, by lower-cased name.
// Decimal units are powers of 1000 and binary ones powers of 1024, as in
// IEC 80000-13; single-letter forms ("64K") are not accepted because they are
// ambiguous between the two.
var byteUnits = map[string]int64{
	"":    1,
	"b":   1,
	"kb":  1000,
	"mb":  1000 * 1000,
	"gb":  1000 * 1000 * 1000,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
}

var byteSizeRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$`)

// ParseByteSize parses a byte size: a whole number of bytes ("65536"), or a
// number and a unit, optionally separated by spaces ("64KiB", "1.5 MiB",
// "512KB"). Units, case-insensitive: B; KB, MB, GB (powers of 1000); KiB,
// MiB, GiB (powers of 1024). The result must be a whole number of bytes that
// fits in an int64.
func ParseByteSize(s string) (int64, error) {
	m := byteSizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("invalid byte size %q: want a number of bytes or a number and a unit (B, KB, MB, GB, KiB, MiB, GiB), e.g. \"64KiB\"", s)
	}
	unit, ok := byteUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, fmt.Errorf("invalid byte size %q: unknown unit %q; allowed: B, KB, MB, GB, KiB, MiB, GiB", s, m[2])
	}
	// Exact rational arithmetic: "0.3KB" is 300 bytes, not 300.00000000000006.
	n, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return 0, fmt.Errorf("invalid byte size %q", s)
	}
	n.Mul(n, new(big.Rat).SetInt64(unit))
	if !n.IsInt() {
		return 0, fmt.Errorf("invalid byte size %q: not a whole number of bytes", s)
	}
	if !n.Num().IsInt64() {
		return 0, fmt.Errorf("invalid byte size %q: too large", s)
	}
	return n.Num().Int64(), nil
}
