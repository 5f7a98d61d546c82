package embed

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Limits of the safetensors reader. A file past them is refused rather
// than allocated: the sizes in a header are the file's word, and a
// corrupt or hostile file must not make the server allocate gigabytes.
const (
	// maxHeaderBytes is the header limit of the safetensors format itself.
	maxHeaderBytes = 100_000_000
	// maxTensorElements bounds the embedding matrix: 2^30 float32 values
	// are 4 GiB, far beyond any static embedding model (potion-base-8M has
	// 7.5 million values).
	maxTensorElements = 1 << 30
	// maxTensorDims bounds the rank of a tensor in a header.
	maxTensorDims = 8
)

// tensorInfo is one tensor's entry in a safetensors header.
type tensorInfo struct {
	DType   string   `json:"dtype"`
	Shape   []int64  `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// dtypeSize is the size in bytes of one value of each safetensors dtype.
var dtypeSize = map[string]int64{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
	"U16": 2, "I16": 2, "F16": 2, "BF16": 2,
	"U32": 4, "I32": 4, "F32": 4,
	"U64": 8, "I64": 8, "F64": 8,
}

// safetensorsHeader reads and checks the header of a safetensors file of
// size bytes: an 8-byte little-endian header length, a JSON object naming
// each tensor's dtype, shape and byte range, then the data. Every range is
// checked against the file and against its shape. It returns the tensors
// and the offset of the data.
func safetensorsHeader(r io.ReaderAt, size int64) (map[string]tensorInfo, int64, error) {
	if size < 8 {
		return nil, 0, fmt.Errorf("safetensors: file of %d bytes is shorter than the 8-byte header length", size)
	}
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, 0, fmt.Errorf("safetensors: read header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxHeaderBytes {
		return nil, 0, fmt.Errorf("safetensors: header of %d bytes is larger than the %d allowed", n, maxHeaderBytes)
	}
	if int64(n) > size-8 {
		return nil, 0, fmt.Errorf("safetensors: truncated: the header is %d bytes, the file has %d after the length", n, size-8)
	}
	if n < 2 {
		return nil, 0, fmt.Errorf("safetensors: header of %d bytes cannot hold a JSON object", n)
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, 8); err != nil {
		return nil, 0, fmt.Errorf("safetensors: read header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(buf, &raw); err != nil {
		return nil, 0, fmt.Errorf("safetensors: header is not a JSON object: %w", err)
	}
	dataStart := 8 + int64(n)
	dataLen := size - dataStart
	tensors := make(map[string]tensorInfo, len(raw))
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var ti tensorInfo
		if err := json.Unmarshal(msg, &ti); err != nil {
			return nil, 0, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		if err := ti.check(dataLen); err != nil {
			return nil, 0, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		tensors[name] = ti
	}
	return tensors, dataStart, nil
}

// check validates a tensor's byte range against the data section and its
// shape, without overflow.
func (ti tensorInfo) check(dataLen int64) error {
	begin, end := ti.Offsets[0], ti.Offsets[1]
	if begin < 0 || end < begin {
		return fmt.Errorf("bad data offsets [%d, %d]", begin, end)
	}
	if end > dataLen {
		return fmt.Errorf("truncated: data ends at byte %d, the file has %d bytes of data", end, dataLen)
	}
	if len(ti.Shape) > maxTensorDims {
		return fmt.Errorf("%d dimensions, at most %d allowed", len(ti.Shape), maxTensorDims)
	}
	size, ok := dtypeSize[ti.DType]
	if !ok {
		return fmt.Errorf("unknown dtype %q", ti.DType)
	}
	count := uint64(1)
	for _, d := range ti.Shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", ti.Shape)
		}
		hi, lo := bits.Mul64(count, uint64(d))
		if hi != 0 || lo > math.MaxInt64/8 {
			return fmt.Errorf("shape %v is too large", ti.Shape)
		}
		count = lo
	}
	if want := int64(count) * size; want != end-begin {
		return fmt.Errorf("shape %v of %s needs %d bytes, data offsets give %d", ti.Shape, ti.DType, want, end-begin)
	}
	return nil
}

// readMatrix reads the 2-D tensor name as float32 values, row-major.
func readMatrix(r io.ReaderAt, size int64, name string) (data []float32, rows, cols int, err error) {
	tensors, dataStart, err := safetensorsHeader(r, size)
	if err != nil {
		return nil, 0, 0, err
	}
	ti, ok := tensors[name]
	if !ok {
		names := make([]string, 0, len(tensors))
		for n := range tensors {
			names = append(names, n)
		}
		return nil, 0, 0, fmt.Errorf("safetensors: no tensor %q (the file has %q)", name, names)
	}
	if len(ti.Shape) != 2 {
		return nil, 0, 0, fmt.Errorf("safetensors: tensor %q has shape %v, want [vocabulary, dimension]", name, ti.Shape)
	}
	if ti.Shape[0] == 0 || ti.Shape[1] == 0 {
		return nil, 0, 0, fmt.Errorf("safetensors: tensor %q is empty (shape %v)", name, ti.Shape)
	}
	if ti.Shape[0]*ti.Shape[1] > maxTensorElements {
		return nil, 0, 0, fmt.Errorf("safetensors: tensor %q of shape %v has more than the %d values allowed", name, ti.Shape, maxTensorElements)
	}
	var decode func([]byte, []float32)
	switch ti.DType {
	case "F32":
		decode = decodeF32
	case "F16":
		decode = decodeF16
	case "BF16":
		decode = decodeBF16
	default:
		return nil, 0, 0, fmt.Errorf("safetensors: tensor %q has dtype %s; supported: F32, F16, BF16", name, ti.DType)
	}
	raw := make([]byte, ti.Offsets[1]-ti.Offsets[0])
	if _, err := r.ReadAt(raw, dataStart+ti.Offsets[0]); err != nil && !(errors.Is(err, io.EOF) && len(raw) == 0) {
		return nil, 0, 0, fmt.Errorf("safetensors: read tensor %q: %w", name, err)
	}
	data = make([]float32, ti.Shape[0]*ti.Shape[1])
	decode(raw, data)
	return data, int(ti.Shape[0]), int(ti.Shape[1]), nil
}

func decodeF32(raw []byte, out []float32) {
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
}

func decodeBF16(raw []byte, out []float32) {
	for i := range out {
		out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
	}
}

func decodeF16(raw []byte, out []float32) {
	for i := range out {
		out[i] = halfToFloat(binary.LittleEndian.Uint16(raw[2*i:]))
	}
}

// halfToFloat converts an IEEE 754 half-precision value to float32,
// subnormals, infinities and NaN included.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal: value = frac · 2^-24.
		v := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
