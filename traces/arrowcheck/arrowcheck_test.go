package arrowcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// testRecord is a small batch with a nested, a dictionary and a string
// column, so that the schema has children and dictionaries.
func testRecord(t *testing.T) arrow.RecordBatch {
	t.Helper()
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "user", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "kv", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.BinaryTypes.String})), Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	}, &md)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := range 10 {
		b.Field(0).(*array.StringBuilder).Append("job" + string(rune('a'+i)))
		if err := b.Field(1).(*array.BinaryDictionaryBuilder).AppendString([]string{"alice", "bob"}[i%2]); err != nil {
			t.Fatal(err)
		}
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		sb := lb.ValueBuilder().(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.StringBuilder).Append("x")
		b.Field(3).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecordBatch()
}

func ipcFile(t *testing.T, opts ...ipc.Option) []byte {
	t.Helper()
	rec := testRecord(t)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func parquetFile(t *testing.T, codec compress.Compression) []byte {
	t.Helper()
	rec := testRecord(t)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(parquet.WithCompression(codec)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestValidFilesPass(t *testing.T) {
	for name, b := range map[string][]byte{"plain": ipcFile(t), "zstd": ipcFile(t, ipc.WithZstd()), "lz4": ipcFile(t, ipc.WithLZ4())} {
		if err := CheckIPCFile(bytes.NewReader(b), int64(len(b)), Limits{}); err != nil {
			t.Errorf("arrow %s: %v", name, err)
		}
	}
	for _, c := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Brotli} {
		b := parquetFile(t, c)
		info, err := CheckParquetFile(bytes.NewReader(b), int64(len(b)), Limits{})
		if err != nil || info.NumRows != 10 || len(info.RowGroupRows) != 1 {
			t.Errorf("parquet %s: %+v, %v", c, info, err)
		}
	}
}

// TestIPCLengthsChecked: a vector length of the footer set large is
// refused, naming where it is. The schema's fields vector is the first
// uint32 whose change makes CheckIPCFile name "fields".
func TestIPCLengthsChecked(t *testing.T) {
	b := ipcFile(t)
	flen := int(binary.LittleEndian.Uint32(b[len(b)-10:]))
	start := len(b) - 10 - flen
	seen := map[string]bool{}
	for off := start; off+4 <= len(b)-10; off += 4 {
		m := bytes.Clone(b)
		binary.LittleEndian.PutUint32(m[off:], 0x7fffffff)
		err := CheckIPCFile(bytes.NewReader(m), int64(len(m)), Limits{})
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("offset %d: %v (%T)", off, err, err)
		}
		if err != nil {
			for _, w := range []string{"fields", "children", "custom_metadata", "recordBatches", "name"} {
				if strings.Contains(e.Where, w) {
					seen[w] = true
				}
			}
		}
	}
	for _, w := range []string{"fields", "children", "custom_metadata", "recordBatches"} {
		if !seen[w] {
			t.Errorf("no mutation was caught in %s", w)
		}
	}
}

// TestFlatbufferDAG: flatbuffer offsets point forward, so a schema
// cannot loop, but a field can list one child table twice, whose children
// list one table twice, and so on: 40 levels of 60 bytes stand for 2^40
// fields. The verification counts every visit and stops.
func TestFlatbufferDAG(t *testing.T) {
	// A vtable at 4 (16 bytes: table size 8, slot 5 "children" at table
	// offset 4) shared by every table; level k at p = 20 + 20k: the
	// table [soffset p-4][uoffset 4 -> p+8], its children vector at p+8
	// [2][-> p+20][-> p+20]; the last table's vector is empty.
	const levels = 40
	b := make([]byte, 20+20*levels+12)
	binary.LittleEndian.PutUint32(b[0:], 20)
	binary.LittleEndian.PutUint16(b[4:], 16)
	binary.LittleEndian.PutUint16(b[6:], 8)
	binary.LittleEndian.PutUint16(b[4+14:], 4)
	for k := 0; k <= levels; k++ {
		p := 20 + 20*k
		binary.LittleEndian.PutUint32(b[p:], uint32(p-4))
		binary.LittleEndian.PutUint32(b[p+4:], 4)
		if k == levels {
			break
		}
		binary.LittleEndian.PutUint32(b[p+8:], 2)
		binary.LittleEndian.PutUint32(b[p+12:], 8)
		binary.LittleEndian.PutUint32(b[p+16:], 4)
	}
	f := newFB(b, "test", DefaultMaxMetadata)
	root, err := f.root("")
	if err != nil {
		t.Fatal(err)
	}
	err = verifyField(root, 1)
	var e *Error
	if !errors.As(err, &e) || e.Limit != LimitMetadata {
		t.Fatalf("got %v, want a metadata limit", err)
	}
	if f.nodes > maxNodes+1 {
		t.Errorf("visited %d tables", f.nodes)
	}
}

func TestThriftLengthsChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		// Field 1, a list (type 9) whose header says 15 -> varint size
		// 2^28 of i32 elements, with 2 bytes left.
		{"list", []byte{0x19, 0xf5, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00, 0x00}, "list of"},
		// Field 1, a binary of length 2^31-1.
		{"string", []byte{0x18, 0xff, 0xff, 0xff, 0xff, 0x07, 'a'}, "string of"},
		// A map of 2^20 entries.
		{"map", []byte{0x1b, 0x80, 0x80, 0x40, 0x55, 0x00}, "map of"},
	} {
		d := &tdec{b: tc.b, max: DefaultMaxMetadata, where: "footer"}
		err := d.structure(func(byte, int16) (bool, error) { return false, nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Nesting: struct in struct, 100 deep.
	var b []byte
	for range 100 {
		b = append(b, 0x1c) // field 1, struct
	}
	d := &tdec{b: b, max: DefaultMaxMetadata, where: "footer"}
	if err := d.structure(func(byte, int16) (bool, error) { return false, nil }); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("deep nesting: %v", err)
	}
}

func TestAllocatorBudget(t *testing.T) {
	a := NewAllocator(1000)
	b := a.Allocate(600)
	b = a.Reallocate(900, b)
	func() {
		defer func() {
			r := recover()
			be := Recovered(r)
			if be == nil || be.Want != 200 || be.Used != 900 || be.Budget != 1000 {
				t.Errorf("recovered %v, want a BudgetError for 200 on top of 900", r)
			}
		}()
		a.Allocate(200)
		t.Error("allocation past the budget did not panic")
	}()
	a.Free(b)
	c := a.Allocate(1000) // all of it, once freed
	if len(c) != 1000 || a.Peak() != 1000 {
		t.Errorf("len %d, peak %d", len(c), a.Peak())
	}
	a.Free(c)
	// arrow-go wraps a recovered panic in an error: still found.
	if Recovered(errors.Join(errors.New("arrow/ipc"), &BudgetError{Want: 1})) == nil {
		t.Error("a wrapped BudgetError was not found")
	}
}

// TestZstdFrameHeader: a frame whose header asks for a window or content
// beyond MaxMemory is refused before a decoder sees it.
func TestZstdFrameHeader(t *testing.T) {
	enc, _ := zstd.NewWriter(nil)
	small := enc.EncodeAll(bytes.Repeat([]byte("x"), 1000), nil)
	if err := checkZstdFrame(small, Limits{}.withDefaults()); err != nil {
		t.Errorf("a 1000-byte frame: %v", err)
	}
	// Single segment, 8-byte content size of 2^40.
	big := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0}
	if err := checkZstdFrame(big, Limits{}.withDefaults()); err == nil || err.Limit != LimitMemory {
		t.Errorf("a 2^40-byte frame: %v", err)
	}
}

