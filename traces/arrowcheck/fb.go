package arrowcheck

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Error is a problem in a file's metadata: Where names the structure
// ("footer: schema.fields[3].children", "row group 2, column 5, page at
// byte 1234"), Msg what is wrong, and Limit, when a limit was exceeded
// rather than the file being malformed, which one.
type Error struct {
	Where string
	Msg   string
	Limit LimitKind
}

func (e *Error) Error() string {
	if e.Where == "" {
		return e.Msg
	}
	return e.Where + ": " + e.Msg
}

// LimitKind names a limit of Limits.
type LimitKind uint8

const (
	NoLimit       LimitKind = iota
	LimitMetadata           // Limits.MaxMetadata
	LimitMemory             // Limits.MaxMemory
	LimitPage               // Limits.MaxPage
)

// Limits bound what a file may make its reader allocate. Zero fields take
// the defaults below.
type Limits struct {
	// MaxMetadata bounds the bytes of one metadata structure: an Arrow
	// footer or message header, a Parquet footer or page header, and what
	// a schema materialises into (names, metadata, one Go value per
	// field). Default 16 MiB.
	MaxMetadata int64
	// MaxMemory bounds what the allocator of NewAllocator hands out at
	// once, and what a compressed Arrow buffer may announce. Default 1 GiB.
	MaxMemory int64
	// MaxPage bounds the uncompressed size of one Parquet page (and so
	// the values of a dictionary page). Default 64 MiB.
	MaxPage int64
}

// Defaults of Limits.
const (
	DefaultMaxMetadata = 16 << 20
	DefaultMaxMemory   = 1 << 30
	DefaultMaxPage     = 64 << 20
)

// MaxDepth bounds the nesting of an Arrow schema (arrow-go's own limit
// when loading arrays is 64).
const MaxDepth = 64

// maxNodes bounds the tables one verification visits (a DAG that reuses
// a sub-table is charged at every use).
const maxNodes = 1 << 20

func (l Limits) withDefaults() Limits {
	if l.MaxMetadata <= 0 {
		l.MaxMetadata = DefaultMaxMetadata
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = DefaultMaxMemory
	}
	if l.MaxPage <= 0 {
		l.MaxPage = DefaultMaxPage
	}
	return l
}

// fb is a flatbuffer being verified. cost estimates the bytes a reader
// materialises from what has been visited (strings, Go values per vector
// element), charged at every visit.
type fb struct {
	b     []byte
	where string // what the buffer is, for errors ("footer")
	cost  int64
	max   int64
	nodes int
}

func newFB(b []byte, where string, max int64) *fb { return &fb{b: b, where: where, max: max} }

func (f *fb) errf(path, format string, args ...any) error {
	w := f.where
	if path != "" {
		w += ": " + path
	}
	return &Error{Where: w, Msg: fmt.Sprintf(format, args...)}
}

func (f *fb) charge(path string, n int64) error {
	f.cost += n
	if f.cost > f.max {
		return &Error{Where: f.where + ": " + path, Msg: fmt.Sprintf("metadata would take more than %d bytes to read (limit MaxMetadata)", f.max), Limit: LimitMetadata}
	}
	return nil
}

func (f *fb) in(p, n int64) bool {
	return p >= 0 && n >= 0 && p <= int64(len(f.b)) && n <= int64(len(f.b))-p
}

func (f *fb) u32(p int64) uint32 { return binary.LittleEndian.Uint32(f.b[p:]) }
func (f *fb) u16(p int64) uint16 { return binary.LittleEndian.Uint16(f.b[p:]) }
func (f *fb) i64(p int64) int64  { return int64(binary.LittleEndian.Uint64(f.b[p:])) }

// fbTable is a verified table: its vtable and inline area lie inside the
// buffer.
type fbTable struct {
	f            *fb
	pos, vt      int64
	vlen, tlen   int64
	path         string
	missingSlots bool
}

// root returns the root table of the buffer.
func (f *fb) root(path string) (fbTable, error) {
	if !f.in(0, 4) {
		return fbTable{}, f.errf(path, "buffer of %d bytes is too short for a flatbuffer", len(f.b))
	}
	return f.table(int64(f.u32(0)), path)
}

