package arrowcheck

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ParquetInfo is what CheckParquetFile learned of a file.
type ParquetInfo struct {
	NumRows int64
	// RowGroupRows are the row counts of the row groups, in order.
	RowGroupRows []int64
}

// Parquet physical types (parquet.thrift Type).
const (
	pqBoolean = iota
	pqInt32
	pqInt64
	pqInt96
	pqFloat
	pqDouble
	pqByteArray
	pqFixedLenByteArray
)

// Parquet page types (parquet.thrift PageType).
const (
	pageData       = 0
	pageIndex      = 1
	pageDictionary = 2
	pageDataV2     = 3
)

type schemaElem struct {
	typ, typeLength, numChildren int64
	hasType, hasChildren         bool
}

type chunkMeta struct {
	typ                  int64
	numValues            int64
	compressed           int64
	dataOffset, dictOff  int64
	hasMeta, hasFilePath bool
}

// CheckParquetFile verifies the metadata of the Parquet file r of size
// bytes (see the package documentation) before file.NewParquetReader
// reads it: the Thrift footer, the ARROW:schema metadata, and the header
// of every page of every column chunk. It reads no page data.
func CheckParquetFile(r io.ReaderAt, size int64, lim Limits) (ParquetInfo, error) {
	lim = lim.withDefaults()
	var info ParquetInfo
	if size < 12 {
		return info, &Error{Where: "file", Msg: fmt.Sprintf("%d bytes is too short for a Parquet file", size)}
	}
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return info, &Error{Where: "file", Msg: "reading the footer: " + err.Error()}
	}
	switch string(tail[4:]) {
	case "PAR1":
	case "PARE":
		return info, &Error{Where: "footer", Msg: "encrypted Parquet files are not supported"}
	default:
		return info, &Error{Where: "file", Msg: "does not end with PAR1"}
	}
	flen := int64(binary.LittleEndian.Uint32(tail[:4]))
	if flen == 0 || flen > size-12 {
		return info, &Error{Where: "footer", Msg: fmt.Sprintf("length %d does not fit the %d-byte file", flen, size)}
	}
	if flen > lim.MaxMetadata {
		return info, &Error{Where: "footer", Msg: fmt.Sprintf("length %d exceeds %d bytes (limit MaxMetadata)", flen, lim.MaxMetadata), Limit: LimitMetadata}
	}
	buf := make([]byte, flen)
	if _, err := r.ReadAt(buf, size-8-flen); err != nil {
		return info, &Error{Where: "footer", Msg: "reading: " + err.Error()}
	}
	d := &tdec{b: buf, max: 16 * lim.MaxMetadata, where: "footer"}
	var elems []schemaElem
	var groups [][]chunkMeta
	numRows := int64(-1)
	var arrowSchemas [][]byte
	err := d.structure(func(t byte, id int16) (bool, error) {
		switch {
		case id == 2 && t == tList: // schema
			return true, d.list(func(_ int, et byte) error {
				if et != tStruct {
					return d.errf("schema element of type %d, want a struct", et)
				}
				var e schemaElem
				err := d.structure(func(t byte, id int16) (bool, error) {
					var err error
					switch {
					case id == 1 && t == tI32:
						e.typ, err = d.int(t)
						e.hasType = true
					case id == 2 && t == tI32:
						e.typeLength, err = d.int(t)
					case id == 5 && t == tI32:
						e.numChildren, err = d.int(t)
						e.hasChildren = true
					default:
						return false, nil
					}
					return true, err
				})
				elems = append(elems, e)
				return err
			})
		case id == 3 && (t == tI64 || t == tI32):
			v, err := d.int(t)
			numRows = v
			return true, err
		case id == 4 && t == tList: // row_groups
			return true, d.list(func(_ int, et byte) error {
				if et != tStruct {
					return d.errf("row group of type %d, want a struct", et)
				}
				var cols []chunkMeta
				rows := int64(-1)
				err := d.structure(func(t byte, id int16) (bool, error) {
					switch {
					case id == 1 && t == tList:
						return true, d.list(func(_ int, et byte) error {
							if et != tStruct {
								return d.errf("column chunk of type %d, want a struct", et)
							}
							c, err := readChunk(d)
							cols = append(cols, c)
							return err
						})
					case id == 3 && (t == tI64 || t == tI32):
						v, err := d.int(t)
						rows = v
						return true, err
					}
					return false, nil
				})
				if err == nil && rows < 0 {
					err = d.errf("row group %d has no or a negative row count (%d)", len(groups), rows)
				}
				groups = append(groups, cols)
				info.RowGroupRows = append(info.RowGroupRows, rows)
				return err
			})
		case id == 5 && t == tList: // key_value_metadata
			return true, d.list(func(_ int, et byte) error {
				if et != tStruct {
					return d.errf("key-value metadata of type %d, want a struct", et)
				}
				var key, val []byte
				err := d.structure(func(t byte, id int16) (bool, error) {
					var err error
					switch {
					case id == 1 && t == tBinary:
						key, err = d.binary()
					case id == 2 && t == tBinary:
						val, err = d.binary()
					default:
						return false, nil
					}
					return true, err
				})
				if string(key) == "ARROW:schema" {
					arrowSchemas = append(arrowSchemas, val)
				}
				return err
			})
		}
		return false, nil
	})
	if err != nil {
		return info, err
	}
	if numRows < 0 {
		return info, &Error{Where: "footer: num_rows", Msg: fmt.Sprintf("missing or negative (%d)", numRows)}
	}
	info.NumRows = numRows
	if err := checkSchemaTree(elems); err != nil {
		return info, err
	}
	for _, s := range arrowSchemas {
		if err := checkArrowSchemaValue(s, lim); err != nil {
			return info, err
		}
	}
	leaves := leafElems(elems)
	for g, cols := range groups {
		for c, col := range cols {
			where := fmt.Sprintf("row group %d, column %d", g, c)
			if col.hasFilePath {
				return info, &Error{Where: where, Msg: "column chunk in another file (file_path) is not supported"}
			}
			if !col.hasMeta {
				return info, &Error{Where: where, Msg: "column chunk without metadata"}
			}
			width := int64(0)
			if c < len(leaves) {
				width = leaves[c].typeLength
			}
			if err := checkPages(r, size-8-flen, col, width, where, lim); err != nil {
				return info, err
			}
		}
	}
	return info, nil
}

