package reports

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/s2"
)

// This file writes the Parquet files of a run (jobs.parquet,
// timeline.parquet) itself: a flat schema of required or optional
// columns, one row group per batch of rows, PLAIN pages (RLE_DICTIONARY
// for the dictionary columns) in data pages v1, Snappy, and the footer
// pqarrow writes for the same Arrow schema (the same schema elements,
// logical and converted types, key-value metadata with ARROW:schema,
// column orders and chunk statistics). arrow-go's writer, which made these
// files before, spent most of its time in its page buffers, statistics
// and per-column machinery: on the 20k-job HPC2N run jobs.parquet took
// about 45 ms and 18 MB of allocations there. The format is the Apache
// Parquet specification's (parquet.thrift, Encodings.md); the files are
// read back by pqarrow in the tests (TestParquetMatchesArrowWriter).

// Parquet physical types, converted types, encodings, page types and
// codecs (parquet.thrift).
const (
	pqtInt32     = 1
	pqtInt64     = 2
	pqtDouble    = 5
	pqtByteArray = 6

	convUTF8            = 0
	convTimestampMillis = 9
	convInt32           = 17
	convInt64           = 18

	encPlain         = 0
	encRLE           = 3
	encRLEDictionary = 8

	pageData       = 0
	pageDictionary = 2

	codecSnappy = 1
)

// pqPageBytes is the size at which a data page ends (arrow-go's default
// data page size, 1 MiB): pages hold whole values, so one may pass it
// by its last value.
const pqPageBytes = 1 << 20

// pqKind is a column's Parquet representation, from its Arrow type.
type pqKind int8

const (
	kindString    pqKind = iota // BYTE_ARRAY, UTF8
	kindDict                    // BYTE_ARRAY, UTF8, dictionary-encoded
	kindTimestamp               // INT64, TIMESTAMP_MILLIS, adjusted to UTC
	kindInt64
	kindInt32
	kindDouble
)

func kindOf(dt arrow.DataType) pqKind {
	switch {
	case dt == dictType:
		return kindDict
	case dt == tsType:
		return kindTimestamp
	}
	switch dt.ID() {
	case arrow.STRING:
		return kindString
	case arrow.INT64:
		return kindInt64
	case arrow.INT32:
		return kindInt32
	case arrow.FLOAT64:
		return kindDouble
	}
	panic("reports: no Parquet column kind for " + dt.String())
}

func (k pqKind) physical() int32 {
	switch k {
	case kindString, kindDict:
		return pqtByteArray
	case kindInt32:
		return pqtInt32
	case kindDouble:
		return pqtDouble
	}
	return pqtInt64
}

// schemaElement writes k's SchemaElement fields after the name.
func (k pqKind) schemaElement(t *thriftW) {
	switch k {
	case kindString, kindDict:
		t.i32(6, convUTF8)
		t.begin(10) // LogicalType
		t.begin(1)  // STRING
		t.end()
		t.end()
	case kindTimestamp:
		t.i32(6, convTimestampMillis)
		t.begin(10)
		t.begin(8) // TIMESTAMP
		t.boolean(1, true)
		t.begin(2) // unit
		t.begin(1) // MILLIS
		t.end()
		t.end()
		t.end()
		t.end()
	case kindInt64, kindInt32:
		width, conv := byte(64), int32(convInt64)
		if k == kindInt32 {
			width, conv = 32, convInt32
		}
		t.i32(6, conv)
		t.begin(10)
		t.begin(10) // INTEGER
		t.byte(1, width)
		t.boolean(2, true)
		t.end()
		t.end()
	}
}

// thriftW appends Thrift compact-protocol values to b.
type thriftW struct {
	b     []byte
	last  int16
	stack []int16
}

// Thrift compact types.
const (
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI32    = 5
	ctI64    = 6
	ctBinary = 8
	ctList   = 9
	ctStruct = 12
)

func (t *thriftW) field(id int16, typ byte) {
	if d := id - t.last; d > 0 && d <= 15 {
		t.b = append(t.b, byte(d)<<4|typ)
	} else {
		t.b = append(t.b, typ)
		t.b = binary.AppendVarint(t.b, int64(id))
	}
	t.last = id
}

func (t *thriftW) i32(id int16, v int32) {
	t.field(id, ctI32)
	t.b = binary.AppendVarint(t.b, int64(v))
}
func (t *thriftW) i64(id int16, v int64) { t.field(id, ctI64); t.b = binary.AppendVarint(t.b, v) }
func (t *thriftW) byte(id int16, v byte) { t.field(id, ctByte); t.b = append(t.b, v) }

