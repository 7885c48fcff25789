package traces

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/schedsim/schedsim/workload"
)

// The single-value mutations of issue 16: one length or count of a valid
// file's metadata set large. Before the metadata checks, 190 of the
// 24,952 four-byte mutations of an Arrow file of the Thunder excerpt, and
// lengths in a Parquet file's ARROW:schema, made arrow-go allocate tens
// to hundreds of gigabytes (a fatal out of memory). Now each must be a
// clean error or a read of jobs, in bounded memory.

// largeValues are what a mutated uint32 or varint is set to.
var largeValues = []uint64{0x7fffffff, 0xffffffff, 0x10000000, 0x00ffffff}

// mutationTrace is a small trace with every column filled, written by
// WriteArrow and WriteParquet for the mutation sweeps.
func mutationTrace() *workload.Trace {
	tr := stringsTrace()
	for i := range tr.Jobs {
		j := &tr.Jobs[i]
		j.Account, j.QOS, j.Request = "acct", "normal", workload.Request{Nodes: 1, GPUs: 2, GPUType: "h100", CPUs: 8, MemMB: 1024}
		j.TimeLimit, j.TraceStart, j.TraceEnd = 3600, j.Submit+5, j.Submit+65
	}
	return tr
}

// readBounded reads data as a trace of format and fails the test unless
// it ends in a *ParseError or a trace, allocating at most maxAlloc bytes
// in all (runtime.MemStats.TotalAlloc).
func readBounded(t *testing.T, data []byte, name string, maxAlloc uint64) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(data), name, Options{})
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > maxAlloc {
		t.Errorf("%s: allocated %d MB reading %d bytes", name, d>>20, len(data))
	}
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line <= 0 {
			t.Errorf("%s: %v (%T) is not a *ParseError with a line", name, err, err)
		}
		if bytes.ContainsAny([]byte(err.Error()), "\n\r") {
			t.Errorf("%s: error on more than one line: %q", name, err)
		}
	}
	return err
}

// mutationStride samples the positions the sweeps mutate: every 8th by
// default (a second or two), all with SCHEDSIM_FULL_MUTATIONS=1 (about
// 20 s; 12,024 mutations).
func mutationStride() int {
	if os.Getenv("SCHEDSIM_FULL_MUTATIONS") != "" {
		return 1
	}
	return 8
}

