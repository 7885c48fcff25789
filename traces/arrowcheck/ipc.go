package arrowcheck

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// arrowMagic opens and closes an Arrow IPC file.
var arrowMagic = []byte("ARROW1")

// continuation marks an IPC message length prefix (Arrow >= 0.15).
const continuation = 0xFFFFFFFF

// CheckIPCFile verifies the metadata of the Arrow IPC file r of size
// bytes (see the package documentation) before ipc.NewFileReader reads
// it. It reads the footer, the message header of every block and a few
// bytes of each compressed buffer, never the data.
func CheckIPCFile(r io.ReaderAt, size int64, lim Limits) error {
	lim = lim.withDefaults()
	tail := int64(len(arrowMagic) + 4)
	if size < 2*int64(len(arrowMagic))+4+tail {
		return &Error{Where: "file", Msg: fmt.Sprintf("%d bytes is too short for an Arrow IPC file", size)}
	}
	end := make([]byte, tail)
	if _, err := r.ReadAt(end, size-tail); err != nil {
		return &Error{Where: "file", Msg: "reading the footer: " + err.Error()}
	}
	if !bytes.Equal(end[4:], arrowMagic) {
		return &Error{Where: "file", Msg: "does not end with ARROW1"}
	}
	flen := int64(binary.LittleEndian.Uint32(end))
	if flen <= 0 || flen > size-tail-int64(len(arrowMagic)) {
		return &Error{Where: "footer", Msg: fmt.Sprintf("length %d does not fit the %d-byte file", flen, size)}
	}
	if flen > lim.MaxMetadata {
		return &Error{Where: "footer", Msg: fmt.Sprintf("length %d exceeds %d bytes (limit MaxMetadata)", flen, lim.MaxMetadata), Limit: LimitMetadata}
	}
	buf := make([]byte, flen)
	if _, err := r.ReadAt(buf, size-tail-flen); err != nil {
		return &Error{Where: "footer", Msg: "reading: " + err.Error()}
	}
	f := newFB(buf, "footer", lim.MaxMetadata)
	ft, err := f.root("")
	if err != nil {
		return err
	}
	if _, err := ft.scalar(0, 2, "version"); err != nil {
		return err
	}
	schema, ok, err := ft.table(1, "schema")
	if err != nil {
		return err
	}
	if !ok {
		return f.errf("schema", "footer has no schema")
	}
	if err := verifySchema(schema); err != nil {
		return err
	}
	if err := ft.keyValues(4, "custom_metadata"); err != nil {
		return err
	}
	for _, v := range []struct {
		slot int
		name string
		want int64
	}{{2, "dictionaries", headerDictionaryBatch}, {3, "recordBatches", headerRecordBatch}} {
		start, n, err := ft.vector(v.slot, 24, 1, v.name)
		if err != nil {
			return err
		}
		for i := range n {
			p := start + 24*int64(i)
			blk := block{offset: f.i64(p), meta: int64(int32(f.u32(p + 8))), body: f.i64(p + 16)}
			where := fmt.Sprintf("%s[%d]", v.name, i)
			if err := checkBlock(r, size, blk, v.want, where, lim); err != nil {
				return err
			}
		}
	}
	return nil
}

// block is a footer Block: where a message lies in the file.
type block struct{ offset, meta, body int64 }

// checkBlock verifies the message of one block: it lies inside the file,
// its header is a valid flatbuffer of type want, its body length matches,
// and its compressed buffers announce at most MaxMemory bytes.
func checkBlock(r io.ReaderAt, size int64, blk block, want int64, where string, lim Limits) error {
	if blk.offset < 0 || blk.meta < 8 || blk.body < 0 || blk.offset%8 != 0 || blk.meta%8 != 0 || blk.body%8 != 0 ||
		blk.offset > size || blk.meta > size-blk.offset || blk.body > size-blk.offset-blk.meta {
		return &Error{Where: where, Msg: fmt.Sprintf("block at %d (header %d, body %d bytes) is misaligned or lies outside the %d-byte file", blk.offset, blk.meta, blk.body, size)}
	}
	if blk.meta > lim.MaxMetadata {
		return &Error{Where: where, Msg: fmt.Sprintf("message header of %d bytes exceeds %d (limit MaxMetadata)", blk.meta, lim.MaxMetadata), Limit: LimitMetadata}
	}
	buf := make([]byte, blk.meta)
	if _, err := r.ReadAt(buf, blk.offset); err != nil {
		return &Error{Where: where, Msg: "reading the message header: " + err.Error()}
	}
	prefix := int64(4)
	if binary.LittleEndian.Uint32(buf) == continuation {
		prefix = 8
	}
	if l := int64(binary.LittleEndian.Uint32(buf[prefix-4:])); l != blk.meta-prefix {
		return &Error{Where: where, Msg: fmt.Sprintf("message length prefix %d does not match the block's %d", l, blk.meta-prefix)}
	}
	f := newFB(buf[prefix:], where, lim.MaxMetadata)
	m, err := f.root("")
	if err != nil {
		return err
	}
	msg, err := verifyMessage(m)
	if err != nil {
		return err
	}
	if msg.headerType != want {
		return f.errf("header_type", "message type %d, want %d", msg.headerType, want)
	}
	if msg.bodyLength != blk.body {
		return f.errf("bodyLength", "%d, but the block says %d", msg.bodyLength, blk.body)
	}
	if !msg.batch.compressed {
		return nil
	}
	bodyAt := blk.offset + blk.meta
	var head [8 + zstdHeaderMax]byte
	for i, b := range msg.batch.buffers {
		if b.length == 0 {
			continue
		}
		bw := fmt.Sprintf("%s: buffers[%d]", where, i)
		if b.length < 8 {
			return &Error{Where: bw, Msg: fmt.Sprintf("compressed buffer of %d bytes has no length prefix", b.length)}
		}
		n := min(int64(len(head)), b.length)
		if _, err := r.ReadAt(head[:n], bodyAt+b.offset); err != nil {
			return &Error{Where: bw, Msg: "reading: " + err.Error()}
		}
		u := int64(binary.LittleEndian.Uint64(head[:8]))
		if u == -1 {
			continue // stored uncompressed
		}
		if u < 0 || u > lim.MaxMemory {
			return &Error{Where: bw, Msg: fmt.Sprintf("decompresses to %d bytes, more than %d (limit MaxMemory)", u, lim.MaxMemory), Limit: LimitMemory}
		}
		if msg.batch.codec == 1 {
			if err := checkZstdFrame(head[8:n], lim); err != nil {
				err.Where = bw
				return err
			}
		}
	}
	return nil
}

