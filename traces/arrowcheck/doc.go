// Package arrowcheck validates the metadata of Arrow IPC files and Parquet
// files before arrow-go reads them, and gives arrow-go a memory allocator
// with a budget, so that no file can make the process allocate more than
// a bound derived from the file or an explicit limit.
//
// arrow-go trusts the lengths it finds in a file: a vector length in an
// Arrow schema flatbuffer (Field.children, Schema.fields, custom_metadata)
// becomes a make() of that many elements, a Parquet dictionary page's
// num_values the size of a slice, a zstd frame's content size a buffer. A
// crafted file of a few kilobytes can therefore ask for hundreds of
// gigabytes, and Go cannot recover from the fatal out-of-memory that
// follows. The checks here come first:
//
//   - CheckIPCFile walks the footer of an Arrow IPC file and the message
//     of every dictionary and record batch it lists: every table, vector
//     and string must lie inside its buffer, schemas nest at most
//     MaxDepth deep, the schema materialises into at most
//     Limits.MaxMetadata bytes (a shared sub-table is charged at each
//     use, so a flatbuffer DAG cannot multiply), blocks and buffers lie
//     inside the file and their bodies, and compressed buffers announce
//     no more than Limits.MaxMemory.
//   - CheckParquetFile walks the Thrift footer (every list, map and
//     string length against the bytes left), verifies the ARROW:schema
//     key-value metadata as an Arrow schema message, and reads every page
//     header of every column chunk: pages lie inside their chunk,
//     uncompressed pages are at most Limits.MaxPage, and a dictionary
//     page holds no more values than its bytes can encode.
//   - NewAllocator is a memory.Allocator that refuses an allocation that
//     would take the bytes it has handed out past its budget. arrow-go's
//     Allocate cannot return an error, so the refusal is a panic of type
//     *BudgetError, which the caller recovers into an error.
//   - SafeParquetCodecs replaces arrow-go's Parquet decompressors with
//     ones that never write more than the page's declared uncompressed
//     size.
//
// Errors are *Error: where in the file (Where) and what was wrong. The
// package imports nothing of schedsim's, so that any reader of Arrow or
// Parquet files can use it.
package arrowcheck