// dumpMutation writes a mutated file to $SCHEDSIM_MUTATIONS_DIR when set,
// so that another build can be run over the same inputs.
func dumpMutation(t *testing.T, name string, data []byte) {
	if dir := os.Getenv("SCHEDSIM_MUTATIONS_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestArrowMutations: every four-byte-aligned uint32 of an Arrow IPC
// file's flatbuffers (the footer and every message header) set to each
// large value reads as an error or as jobs, in under 64 MB.
func TestArrowMutations(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteArrow(&buf, mutationTrace()); err != nil {
		t.Fatal(err)
	}
	orig := buf.Bytes()
	// The flatbuffer regions: the footer, and each block's message
	// header (the streaming copy of the schema at the start is not read
	// by the file reader).
	flen := int(binary.LittleEndian.Uint32(orig[len(orig)-10:]))
	regions := [][2]int{{len(orig) - 10 - flen, len(orig) - 10}}
	regions = append(regions, ipcMessageRegions(t, orig)...)
	n, errs, stride := 0, 0, mutationStride()
	for _, r := range regions {
		for off := r[0] &^ 3; off+4 <= r[1]; off += 4 {
			if (off/4)%stride != 0 {
				continue
			}
			for _, v := range largeValues {
				data := bytes.Clone(orig)
				binary.LittleEndian.PutUint32(data[off:], uint32(v))
				name := fmt.Sprintf("arrow-%d-%x.arrow", off, v)
				dumpMutation(t, name, data)
				if readBounded(t, data, name, 64<<20) != nil {
					errs++
				}
				n++
			}
		}
	}
	t.Logf("%d mutations, %d errors", n, errs)
	if errs == 0 {
		t.Error("no mutation was rejected: the sweep is not reaching the metadata")
	}
}

// ipcMessageRegions returns where the message headers of the blocks an
// Arrow IPC file's footer lists lie (found as the file reader finds them:
// the flatbuffer Block structs of the footer).
func ipcMessageRegions(t *testing.T, b []byte) [][2]int {
	t.Helper()
	// Each message starts with the continuation marker and its length;
	// the writer aligns them to 8 bytes.
	var out [][2]int
	for off := 8; off+8 <= len(b); off += 8 {
		if binary.LittleEndian.Uint32(b[off:]) != 0xffffffff {
			continue
		}
		l := int(binary.LittleEndian.Uint32(b[off+4:]))
		if l <= 0 || off+8+l > len(b) {
			continue
		}
		out = append(out, [2]int{off + 8, off + 8 + l})
	}
	if len(out) == 0 {
		t.Fatal("no IPC messages found")
	}
	return out
}

// TestParquetMutations: every integer of a Parquet file's Thrift footer,
// and every aligned uint32 of its ARROW:schema flatbuffer, set to each
// large value reads as an error or as jobs, in under 64 MB.
func TestParquetMutations(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteParquet(&buf, mutationTrace()); err != nil {
		t.Fatal(err)
	}
	orig := buf.Bytes()
	flen := int(binary.LittleEndian.Uint32(orig[len(orig)-8:]))
	footer := orig[len(orig)-8-flen : len(orig)-8]
	ints, schemaAt, schemaLen := thriftInts(t, footer)
	n, errs, stride := 0, 0, mutationStride()
	try := func(name string, data []byte) {
		dumpMutation(t, name, data)
		if readBounded(t, data, name, 64<<20) != nil {
			errs++
		}
		n++
	}
	for k, p := range ints {
		if k%stride != 0 {
			continue
		}
		for _, v := range largeValues {
			// Re-encode the varint (zigzag for integers, plain for
			// lengths) with the large value; the footer grows.
			nf := append(bytes.Clone(footer[:p.at]), binary.AppendUvarint(nil, v)...)
			nf = append(nf, footer[p.at+p.n:]...)
			data := append(bytes.Clone(orig[:len(orig)-8-flen]), nf...)
			data = binary.LittleEndian.AppendUint32(data, uint32(len(nf)))
			data = append(data, "PAR1"...)
			try(fmt.Sprintf("parquet-thrift-%d-%x.parquet", p.at, v), data)
		}
	}
	// The ARROW:schema value: base64 of an IPC schema message.
	raw, err := base64.StdEncoding.DecodeString(string(footer[schemaAt : schemaAt+schemaLen]))
	if err != nil {
		t.Fatalf("ARROW:schema: %v", err)
	}
	for off := 0; off+4 <= len(raw); off += 4 {
		if (off/4)%stride != 0 {
			continue
		}
		for _, v := range largeValues[:2] {
			m := bytes.Clone(raw)
			binary.LittleEndian.PutUint32(m[off:], uint32(v))
			enc := base64.StdEncoding.EncodeToString(m)
			data := bytes.Clone(orig)
			copy(data[len(orig)-8-flen+schemaAt:], enc)
			try(fmt.Sprintf("parquet-schema-%d-%x.parquet", off, v), data)
		}
	}
	t.Logf("%d mutations, %d errors", n, errs)
	if errs == 0 {
		t.Error("no mutation was rejected: the sweep is not reaching the metadata")
	}
}

// thriftInt is a varint of a Thrift compact buffer.
type thriftInt struct{ at, n int }

// thriftInts lists the varints (integers, list sizes, string lengths) of
// the Thrift compact struct b, and where the ARROW:schema value lies. It
// is a plain walker of the compact protocol, written apart from the
// package's own.
func thriftInts(t *testing.T, b []byte) (ints []thriftInt, schemaAt, schemaLen int) {
	t.Helper()
	p := 0
	uv := func() uint64 {
		v, n := binary.Uvarint(b[p:])
		if n <= 0 {
			t.Fatalf("bad varint at %d", p)
		}
		ints = append(ints, thriftInt{p, n})
		p += n
		return v
	}
	var lastKey string
	var value func(typ byte)
	var structure func()
	value = func(typ byte) {
		switch typ {
		case 1, 2:
		case 3:
			p++
		case 4, 5, 6:
			uv()
		case 7:
			p += 8
		case 8:
			l := int(uv())
			s := string(b[p : p+l])
			if lastKey == "ARROW:schema" {
				schemaAt, schemaLen = p, l
				lastKey = ""
			} else if s == "ARROW:schema" {
				lastKey = s
			}
			p += l
		case 9, 10:
			h := b[p]
			p++
			size := int(h >> 4)
			if size == 15 {
				size = int(uv())
			}
			for range size {
				if et := h & 15; et == 1 || et == 2 {
					p++
				} else {
					value(et)
				}
			}
		case 12:
			structure()
		default:
			t.Fatalf("thrift type %d at %d", typ, p)
		}
	}
	structure = func() {
		for {
			h := b[p]
			p++
			if h == 0 {
				return
			}
			if h>>4 == 0 {
				uv()
			}
			value(h & 15)
		}
	}
	structure()
	if schemaLen == 0 {
		t.Fatal("no ARROW:schema in the footer")
	}
	return ints, schemaAt, schemaLen
}