func (t *thriftW) boolean(id int16, v bool) {
	if v {
		t.field(id, ctTrue)
	} else {
		t.field(id, ctFalse)
	}
}

func (t *thriftW) bin(id int16, v []byte) {
	t.field(id, ctBinary)
	t.b = binary.AppendUvarint(t.b, uint64(len(v)))
	t.b = append(t.b, v...)
}

func (t *thriftW) str(id int16, v string) {
	t.field(id, ctBinary)
	t.b = binary.AppendUvarint(t.b, uint64(len(v)))
	t.b = append(t.b, v...)
}

// begin starts a struct field; end closes it.
func (t *thriftW) begin(id int16) {
	t.field(id, ctStruct)
	t.push()
}

func (t *thriftW) push() {
	t.stack = append(t.stack, t.last)
	t.last = 0
}

func (t *thriftW) end() {
	t.b = append(t.b, 0)
	t.last = t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
}

// list starts a list field of n elements of type et; struct elements
// are each push()ed and end()ed.
func (t *thriftW) list(id int16, et byte, n int) {
	t.field(id, ctList)
	if n < 15 {
		t.b = append(t.b, byte(n)<<4|et)
	} else {
		t.b = append(t.b, 0xf0|et)
		t.b = binary.AppendUvarint(t.b, uint64(n))
	}
}

// appendHybrid appends vals as the RLE/bit-packed hybrid encoding of
// Parquet's Encodings.md at bit width w (1 to 32), without the length
// prefix: runs of 8 or more equal values as RLE runs, the rest bit-packed
// in groups of 8 (the last padded with zeros).
func appendHybrid(dst []byte, vals []uint32, w int) []byte {
	vb := (w + 7) / 8
	n := len(vals)
	for i := 0; i < n; {
		j := i + 1
		for j < n && vals[j] == vals[i] {
			j++
		}
		if j-i >= 8 {
			dst = binary.AppendUvarint(dst, uint64(j-i)<<1)
			for k, v := 0, vals[i]; k < vb; k, v = k+1, v>>8 {
				dst = append(dst, byte(v))
			}
			i = j
			continue
		}
		start := i
		for {
			i += 8
			if i >= n {
				i = n
				break
			}
			j := i + 1
			for j < n && j < i+8 && vals[j] == vals[i] {
				j++
			}
			if j-i >= 8 {
				break
			}
		}
		groups := (i - start + 7) / 8
		dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
		var acc uint64
		nb := 0
		for k := range groups * 8 {
			var v uint32
			if start+k < i {
				v = vals[start+k]
			}
			acc |= uint64(v) << nb
			nb += w
			for nb >= 8 {
				dst = append(dst, byte(acc))
				acc >>= 8
				nb -= 8
			}
		}
	}
	return dst
}

// pqStats are a column chunk's statistics: min and max as PLAIN bytes
// (none when every value is null or there are none).
type pqStats struct {
	has      bool
	min, max []byte
	nulls    int64
}

// pqChunk is the ColumnMetaData of a column chunk being written.
type pqChunk struct {
	kind                     pqKind
	name                     string
	values                   int64
	uncompressed, compressed int64
	offset, dataOff, dictOff int64
	dataPages                int32
	stats                    pqStats
}

// pqWriter writes a Parquet file to w, one row group and column chunk at
// a time.
type pqWriter struct {
	w      io.Writer
	off    int64
	err    error
	page   []byte // the page being made, uncompressed
	comp   []byte // its Snappy block
	hdr    thriftW
	levels []uint32 // definition levels or dictionary indices of a page
	groups []pqGroup
	chunk  *pqChunk
}

type pqGroup struct {
	rows   int64
	chunks []pqChunk
}

func (p *pqWriter) write(b []byte) {
	if p.err != nil {
		return
	}
	n, err := p.w.Write(b)
	p.off += int64(n)
	p.err = err
}

// rowGroup starts a row group of rows rows.
func (p *pqWriter) rowGroup(rows int) {
	p.groups = append(p.groups, pqGroup{rows: int64(rows)})
}

// column starts the next column chunk of the row group.
func (p *pqWriter) column(name string, k pqKind, rows int) {
	g := &p.groups[len(p.groups)-1]
	g.chunks = append(g.chunks, pqChunk{kind: k, name: name, values: int64(rows), offset: -1, dictOff: -1})
	p.chunk = &g.chunks[len(g.chunks)-1]
}

