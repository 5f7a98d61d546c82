package presets

import "testing"

func TestParseByteSize(t *testing.T) {
	good := map[string]int64{
		"0":                   0,
		"65536":               65536,
		"1B":                  1,
		"64KiB":               64 << 10,
		"64kib":               64 << 10,
		"1MiB":                1 << 20,
		"1.5 MiB":             3 << 19,
		"2GiB":                2 << 30,
		"512KB":               512000,
		"0.3KB":               300,
		"1MB":                 1000000,
		"1gb":                 1000000000,
		" 16KiB ":             16 << 10,
		"9223372036854775807": 1<<63 - 1,
	}
	for in, want := range good {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", "KiB", "-1KiB", "1.5B", "0.1KiB", "64K", "64 kilobytes", "1e3", "1/2MiB", "0x10",
		"9223372036854775808", "9000000000GiB", "1..5MiB", ".5MiB",
	} {
		if got, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q) = %d, want an error", in, got)
		}
	}
}