// TestBoundedCodecs: a page whose compressed data holds more than the
// page header declared fails instead of growing the destination.
func TestBoundedCodecs(t *testing.T) {
	data := bytes.Repeat([]byte("abcdefgh"), 4096) // 32 KiB
	for _, c := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Brotli} {
		codec, err := compress.GetCodec(c)
		if err != nil {
			t.Fatal(err)
		}
		enc := codec.Encode(nil, data)
		out, err := compress.Decode(codec, make([]byte, len(data)), enc)
		if err != nil || !bytes.Equal(out, data) {
			t.Errorf("%s: exact size: %v", c, err)
		}
		if _, err := compress.Decode(codec, make([]byte, 1000), enc); !errors.Is(err, errPageTooLarge) {
			t.Errorf("%s: declared 1000 of %d bytes: %v, want errPageTooLarge", c, len(data), err)
		}
		out, err = compress.Decode(codec, nil, enc)
		if err != nil || !bytes.Equal(out, data) {
			t.Errorf("%s: nil destination: %v", c, err)
		}
	}
	// A snappy block that claims 4 GiB is refused by its length prefix.
	claim := binary.AppendUvarint(nil, 1<<32-1)
	codec, _ := compress.GetCodec(compress.Codecs.Snappy)
	if _, err := compress.Decode(codec, make([]byte, 64), append(claim, 0)); err == nil {
		t.Error("a snappy block claiming 4 GiB decoded")
	}
	_ = snappy.MaxEncodedLen
}

