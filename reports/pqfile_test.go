package reports

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/traces/arrowcheck"
	"github.com/schedsim/schedsim/workload"
)

// arrowWritten reads the Parquet file data with pqarrow and writes its
// table again with pqarrow's writer, as WriteJobsParquet did before
// pqfile.go (Snappy, dictionaries only for the Arrow dictionary columns,
// the Arrow schema stored), with the same row groups.
func arrowWritten(t *testing.T, data []byte) []byte {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	tbl := readTable(t, pf)
	defer tbl.Release()
	schema := storedSchema(t, pf)
	tbl = asStored(t, tbl, schema)
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithCreatedBy("schedsim"),
		parquet.WithDictionaryDefault(false),
	}
	for _, f := range schema.Fields() {
		if _, ok := f.Type.(*arrow.DictionaryType); ok {
			opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
		}
	}
	md := schema.Metadata()
	var b bytes.Buffer
	fw, err := pqarrow.NewFileWriter(arrow.NewSchema(schema.Fields(), &md), &b, parquet.NewWriterProperties(opts...),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	groups := pf.NumRowGroups()
	rows := int64(0)
	for g := range groups {
		rows = max(rows, pf.MetaData().RowGroup(g).NumRows())
	}
	if err := fw.WriteTable(tbl, max(rows, 1)); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readTable reads pf's table with pqarrow.
func readTable(t *testing.T, pf *file.Reader) arrow.Table {
	t.Helper()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// storedSchema decodes the file's ARROW:schema.
func storedSchema(t *testing.T, pf *file.Reader) *arrow.Schema {
	t.Helper()
	v := pf.MetaData().KeyValueMetadata().FindValue("ARROW:schema")
	if v == nil {
		t.Fatal("no ARROW:schema")
	}
	dec, err := base64.StdEncoding.DecodeString(*v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(bytes.NewReader(dec))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	return r.Schema()
}

// asStored returns tbl's columns as the types of schema: pqarrow reads
// a timestamp[s] back in milliseconds.
func asStored(t *testing.T, tbl arrow.Table, schema *arrow.Schema) arrow.Table {
	t.Helper()
	mem := memory.NewGoAllocator()
	cols := make([]arrow.Column, tbl.NumCols())
	for i := range cols {
		f := schema.Field(i)
		var chunks []arrow.Array
		for _, ch := range tbl.Column(i).Data().Chunks() {
			if ts, ok := ch.(*array.Timestamp); ok && f.Type.(*arrow.TimestampType).Unit == arrow.Second {
				b := array.NewTimestampBuilder(mem, f.Type.(*arrow.TimestampType))
				for k := range ts.Len() {
					if ts.IsNull(k) {
						b.AppendNull()
					} else {
						b.Append(ts.Value(k) / 1000)
					}
				}
				chunks = append(chunks, b.NewArray())
				continue
			}
			ch.Retain()
			chunks = append(chunks, ch)
		}
		ch := arrow.NewChunked(f.Type, chunks)
		cols[i] = *arrow.NewColumn(f, ch)
	}
	return array.NewTable(schema, cols, tbl.NumRows())
}

// parquetFacts are what a file says of its contents, to compare two
// writers' files: the Parquet schema, key-value metadata, row groups'
// rows, each column chunk's type, encodings, value count and statistics
// (min, max, nulls), and the rows pqarrow reads.
func parquetFacts(t *testing.T, data []byte, check bool) string {
	t.Helper()
	if _, err := arrowcheck.CheckParquetFile(bytes.NewReader(data), int64(len(data)), arrowcheck.Limits{}); check && err != nil {
		t.Fatalf("arrowcheck: %v", err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	md := pf.MetaData()
	var s strings.Builder
	fmt.Fprintf(&s, "version %v, created by %s, %d rows\n", md.Version(), md.GetCreatedBy(), md.NumRows)
	fmt.Fprintf(&s, "schema %s\n", md.Schema)
	kv := md.KeyValueMetadata()
	for i, k := range kv.Keys() {
		fmt.Fprintf(&s, "meta %s=%s\n", k, kv.Values()[i])
	}
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		fmt.Fprintf(&s, "row group %d: %d rows\n", g, rg.NumRows())
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&s, "  %s %s %v codec %v values %d", cc.PathInSchema(), cc.Type(), cc.Encodings(), cc.Compression(), cc.NumValues())
			if st, err := cc.Statistics(); err == nil && st != nil {
				// pqarrow leaves empty strings out of a dictionary
				// column's min and max (the fixture's gpu_type, "" and
				// "h100", has min "h100"); TestParquetDictStats checks
				// ours.
				if st.HasMinMax() && !slices.Contains(cc.Encodings(), parquet.Encodings.RLEDict) {
					fmt.Fprintf(&s, " min %x max %x", st.EncodeMin(), st.EncodeMax())
				}
				fmt.Fprintf(&s, " nulls %d", st.NullCount())
			}
			s.WriteString("\n")
		}
	}
	tbl := readTable(t, pf)
	defer tbl.Release()
	fmt.Fprintf(&s, "arrow schema %s\n", tbl.Schema())
	for i := range int(tbl.NumCols()) {
		c := tbl.Column(i)
		for _, ch := range c.Data().Chunks() {
			fmt.Fprintf(&s, "%s: %v\n", c.Name(), ch)
		}
	}
	return s.String()
}

// TestParquetMatchesArrowWriter requires pqfile.go's files to say what
// pqarrow's writer says of the same table (schema, metadata, types,
// encodings, statistics, rows) and to pass arrowcheck: the fixture's
// jobs and timeline files, and a table of 70,000 rows (two row groups)
// with nulls in runs and scattered, NaNs, string pages over 1 MiB and a
// dictionary of 300 values (9-bit indices).
func TestParquetMatchesArrowWriter(t *testing.T) {
	_, jobs, tl := fixtureParquet(t)
	const n = 70_000
	cols := []col{
		strCol("s", func(i int) string { return fmt.Sprintf("value-%020d", i*7919%n) }),
		dictCol("d", func(i int) string { return fmt.Sprint("k", i%300) }),
		dictCol("one", func(int) string { return "x" }),
		tsCol("ts", 1_700_000_000, true, func(i int) sim.Time {
			if i%3 == 0 || i >= 1000 && i < 1100 {
				return workload.Unknown
			}
			return sim.Time(i)
		}),
		durCol("dur", func(i int) sim.Time {
			if i%17 < 9 {
				return workload.Unknown
			}
			return sim.Time(-i)
		}),
		i32Col("i32", func(i int) int32 { return int32(i%1000 - 500) }),
		i64Col("i64", func(i int) int64 { return int64(i) << 33 }),
		f64Col("f64", true, func(i int) (float64, bool) {
			switch {
			case i%11 == 0:
				return 0, false
			case i%13 == 0:
				return math.NaN(), true
			}
			return float64(i) / 7, true
		}),
		f64Col("zeros", false, func(i int) (float64, bool) { return math.Copysign(0, float64(i%2)-0.5), true }),
	}
	var big bytes.Buffer
	if err := writeParquet(&big, cols, n, map[string]string{"k": "v", "a": "b"}); err != nil {
		t.Fatal(err)
	}
	var empty bytes.Buffer
	if err := writeParquet(&empty, cols, 0, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"jobs", jobs.Bytes()}, {"timeline", tl.Bytes()}, {"70k", big.Bytes()}, {"empty", empty.Bytes()}} {
		t.Run(tc.name, func(t *testing.T) {
			got := parquetFacts(t, tc.data, true)
			// pqarrow's empty file fails arrowcheck (no page).
			want := parquetFacts(t, arrowWritten(t, tc.data), tc.name != "empty")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pqarrow's file (-) and ours (+) differ:\n%s", diff)
			}
		})
	}
}

// TestParquetDictStats checks a dictionary column's statistics: the min
// and max of its values, the empty string included (the fixture's
// gpu_type is "" for CPU jobs and "h100").
func TestParquetDictStats(t *testing.T) {
	_, jobs, _ := fixtureParquet(t)
	pf, err := file.NewParquetReader(bytes.NewReader(jobs.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	rg := pf.MetaData().RowGroup(0)
	i := rg.Schema.ColumnIndexByName("gpu_type")
	cc, err := rg.ColumnChunk(i)
	if err != nil {
		t.Fatal(err)
	}
	st, err := cc.Statistics()
	if err != nil || st == nil || !st.HasMinMax() {
		t.Fatalf("gpu_type statistics %v, %v; want a min and max", st, err)
	}
	if lo, hi := string(st.EncodeMin()), string(st.EncodeMax()); lo != "" || hi != "h100" {
		t.Errorf("gpu_type min %q max %q, want \"\" and \"h100\"", lo, hi)
	}
}