// table verifies the table at pos.
func (f *fb) table(pos int64, path string) (fbTable, error) {
	f.nodes++
	if f.nodes > maxNodes {
		return fbTable{}, &Error{Where: f.where + ": " + path, Msg: fmt.Sprintf("more than %d tables", maxNodes), Limit: LimitMetadata}
	}
	if !f.in(pos, 4) {
		return fbTable{}, f.errf(path, "table at %d lies outside the %d-byte buffer", pos, len(f.b))
	}
	vt := pos - int64(int32(f.u32(pos)))
	if !f.in(vt, 4) {
		return fbTable{}, f.errf(path, "vtable at %d lies outside the %d-byte buffer", vt, len(f.b))
	}
	vlen, tlen := int64(f.u16(vt)), int64(f.u16(vt+2))
	if vlen < 4 || vlen%2 != 0 || !f.in(vt, vlen) {
		return fbTable{}, f.errf(path, "vtable of %d bytes at %d is malformed", vlen, vt)
	}
	if tlen < 4 || !f.in(pos, tlen) {
		return fbTable{}, f.errf(path, "table of %d bytes at %d lies outside the buffer", tlen, pos)
	}
	return fbTable{f: f, pos: pos, vt: vt, vlen: vlen, tlen: tlen, path: path}, nil
}

func (t fbTable) sub(name string) string {
	if t.path == "" {
		return name
	}
	return t.path + "." + name
}

// field returns the position of field slot (0-based) when present,
// checking that size bytes from it lie inside the table.
func (t fbTable) field(slot int, size int64, name string) (int64, bool, error) {
	vo := int64(4 + 2*slot)
	if vo >= t.vlen {
		return 0, false, nil
	}
	off := int64(t.f.u16(t.vt + vo))
	if off == 0 {
		return 0, false, nil
	}
	if off+size > t.tlen {
		return 0, false, t.f.errf(t.sub(name), "field at offset %d of a %d-byte table", off, t.tlen)
	}
	return t.pos + off, true, nil
}

// scalar checks a scalar field of size bytes and returns it as an
// int64 (sign-extended for 1, 2, 4 and 8 bytes); 0 when absent.
func (t fbTable) scalar(slot int, size int64, name string) (int64, error) {
	p, ok, err := t.field(slot, size, name)
	if err != nil || !ok {
		return 0, err
	}
	switch size {
	case 1:
		return int64(int8(t.f.b[p])), nil
	case 2:
		return int64(int16(t.f.u16(p))), nil
	case 4:
		return int64(int32(t.f.u32(p))), nil
	}
	return t.f.i64(p), nil
}

// ref follows the offset in field slot.
func (t fbTable) ref(slot int, name string) (int64, bool, error) {
	p, ok, err := t.field(slot, 4, name)
	if err != nil || !ok {
		return 0, false, err
	}
	target := p + int64(t.f.u32(p))
	if !t.f.in(target, 4) {
		return 0, false, t.f.errf(t.sub(name), "offset to %d lies outside the %d-byte buffer", target, len(t.f.b))
	}
	return target, true, nil
}

// table returns the sub-table in field slot.
func (t fbTable) table(slot int, name string) (fbTable, bool, error) {
	p, ok, err := t.ref(slot, name)
	if err != nil || !ok {
		return fbTable{}, false, err
	}
	sub, err := t.f.table(p, t.sub(name))
	return sub, err == nil, err
}

// vector returns the start and length of the vector in field slot, whose
// elements are elemSize bytes, charging goSize bytes per element.
func (t fbTable) vector(slot int, elemSize, goSize int64, name string) (start int64, n int, err error) {
	p, ok, err := t.ref(slot, name)
	if err != nil || !ok {
		return 0, 0, err
	}
	l := int64(t.f.u32(p))
	start = p + 4
	if !t.f.in(start, l*elemSize) {
		return 0, 0, t.f.errf(t.sub(name), "vector of %d elements of %d bytes at %d exceeds the %d-byte buffer", l, elemSize, start, len(t.f.b))
	}
	if err := t.f.charge(t.sub(name), l*goSize); err != nil {
		return 0, 0, err
	}
	return start, int(l), nil
}

// str checks the string in field slot and returns its length.
func (t fbTable) str(slot int, name string) (int64, error) {
	_, n, err := t.vector(slot, 1, 1, name)
	if err != nil {
		return 0, err
	}
	return int64(n), t.f.charge(t.sub(name), 16)
}

// strValue returns the string in field slot ("" when absent), verified.
func (t fbTable) strValue(slot int, name string) (string, error) {
	start, n, err := t.vector(slot, 1, 1, name)
	if err != nil || n == 0 {
		return "", err
	}
	return string(t.f.b[start : start+int64(n)]), nil
}

