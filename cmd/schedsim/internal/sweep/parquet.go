package sweep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetFile is the merged result of a sweep.
const ParquetFile = "sweep.parquet"

// ParquetSchemaVersion is sweep.parquet's schedsim.sweep_schema_version;
// it changes only when a column is removed, renamed or changes meaning.
const ParquetSchemaVersion = 1

// Row is one row of sweep.parquet: a scenario's parameters and metrics.
type Row struct {
	Index      int64
	Name       string
	Cluster    string
	Policy     string
	PolicyName string
	LoadScale  float64
	Seed       uint64
	ConfigHash string
	Dir        string // under runs/
	Values     []float64
}

// paramFields are the parameter columns, before the metrics.
var paramFields = []arrow.Field{
	{Name: "index", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String},
	{Name: ParamCluster, Type: arrow.BinaryTypes.String},
	{Name: ParamPolicy, Type: arrow.BinaryTypes.String},
	{Name: "policy_name", Type: arrow.BinaryTypes.String},
	{Name: ParamLoad, Type: arrow.PrimitiveTypes.Float64},
	{Name: "seed", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "config_hash", Type: arrow.BinaryTypes.String},
	{Name: "dir", Type: arrow.BinaryTypes.String},
}

func schema(meta map[string]string) *arrow.Schema {
	fields := append([]arrow.Field(nil), paramFields...)
	for _, m := range Metrics {
		fields = append(fields, arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Float64})
	}
	md := arrow.MetadataFrom(meta)
	return arrow.NewSchema(fields, &md)
}

// RowOf makes the row of a successful result.
func RowOf(r *Result) Row {
	p := r.Point
	return Row{Index: int64(p.Index), Name: p.Name, Cluster: p.Cluster, Policy: p.Policy, PolicyName: p.PolicyName,
		LoadScale: p.LoadScale, Seed: p.Seed, ConfigHash: p.Hash, Dir: p.Dir, Values: r.Values}
}

// Meta is the key-value metadata sweep.parquet carries: the schema
// version, the sweep's name and the hash of the sweep file's bytes.
func (sw *Sweep) Meta() map[string]string {
	return map[string]string{
		"schedsim.sweep_schema_version": strconv.Itoa(ParquetSchemaVersion),
		"schedsim.sweep_name":           sw.Name,
		"schedsim.sweep_hash":           sw.Hash,
	}
}

// WriteParquet writes rows (Snappy, one row group) with the metadata.
// The same rows and metadata give the same bytes.
func WriteParquet(w io.Writer, rows []Row, meta map[string]string) error {
	sc := schema(meta)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithCreatedBy("schedsim"))
	fw, err := pqarrow.NewFileWriter(sc, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return err
	}
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer rb.Release()
	for _, r := range rows {
		if len(r.Values) != len(Metrics) {
			fw.Close()
			return fmt.Errorf("sweep: row %d has %d metrics, want %d", r.Index, len(r.Values), len(Metrics))
		}
		rb.Field(0).(*array.Int64Builder).Append(r.Index)
		rb.Field(1).(*array.StringBuilder).Append(r.Name)
		rb.Field(2).(*array.StringBuilder).Append(r.Cluster)
		rb.Field(3).(*array.StringBuilder).Append(r.Policy)
		rb.Field(4).(*array.StringBuilder).Append(r.PolicyName)
		rb.Field(5).(*array.Float64Builder).Append(r.LoadScale)
		rb.Field(6).(*array.Uint64Builder).Append(r.Seed)
		rb.Field(7).(*array.StringBuilder).Append(r.ConfigHash)
		rb.Field(8).(*array.StringBuilder).Append(r.Dir)
		for k, v := range r.Values {
			rb.Field(len(paramFields) + k).(*array.Float64Builder).Append(v)
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return err
	}
	return fw.Close()
}

// ReadParquet reads rows and metadata back from a file written by
// WriteParquet; path names it in errors.
func ReadParquet(path string, data []byte) ([]Row, map[string]string, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	defer pf.Close()
	meta := map[string]string{}
	md := pf.MetaData().KeyValueMetadata()
	for i, k := range md.Keys() {
		meta[k] = md.Values()[i]
	}
	if v := meta["schedsim.sweep_schema_version"]; v != strconv.Itoa(ParquetSchemaVersion) {
		return nil, nil, fmt.Errorf("%s: sweep schema version %q, want %d", path, v, ParquetSchemaVersion)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	defer tbl.Release()
	want := schema(nil)
	if int(tbl.NumCols()) != len(want.Fields()) {
		return nil, nil, fmt.Errorf("%s: %d columns, want %d", path, tbl.NumCols(), len(want.Fields()))
	}
	n := int(tbl.NumRows())
	rows := make([]Row, n)
	for i := range rows {
		rows[i].Values = make([]float64, len(Metrics))
	}
	for c, f := range want.Fields() {
		col := tbl.Column(c)
		if col.Name() != f.Name || !arrow.TypeEqual(col.DataType(), f.Type) {
			return nil, nil, fmt.Errorf("%s: column %d is %s %s, want %s %s", path, c, col.Name(), col.DataType(), f.Name, f.Type)
		}
		i := 0
		for _, chunk := range col.Data().Chunks() {
			for k := 0; k < chunk.Len(); k, i = k+1, i+1 {
				r := &rows[i]
				switch a := chunk.(type) {
				case *array.Int64:
					r.Index = a.Value(k)
				case *array.Uint64:
					r.Seed = a.Value(k)
				case *array.String:
					switch c {
					case 1:
						r.Name = a.Value(k)
					case 2:
						r.Cluster = a.Value(k)
					case 3:
						r.Policy = a.Value(k)
					case 4:
						r.PolicyName = a.Value(k)
					case 7:
						r.ConfigHash = a.Value(k)
					case 8:
						r.Dir = a.Value(k)
					}
				case *array.Float64:
					if c == 5 {
						r.LoadScale = a.Value(k)
					} else {
						r.Values[c-len(paramFields)] = a.Value(k)
					}
				}
			}
		}
	}
	return rows, meta, nil
}
