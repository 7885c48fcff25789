package arrowcheck

import (
	"encoding/binary"
	"fmt"
)

// Thrift compact protocol types (thrift's TCompactProtocol spec).
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
	tUUID   = 13
)

// thriftMaxDepth bounds struct and container nesting (thrift's own skip
// limit is 64).
const thriftMaxDepth = 64

// tdec decodes a Thrift compact-protocol buffer, checking every length
// against the bytes left before anything relies on it. cost estimates what
// thrift-go materialises (a Go struct per struct, a word per container
// element, the bytes of every string), charged against max.
type tdec struct {
	b     []byte
	p     int
	depth int
	cost  int64
	max   int64
	where string
}

func (d *tdec) errf(format string, args ...any) error {
	return &Error{Where: d.where, Msg: fmt.Sprintf(format, args...) + fmt.Sprintf(" (at byte %d of %d)", d.p, len(d.b))}
}

func (d *tdec) charge(n int64) error {
	d.cost += n
	if d.cost > d.max {
		return &Error{Where: d.where, Msg: fmt.Sprintf("metadata would take more than %d bytes to read (limit MaxMetadata)", d.max), Limit: LimitMetadata}
	}
	return nil
}

func (d *tdec) left() int { return len(d.b) - d.p }

func (d *tdec) byte1() (byte, error) {
	if d.p >= len(d.b) {
		return 0, d.errf("truncated")
	}
	c := d.b[d.p]
	d.p++
	return c, nil
}

func (d *tdec) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.p:])
	if n <= 0 {
		return 0, d.errf("malformed varint")
	}
	d.p += n
	return v, nil
}

func (d *tdec) varint() (int64, error) {
	u, err := d.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// int reads an i16, i32 or i64 (zigzag varints) of type t.
func (d *tdec) int(t byte) (int64, error) {
	switch t {
	case tByte:
		c, err := d.byte1()
		return int64(int8(c)), err
	case tI16, tI32, tI64:
		return d.varint()
	}
	return 0, d.errf("want an integer, got type %d", t)
}

// binary reads a string or binary value.
func (d *tdec) binary() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(d.left()) || n > 1<<31-1 {
		return nil, d.errf("string of %d bytes, %d left", n, d.left())
	}
	if err := d.charge(int64(n) + 16); err != nil {
		return nil, err
	}
	v := d.b[d.p : d.p+int(n)]
	d.p += int(n)
	return v, nil
}

// listHeader reads a list or set header: element type and count, the
// count at most the bytes left (every element takes at least one).
func (d *tdec) listHeader() (byte, int, error) {
	h, err := d.byte1()
	if err != nil {
		return 0, 0, err
	}
	n, et := uint64(h>>4), h&0x0f
	if n == 15 {
		if n, err = d.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	if n > uint64(d.left()) {
		return 0, 0, d.errf("list of %d elements, %d bytes left", n, d.left())
	}
	return et, int(n), d.charge(int64(n) * 8)
}

// list calls fn for each element of a list (after its header).
func (d *tdec) list(fn func(i int, et byte) error) error {
	et, n, err := d.listHeader()
	if err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	for i := range n {
		if err := fn(i, et); err != nil {
			return err
		}
	}
	return nil
}

func (d *tdec) enter() error {
	d.depth++
	if d.depth > thriftMaxDepth {
		return d.errf("nested more than %d deep", thriftMaxDepth)
	}
	return nil
}

func (d *tdec) leave() { d.depth-- }

// skip checks and skips one value of type t.
func (d *tdec) skip(t byte) error {
	switch t {
	case tTrue, tFalse:
		return nil // a struct field's value is in its header
	case tByte:
		_, err := d.byte1()
		return err
	case tI16, tI32, tI64:
		_, err := d.uvarint()
		return err
	case tDouble:
		if d.left() < 8 {
			return d.errf("truncated double")
		}
		d.p += 8
		return nil
	case tUUID:
		if d.left() < 16 {
			return d.errf("truncated uuid")
		}
		d.p += 16
		return nil
	case tBinary:
		_, err := d.binary()
		return err
	case tList, tSet:
		return d.list(func(_ int, et byte) error { return d.skipElem(et) })
	case tMap:
		n, err := d.uvarint()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n > uint64(d.left())/2 {
			return d.errf("map of %d entries, %d bytes left", n, d.left())
		}
		kv, err := d.byte1()
		if err != nil {
			return err
		}
		if err := d.charge(int64(n) * 16); err != nil {
			return err
		}
		if err := d.enter(); err != nil {
			return err
		}
		defer d.leave()
		for range n {
			if err := d.skipElem(kv >> 4); err != nil {
				return err
			}
			if err := d.skipElem(kv & 0x0f); err != nil {
				return err
			}
		}
		return nil
	case tStruct:
		return d.structure(func(byte, int16) (bool, error) { return false, nil })
	}
	return d.errf("unknown thrift type %d", t)
}

// skipElem skips a container element: booleans take a byte there.
func (d *tdec) skipElem(t byte) error {
	if t == tTrue || t == tFalse {
		_, err := d.byte1()
		return err
	}
	return d.skip(t)
}

// structure reads the fields of a struct up to its stop byte. fn is given
// each field's type and id; it reads the value itself and returns true,
// or returns false to have it skipped.
func (d *tdec) structure(fn func(t byte, id int16) (bool, error)) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := d.charge(256); err != nil {
		return err
	}
	var last int16
	for {
		h, err := d.byte1()
		if err != nil {
			return err
		}
		if h == tStop {
			return nil
		}
		t := h & 0x0f
		id := last + int16(h>>4)
		if h>>4 == 0 {
			v, err := d.varint()
			if err != nil {
				return err
			}
			id = int16(v)
		}
		last = id
		done, err := fn(t, id)
		if err != nil {
			return err
		}
		if !done {
			if err := d.skip(t); err != nil {
				return err
			}
		}
	}
}
