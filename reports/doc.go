// Package reports turns the Record of a run into metrics and output files.
// It reads records only, never the live engine, and imports sim (record
// types), workload, hwmodels and traces (whose writers it uses for results
// in trace formats: jobs.sacct through traces.SacctWriter; traces imports
// only workload, so no cycle can arise).
//
//   - Summarize computes the run-level metrics (a Summary) from a Record.
//   - WriteTable prints a Summary as the aligned table schedsim run shows.
//   - WriteSummaryJSON writes a Summary as summary.json.
//   - WriteJobsCSV writes one row per job as jobs.csv.
//   - Analyze computes the Summary, one JobRow per job and the Timeline
//     (bins of a configurable interval, swept from job starts and ends).
//   - WriteJobsParquet and WriteTimelineParquet write jobs.parquet and
//     timeline.parquet (Arrow schema stored; seed and config hash in the
//     metadata); ReadJobsParquet, ReadTimelineParquet and ReadRunDir read
//     them back.
//   - WriteJobsSacct writes jobs.sacct, sacct -P text, with traces'
//     sacct writer.
//   - Figures draws the plots (gonum/plot; PNG and SVG); WriteReport
//     writes report.html.
//   - Compare, ParseGate and CheckGates compare two runs with bootstrap
//     confidence intervals and check regression gates.
//   - WriteOutputs and OutDir write a run directory whole: every file
//     staged beside it (traces.WriteFileAtomic, the project's one atomic
//     writer), manifest.json last, then one rename into place, under a
//     lock that refuses a second writer. ReadRunDir and VerifyRunDir
//     check a directory against its manifest.
//
// docs/reports.md documents every output file, column and plot.
// Every output is a pure function of the Record: the same Record gives
// byte-identical files. Counts and times are integers; floats are computed
// from integer sums (or, for the slowdown, summed in job order) and
// written with a fixed number of decimals.
//
// # Definitions
//
// Times are whole seconds of simulated time since the trace epoch
// (workload.Trace.Epoch, a Unix time). A job started when its
// JobRecord.Start is known; a started job whose End is unknown was still
// running when the run stopped and is taken to end at Record.End.
//
//   - Window: from the first submit of any job (rejected and cancelled jobs
//     included) to the last end of any started job. Makespan is its
//     length, 0 when no job started.
//   - Utilization: resource-seconds held by jobs inside the window over
//     resource total × makespan. GPU and CPU count NodeAlloc.GPUs and
//     NodeAlloc.CPUs, plus MIG instances as GPU-equivalents (below); a
//     node counts as busy while at least one job holds an allocation on
//     it.
//   - Effective GPU utilization: allocated GPU-seconds minus the
//     GPU-seconds jobs lost to the runtime model's communication stretch
//     (sim.RuntimeScaling.CommStretch; each stretched run is a
//     sim.RuntimeChange with Stretch > 1 in Record.RuntimeChanges). A run
//     stretched by x > 1 that held G GPU-equivalents for d seconds would
//     have needed ceil(d / x) seconds under one leaf switch on the same
//     GPUs (hwmodels.ScaleRuntime's rounding), so it lost G × (d −
//     ceil(d / x)); d is the run's Actual when it completed, less when its
//     time limit, a preemption, a node failure or the run's end cut it
//     short. Speed ratios lose nothing (a faster GPU finishes sooner, a
//     slower one is busy all along). A change belongs to the first run of
//     its job that starts at or after the change's Start. The loss is
//     summed in 700ths like every GPU-second figure; effective_s is
//     allocated_s − lost_to_stretch_s, and the fraction is computed before
//     rounding. Without a stretched run, effective equals allocated.
//   - MIG instances (NodeAlloc.MIG) count as GPU-equivalents: an instance
//     is worth its compute slices over the 7 of a GPU
//     (hwmodels.MIGComputeSlices), whatever its memory slices, so 1g.10gb
//     on an A100-80GB or H100 is 1/7 GPU, 3g.40gb 3/7, 7g.80gb one GPU.
//     Every GPU-second figure (utilization, throughput GPU-hours, account
//     shares, jobs.parquet gpu_seconds and lost_gpu_seconds, the
//     timeline's gpu_seconds and pending_gpu_seconds) includes them,
//     summed exactly in 700ths of a GPU-second and rounded half up to
//     whole GPU-seconds where an integer is written (per job, per bin,
//     per run total; utilization.gpu.fraction is computed before
//     rounding). Available GPU-seconds count a MIG GPU as a whole GPU.
//   - MPS shares (NodeAlloc.MPS) count the same way as share/100 of a GPU
//     (a 30 % share is 0.3 GPU), in the same 700ths; the GPUs they share
//     count as whole GPUs in the available GPU-seconds. jobs.parquet
//     mps_share gives the share per node (percent), sacct AllocTRES
//     gres/mps=N its sum over the nodes; energy charges share/100 of a
//     busy GPU (and a MIG instance compute slices/7), so the shares of one
//     GPU, at most 100 %, never draw more than one busy GPU.
//     GPU counts stay whole GPUs: jobs.csv gpus and jobs.parquet
//     alloc_gpus count whole GPUs only (a MIG job has 0 there); the
//     instances are in jobs.parquet mig ("1g.10gb:2") and in jobs.sacct's
//     AllocTRES (gres/gpu=2,gres/gpu:1g.10gb=2, as Slurm counts each
//     instance as a GPU GRES of its type).
//   - Wait: start − submit of every started job. Jobs cancelled before
//     they started, rejected jobs and jobs still pending at the end have
//     no wait; they are counted under jobs.not_started instead.
//   - Quantiles: linear interpolation between order statistics
//     (Hyndman and Fan type 7, the default of R and NumPy): for n sorted
//     values x[0..n-1], h = (n−1)·p and Q(p) = x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1]
//     − x[⌊h⌋]).
//   - Bounded slowdown: max(1, (wait + run) / max(run, τ)) with run = end −
//     start and τ = 10 s by default, averaged over finished (COMPLETED or
//     TIMEOUT) jobs.
//
// # summary.json
//
// One JSON object. Keys appear in the order below; "a.b" is key b of
// object a, "a[]" an element of list a. Floats have exactly six decimals;
// times and counts are integers; "_s" marks seconds.
//
//	schema_version                  1; raised only when a key is removed, renamed or changes meaning
//	policy                          scheduling policy name
//	seed                            scenario seed (unsigned 64-bit integer)
//	config_hash                     identifies the configuration ("sha256:" + hex of the effective scenario YAML); "" if not given
//	schedsim.version                the schedsim module version that wrote the file ("(devel)" from a checkout, else the module or pseudo-version; schedsim version prints it)
//	schedsim.revision               the git commit it was built from; "" when the build has no VCS stamp (go run, -buildvcs=false)
//	schedsim.modified               true when that checkout had uncommitted changes
//	cluster.name                    cluster name
//	cluster.nodes                   number of nodes
//	cluster.gpus                    GPUs over all nodes
//	cluster.cpus                    CPUs over all nodes
//	cluster.partitions              number of partitions
//	trace.source                    where the jobs came from
//	trace.epoch                     Unix time (seconds) of simulated time 0
//	trace.epoch_utc                 the same in RFC 3339, UTC: "2024-01-01T00:00:00Z"
//	trace.jobs                      jobs in the trace
//	trace.notes                     the trace reader's remarks, list of strings
//	run.end_s                       simulated time the run stopped at
//	run.events                      events the engine processed
//	run.notes                       the run's remarks, list of strings
//	jobs.total                      jobs in the record
//	jobs.started                    jobs that started, whatever their final state
//	jobs.by_state.completed         jobs by final state ...
//	jobs.by_state.timeout           ... killed at their time limit
//	jobs.by_state.cancelled         ... cancelled before they started, or while running as the trace recorded
//	jobs.by_state.rejected          ... that can never run on the cluster
//	jobs.by_state.unfinished        ... still pending or running at the end
//	jobs.by_state.preempted         ... preempted and not requeued (by the simulation, or as the trace recorded)
//	jobs.by_state.node_fail         ... whose node failed and that were not requeued (likewise)
//	jobs.by_state.failed            ... that ended FAILED after their runtime, as the trace recorded
//	jobs.by_state.out_of_memory     ... OUT_OF_MEMORY, likewise
//	jobs.by_state.boot_fail         ... BOOT_FAIL, likewise
//	jobs.by_state.deadline          ... DEADLINE, likewise
//	jobs.not_started.cancelled      jobs without a start, left out of the waits: cancelled before start
//	jobs.not_started.rejected       ... rejected
//	jobs.not_started.pending        ... still queued when the run stopped
//	jobs.by_trace_state[].state     final state the trace recorded ("" = none), list sorted by it
//	jobs.by_trace_state[].count     jobs with that trace state
//	window.first_submit_s           first submit of any job; null when there are no jobs
//	window.last_end_s               last end of a started job; null when none started
//	window.makespan_s               last_end_s − first_submit_s; 0 when none started
//	utilization.gpu.fraction        allocated_s / available_s; 0 when available_s is 0
//	utilization.gpu.allocated_s     GPU-seconds held by jobs in the window
//	utilization.gpu.available_s     cluster.gpus × makespan_s
//	utilization.node.fraction       the same for nodes ...
//	utilization.node.allocated_s    ... node-seconds with at least one job on the node
//	utilization.node.available_s    ... cluster.nodes × makespan_s
//	utilization.cpu.fraction        the same for CPUs ...
//	utilization.cpu.allocated_s     ... CPU-seconds held by jobs in the window
//	utilization.cpu.available_s     ... cluster.cpus × makespan_s
//	wait_definition                 how a job's wait is measured, in words: start − submit; a requeued job's reruns wait from their own eligible time (Summary.WaitDefinition)
//	wait_s.count                    started jobs, whose waits the next keys summarize
//	wait_s.mean                     mean wait; this and the next are 0 when count is 0
//	wait_s.p50                      median wait
//	wait_s.p90                      90th percentile
//	wait_s.p95                      95th percentile
//	wait_s.p99                      99th percentile
//	wait_s.max                      longest wait
//	bounded_slowdown.tau_s          the bound τ
//	bounded_slowdown.count          finished jobs: their last run ended on its own (in its recorded state) or at its limit
//	bounded_slowdown.mean           mean bounded slowdown over them; 0 when count is 0
//	bounded_slowdown.max            largest bounded slowdown
//	partitions[].name               partition name; see below for the list's order
//	partitions[].in_cluster         false for a name the cluster lacks
//	partitions[].jobs               jobs in the partition
//	partitions[].started            of which started
//	partitions[].by_state.completed as jobs.by_state, for the partition
//	partitions[].by_state.timeout
//	partitions[].by_state.cancelled
//	partitions[].by_state.rejected
//	partitions[].by_state.unfinished
//	partitions[].by_state.preempted
//	partitions[].by_state.node_fail
//	partitions[].by_state.failed
//	partitions[].by_state.out_of_memory
//	partitions[].by_state.boot_fail
//	partitions[].by_state.deadline
//	partitions[].wait_s.count       as wait_s, over the partition's started jobs
//	partitions[].wait_s.mean
//	partitions[].wait_s.p50
//	partitions[].wait_s.p90
//	partitions[].wait_s.p95
//	partitions[].wait_s.p99
//	partitions[].wait_s.max
//	response_s.count                jobs that ended after they started (any final state but UNFINISHED)
//	response_s.mean                 end − submit over them, as wait_s
//	response_s.p50
//	response_s.p90
//	response_s.p95
//	response_s.p99
//	response_s.max
//	wait_by.user[].name             user name; list sorted by it; wait_s as above over the group's started jobs
//	wait_by.user[].jobs             jobs in the group, started or not
//	wait_by.user[].wait_s.count
//	wait_by.user[].wait_s.mean
//	wait_by.user[].wait_s.p50
//	wait_by.user[].wait_s.p90
//	wait_by.user[].wait_s.p95
//	wait_by.user[].wait_s.p99
//	wait_by.user[].wait_s.max
//	wait_by.account[].name          account; sorted
//	wait_by.account[].jobs          jobs in the group, started or not
//	wait_by.account[].wait_s.count
//	wait_by.account[].wait_s.mean
//	wait_by.account[].wait_s.p50
//	wait_by.account[].wait_s.p90
//	wait_by.account[].wait_s.p95
//	wait_by.account[].wait_s.p99
//	wait_by.account[].wait_s.max
//	wait_by.size_class[].name       job-size class by requested GPUs: 0, 1, 2-4, 5-8, 9-16, 17-64, 65+ (in this order)
//	wait_by.size_class[].jobs       jobs in the group, started or not
//	wait_by.size_class[].wait_s.count
//	wait_by.size_class[].wait_s.mean
//	wait_by.size_class[].wait_s.p50
//	wait_by.size_class[].wait_s.p90
//	wait_by.size_class[].wait_s.p95
//	wait_by.size_class[].wait_s.p99
//	wait_by.size_class[].wait_s.max
//	wait_by.gpu_type[].name         requested GPU type, "any" for none; sorted
//	wait_by.gpu_type[].jobs         jobs in the group, started or not
//	wait_by.gpu_type[].wait_s.count
//	wait_by.gpu_type[].wait_s.mean
//	wait_by.gpu_type[].wait_s.p50
//	wait_by.gpu_type[].wait_s.p90
//	wait_by.gpu_type[].wait_s.p95
//	wait_by.gpu_type[].wait_s.p99
//	wait_by.gpu_type[].wait_s.max
//	throughput.finished_jobs        = response_s.count
//	throughput.jobs_per_day         finished_jobs / (makespan_s / 86400); 0 when makespan_s is 0
//	throughput.gpu_hours            utilization.gpu.allocated_s / 3600
//	throughput.gpu_hours_per_day    gpu_hours / (makespan_s / 86400)
//	fairness.users                  users with at least one finished job (as bounded_slowdown.count)
//	fairness.jain_user_slowdown     Jain's index (Σx)²/(n·Σx²) over users' mean bounded slowdowns; 0 with no users
//	fairness.accounts[].name        account (every account with a job), sorted
//	fairness.accounts[].gpu_hours   GPU-hours its jobs held (earlier runs of requeued jobs included)
//	fairness.accounts[].share       gpu_hours over all accounts' gpu_hours
//	fairness.accounts[].target      fair-share target: 1 / number of accounts (Slurm's default Fairshare=1 each)
//	fragmentation.samples           timeline snapshots (one per bin, at its start)
//	fragmentation.mean_free_gpus    mean idle GPUs of nodes in service over the snapshots
//	fragmentation.mean_unusable_free_gpus mean idle GPUs on nodes where no eligible queued job's per-node request fits; 0 in a snapshot where no eligible GPU job waits
//	fragmentation.unusable_fraction sum of unusable over sum of free GPUs; 0 when none was free
//	preemption.preemptions          runs the simulation's preemptions ended
//	preemption.requeues             sum of the jobs' requeue counts
//	failures.node_fail_runs         runs the simulation's node failures ended
//	failures.lost_gpu_hours         GPU-hours those runs held after their last checkpoint (all of the run without checkpoints)
//	pending_reasons[].reason        pending reason as squeue names it ("None": none recorded), enum order, only those seen
//	pending_reasons[].job_s         job-seconds queued jobs spent with it as their last recorded reason
//	timeline.interval_s             bin width of timeline.parquet (output.sample_interval; default 3600, widened to whole hours for at most 2000 bins)
//	timeline.samples                number of bins
//
// When the runtime model stretched at least one run, the utilization
// object ends with a gpu_effective object, after cpu (absent otherwise,
// when it would equal utilization.gpu):
//
//   - utilization.gpu_effective.fraction          (allocated − lost to stretch) GPU-seconds / utilization.gpu.available_s
//   - utilization.gpu_effective.effective_s       utilization.gpu.allocated_s − lost_to_stretch_s
//   - utilization.gpu_effective.lost_to_stretch_s GPU-seconds lost to communication stretch in the window (see Definitions)
//   - utilization.gpu_effective.stretched_runs    runs the runtime model stretched (RuntimeChange.Stretch > 1)
//
// When the cluster has MIG GPUs, the fragmentation object ends with a mig
// object (see Sample.FreeMIGSlices):
//
//   - fragmentation.mig.mean_free_slices     mean free MIG compute slices over the snapshots (free instances; all 7 of an empty dynamic MIG GPU)
//   - fragmentation.mig.mean_unusable_slices mean free MIG compute slices no eligible queued MIG job could use
//   - fragmentation.mig.unusable_fraction    sum of unusable over sum of free slices; 0 when none was free
//
// With a power model (the cluster has power figures; see Energy), the
// summary ends with an energy object, after timeline:
//
//   - energy.it_kwh                   IT energy of every node over the window (only with a power model; see Energy)
//   - energy.facility_kwh             it_kwh × PUE
//   - energy.jobs_kwh                 IT energy charged to jobs: busy GPUs + GPU share of base power (hwmodels.JobKWh)
//   - energy.idle_kwh                 IT energy of nodes while no job ran on them (suspended and resuming time included)
//   - energy.pue                      the cluster's PUE (power.pue, default 1)
//   - energy.price_per_kwh            price of a facility kWh (power.price_per_kwh, default 0)
//   - energy.cost                     facility_kwh × price_per_kwh
//   - energy.currency                 power.currency
//   - energy.mean_power_kw            it_kwh over the window's hours
//   - energy.peak_power_kw            the cluster's IT power with every GPU busy
//   - energy.suspended_node_hours     node-hours powered down by power saving (power.suspend_time; the controller's suspensions, sim.Record.Suspends)
//   - energy.suspends                 number of power-downs
//
// The partitions list has one entry per cluster partition, in the
// cluster's order, then one per partition name the cluster lacks, sorted
// by name. A job counts in the partition it was placed in
// (JobRecord.Part) or, when it was rejected before one was chosen, in the
// entry named by its own partition string.
//
// # jobs.csv
//
// RFC 4180 CSV as encoding/csv writes it (fields quoted when they hold a
// comma, quote or line break; lines end in "\n"), with this header and one
// row per job in trace (JobRef) order:
//
//	job_id     the trace's job id ("123", "123_4")
//	user       the trace's user name
//	partition  the partition the job was placed in, or its own partition
//	           string if it was rejected before one was chosen
//	submit_s   submit time, integer seconds since the trace epoch
//	start_s    start time; empty if the job never started
//	end_s      end time; for a job cancelled before it started, the time
//	           it was cancelled; empty if it was rejected, still pending or
//	           still running when the run stopped
//	wait_s     the job's wait as summary.json's wait_definition says:
//	           start_s − submit_s, and for a requeued job its first run's
//	           start − submit plus each rerun's start − its eligible time;
//	           empty if its last run never started
//	state      final state (sim.State): COMPLETED, TIMEOUT, CANCELLED,
//	           REJECTED, UNFINISHED, PREEMPTED, NODE_FAIL, FAILED,
//	           OUT_OF_MEMORY, BOOT_FAIL or DEADLINE
//	nodes      number of distinct nodes allocated (0 if never started)
//	gpus       whole GPUs allocated over all nodes (MIG instances are
//	           not counted: see jobs.parquet mig)
//	node_list  allocated nodes as a Slurm hostlist ("gpu[001-004,009]"),
//	           sorted; empty if none
package reports