// tables calls fn for each table of the vector of tables in field slot,
// charging goSize bytes per element.
func (t fbTable) tables(slot int, goSize int64, name string, fn func(i int, sub fbTable) error) error {
	start, n, err := t.vector(slot, 4, goSize, name)
	if err != nil {
		return err
	}
	for i := range n {
		e := start + 4*int64(i)
		path := t.sub(name) + "[" + strconv.Itoa(i) + "]"
		target := e + int64(t.f.u32(e))
		sub, err := t.f.table(target, path)
		if err != nil {
			return err
		}
		if err := fn(i, sub); err != nil {
			return err
		}
	}
	return nil
}

// Go sizes charged per element: an arrow.Field (name, type, nullable,
// metadata), a metadata key and value, a slice element.
const (
	goField = 128
	goKV    = 48
	goWord  = 8
)

// keyValues verifies a [KeyValue] vector (key slot 0, value slot 1).
func (t fbTable) keyValues(slot int, name string) error {
	return t.tables(slot, goKV, name, func(_ int, kv fbTable) error {
		if _, err := kv.str(0, "key"); err != nil {
			return err
		}
		_, err := kv.str(1, "value")
		return err
	})
}

// Arrow's Type union (Schema.fbs), as Field.type_type numbers it.
const (
	typeTimestamp = 10
	typeUnion     = 14
	maxTypeID     = 26 // LargeListView
)

// verifySchema verifies a Schema table (Schema.fbs): endianness 0,
// fields 1, custom_metadata 2, features 3.
func verifySchema(s fbTable) error {
	if _, err := s.scalar(0, 2, "endianness"); err != nil {
		return err
	}
	if err := s.tables(1, goField, "fields", func(_ int, f fbTable) error { return verifyField(f, 1) }); err != nil {
		return err
	}
	if err := s.keyValues(2, "custom_metadata"); err != nil {
		return err
	}
	_, _, err := s.vector(3, 8, goWord, "features")
	return err
}

// verifyField verifies a Field table: name 0, nullable 1, type_type 2,
// type 3, dictionary 4, children 5, custom_metadata 6.
func verifyField(f fbTable, depth int) error {
	if depth > MaxDepth {
		return &Error{Where: f.f.where + ": " + f.path, Msg: fmt.Sprintf("fields nest more than %d deep", MaxDepth), Limit: LimitMetadata}
	}
	if _, err := f.str(0, "name"); err != nil {
		return err
	}
	if _, err := f.scalar(1, 1, "nullable"); err != nil {
		return err
	}
	tt, err := f.scalar(2, 1, "type_type")
	if err != nil {
		return err
	}
	if tt < 0 || tt > maxTypeID {
		return f.f.errf(f.sub("type_type"), "unknown type %d", tt)
	}
	typ, ok, err := f.table(3, "type")
	if err != nil {
		return err
	}
	if ok {
		switch tt {
		case typeTimestamp:
			if _, err := typ.scalar(0, 2, "unit"); err != nil {
				return err
			}
			if _, err := typ.str(1, "timezone"); err != nil {
				return err
			}
		case typeUnion:
			if _, err := typ.scalar(0, 2, "mode"); err != nil {
				return err
			}
			if _, _, err := typ.vector(1, 4, 1, "typeIds"); err != nil {
				return err
			}
		default:
			// The other types hold scalars only, at most 12 bytes
			// (Decimal's precision, scale and bitWidth).
			for slot := 0; slot < 3; slot++ {
				if _, _, err := typ.field(slot, 1, "type"); err != nil {
					return err
				}
			}
		}
	}
	dict, ok, err := f.table(4, "dictionary")
	if err != nil {
		return err
	}
	if ok {
		if _, err := dict.scalar(0, 8, "id"); err != nil {
			return err
		}
		if it, ok, err := dict.table(1, "indexType"); err != nil {
			return err
		} else if ok {
			if _, err := it.scalar(0, 4, "bitWidth"); err != nil {
				return err
			}
			if _, err := it.scalar(1, 1, "is_signed"); err != nil {
				return err
			}
		}
		if _, err := dict.scalar(2, 1, "isOrdered"); err != nil {
			return err
		}
		if _, err := dict.scalar(3, 2, "dictionaryKind"); err != nil {
			return err
		}
	}
	if err := f.tables(5, goField, "children", func(_ int, c fbTable) error { return verifyField(c, depth+1) }); err != nil {
		return err
	}
	return f.keyValues(6, "custom_metadata")
}

