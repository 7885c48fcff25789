// Package traces reads and writes workload traces: Slurm sacct
// --parsable/--parsable2 output, the Standard Workload Format (SWF 2.2)
// of the Parallel Workloads Archive, CSV exports through a column map
// (with the NREL Eagle and SenseTime Helios layouts as presets), the
// Alibaba GPU cluster trace (cluster-trace-gpu-v2023 pod and node lists),
// the Microsoft Philly job log (JSON), and job tables in Arrow IPC and
// Parquet (ArrowSchema). Writers: sacct -P (WriteSacct, on SacctWriter,
// the one sacct -P writer of the project, which package reports also
// writes jobs.sacct with), SWF (WriteSWF), Arrow IPC (WriteArrow), Parquet
// (WriteParquet); Write and WriteFile dispatch by format. The user documentation of every format and its
// mapping is docs/traces.md. Readers stream (one job in memory at a
// time, apart from the sacct job whose step rows are being collected),
// produce workload.Job values, and report bad input as *ParseError with the
// file, line, field and value. Nothing panics on user input. The package
// imports only workload of ours (and its own arrowcheck).
//
// WriteFileAtomic is the project's one atomic file writer (a temporary
// file beside the target, fsync, rename, fsync of the directory); it
// lives here, in a leaf package, so that every package and command that
// writes a file can use it.
//
// Open and Read read a whole file (format detected from the content when
// not given) into a Result: a workload.Trace sorted by submit time and
// rebased so that times count from the first submit (Trace.Epoch holds its
// Unix time), and for SWF the header, whose MaxNodes and MaxProcs describe
// the machine the log was recorded on. OpenStream and NewStream read one
// job at a time instead, in input order with absolute times, and Rewind
// for another pass; Convert streams a trace into any writable format in
// two passes (sorting through temporary files when the input is not in
// submit order), writing what Write writes of the whole trace.
//
// # Compression and limits
//
// Input compressed with gzip, zstd, bzip2 or lz4 is decompressed as it is
// read, recognised by its magic bytes; xz, lzip, Unix compress, zip and 7z
// are named as unsupported. Every size an input states is checked before
// anything is allocated from it, against a bound from the input's own size
// or a Limits field (Options.Limits; SetDefaultLimits for the process):
// the jobs of one read (MaxJobs), the tasks of pending sacct array records
// (MaxArrayTasks, checked before a task is made), the decompressed size
// (MaxDecompressed: by default 100 times the compressed size, at least 256
// MiB), one line or JSON record (MaxRecord), and for Arrow IPC and Parquet
// the metadata structures (MaxMetadata), the memory arrow-go may hold
// (MaxArrowMemory) and one page (MaxPage). Package arrowcheck verifies
// Arrow and Parquet metadata (every flatbuffer vector and Thrift list
// against its buffer, schema depth, blocks, chunks and page headers)
// before arrow-go reads it, and gives arrow-go an allocator with a budget;
// a compressed Arrow or Parquet input is decompressed into an unlinked
// temporary file. Exceeding a limit is a *LimitError (errors.Is ErrLimit)
// inside the *ParseError, naming the limit by its command-line flag.
// Errors are one line.
//
// # sacct
//
// Columns come from the header row, in any order, or for headerless output
// (sacct -n) from SacctOptions.Fields. JobID (or JobIDRaw) and Submit are
// required. The delimiter is SacctOptions.Delimiter, else detected ("☃",
// "|" or a tab); a trailing delimiter (sacct -p) is accepted. sacct does
// not escape the delimiter: when the last column is free text (JobName,
// Comment, SubmitLine, WorkDir, ...) surplus fields are joined back into it.
//
// Mapping onto workload.Job:
//
//   - ID is the JobID as written ("123", "123_4", "123+0"); an array task
//     "123_4" has ArrayJobID "123" and ArrayTaskID 4; het components
//     "123+0" stay separate jobs under their own ID.
//   - A pending array record "123_[5-9%4]" (also "[1,3,5-9]", "[0-100:2]")
//     is expanded into one PENDING job per task ("123_5", ...). When sacct
//     cut the expression short with "...", the tasks after the cut are lost
//     and a note says so.
//   - Step rows ("123.batch", "123.extern", "123.0", "123_4.batch",
//     "123+0.1", "123.0+1") are folded into the job row just before them
//     (only their count is kept, in Notes). Step rows with no such job row
//     are skipped and counted in a note.
//   - Submit, Start, End ("YYYY-MM-DDTHH:MM:SS", no zone) are read as UTC
//     wall-clock readings into Unix seconds; "Unknown", "None" and "" are
//     workload.Unknown. A job row without a submit time is an error.
//   - Runtime is Elapsed ("[D-]HH:MM:SS", "MM:SS", fractions dropped), else
//     ElapsedRaw, else End-Start. TimeLimit is Timelimit, else
//     TimelimitRaw (minutes); "UNLIMITED" and "Partition_Limit" give
//     workload.Unknown.
//   - TraceState is the base word of State ("CANCELLED by 123" gives
//     CANCELLED); when State says more than that, the raw value is kept in
//     Extra under the State column's name.
//   - Request, each count taken from the first source that has it: ReqTRES,
//     then ReqNodes/ReqCPUS, then AllocTRES, then NNodes/NCPUS (AllocCPUS)
//     and ReqMem. Counts are whole-job totals. GPUs come from the untyped
//     "gres/gpu" key (the typed "gres/gpu:TYPE" keys are never added on
//     top; their sum is used only when the untyped key is absent), then
//     from old-style ReqGRES ("gpu:v100:2", per node) or AllocGRES (whole
//     job). GPUType is the single type named by the source that gave the
//     count (empty with no type or several types). Memory units K, M, G,
//     T, P with decimals ("1.50G") are converted to MiB, rounding up; an
//     old-style ReqMem "4000Mc" is per CPU and "64Gn" per node and is
//     multiplied out.
//   - Jobs cancelled before they started (State CANCELLED and Start
//     None/Unknown, or no allocation and Elapsed 0), and jobs that failed
//     before they started (State FAILED and Start None): Runtime 0,
//     CancelAfter = End - Submit (0 when End is unknown or earlier),
//     TraceStart Unknown.
//   - Jobs that had not started when sacct ran (PENDING and the like, Start
//     and End unknown) are kept with Runtime 0 and TraceStart Unknown: they
//     are real demand whose runtime nobody knows. A note counts them, and
//     SacctOptions.SkipPending drops them instead.
//   - Jobs that had started but not ended (RUNNING, End Unknown): Runtime is
//     the elapsed time so far, a censored value; a note counts them.
//   - A Dependency column, if present, is parsed into Deps ("afterok:1:2",
//     "afterany:5+10", "singleton", "?" alternatives are read like ",").
//   - A SubmitLine column (sacct >= 21.08: the sbatch, srun or salloc
//     command, argv joined by spaces) is split into words as a shell
//     splits them and its options read up to the script: --requeue and
//     --no-requeue give Requeue, --array's %N the throttle, --dependency
//     Deps and -t/--time TimeLimit where the other columns do not say,
//     --checkpoint (sbatch up to Slurm 19.05) CheckpointInterval, and
//     --begin an Extra "Begin". A SubmitLine that cannot be read is
//     counted in the notes, never an error.
//   - Every other non-empty column is kept in Extra, in column order, under
//     its header name. Name strings are shared by all jobs; values are
//     interned per column (up to 4096 distinct values each, of at most
//     256 bytes, 32 MiB in all).
//   - A header naming a column twice is an error naming both positions.
//     Read, Open and Stream drop repeated records (two dumps appended) in
//     a first pass: of the records of one run (same JobID and Start) the
//     one with the longest Elapsed is kept, and a record without a Start
//     that a started record of the same job follows is dropped; every run
//     of a requeued job (sacct -D) is kept. Later header rows are skipped.
//
// # SWF
//
// NewSWFReader reads the leading ';' comments into an SWFHeader ("Key:
// value" lines; numeric values are read from their leading number, so
// "MaxNodes: 338 (batch partition; 512 total)" gives 338; every line is
// also kept in order in Fields). Records are 18 whitespace-separated
// numbers; -1 means unknown, decimals are rounded to the nearest integer.
//
//   - ID is the job number; Submit = UnixStartTime + submit_time (0 when
//     the header has no UnixStartTime), in Unix seconds.
//   - Only records without a submit time are skipped and counted
//     (Skipped, Notes): LLNL-Thunder's 1,190 all -1 phantoms of 121,039
//     records. A record with no processor count (requested and allocated
//     both -1 or 0) and a run time of 0 or -1 failed or was cancelled
//     before it started (Thunder has 1,058): Runtime 0, CancelAfter the
//     wait (0 when unknown), no request, TraceState from its status. A run
//     time of -1 otherwise gives Runtime 0; each case is counted.
//   - Processors are requested_processors (field 8), else
//     allocated_processors (field 5); the request is CPUs = procs, or see
//     SWFOptions.ProcsPerNode and ProcsPerGPU.
//   - TimeLimit is requested_time (field 9); -1 and 0 give Unknown.
//   - TraceState from status (field 11): 1 COMPLETED, 0 FAILED, 5
//     CANCELLED, 3 and 4 (last part of a checkpointed job) COMPLETED and
//     FAILED, 2 (a partial execution) PARTIAL, -1 empty.
//   - Partial executions of checkpointed or swapped jobs (status 2, 3, 4;
//     SWF 2.2 gives every part its own line with the job's number) are
//     folded into the job with that number just before them: into its
//     summary line (status 0, 1, 5), which holds the totals, when there is
//     one; otherwise the first part becomes the job and later parts add
//     their run times, and the last part gives the end (its own submit +
//     wait + run) and the outcome. Folded records are counted, not jobs.
//   - TimeZoneString, when it names an IANA zone, becomes Trace.TimeZone.
//     Times stay absolute (UnixStartTime + submit_time): the zone changes
//     only local-time figures (arrivals by hour and weekday, the fitted
//     hour-of-week rates) and the wall clock of sacct output. A cancelled record
//     with run_time 0 never started: CancelAfter is the wait time (0 when
//     unknown) and TraceEnd the cancel time.
//   - wait_time (field 3), when known, gives TraceStart = Submit + wait and
//     TraceEnd = TraceStart + Runtime.
//   - User is "u" followed by user_id (field 12), "" when -1. Partition is
//     partition_number (field 16) as a decimal string, else queue_number
//     (field 15), else "". The header's Queues and Partitions name them.
//   - Extra keeps, under their SWF names, every field of 5-8, 10 and 13-18
//     that is not -1 (allocated_processors, average_cpu_time, used_memory,
//     requested_processors, requested_memory, group_id, executable_number,
//     queue_number, partition_number, preceding_job_number, think_time),
//     as written in the file, and status when it is not 0, 1 or 5.
//     preceding_job_number and think_time are SWF's feedback model, not a
//     Slurm dependency, so they do not become Deps.
//
// WriteSWF writes jobs back as SWF so that reading the output gives the
// same jobs.
package traces