// flushPage writes p.page as a page of type typ holding n values.
func (p *pqWriter) flushPage(typ int32, n int) {
	c := p.chunk
	p.comp = s2.EncodeSnappy(p.comp[:cap(p.comp)], p.page)
	h := &p.hdr
	h.b = h.b[:0]
	h.push()
	h.i32(1, typ)
	h.i32(2, int32(len(p.page)))
	h.i32(3, int32(len(p.comp)))
	if typ == pageDictionary {
		h.begin(7)
		h.i32(1, int32(n))
		h.i32(2, encPlain)
		h.boolean(3, false)
		h.end()
	} else {
		enc := int32(encPlain)
		if c.kind == kindDict {
			enc = encRLEDictionary
		}
		h.begin(5)
		h.i32(1, int32(n))
		h.i32(2, enc)
		h.i32(3, encRLE)
		h.i32(4, encRLE)
		h.end()
		c.dataPages++
	}
	h.end()
	if c.offset < 0 {
		c.offset = p.off
	}
	if typ == pageDictionary {
		c.dictOff = p.off
	} else if c.dataPages == 1 {
		c.dataOff = p.off
	}
	c.uncompressed += int64(len(h.b) + len(p.page))
	c.compressed += int64(len(h.b) + len(p.comp))
	p.write(h.b)
	p.write(p.comp)
	p.page = p.page[:0]
}

// startPage begins a data page of rows lo to hi whose definition levels
// (for an optional column) are 1 but at the rows of nulls (ascending,
// within lo to hi).
func (p *pqWriter) startPage(optional bool, lo, hi int, nulls []int) {
	p.page = p.page[:0]
	if !optional {
		return
	}
	p.page = append(p.page, 0, 0, 0, 0) // the levels' length, set below
	switch {
	case hi == lo:
	case len(nulls) == 0:
		p.page = binary.AppendUvarint(p.page, uint64(hi-lo)<<1)
		p.page = append(p.page, 1)
	default:
		lv := p.levels[:0]
		for range hi - lo {
			lv = append(lv, 1)
		}
		for _, i := range nulls {
			lv[i-lo] = 0
		}
		p.levels = lv
		p.page = appendHybrid(p.page, lv, 1)
	}
	binary.LittleEndian.PutUint32(p.page, uint32(len(p.page)-4))
}

// footer writes the file metadata for schema fields and meta (its keys
// sorted, then ARROW:schema as pqarrow stores it) and the trailer.
func (p *pqWriter) footer(schema *arrow.Schema, rows int64) {
	fields := schema.Fields()
	t := &thriftW{b: make([]byte, 0, 4096)}
	t.push()
	t.i32(1, 2) // version
	t.list(2, ctStruct, len(fields)+1)
	t.push()
	t.str(4, "schema")
	t.i32(5, int32(len(fields)))
	t.end()
	for _, f := range fields {
		k := kindOf(f.Type)
		t.push()
		t.i32(1, k.physical())
		rep := int32(0) // REQUIRED
		if f.Nullable {
			rep = 1 // OPTIONAL
		}
		t.i32(3, rep)
		t.str(4, f.Name)
		k.schemaElement(t)
		t.end()
	}
	t.i64(3, rows)
	t.list(4, ctStruct, len(p.groups))
	for g := range p.groups {
		p.rowGroupMeta(t, &p.groups[g], g)
	}
	md := schema.Metadata()
	t.list(5, ctStruct, md.Len()+1)
	keys, vals := md.Keys(), md.Values()
	for i := range keys {
		t.push()
		t.str(1, keys[i])
		t.str(2, vals[i])
		t.end()
	}
	t.push()
	t.str(1, "ARROW:schema")
	t.str(2, arrowSchemaValue(schema))
	t.end()
	t.str(6, "schedsim")
	t.list(7, ctStruct, len(fields)) // column orders: TYPE_ORDER each
	for range fields {
		t.push()
		t.begin(1)
		t.end()
		t.end()
	}
	t.end()
	p.write(t.b)
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:], uint32(len(t.b)))
	copy(tail[4:], "PAR1")
	p.write(tail[:])
}

