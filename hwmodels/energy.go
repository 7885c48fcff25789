package hwmodels

// Energy model: node and GPU power, PUE and price. Pure functions; reports
// charges them over a run from its record (reports.Energy). The controller
// simulates power saving (sim power.go: a job on a powered-down node
// begins ResumeTimeout after its start) and records the intervals; see
// docs/hardware.md.
//
// A node draws BaseW (CPUs, memory, NICs, NVSwitches, fans) whenever it is
// up, plus GPUIdleW per idle GPU and GPUBusyW per GPU running a job. A
// powered-down node (Slurm power saving: idle longer than SuspendTime) draws
// SuspendedW; waking it takes ResumeTimeout seconds at idle power before it
// can run the job. Facility energy is IT energy × PUE; cost is facility
// kWh × PricePerKWh.
//
// A job is charged its GPUs at GPUBusyW for its run time plus its share of
// the base power of each node it runs on (its GPUs / the node's GPUs, or
// its CPUs / the node's CPUs for CPU-only jobs); idle GPUs are the
// cluster's, not any job's.

// PowerModel is the cluster-wide part of the energy model.
type PowerModel struct {
	// PUE is the power usage effectiveness, ≥ 1 (1: IT energy only).
	PUE float64
	// PricePerKWh is the price of a facility kWh, in Currency; 0: no cost.
	PricePerKWh float64
	Currency    string
	// SuspendTime is how long (s) a node idles before it is powered down,
	// 0 for never (Slurm SuspendTime=NONE, the default); ResumeTimeout the
	// seconds a resume takes (Slurm's default 60); SuspendedW a powered-
	// down node's draw.
	SuspendTime   int64
	ResumeTimeout int64
	SuspendedW    float64
	// SuspendTimeout is how long (s) a node takes to power down (Slurm
	// SuspendTimeout): a job placed on a node that began powering down
	// less than SuspendTimeout ago waits for it to be down, then for its
	// resume. Zero: powering down is instant.
	SuspendTimeout int64
	// SuspendExempt are the nodes power saving never powers down (Slurm
	// SuspendExcNodes and the nodes of SuspendExcParts), indices into
	// Cluster.Nodes, ascending; nil for none.
	SuspendExempt []int32
}

// DefaultPowerModel returns PUE 1, no price, no power saving, resume 60 s.
func DefaultPowerModel() PowerModel { return PowerModel{PUE: 1, ResumeTimeout: 60} }

// NodePower is one node's power figures in watts.
type NodePower struct {
	BaseW, GPUIdleW, GPUBusyW float64
	GPUs                      int32
}

// Watts returns the node's draw with busy of its GPUs running jobs.
func (p NodePower) Watts(busy int32) float64 {
	busy = min(max(busy, 0), p.GPUs)
	return p.BaseW + float64(busy)*p.GPUBusyW + float64(p.GPUs-busy)*p.GPUIdleW
}

// PeakW is the draw with every GPU busy.
func (p NodePower) PeakW() float64 { return p.Watts(p.GPUs) }

// JoulesPerKWh converts watt-seconds to kWh.
const JoulesPerKWh = 3.6e6

// KWh returns the kWh of watts drawn for seconds.
func KWh(watts float64, seconds int64) float64 { return watts * float64(seconds) / JoulesPerKWh }

// Facility returns the facility energy of IT energy kwh (× PUE).
func (m PowerModel) Facility(kwh float64) float64 { return kwh * max(m.PUE, 1) }

// Cost returns the price of IT energy kwh: Facility(kwh) × PricePerKWh.
func (m PowerModel) Cost(kwh float64) float64 { return m.Facility(kwh) * m.PricePerKWh }

// JobKWh returns the IT energy charged to a job that held jobGPUs of a
// node's GPUs (or, for a CPU-only job, share = its CPUs / the node's CPUs,
// given as jobGPUs = 0 and cpuShare) for seconds.
func JobKWh(p NodePower, jobGPUs int32, cpuShare float64, seconds int64) float64 {
	return JobKWhGPUs(p, float64(jobGPUs), cpuShare, seconds)
}

// JobKWhGPUs is JobKWh for a job holding gpus GPU-equivalents, which may
// be fractional: a MIG instance is its compute slices / 7 of a busy GPU,
// an MPS share N percent N/100 of one.
func JobKWhGPUs(p NodePower, gpus float64, cpuShare float64, seconds int64) float64 {
	share := cpuShare
	if p.GPUs > 0 && gpus > 0 {
		share = gpus / float64(p.GPUs)
	}
	return KWh(gpus*p.GPUBusyW+share*p.BaseW, seconds)
}

// IdleKWh returns the IT energy of a node idle for seconds with power
// saving as m says: idle power until SuspendTime, then SuspendedW, and
// ResumeTimeout seconds of idle power at the end while it boots for the
// next job (resume is charged only when the node was suspended; an idle
// period shorter than SuspendTime + ResumeTimeout never suspends).
func (m PowerModel) IdleKWh(p NodePower, seconds int64) float64 {
	idle := p.Watts(0)
	if m.SuspendTime <= 0 || seconds <= m.SuspendTime+m.ResumeTimeout {
		return KWh(idle, seconds)
	}
	down := seconds - m.SuspendTime - m.ResumeTimeout
	return KWh(idle, m.SuspendTime+m.ResumeTimeout) + KWh(m.SuspendedW, down)
}