// TestSchemaTree: num_children must add up to the elements there are
// (schema.FromParquet makes a slice of each group's num_children); the
// fuzz crasher FuzzParquetRead/13f7e1349f3347b2 had a nested group whose
// children ran past the end.
func TestSchemaTree(t *testing.T) {
	g := func(n int64) schemaElem { return schemaElem{numChildren: n, hasChildren: true} }
	leaf := schemaElem{}
	for _, tc := range []struct {
		name  string
		elems []schemaElem
		ok    bool
	}{
		{"flat", []schemaElem{g(2), leaf, leaf}, true},
		{"nested", []schemaElem{g(2), g(1), leaf, leaf}, true},
		{"too many at the root", []schemaElem{g(3), leaf, leaf}, false},
		{"nested past the end", []schemaElem{g(2), g(2), leaf, leaf}, false},
		{"negative", []schemaElem{g(-1)}, false},
		{"huge", []schemaElem{g(1 << 40), leaf}, false},
	} {
		if err := checkSchemaTree(tc.elems); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestDictionaryPageValues: a dictionary page may not hold more values
// than its bytes can encode: 1,000 BYTE_ARRAY values take at least 4,000
// bytes (a length each), 2^30 cannot fit in 4,000.
func TestDictionaryPageValues(t *testing.T) {
	// PageHeader: type 2 (dictionary) field 1, uncompressed 4000 field 2,
	// compressed 4000 field 3, dictionary_page_header (field 7, a struct)
	// with num_values field 1; the page data follows.
	hdr := func(nvals uint64) []byte {
		zz := func(v int64) []byte { return binary.AppendUvarint(nil, uint64(v<<1)^uint64(v>>63)) }
		b := []byte{0x15}
		b = append(b, zz(2)...)
		b = append(b, 0x15)
		b = append(b, zz(4000)...)
		b = append(b, 0x15)
		b = append(b, zz(4000)...)
		b = append(b, 0x4c, 0x15) // field 7 (delta 4), struct; field 1, i32
		b = append(b, zz(int64(nvals))...)
		return append(b, 0, 0) // stop, stop
	}
	for _, tc := range []struct {
		nvals uint64
		ok    bool
	}{{1000, true}, {1 << 30, false}} {
		h := hdr(tc.nvals)
		file := append(append([]byte("PAR1"), h...), make([]byte, 4000)...)
		col := chunkMeta{typ: pqByteArray, dataOffset: 4, compressed: int64(len(h) + 4000), hasMeta: true}
		err := checkPages(bytes.NewReader(file), int64(len(file)), col, 0, "row group 0, column 0", Limits{}.withDefaults())
		if (err == nil) != tc.ok {
			t.Errorf("%d values: %v", tc.nvals, err)
		}
	}
}