func (p *pqWriter) rowGroupMeta(t *thriftW, g *pqGroup, ordinal int) {
	var unc, comp int64
	for _, c := range g.chunks {
		unc += c.uncompressed
		comp += c.compressed
	}
	t.push()
	t.list(1, ctStruct, len(g.chunks))
	for i := range g.chunks {
		c := &g.chunks[i]
		t.push()
		t.i64(2, c.offset)
		t.begin(3)
		t.i32(1, c.kind.physical())
		if c.kind == kindDict {
			t.list(2, ctI32, 3)
			t.b = binary.AppendVarint(t.b, encRLEDictionary)
		} else {
			t.list(2, ctI32, 2)
		}
		t.b = binary.AppendVarint(t.b, encPlain)
		t.b = binary.AppendVarint(t.b, encRLE)
		t.list(3, ctBinary, 1)
		t.b = binary.AppendUvarint(t.b, uint64(len(c.name)))
		t.b = append(t.b, c.name...)
		t.i32(4, codecSnappy)
		t.i64(5, c.values)
		t.i64(6, c.uncompressed)
		t.i64(7, c.compressed)
		t.i64(9, c.dataOff)
		if c.dictOff >= 0 {
			t.i64(11, c.dictOff)
		}
		if c.values > 0 { // statistics (none for no values, as pqarrow)
			t.begin(12)
			if c.stats.has && c.kind != kindString && c.kind != kindDict {
				// Signed order: the deprecated max and min agree.
				t.bin(1, c.stats.max)
				t.bin(2, c.stats.min)
			}
			t.i64(3, c.stats.nulls)
			if c.stats.has {
				t.bin(5, c.stats.max)
				t.bin(6, c.stats.min)
			}
			t.end()
		}
		if c.kind == kindDict {
			t.list(13, ctStruct, 2)
			pageStats(t, pageDictionary, encPlain, 1)
			pageStats(t, pageData, encRLEDictionary, c.dataPages)
		} else {
			t.list(13, ctStruct, 1)
			pageStats(t, pageData, encPlain, c.dataPages)
		}
		t.end()
		t.end()
	}
	t.i64(2, unc)
	t.i64(3, g.rows)
	if len(g.chunks) > 0 {
		t.i64(5, g.chunks[0].offset)
	}
	t.i64(6, comp)
	t.field(7, 4) // i16
	t.b = binary.AppendVarint(t.b, int64(ordinal))
	t.end()
}

func pageStats(t *thriftW, typ, enc, count int32) {
	t.push()
	t.i32(1, typ)
	t.i32(2, enc)
	t.i32(3, count)
	t.end()
}

// arrowSchemaValue is the ARROW:schema metadata value pqarrow stores: the
// schema as an Arrow IPC stream of no batches (flight.SerializeSchema),
// base64.
func arrowSchemaValue(schema *arrow.Schema) string {
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	w.Close()
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// bitWidth is the bit width of dictionary indices below n (at least 1).
func bitWidth(n int) int { return max(1, bits.Len(uint(n-1))) }

// appendPlain appends the values of vals but at the rows of nulls
// (ascending, offset by lo) as PLAIN little-endian values.
func appendPlain[T int32 | int64 | float64](dst []byte, vals []T, nulls []int, lo int) []byte {
	var z T
	for i := range vals {
		if len(nulls) > 0 && nulls[0]-lo == i {
			nulls = nulls[1:]
			continue
		}
		v := &vals[i]
		if unsafe.Sizeof(z) == 4 {
			dst = binary.LittleEndian.AppendUint32(dst, *(*uint32)(unsafe.Pointer(v)))
		} else {
			dst = binary.LittleEndian.AppendUint64(dst, *(*uint64)(unsafe.Pointer(v)))
		}
	}
	return dst
}

// numStats returns the min and max of vals but at the rows of nulls
// (ascending) and NaNs, as PLAIN bytes, or false when there is none.
func numStats[T int32 | int64 | float64](vals []T, nulls []int) (lo, hi []byte, ok bool) {
	var mn, mx T
	for i, v := range vals {
		if len(nulls) > 0 && nulls[0] == i {
			nulls = nulls[1:]
			continue
		}
		if v != v { // NaN
			continue
		}
		if !ok {
			mn, mx, ok = v, v, true
			continue
		}
		mn, mx = min(mn, v), max(mx, v)
	}
	if !ok {
		return nil, nil, false
	}
	if _, float := any(mn).(float64); float {
		// The specification's zeros: -0 as a min, +0 as a max.
		if mn == 0 {
			mn = T(math.Copysign(0, -1))
		}
		if mx == 0 {
			mx = 0
		}
	}
	return appendPlain(nil, []T{mn}, nil, 0), appendPlain(nil, []T{mx}, nil, 0), true
}