// readChunk reads a ColumnChunk: file_path 1, meta_data 3 (ColumnMetaData:
// type 1, num_values 5, total_compressed_size 7, data_page_offset 9,
// dictionary_page_offset 11).
func readChunk(d *tdec) (chunkMeta, error) {
	var c chunkMeta
	err := d.structure(func(t byte, id int16) (bool, error) {
		switch {
		case id == 1 && t == tBinary:
			c.hasFilePath = true
			return false, nil
		case id == 3 && t == tStruct:
			c.hasMeta = true
			return true, d.structure(func(t byte, id int16) (bool, error) {
				var err error
				switch {
				case id == 1 && t == tI32:
					c.typ, err = d.int(t)
				case id == 5 && t == tI64:
					c.numValues, err = d.int(t)
				case id == 7 && t == tI64:
					c.compressed, err = d.int(t)
				case id == 9 && t == tI64:
					c.dataOffset, err = d.int(t)
				case id == 11 && t == tI64:
					c.dictOff, err = d.int(t)
				default:
					return false, nil
				}
				return true, err
			})
		}
		return false, nil
	})
	return c, err
}

// checkSchemaTree checks the flattened schema as arrow-go rebuilds it
// (schema.FromParquet): every group's num_children is non-negative and
// no more than the elements left, and groups nest at most MaxDepth deep.
func checkSchemaTree(elems []schemaElem) error {
	if len(elems) == 0 {
		return &Error{Where: "footer: schema", Msg: "no schema elements"}
	}
	pos := 0
	var walk func(depth int) error
	walk = func(depth int) error {
		if depth > MaxDepth {
			return &Error{Where: "footer: schema", Msg: fmt.Sprintf("groups nest more than %d deep", MaxDepth), Limit: LimitMetadata}
		}
		if pos >= len(elems) {
			return &Error{Where: "footer: schema", Msg: fmt.Sprintf("the groups' num_children add up to more than the %d elements", len(elems))}
		}
		e := elems[pos]
		at := pos
		pos++
		if e.numChildren < 0 || e.numChildren > int64(len(elems)-pos) {
			return &Error{Where: fmt.Sprintf("footer: schema[%d].num_children", at), Msg: fmt.Sprintf("%d, but %d elements follow", e.numChildren, len(elems)-pos)}
		}
		for range e.numChildren {
			if err := walk(depth + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(0)
}

// leafElems returns the leaf schema elements in order: column i of a row
// group is leaf i.
func leafElems(elems []schemaElem) []schemaElem {
	var out []schemaElem
	for i, e := range elems {
		if i > 0 && e.numChildren == 0 {
			out = append(out, e)
		}
	}
	return out
}

// checkArrowSchemaValue base64-decodes an ARROW:schema value as pqarrow
// does and verifies the schema message.
func checkArrowSchemaValue(v []byte, lim Limits) error {
	var dec []byte
	var err error
	if len(v)%4 == 0 {
		dec, err = base64.StdEncoding.AppendDecode(nil, v)
	}
	if len(dec) == 0 || err != nil {
		dec, err = base64.RawStdEncoding.AppendDecode(nil, v)
	}
	if err != nil {
		return &Error{Where: "footer: ARROW:schema", Msg: "not base64: " + err.Error()}
	}
	return CheckIPCSchemaMessage(dec, "footer: ARROW:schema", lim)
}

// minValueBytes is the fewest bytes a PLAIN value of a physical type takes
// (a bit for booleans, counted as 0 here and bounded by bits below).
func minValueBytes(typ, width int64) int64 {
	switch typ {
	case pqInt32, pqFloat, pqByteArray:
		return 4
	case pqInt64, pqDouble:
		return 8
	case pqInt96:
		return 12
	case pqFixedLenByteArray:
		return max(width, 1)
	}
	return 0
}

// checkPages reads the header of every page of a column chunk: pages lie
// inside the chunk, their sizes are non-negative, uncompressed sizes are
// at most MaxPage, and a dictionary page holds no more values than its
// bytes can encode. dataEnd is where the footer begins.
func checkPages(r io.ReaderAt, dataEnd int64, col chunkMeta, width int64, where string, lim Limits) error {
	start := col.dataOffset
	if col.dictOff > 0 && col.dictOff < start {
		start = col.dictOff
	}
	if start < 4 || col.compressed < 0 || start > dataEnd || col.compressed > dataEnd-start {
		return &Error{Where: where, Msg: fmt.Sprintf("chunk at byte %d of %d bytes lies outside the file's %d bytes of data", start, col.compressed, dataEnd)}
	}
	if col.numValues < 0 {
		return &Error{Where: where, Msg: fmt.Sprintf("negative value count %d", col.numValues)}
	}
	end := start + col.compressed
	var win []byte
	winAt := int64(-1)
	for pos := start; pos < end; {
		pw := fmt.Sprintf("%s, page at byte %d", where, pos)
		var hdr pageHeader
		var hlen int
		for want := int64(16 << 10); ; want *= 4 {
			n := min(want, end-pos, lim.MaxMetadata)
			if winAt < 0 || pos < winAt || pos+n > winAt+int64(len(win)) {
				if int64(cap(win)) < n {
					win = make([]byte, n)
				}
				win = win[:n]
				if _, err := r.ReadAt(win, pos); err != nil && !errors.Is(err, io.EOF) {
					return &Error{Where: pw, Msg: "reading the page header: " + err.Error()}
				}
				winAt = pos
			}
			d := &tdec{b: win[pos-winAt : pos-winAt+n], max: lim.MaxMetadata, where: pw}
			var err error
			if hdr, err = readPageHeader(d); err == nil {
				hlen = d.p
				break
			}
			if n >= end-pos || n >= lim.MaxMetadata {
				return err // not for want of bytes
			}
		}
		body := end - pos - int64(hlen)
		switch {
		case hdr.compressed > body:
			return &Error{Where: pw, Msg: fmt.Sprintf("page of %d bytes, %d left in the chunk", hdr.compressed, body)}
		case hdr.uncompressed > lim.MaxPage:
			return &Error{Where: pw, Msg: fmt.Sprintf("page decompresses to %d bytes, more than %d (limit MaxPage)", hdr.uncompressed, lim.MaxPage), Limit: LimitPage}
		case hdr.numValues < 0:
			return &Error{Where: pw, Msg: fmt.Sprintf("negative value count %d", hdr.numValues)}
		case hdr.levelBytes < 0 || hdr.levelBytes > hdr.uncompressed || hdr.levelBytes > hdr.compressed:
			return &Error{Where: pw, Msg: fmt.Sprintf("levels of %d bytes in a page of %d", hdr.levelBytes, hdr.compressed)}
		}
		if hdr.typ == pageDictionary {
			mb := minValueBytes(col.typ, width)
			if mb == 0 && hdr.numValues > 8*hdr.uncompressed || mb > 0 && hdr.numValues > hdr.uncompressed/mb {
				return &Error{Where: pw, Msg: fmt.Sprintf("dictionary of %d values in %d bytes", hdr.numValues, hdr.uncompressed)}
			}
		}
		pos += int64(hlen) + hdr.compressed
	}
	return nil
}

type pageHeader struct {
	typ, uncompressed, compressed int64
	numValues                     int64
	levelBytes                    int64 // v2: definition + repetition levels
}

// readPageHeader reads a PageHeader: type 1, uncompressed_page_size 2,
// compressed_page_size 3, data_page_header 5 (num_values 1),
// dictionary_page_header 7 (num_values 1), data_page_header_v2 8
// (num_values 1, definition_levels_byte_length 5,
// repetition_levels_byte_length 6).
func readPageHeader(d *tdec) (pageHeader, error) {
	h := pageHeader{typ: -1, uncompressed: -1, compressed: -1}
	err := d.structure(func(t byte, id int16) (bool, error) {
		var err error
		switch {
		case id == 1 && t == tI32:
			h.typ, err = d.int(t)
		case id == 2 && t == tI32:
			h.uncompressed, err = d.int(t)
		case id == 3 && t == tI32:
			h.compressed, err = d.int(t)
		case (id == 5 || id == 7 || id == 8) && t == tStruct:
			v2 := id == 8
			err = d.structure(func(t byte, id int16) (bool, error) {
				var err error
				var v int64
				switch {
				case id == 1 && t == tI32:
					h.numValues, err = d.int(t)
				case v2 && (id == 5 || id == 6) && t == tI32:
					v, err = d.int(t)
					if v < 0 {
						h.levelBytes = -1 << 40
					} else if h.levelBytes >= 0 {
						h.levelBytes += v
					}
				default:
					return false, nil
				}
				return true, err
			})
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return h, err
	}
	if h.typ < 0 || h.uncompressed < 0 || h.compressed < 0 {
		return h, d.errf("page header without a type or with a missing or negative size (type %d, uncompressed %d, compressed %d)", h.typ, h.uncompressed, h.compressed)
	}
	return h, nil
}