// Message header types (Message.fbs).
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
)

// message is what verifyMessage learns of a Message.
type message struct {
	headerType int64
	bodyLength int64
	batch      recordBatch
}

// recordBatch is a verified RecordBatch.
type recordBatch struct {
	length     int64
	buffers    []bufferSpan
	compressed bool
	codec      int64 // 0 LZ4_FRAME, 1 ZSTD
}

type bufferSpan struct{ offset, length int64 }

// verifyMessage verifies a Message table: version 0, header_type 1,
// header 2, bodyLength 3, custom_metadata 4.
func verifyMessage(m fbTable) (message, error) {
	var msg message
	if _, err := m.scalar(0, 2, "version"); err != nil {
		return msg, err
	}
	ht, err := m.scalar(1, 1, "header_type")
	if err != nil {
		return msg, err
	}
	msg.headerType = ht
	if msg.bodyLength, err = m.scalar(3, 8, "bodyLength"); err != nil {
		return msg, err
	}
	if msg.bodyLength < 0 {
		return msg, m.f.errf(m.sub("bodyLength"), "negative body length %d", msg.bodyLength)
	}
	if err := m.keyValues(4, "custom_metadata"); err != nil {
		return msg, err
	}
	h, ok, err := m.table(2, "header")
	if err != nil {
		return msg, err
	}
	if !ok {
		return msg, m.f.errf(m.sub("header"), "message has no header")
	}
	switch ht {
	case headerSchema:
		err = verifySchema(h)
	case headerRecordBatch:
		msg.batch, err = verifyRecordBatch(h, msg.bodyLength)
	case headerDictionaryBatch:
		if _, err = h.scalar(0, 8, "id"); err != nil {
			return msg, err
		}
		if _, err = h.scalar(2, 1, "isDelta"); err != nil {
			return msg, err
		}
		data, ok, derr := h.table(1, "data")
		if derr != nil {
			return msg, derr
		}
		if !ok {
			return msg, h.f.errf(h.sub("data"), "dictionary batch without data")
		}
		msg.batch, err = verifyRecordBatch(data, msg.bodyLength)
	default:
		err = m.f.errf(m.sub("header_type"), "unsupported message type %d", ht)
	}
	return msg, err
}

// verifyRecordBatch verifies a RecordBatch table: length 0, nodes 1,
// buffers 2, compression 3, variadicBufferCounts 4; every node's counts
// are non-negative and every buffer lies inside the body.
func verifyRecordBatch(rb fbTable, body int64) (recordBatch, error) {
	var b recordBatch
	var err error
	if b.length, err = rb.scalar(0, 8, "length"); err != nil {
		return b, err
	}
	if b.length < 0 {
		return b, rb.f.errf(rb.sub("length"), "negative row count %d", b.length)
	}
	start, n, err := rb.vector(1, 16, 1, "nodes")
	if err != nil {
		return b, err
	}
	for i := range n {
		p := start + 16*int64(i)
		length, nulls := rb.f.i64(p), rb.f.i64(p+8)
		if length < 0 || nulls < 0 || nulls > length {
			return b, rb.f.errf(fmt.Sprintf("%s[%d]", rb.sub("nodes"), i), "length %d, null count %d", length, nulls)
		}
	}
	start, n, err = rb.vector(2, 16, 1, "buffers")
	if err != nil {
		return b, err
	}
	b.buffers = make([]bufferSpan, n)
	for i := range n {
		p := start + 16*int64(i)
		off, length := rb.f.i64(p), rb.f.i64(p+8)
		if off < 0 || length < 0 || off > body || length > body-off {
			return b, rb.f.errf(fmt.Sprintf("%s[%d]", rb.sub("buffers"), i), "offset %d, length %d outside the %d-byte body", off, length, body)
		}
		b.buffers[i] = bufferSpan{off, length}
	}
	comp, ok, err := rb.table(3, "compression")
	if err != nil {
		return b, err
	}
	if ok {
		b.compressed = true
		if b.codec, err = comp.scalar(0, 1, "codec"); err != nil {
			return b, err
		}
		if b.codec != 0 && b.codec != 1 {
			return b, comp.f.errf(comp.sub("codec"), "unknown compression codec %d (want 0 LZ4_FRAME or 1 ZSTD)", b.codec)
		}
		if _, err := comp.scalar(1, 1, "method"); err != nil {
			return b, err
		}
	}
	_, _, err = rb.vector(4, 8, 1, "variadicBufferCounts")
	return b, err
}
