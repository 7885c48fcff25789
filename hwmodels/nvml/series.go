package nvml

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// SeriesColumns are the columns of a written Series, in order: seconds
// since the first sample, GPU index, utilization % (-1: not given),
// memory-controller utilization %, memory used MiB, power W, energy
// counter mJ (0: not given), SM and memory clocks MHz, temperature °C.
var SeriesColumns = []string{"t_s", "gpu", "util_pct", "mem_util_pct", "mem_used_mib", "power_w",
	"energy_mj", "sm_clock_mhz", "mem_clock_mhz", "temp_c"}

// WriteCSV writes s as CSV with a header of SeriesColumns; times in
// seconds with millisecond precision, power with two decimals.
func (s *Series) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i, c := range SeriesColumns {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(c)
	}
	bw.WriteByte('\n')
	for _, p := range s.Points {
		fmt.Fprintf(bw, "%s,%d,%d,%d,%d,%s,%d,%d,%d,%d\n",
			strconv.FormatFloat(p.At.Seconds(), 'f', 3, 64), p.GPU, p.UtilizationPct, p.MemUtilPct,
			p.MemoryUsedMiB, strconv.FormatFloat(p.PowerW, 'f', 2, 64), p.EnergyMJ,
			p.SMClockMHz, p.MemClockMHz, p.TemperatureC)
	}
	return bw.Flush()
}

// WriteParquet writes s as one Parquet file (Snappy) with the columns of
// SeriesColumns: t_s and power_w float64, energy_mj and mem_used_mib int64,
// the rest int32; the interval in seconds and the start time (RFC 3339)
// are in the file's metadata.
func (s *Series) WriteParquet(w io.Writer) error {
	f64 := arrow.PrimitiveTypes.Float64
	i64 := arrow.PrimitiveTypes.Int64
	i32 := arrow.PrimitiveTypes.Int32
	types := []arrow.DataType{f64, i32, i32, i32, i64, f64, i64, i32, i32, i32}
	fields := make([]arrow.Field, len(SeriesColumns))
	for i, c := range SeriesColumns {
		fields[i] = arrow.Field{Name: c, Type: types[i]}
	}
	md := arrow.MetadataFrom(map[string]string{
		"interval_s": strconv.FormatFloat(s.Interval.Seconds(), 'g', -1, 64),
		"start":      s.Start.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		"gpus":       strconv.Itoa(s.GPUs),
	})
	schema := arrow.NewSchema(fields, &md)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithCreatedBy("schedsim"))
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return err
	}
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer rb.Release()
	for _, p := range s.Points {
		rb.Field(0).(*array.Float64Builder).Append(p.At.Seconds())
		rb.Field(1).(*array.Int32Builder).Append(int32(p.GPU))
		rb.Field(2).(*array.Int32Builder).Append(int32(p.UtilizationPct))
		rb.Field(3).(*array.Int32Builder).Append(int32(p.MemUtilPct))
		rb.Field(4).(*array.Int64Builder).Append(p.MemoryUsedMiB)
		rb.Field(5).(*array.Float64Builder).Append(p.PowerW)
		rb.Field(6).(*array.Int64Builder).Append(int64(p.EnergyMJ))
		rb.Field(7).(*array.Int32Builder).Append(int32(p.SMClockMHz))
		rb.Field(8).(*array.Int32Builder).Append(int32(p.MemClockMHz))
		rb.Field(9).(*array.Int32Builder).Append(int32(p.TemperatureC))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return err
	}
	return fw.Close()
}