// CheckIPCSchemaMessage verifies b, an encapsulated IPC message holding a
// schema (Parquet's ARROW:schema metadata, base64-decoded), as
// flight.DeserializeSchema reads it.
func CheckIPCSchemaMessage(b []byte, where string, lim Limits) error {
	lim = lim.withDefaults()
	if len(b) < 4 {
		return &Error{Where: where, Msg: fmt.Sprintf("%d bytes is too short for an Arrow schema message", len(b))}
	}
	prefix := 4
	if binary.LittleEndian.Uint32(b) == continuation {
		prefix = 8
		if len(b) < 8 {
			return &Error{Where: where, Msg: "truncated message length"}
		}
	}
	l := int64(int32(binary.LittleEndian.Uint32(b[prefix-4:])))
	if l < 4 || l > int64(len(b)-prefix) {
		return &Error{Where: where, Msg: fmt.Sprintf("message length %d does not fit the %d bytes", l, len(b))}
	}
	f := newFB(b[prefix:int64(prefix)+l], where, lim.MaxMetadata)
	m, err := f.root("")
	if err != nil {
		return err
	}
	msg, err := verifyMessage(m)
	if err != nil {
		return err
	}
	if msg.headerType != headerSchema {
		return f.errf("header_type", "message type %d, want a schema (1)", msg.headerType)
	}
	if msg.bodyLength > int64(len(b))-int64(prefix)-l {
		return f.errf("bodyLength", "%d bytes of body, %d left", msg.bodyLength, int64(len(b))-int64(prefix)-l)
	}
	return nil
}

// zstdHeaderMax is the longest zstd frame header (magic 4, descriptor 1,
// window 1, dictionary id 4, content size 8).
const zstdHeaderMax = 18

// checkZstdFrame checks the header of the zstd frame that b starts with:
// its window (the history a decoder allocates) and content size must not
// exceed MaxMemory. RFC 8878, section 3.1.1.1.
func checkZstdFrame(b []byte, lim Limits) *Error {
	if len(b) < 6 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return nil // not a frame header the decoder will accept: it fails on its own
	}
	fhd := b[4]
	single := fhd&0x20 != 0
	fcsFlag := fhd >> 6
	didFlag := fhd & 3
	p := 5
	var window uint64
	if !single {
		wd := b[p]
		p++
		exp, mant := uint64(wd>>3), uint64(wd&7)
		base := uint64(1) << (10 + exp)
		window = base + base/8*mant
	}
	p += []int{0, 1, 2, 4}[didFlag]
	fcsLen := []int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single {
		fcsLen = 1
	}
	var fcs uint64
	if fcsLen > 0 && p+fcsLen <= len(b) {
		switch fcsLen {
		case 1:
			fcs = uint64(b[p])
		case 2:
			fcs = uint64(binary.LittleEndian.Uint16(b[p:])) + 256
		case 4:
			fcs = uint64(binary.LittleEndian.Uint32(b[p:]))
		case 8:
			fcs = binary.LittleEndian.Uint64(b[p:])
		}
		if single {
			window = fcs
		}
	}
	if window > uint64(lim.MaxMemory) || fcs > uint64(lim.MaxMemory) {
		return &Error{Msg: fmt.Sprintf("zstd frame asks for a %d-byte window and %d bytes of content, more than %d (limit MaxMemory)", window, fcs, lim.MaxMemory), Limit: LimitMemory}
	}
	return nil
}
