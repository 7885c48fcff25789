package hwmodels

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SlurmFiles are the Slurm configuration files ImportSlurm reads. Only
// SlurmConf is required; each Path names its file in messages and, with
// Files, anchors the files it includes.
type SlurmFiles struct {
	SlurmConf, GresConf, TopologyConf []byte
	SlurmPath, GresPath, TopologyPath string
	// Files reads the files Include lines name and, when GresConf or
	// TopologyConf is nil, gres.conf and topology.conf beside slurm.conf
	// (where Slurm reads them; topology.conf only under
	// TopologyPlugin=topology/tree or topology/block). Nil: an Include line is an error and
	// nothing is looked for.
	Files ConfFiles
	// MaxNodes bounds the nodes the NodeName lines may define, counted
	// before anything is expanded; 0 means MaxClusterNodes, more is
	// capped there.
	MaxNodes int
}

// How ImportSlurm treats each key. Keys are lower case.
//
// Modeled keys reach the spec field the simulation reads, or the spec's
// slurm section where a reader of it takes them (the slurm policy: the
// scheduler and priority keys, PreemptType/Mode/ExemptTime, partition
// PreemptMode, TopologyPlugin; the scenario's controller defaults:
// EnforcePartLimits, JobRequeue, OverTimeLimit, DependencyParameters).
// Every other key is warned about once, with the first line that sets it:
// keys kept in the slurm section verbatim ("kept in the spec's slurm
// section, not modeled"), keys with no effect on a simulated schedule
// (daemons, paths, logging, accounting storage), and unknown keys.
var (
	nodeKeysModeled = []string{"nodename", "cpus", "procs", "boards", "socketsperboard", "sockets", "corespersocket", "threadspercore", "realmemory", "gres", "features", "feature", "weight"}
	nodeKeysKnown   = []string{"nodehostname", "nodeaddr", "state", "tmpdisk", "port", "reason", "memspeclimit", "cpuspeclist", "corespeccount", "availablefeatures", "activefeatures", "restrictedcorespergpu", "topology", "bcastaddr", "cpubind", "parameters"}

	partKeysModeled = []string{"partitionname", "nodes", "maxtime", "maxnodes", "defaulttime", "default", "prioritytier", "priorityjobfactor", "priority", "defcpupergpu", "defmempercpu", "defmempergpu"}
	// partKeysKept go to slurm.partitions verbatim; PreemptMode is read
	// by the slurm policy, State=UP is what the simulation does, the rest
	// are warned about.
	partKeysKept = []string{"AllocNodes", "AllowAccounts", "AllowGroups", "AllowQos", "Alternate", "CpuBind", "DefMemPerNode", "DenyAccounts", "DenyQos", "DisableRootJobs", "Exclusive", "ExclusiveTopo", "ExclusiveUser", "GraceTime", "Hidden", "LLN", "MaxCPUsPerNode", "MaxCPUsPerSocket", "MaxMemPerCPU", "MaxMemPerNode", "MinNodes", "OverSubscribe", "OverTimeLimit", "PowerDownOnIdle", "PreemptMode", "QOS", "ReqResv", "ResumeTimeout", "RootOnly", "SelectTypeParameters", "Shared", "State", "SuspendTime", "SuspendTimeout", "Topology", "TRESBillingWeights"}

	// globalPolicy are read by the slurm policy (slurm.Policy.Begin)
	// and globalScenario by the scenario's controller defaults; both are
	// kept in slurm.settings.
	globalPolicy   = []string{"schedulerparameters", "prioritytype", "priorityweightage", "priorityweightfairshare", "priorityweightjobsize", "priorityweightpartition", "priorityweightqos", "priorityweightassoc", "priorityweighttres", "prioritymaxage", "prioritydecayhalflife", "prioritycalcperiod", "priorityusageresetperiod", "priorityfavorsmall", "priorityflags", "fairsharedampeningfactor", "preempttype", "preemptmode", "preemptexempttime", "topologyplugin", "killwait", "messagetimeout"}
	globalScenario = []string{"enforcepartlimits", "jobrequeue", "overtimelimit", "dependencyparameters"}
	// globalMapped become spec fields (power, partition defaults).
	globalMapped = []string{"suspendtime", "resumetimeout", "suspendtimeout", "suspendexcnodes", "suspendexcparts", "defcpupergpu", "defmempercpu", "defmempergpu"}
	// globalKept are scheduling settings kept verbatim but not modeled
	// (warned about), as is every other Priority* key.
	globalKept = []string{"AccountingStorageEnforce", "AccountingStorageTRES", "BatchStartTimeout", "DefMemPerNode", "GresTypes", "MaxArraySize", "MaxJobCount", "MinJobAge", "MaxMemPerCPU", "MaxMemPerNode", "PreemptParameters", "ResumeRate", "SchedulerTimeSlice", "SchedulerType", "SelectType", "SelectTypeParameters", "SuspendExcStates", "SuspendRate", "TopologyParam", "TreeWidth"}
	// globalNoEffect are daemon, path, plugin, logging and accounting
	// storage settings: they do not change a simulated schedule.
	globalNoEffect = []string{"accountingstoragehost", "accountingstorageloc", "accountingstoragepass", "accountingstorageport", "accountingstoragetype", "accountingstorageuser", "accountingstorebatchscript", "accountingstorageexternalhost", "acctgatherenergytype", "acctgatherfilesystemtype", "acctgatherinterconnecttype", "acctgathernodefreq", "acctgatherprofiletype", "authalttypes", "authinfo", "authtype", "backupaddr", "backupcontroller", "burstbuffertype", "clifilterplugins", "communicationparameters", "completewait", "controladdr", "controlmachine", "corespecplugin", "credtype", "cryptotype", "debugflags", "disablerootjobs", "epilog", "epilogmsgtime", "epilogslurmctld", "federationparameters", "firstjobid", "getenvtimeout", "healthcheckinterval", "healthchecknodestate", "healthcheckprogram", "inactivelimit", "jobacctgatherfrequency", "jobacctgatherparams", "jobacctgathertype", "jobcompfields", "jobcomphost", "jobcomploc", "jobcomppass", "jobcompport", "jobcomptype", "jobcompuser", "jobcontainertype", "jobsubmitplugins", "launchparameters", "launchtype", "licenses", "logtimeformat", "mailprog", "maildomain", "maxdbdmsgs", "maxstepcount", "maxtaskspernode", "mcsplugin", "mcsparameters", "mpidefault", "mpiparams", "plugindir", "plugstackconfig", "privatedata", "proctracktype", "prolog", "prologepilogtimeout", "prologflags", "prologslurmctld", "propagateprioprocess", "propagateresourcelimits", "propagateresourcelimitsexcept", "rebootprogram", "reconfigflags", "requeueexit", "requeueexithold", "resumefailprogram", "resumeprogram", "resvepilog", "resvoverrun", "resvprolog", "returntoservice", "routeplugin", "scronparameters", "slurmctldaddr", "slurmctlddebug", "slurmctldhost", "slurmctldlogfile", "slurmctldparameters", "slurmctldpidfile", "slurmctldport", "slurmctldprimaryoffprog", "slurmctldprimaryonprog", "slurmctldsyslogdebug", "slurmctldtimeout", "slurmddebug", "slurmdlogfile", "slurmdparameters", "slurmdpidfile", "slurmdport", "slurmdspooldir", "slurmdsyslogdebug", "slurmdtimeout", "slurmduser", "slurmschedlogfile", "slurmschedloglevel", "slurmuser", "srunepilog", "srunportrange", "srunprolog", "statesavelocation", "suspendprogram", "switchparameters", "switchtype", "taskepilog", "taskplugin", "taskpluginparam", "taskprolog", "tcptimeout", "tmpfs", "trackwckey", "unkillablestepprogram", "unkillablesteptimeout", "usepam", "vsizefactor", "waittime", "x11parameters", "acctgatherinfinibandtype", "healthcheck", "jobfileappend", "killonbadexit", "maxjobid", "nodefeaturesplugins", "interactivestepoptions", "jobcredentialprivatekey", "jobcredentialpubliccertificate", "jobacctgatherparams", "slurmctldsyslogdebug"}

	// gresKeysModeled are read from gres.conf lines; gresKeysKnown are
	// gres.conf(5) keys that are not modeled.
	gresKeysModeled = []string{"nodename", "name", "type", "count", "file", "multiplefiles", "autodetect"}
	gresKeysKnown   = []string{"cores", "cpus", "links", "flags"}
)

// containsFold reports whether list holds key, ignoring case.
func containsFold(list []string, key string) bool {
	return slices.ContainsFunc(list, func(c string) bool { return strings.EqualFold(c, key) })
}

// migTypeRE matches a MIG GRES type: an optional GPU prefix and "_", then
// a profile name "<n>g.<m>gb" (with "+me").
var migTypeRE = regexp.MustCompile(`^(?:(.*)_)?(\d+g\.\d+gb(?:\+me)?)$`)

// guessGPUModel maps a GRES type to a catalog GPU model: the SXM part for
// the families whose form factor the type does not say (h100 → h100-sxm-
// 80gb, a100 → a100-sxm-80gb, h200 → h200-141gb), a catalog model whose
// DefaultType is the type when there is exactly one, else custom.
func guessGPUModel(gresType string) (model string, guessed bool) {
	t := strings.ToLower(gresType)
	for _, x := range []struct{ sub, model string }{
		{"h200", "h200-141gb"}, {"h100", "h100-sxm-80gb"}, {"a100", "a100-sxm-80gb"}, {"b200", "b200-180gb"},
	} {
		if strings.Contains(t, x.sub) {
			return x.model, true
		}
	}
	var found []string
	for _, g := range gpuCatalog {
		if g.DefaultType == t {
			found = append(found, g.Name)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return CustomGPUModel, false
}

// importer holds the state of one import.
type importer struct {
	f        SlurmFiles
	warns    []ConfWarning
	warned   map[string]bool
	maxNodes uint64
	reader   *confReader
	// plugin is TopologyPlugin's topology/tree or topology/block, lower
	// case; "" for any other.
	plugin string
}

func (im *importer) warnOnce(key, path string, line int, format string, args ...any) {
	if im.warned[key] {
		return
	}
	im.warned[key] = true
	im.warns = append(im.warns, ConfWarning{path, line, fmt.Sprintf(format, args...)})
}

func (im *importer) warn(path string, line int, format string, args ...any) {
	im.warns = append(im.warns, ConfWarning{path, line, fmt.Sprintf(format, args...)})
}

type gresItem struct {
	name, typ string
	count     int64
	path      string
	line      int
	seq       int // order of its gres.conf line
	files     int // device files named (gres.conf File=), 0 if none
}

type nodeDef struct {
	path  string
	line  int
	names []string
	attrs map[string]string // lower-case key → value
	gres  []string          // GRES names its Gres= declares, lower case
}

type partDef struct {
	path  string
	line  int
	name  string
	attrs map[string]string
	kept  []KeyValue
}

// importedNode is a node's resolved attributes; equal values group nodes.
type importedNode struct {
	cpus, weight int64
	mem          int64
	features     string
	gpuModel     string
	gpuType      string
	gpus         int64
	guessed      bool
	migLayout    string // comma-joined profile names per GPU, "" none
	migGPUs      int64
}

// ImportSlurm reads slurm.conf (NodeName and PartitionName lines, global
// settings, Include lines), gres.conf and topology.conf and writes a
// cluster spec (YAML, version 1) describing the same cluster, with one
// warning for every key it reads but does not model (see the key tables
// above) and for values it had to guess or drop. Limits reach the spec
// fields the simulation enforces: partition MaxTime, MaxNodes,
// DefaultTime, PriorityTier, PriorityJobFactor, Default, Nodes and the
// DefCpuPerGPU/DefMemPerCPU/DefMemPerGPU defaults; SuspendTime,
// ResumeTimeout, SuspendTimeout, SuspendExcNodes and SuspendExcParts the
// power section; topology.conf the fabric. Settings the slurm policy and
// the scenario read go to the spec's slurm section verbatim. The node
// count is checked against MaxNodes before any hostlist is expanded. The
// result is checked with ParseCluster. Errors are *ParseError values
// naming the file, line and key.
func ImportSlurm(f SlurmFiles) ([]byte, []ConfWarning, error) {
	im := &importer{f: f, warned: map[string]bool{}, maxNodes: MaxClusterNodes}
	if f.MaxNodes > 0 && f.MaxNodes < MaxClusterNodes {
		im.maxNodes = uint64(f.MaxNodes)
	}
	if f.SlurmPath == "" {
		f.SlurmPath = "slurm.conf"
		im.f.SlurmPath = f.SlurmPath
	}
	im.reader = &confReader{files: f.Files, warn: im.warn}
	lines, err := im.reader.read(f.SlurmConf, f.SlurmPath)
	if err != nil {
		return nil, im.warns, err
	}
	sp := f.SlurmPath
	clusterName := "imported"
	var nodes []nodeDef
	var parts []partDef
	var settings []KeyValue
	global := map[string]confPair{} // modeled global keys: value and where
	globalLine := map[string]confLine{}
	nodeDefault := map[string]string{}
	partDefault := map[string]string{}
	var nodeTotal uint64
	for _, l := range lines {
		first := l.Pairs[0]
		switch strings.ToLower(first.Key) {
		case "nodename":
			attrs := map[string]string{}
			for k, v := range nodeDefault {
				attrs[k] = v
			}
			for _, p := range l.Pairs[1:] {
				k := strings.ToLower(p.Key)
				switch {
				case slices.Contains(nodeKeysModeled, k):
				case slices.Contains(nodeKeysKnown, k):
					im.warnOnce("node:"+k, l.Path, l.Line, "NodeName key %s is not modeled by schedsim; ignored", p.Key)
				default:
					im.warnOnce("node:"+k, l.Path, l.Line, "NodeName key %s is not a slurm.conf node key schedsim knows; ignored", p.Key)
				}
				attrs[k] = p.Value
			}
			if strings.EqualFold(first.Value, "DEFAULT") {
				nodeDefault = attrs
				continue
			}
			// Count before expanding: a line of a few bytes may name
			// millions of nodes.
			n, err := HostlistCount(first.Value, im.maxNodes)
			if err != nil {
				return nil, im.warns, confError(l.Path, l.Line, "NodeName", ErrSyntax, "%v", err)
			}
			if n == 0 {
				return nil, im.warns, confError(l.Path, l.Line, "NodeName", ErrMissing, "empty node name")
			}
			if nodeTotal += n; nodeTotal > im.maxNodes {
				return nil, im.warns, confError(l.Path, l.Line, "NodeName", ErrRange, "the NodeName lines up to this one define more than %d nodes (%s)", im.maxNodes, im.nodeLimitHint())
			}
			names, err := ExpandHostlist(first.Value)
			if err != nil {
				return nil, im.warns, confError(l.Path, l.Line, "NodeName", ErrSyntax, "%v", err)
			}
			if slices.Contains(names, "ALL") {
				return nil, im.warns, confError(l.Path, l.Line, "NodeName", ErrSyntax, `node name "ALL" is reserved (Nodes=ALL means every node)`)
			}
			nd := nodeDef{path: l.Path, line: l.Line, names: names, attrs: attrs}
			if g, ok := attrs["gres"]; ok {
				if items, err := parseNodeGres(g); err == nil {
					for _, it := range items {
						nd.gres = append(nd.gres, it.name)
					}
				}
			}
			nodes = append(nodes, nd)
		case "partitionname":
			attrs := map[string]string{}
			for k, v := range partDefault {
				attrs[k] = v
			}
			for _, p := range l.Pairs[1:] {
				k := strings.ToLower(p.Key)
				attrs[k] = p.Value
				im.checkPartKey(l, p)
			}
			if strings.EqualFold(first.Value, "DEFAULT") {
				partDefault = attrs
				continue
			}
			if len(parts) == MaxPartitions {
				return nil, im.warns, confError(l.Path, l.Line, "PartitionName", ErrRange, "more than %d partitions (schedsim models at most %d)", MaxPartitions, MaxPartitions)
			}
			pd := partDef{path: l.Path, line: l.Line, name: first.Value, attrs: attrs}
			keys := make([]string, 0, len(attrs))
			for k := range attrs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if i := slices.IndexFunc(partKeysKept, func(c string) bool { return strings.EqualFold(c, k) }); i >= 0 {
					pd.kept = append(pd.kept, KeyValue{partKeysKept[i], attrs[k]})
				}
			}
			parts = append(parts, pd)
		case "nodeset", "downnodes", "frontendname", "switchname":
			im.warnOnce("line:"+strings.ToLower(first.Key), l.Path, l.Line, "%s lines are not modeled by schedsim; skipped", first.Key)
		default:
			for _, p := range l.Pairs {
				k := strings.ToLower(p.Key)
				switch {
				case k == "clustername":
					clusterName = sanitizeName(p.Value)
				case slices.Contains(globalMapped, k):
					global[k] = p
					globalLine[k] = l
				case slices.Contains(globalPolicy, k), slices.Contains(globalScenario, k):
					settings = setKV(settings, p.Key, p.Value)
					global[k] = p
					globalLine[k] = l
				case strings.HasPrefix(k, "priority"), containsFold(globalKept, k):
					settings = setKV(settings, p.Key, p.Value)
					global[k] = p
					globalLine[k] = l
					im.checkKeptGlobal(l, p)
				case slices.Contains(globalNoEffect, k):
					im.warnOnce("global:"+k, l.Path, l.Line, "%s has no effect on a simulated schedule; ignored", p.Key)
				default:
					im.warnOnce("global:"+k, l.Path, l.Line, "key %s is not a slurm.conf key schedsim knows; ignored", p.Key)
				}
			}
		}
	}
	if len(nodes) == 0 {
		return nil, im.warns, confError(sp, 0, "NodeName", ErrMissing, "no NodeName lines: the cluster has no nodes (want NodeName=gpu[01-04] CPUs=… RealMemory=… Gres=gpu:h100:8)")
	}
	if err := im.checkGlobals(global, globalLine); err != nil {
		return nil, im.warns, err
	}
	if err := im.findBeside(global); err != nil {
		return nil, im.warns, err
	}

	perNode, anyNode, err := im.gresConf(nodes)
	if err != nil {
		return nil, im.warns, err
	}

	// Resolve every node, then group runs of equal nodes within each line.
	type group struct {
		names []string
		node  importedNode
		path  string
		line  int
	}
	var groups []group
	defined := map[string]int{}
	for _, nd := range nodes {
		var cur *group
		for _, name := range nd.names {
			if prev, dup := defined[name]; dup {
				im.warn(nd.path, nd.line, "node %s is already defined on line %d; this definition is skipped", name, prev)
				cur = nil
				continue
			}
			defined[name] = nd.line
			n, err := im.resolveNode(nd, name, nodeGresItems(perNode[name], anyNode, nd.gres))
			if err != nil {
				return nil, im.warns, err
			}
			if cur != nil && cur.node == n {
				cur.names = append(cur.names, name)
				continue
			}
			groups = append(groups, group{names: []string{name}, node: n, path: nd.path, line: nd.line})
			cur = &groups[len(groups)-1]
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# Cluster spec imported by schedsim cluster import from %s", sp)
	if im.f.GresConf != nil {
		fmt.Fprintf(&b, ", %s", orDefault(im.f.GresPath, "gres.conf"))
	}
	if im.f.TopologyConf != nil {
		fmt.Fprintf(&b, ", %s", orDefault(im.f.TopologyPath, "topology.conf"))
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "version: 1\nname: %s\nnode_groups:\n", clusterName)
	for _, g := range groups {
		n := g.node
		fmt.Fprintf(&b, "  - name: %s  # %s:%d\n", yamlQuote(CompressHostlist(g.names)), g.path, g.line)
		if n.gpus > 0 {
			if n.gpuType == "" {
				fmt.Fprintf(&b, "    gpu: {model: %s, count: %d}", n.gpuModel, n.gpus)
			} else {
				fmt.Fprintf(&b, "    gpu: {model: %s, type: %s, count: %d}", n.gpuModel, yamlQuote(n.gpuType), n.gpus)
			}
			if n.guessed {
				fmt.Fprintf(&b, "  # model guessed from GRES type %q; set the exact model", n.gpuType)
			}
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "    cpus: %d\n    memory: %d  # RealMemory, MiB\n", n.cpus, n.mem)
		if n.features != "" {
			fmt.Fprintf(&b, "    features: [%s]\n", n.features)
		}
		if n.weight != 1 {
			fmt.Fprintf(&b, "    weight: %d\n", n.weight)
		}
		if n.migLayout != "" {
			fmt.Fprintf(&b, "    mig: {layout: [%s], gpus: %d}\n", n.migLayout, n.migGPUs)
		}
	}

	keptParts, err := im.partitions(&b, parts, defined, global, globalLine)
	if err != nil {
		return nil, im.warns, err
	}

	if im.f.TopologyConf != nil {
		if err := im.topology(&b, defined); err != nil {
			return nil, im.warns, err
		}
	}
	if err := im.power(&b, global, globalLine, defined, parts); err != nil {
		return nil, im.warns, err
	}

	if len(settings) > 0 || len(keptParts) > 0 {
		b.WriteString("slurm:\n")
		if len(settings) > 0 {
			b.WriteString("  settings:  # slurm.conf values kept for the slurm policy and the scenario\n")
			for _, kv := range settings {
				fmt.Fprintf(&b, "    %s: %s\n", kv.Key, yamlQuote(kv.Value))
			}
		}
		if len(keptParts) > 0 {
			b.WriteString("  partitions:  # PartitionName keys the spec has no field for\n")
			for _, ps := range keptParts {
				var items []string
				for _, kv := range ps.Settings {
					items = append(items, kv.Key+": "+yamlQuote(kv.Value))
				}
				fmt.Fprintf(&b, "    %s: {%s}\n", yamlQuote(ps.Partition), strings.Join(items, ", "))
			}
		}
	}
	out := []byte(b.String())
	if _, err := ParseCluster(out, "imported spec"); err != nil {
		return nil, im.warns, fmt.Errorf("the imported spec does not load (please report): %w", err)
	}
	return out, im.warns, nil
}

// nodeLimitHint says how to change the node limit.
func (im *importer) nodeLimitHint() string {
	if im.maxNodes < MaxClusterNodes {
		return fmt.Sprintf("the limit set by --max-nodes; raise it, up to %d", MaxClusterNodes)
	}
	return fmt.Sprintf("schedsim models at most %d nodes", MaxClusterNodes)
}

// setKV sets key (case-insensitive) in kvs to value, in place when it is
// there already: a later slurm.conf line overrides an earlier one.
func setKV(kvs []KeyValue, key, value string) []KeyValue {
	for i := range kvs {
		if strings.EqualFold(kvs[i].Key, key) {
			kvs[i].Value = value
			return kvs
		}
	}
	return append(kvs, KeyValue{key, value})
}

// partDefaults are Slurm's defaults of kept partition keys: a partition
// that sets one to its default behaves as the simulation does, so no
// warning is due.
var partDefaults = map[string][]string{
	"oversubscribe": {"NO"}, "shared": {"NO"}, "exclusiveuser": {"NO"}, "exclusivetopo": {"NO"}, "hidden": {"NO", "YES"},
	"disablerootjobs": {"NO"}, "rootonly": {"NO"}, "reqresv": {"NO"}, "lln": {"NO"}, "powerdownonidle": {"NO"},
	"state": {"UP"}, "gracetime": {"0"}, "minnodes": {"0", "1"}, "allowaccounts": {"ALL"}, "allowgroups": {"ALL"},
	"allowqos": {"ALL"}, "allocnodes": {"ALL"}, "cpubind": {"NONE"},
}

// checkPartKey warns about a PartitionName key the simulation does not
// model (once per key).
func (im *importer) checkPartKey(l confLine, p confPair) {
	k := strings.ToLower(p.Key)
	switch {
	case slices.Contains(partKeysModeled, k), k == "preemptmode":
	case containsFold(partDefaults[k], strings.TrimSpace(p.Value)):
	case k == "state":
		im.warnOnce("part:state", l.Path, l.Line, "PartitionName State=%s is not modeled: partitions take and run jobs as if UP", p.Value)
	case containsFold(partKeysKept, k):
		im.warnOnce("part:"+k, l.Path, l.Line, "PartitionName key %s is not modeled by schedsim; kept in the spec's slurm section", p.Key)
	default:
		im.warnOnce("part:"+k, l.Path, l.Line, "PartitionName key %s is not a slurm.conf partition key schedsim knows; ignored", p.Key)
	}
}

// checkKeptGlobal warns about a kept global key the simulation does not
// model (once per key).
func (im *importer) checkKeptGlobal(l confLine, p confPair) {
	k := strings.ToLower(p.Key)
	v := strings.ToLower(strings.TrimSpace(p.Value))
	switch {
	case slices.Contains(globalPolicy, k):
	case k == "grestypes":
	case k == "selecttype" && (v == "select/cons_tres" || v == "select/cons_res"):
	case k == "selecttypeparameters" && strings.Contains(v, "_memory"):
	case k == "schedulertype" && v == "sched/backfill":
	case k == "schedulertype":
		im.warnOnce("global:"+k, l.Path, l.Line, "SchedulerType=%s is not modeled: the slurm policy runs Slurm's main and backfill loops (policy arg bf_interval: -1 turns backfill off)", p.Value)
	case k == "selecttype":
		im.warnOnce("global:"+k, l.Path, l.Line, "SelectType=%s is not modeled: schedsim allocates CPUs, memory and GPUs per job, as select/cons_tres does", p.Value)
	case k == "selecttypeparameters":
		im.warnOnce("global:"+k, l.Path, l.Line, "SelectTypeParameters=%s is not modeled: schedsim counts CPUs and memory, as CR_Core_Memory does", p.Value)
	default:
		im.warnOnce("global:"+k, l.Path, l.Line, "%s is not modeled by schedsim; kept in the spec's slurm section", p.Key)
	}
}

// checkGlobals validates the global settings the simulation reads, at
// the line that set them.
func (im *importer) checkGlobals(g map[string]confPair, at map[string]confLine) error {
	bad := func(k, format string, args ...any) error {
		l := at[k]
		return confError(l.Path, l.Line, g[k].Key, ErrSyntax, format, args...)
	}
	if p, ok := g["jobrequeue"]; ok {
		if n, err := strconv.ParseUint(strings.TrimSpace(p.Value), 10, 16); err != nil {
			return bad("jobrequeue", "want 0 or 1, got %q", p.Value)
		} else if n > 1 {
			im.warn(at["jobrequeue"].Path, at["jobrequeue"].Line, "JobRequeue=%d is taken as 1, as slurmctld does", n)
		}
	}
	if p, ok := g["overtimelimit"]; ok {
		v := strings.ToUpper(strings.TrimSpace(p.Value))
		if _, err := strconv.ParseUint(v, 10, 16); err != nil && v != "UNLIMITED" && v != "INFINITE" {
			return bad("overtimelimit", "want minutes (0 to 65535) or UNLIMITED, got %q", p.Value)
		}
	}
	if p, ok := g["enforcepartlimits"]; ok {
		if v := strings.ToUpper(strings.TrimSpace(p.Value)); !slices.Contains([]string{"NO", "ANY", "YES", "ALL"}, v) {
			return bad("enforcepartlimits", "want NO, ANY, YES or ALL, got %q", p.Value)
		}
	}
	if p, ok := g["topologyplugin"]; ok {
		switch v := strings.ToLower(strings.TrimSpace(p.Value)); v {
		case "topology/tree", "topology/block", "topology/flat", "topology/default", "topology/none", "":
		default:
			im.warnOnce("global:topologyplugin", at["topologyplugin"].Path, at["topologyplugin"].Line, "TopologyPlugin=%s is not modeled: placement ignores the topology (topology/tree and topology/block are)", p.Value)
		}
	}
	if p, ok := g["dependencyparameters"]; ok {
		for item := range strings.SplitSeq(p.Value, ",") {
			if k, _, _ := strings.Cut(strings.TrimSpace(item), "="); k != "" && !strings.EqualFold(k, "kill_invalid_depend") {
				im.warnOnce("dep:"+strings.ToLower(k), at["dependencyparameters"].Path, at["dependencyparameters"].Line, "DependencyParameters %s is not modeled (kill_invalid_depend is)", k)
			}
		}
	}
	return nil
}

// topologyPlugin returns TopologyPlugin's topology/tree or
// topology/block (lower case), "" for any other or none.
func topologyPlugin(g map[string]confPair) string {
	p := g["topologyplugin"]
	switch v := strings.ToLower(strings.TrimSpace(p.Value)); v {
	case "topology/tree", "topology/block":
		return v
	}
	return ""
}

// findBeside reads gres.conf and, under TopologyPlugin=topology/tree or
// topology/block, topology.conf from slurm.conf's directory when they
// were not given, as Slurm does (gres.conf(5), topology.conf(5): "always
// located in the same directory as the slurm.conf file").
func (im *importer) findBeside(g map[string]confPair) error {
	im.plugin = topologyPlugin(g)
	tree := im.plugin != ""
	if !tree && im.f.TopologyConf != nil {
		im.warn(orDefault(im.f.TopologyPath, "topology.conf"), 0, "read, but TopologyPlugin is neither topology/tree nor topology/block: the fabric is imported (comm_stretch and a topology placement use it) and the slurm policy places first-fit, as Slurm ignores topology.conf")
	}
	if im.f.Files == nil {
		if tree && im.f.TopologyConf == nil {
			im.warn(im.f.SlurmPath, 0, "TopologyPlugin=%s but no topology.conf given: no fabric imported", im.plugin)
		}
		return nil
	}
	dir := filepath.Dir(im.f.SlurmPath)
	look := func(name string) ([]byte, string, error) {
		p := filepath.Join(dir, name)
		data, err := im.f.Files.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, p, nil
		}
		if err != nil {
			return nil, p, &ParseError{Path: p, Err: &specError{ErrSyntax, err.Error()}}
		}
		return data, p, nil
	}
	if im.f.GresConf == nil {
		data, p, err := look("gres.conf")
		if err != nil {
			return err
		}
		if data != nil {
			im.f.GresConf, im.f.GresPath = data, p
			im.warn(p, 0, "read beside slurm.conf, where Slurm reads it (--gres-conf names another)")
		}
	}
	if tree && im.f.TopologyConf == nil {
		data, p, err := look("topology.conf")
		if err != nil {
			return err
		}
		if data == nil {
			im.warn(im.f.SlurmPath, 0, "TopologyPlugin=%s but there is no %s: no fabric imported", im.plugin, p)
		} else {
			im.f.TopologyConf, im.f.TopologyPath = data, p
		}
	}
	return nil
}

// partitions writes the partitions section and returns the kept keys.
func (im *importer) partitions(b *strings.Builder, parts []partDef, defined map[string]int, g map[string]confPair, at map[string]confLine) ([]PartitionSettings, error) {
	if len(parts) > 0 {
		b.WriteString("partitions:\n")
	}
	// Default=YES on several partitions: slurmctld keeps the last.
	def := -1
	for i, pd := range parts {
		if v, ok := pd.attrs["default"]; ok {
			switch strings.ToUpper(v) {
			case "YES":
				if def >= 0 {
					im.warn(parts[def].path, parts[def].line, "Default=YES on partition %s and again on %s (line %d): slurmctld keeps the last", parts[def].name, pd.name, pd.line)
				}
				def = i
			case "NO":
			default:
				return nil, confError(pd.path, pd.line, "Default", ErrSyntax, "want YES or NO, got %q", v)
			}
		}
	}
	var kept []PartitionSettings
	seen := map[string]int{}
	for i, pd := range parts {
		bad := func(key string, kind error, format string, args ...any) error {
			return confError(pd.path, pd.line, key, kind, format, args...)
		}
		if prev, dup := seen[pd.name]; dup {
			return nil, bad("PartitionName", ErrDuplicate, "partition %s is already defined on line %d", pd.name, prev)
		}
		seen[pd.name] = pd.line
		if sanitizeName(pd.name) != pd.name {
			return nil, bad("PartitionName", ErrSyntax, "partition name %q: want letters, digits, '-', '_' and '.'", pd.name)
		}
		fmt.Fprintf(b, "  - name: %s  # %s:%d\n", yamlQuote(pd.name), pd.path, pd.line)
		nodesVal, ok := pd.attrs["nodes"]
		if !ok || nodesVal == "" {
			return nil, bad("Nodes", ErrMissing, "partition %s has no Nodes=", pd.name)
		}
		if !strings.EqualFold(nodesVal, "ALL") {
			n, err := HostlistCount(nodesVal, im.maxNodes)
			if err != nil {
				return nil, bad("Nodes", ErrSyntax, "%v", err)
			}
			if n > im.maxNodes {
				return nil, bad("Nodes", ErrRange, "names more than %d nodes (%s)", im.maxNodes, im.nodeLimitHint())
			}
			names, err := ExpandHostlist(nodesVal)
			if err != nil {
				return nil, bad("Nodes", ErrSyntax, "%v", err)
			}
			for _, nm := range names {
				if _, ok := defined[nm]; !ok {
					return nil, bad("Nodes", ErrUnknownName, "partition %s names node %s, which no NodeName line defines", pd.name, nm)
				}
			}
			nodesVal = CompressHostlist(names)
		} else {
			nodesVal = "ALL"
		}
		fmt.Fprintf(b, "    nodes: %s\n", yamlQuote(nodesVal))
		var maxTime int64 // seconds, 0 UNLIMITED
		if v, ok := pd.attrs["maxtime"]; ok {
			secs, unlimited, err := ParseSlurmDuration(v)
			if err != nil {
				return nil, bad("MaxTime", ErrSyntax, "%v", err)
			}
			if !unlimited && secs == 0 {
				return nil, bad("MaxTime", ErrRange, "0 (want at least 1 minute or UNLIMITED)")
			}
			if !unlimited {
				maxTime = (secs + 59) / 60 * 60
			}
			fmt.Fprintf(b, "    max_time: %s\n", yamlQuote(v))
		}
		if v, ok := pd.attrs["maxnodes"]; ok {
			switch u := strings.ToUpper(strings.TrimSpace(v)); {
			case u == "UNLIMITED" || u == "INFINITE":
			default:
				n, err := strconv.ParseInt(u, 10, 64)
				if err != nil || n < 1 || n > 1<<31-1 {
					return nil, bad("MaxNodes", ErrRange, "want a node count of at least 1 or UNLIMITED, got %q", v)
				}
				fmt.Fprintf(b, "    max_nodes: %d\n", n)
			}
		}
		if v, ok := pd.attrs["defaulttime"]; ok {
			secs, unlimited, err := ParseSlurmDuration(v)
			switch {
			case err != nil:
				return nil, bad("DefaultTime", ErrSyntax, "%v", err)
			case unlimited:
				// INFINITE: jobs get MaxTime anyway (above it, dropped).
			case secs == 0:
				return nil, bad("DefaultTime", ErrRange, "0 (want at least 1 minute or UNLIMITED)")
			case maxTime > 0 && (secs+59)/60*60 > maxTime:
				im.warn(pd.path, pd.line, "partition %s: DefaultTime=%s exceeds MaxTime=%s; dropped, as slurmctld does (read_config.c)", pd.name, v, pd.attrs["maxtime"])
			default:
				fmt.Fprintf(b, "    default_time: %s\n", yamlQuote(v))
			}
		}
		if i == def {
			b.WriteString("    default: true\n")
		}
		tier, jf := pd.attrs["prioritytier"], pd.attrs["priorityjobfactor"]
		if v, ok := pd.attrs["priority"]; ok {
			// Priority= (before 16.05) set both; explicit keys win.
			if tier == "" {
				tier = v
			}
			if jf == "" {
				jf = v
			}
			b.WriteString("    # Priority=" + v + " (the pre-16.05 key) sets both tier and job factor\n")
		}
		for _, x := range []struct{ key, val, name string }{{"priority_tier", tier, "PriorityTier"}, {"priority_job_factor", jf, "PriorityJobFactor"}} {
			if x.val == "" {
				continue
			}
			v, err := strconv.ParseInt(x.val, 10, 64)
			if err != nil || v < 0 || v > maxPriority {
				return nil, bad(x.name, ErrRange, "want an integer 0 to %d, got %q", maxPriority, x.val)
			}
			fmt.Fprintf(b, "    %s: %d\n", x.key, v)
		}
		// DefCpuPerGPU, DefMemPerCPU, DefMemPerGPU: the partition's, else
		// slurm.conf's global value.
		for _, d := range []struct{ attr, key, name string }{
			{"defcpupergpu", "def_cpu_per_gpu", "DefCpuPerGPU"}, {"defmempercpu", "def_mem_per_cpu", "DefMemPerCPU"}, {"defmempergpu", "def_mem_per_gpu", "DefMemPerGPU"},
		} {
			v, ok := pd.attrs[d.attr]
			path, line := pd.path, pd.line
			if !ok {
				gp, gok := g[d.attr]
				if !gok {
					continue
				}
				v, path, line = gp.Value, at[d.attr].Path, at[d.attr].Line
			}
			limit := int64(maxMemMB)
			if d.attr == "defcpupergpu" {
				limit = maxCPUsPerNode
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 || n > limit {
				return nil, confError(path, line, d.name, ErrRange, "want an integer 0 to %d, got %q", limit, v)
			}
			if n > 0 {
				fmt.Fprintf(b, "    %s: %d\n", d.key, n)
			}
		}
		if len(pd.kept) > 0 {
			kept = append(kept, PartitionSettings{Partition: pd.name, Settings: pd.kept})
		}
	}
	return kept, nil
}

// power writes the power section from slurm.conf's power-saving keys
// (SuspendTime, ResumeTimeout, SuspendTimeout, SuspendExcNodes,
// SuspendExcParts), when SuspendTime turns power saving on.
func (im *importer) power(b *strings.Builder, g map[string]confPair, at map[string]confLine, defined map[string]int, parts []partDef) error {
	secs := func(k string, def int64) (int64, error) {
		p, ok := g[k]
		if !ok {
			return def, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(p.Value), 10, 64)
		if err != nil || n < 0 || n > 1<<31 {
			return 0, confError(at[k].Path, at[k].Line, p.Key, ErrSyntax, "want seconds, got %q", p.Value)
		}
		return n, nil
	}
	p, ok := g["suspendtime"]
	if !ok {
		return nil
	}
	v := strings.ToUpper(strings.TrimSpace(p.Value))
	if v == "NONE" || v == "INFINITE" || strings.HasPrefix(v, "-") {
		return nil // power saving off (Slurm's default, -1)
	}
	suspend, err := secs("suspendtime", 0)
	if err != nil {
		return err
	}
	if suspend == 0 {
		im.warn(at["suspendtime"].Path, at["suspendtime"].Line, "SuspendTime=0 powers idle nodes down at once; modeled as 1 s")
		suspend = 1
	}
	resume, err := secs("resumetimeout", 60) // slurm.conf(5) defaults
	if err != nil {
		return err
	}
	down, err := secs("suspendtimeout", 30)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "power:  # slurm.conf power saving\n  suspend_time: %d\n  resume_timeout: %d\n  suspend_timeout: %d\n", suspend, resume, down)
	if p, ok := g["suspendexcnodes"]; ok {
		l := at["suspendexcnodes"]
		var list []string
		for _, item := range splitTopLevel(p.Value) {
			// 23.02's "nodes:N" keeps N of them up; all are kept up here.
			if h, n, cut := strings.Cut(item, ":"); cut {
				im.warnOnce("excnodes:count", l.Path, l.Line, "SuspendExcNodes %s:%s: the count form is not modeled; all of %s stay up", h, n, h)
				item = h
			}
			list = append(list, item)
		}
		joined := strings.Join(list, ",")
		n, err := HostlistCount(joined, im.maxNodes)
		if err != nil {
			return confError(l.Path, l.Line, p.Key, ErrSyntax, "%v", err)
		}
		if n > im.maxNodes {
			return confError(l.Path, l.Line, p.Key, ErrRange, "names more than %d nodes (%s)", im.maxNodes, im.nodeLimitHint())
		}
		names, err := ExpandHostlist(joined)
		if err != nil {
			return confError(l.Path, l.Line, p.Key, ErrSyntax, "%v", err)
		}
		var known []string
		for _, nm := range names {
			if _, ok := defined[nm]; ok {
				known = append(known, nm)
			} else {
				im.warnOnce("excnode:"+nm, l.Path, l.Line, "SuspendExcNodes names node %s, which no NodeName line defines; skipped", nm)
			}
		}
		if len(known) > 0 {
			fmt.Fprintf(b, "  suspend_exc_nodes: %s\n", yamlQuote(CompressHostlist(known)))
		}
	}
	if p, ok := g["suspendexcparts"]; ok {
		l := at["suspendexcparts"]
		var names []string
		for item := range strings.SplitSeq(p.Value, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if !slices.ContainsFunc(parts, func(pd partDef) bool { return pd.name == item }) {
				im.warnOnce("excpart:"+item, l.Path, l.Line, "SuspendExcParts names partition %s, which no PartitionName line defines; skipped", item)
				continue
			}
			if !slices.Contains(names, item) {
				names = append(names, yamlQuote(item))
			}
		}
		if len(names) > 0 {
			fmt.Fprintf(b, "  suspend_exc_parts: [%s]\n", strings.Join(names, ", "))
		}
	}
	return nil
}

// gresConf reads gres.conf (includes followed) into GRES items: perNode
// holds the lines with NodeName, by node name; anyNode the lines without,
// which apply to every node whose slurm.conf Gres= declares that GRES
// name (gres.c, gres_node_config_load on slurm-22-05: slurmd keeps a
// gres.conf record only for a GRES its node is configured with), not to
// CPU-only nodes.
func (im *importer) gresConf(nodes []nodeDef) (perNode map[string][]gresItem, anyNode []gresItem, err error) {
	perNode = map[string][]gresItem{}
	if im.f.GresConf == nil {
		return perNode, nil, nil
	}
	gp := orDefault(im.f.GresPath, "gres.conf")
	lines, err := im.reader.read(im.f.GresConf, gp)
	if err != nil {
		return nil, nil, err
	}
	declared := map[string]bool{}
	for _, nd := range nodes {
		for _, g := range nd.gres {
			declared[g] = true
		}
	}
	// Bound the (line, node) assignments, so that many lines naming many
	// nodes cannot make the import quadratic.
	var assigned uint64
	maxAssigned := 16 * im.maxNodes
	for seq, l := range lines {
		attrs := map[string]string{}
		for _, p := range l.Pairs {
			k := strings.ToLower(p.Key)
			switch {
			case slices.Contains(gresKeysModeled, k):
			case slices.Contains(gresKeysKnown, k):
				im.warnOnce("gres:"+k, l.Path, l.Line, "gres.conf key %s is not modeled by schedsim (no GPU-CPU affinity or NVLink layout within a node); ignored", p.Key)
			default:
				im.warnOnce("gres:"+k, l.Path, l.Line, "gres.conf key %s is not a gres.conf key schedsim knows; ignored", p.Key)
			}
			attrs[k] = p.Value
		}
		if ad, ok := attrs["autodetect"]; ok && !strings.EqualFold(ad, "off") {
			im.warnOnce("gres:autodetect", l.Path, l.Line, "AutoDetect=%s: schedsim cannot detect devices; GPU counts come from slurm.conf Gres= and explicit gres.conf lines", ad)
		}
		name, ok := attrs["name"]
		if !ok {
			if _, ad := attrs["autodetect"]; ad {
				continue
			}
			return nil, nil, confError(l.Path, l.Line, "Name", ErrMissing, "want Name=gpu (or mps, shard)")
		}
		it := gresItem{name: strings.ToLower(name), typ: attrs["type"], path: l.Path, line: l.Line, seq: seq}
		if it.typ != "" && !validGresType(it.typ) {
			return nil, nil, confError(l.Path, l.Line, "Type", ErrSyntax, "%q: want a GRES type of letters, digits, '-', '_' and '.', at most %d characters", it.typ, maxNameLen)
		}
		for _, fk := range []string{"file", "multiplefiles"} {
			if fv, ok := attrs[fk]; ok {
				n, err := countFiles(fv)
				if err != nil {
					return nil, nil, confError(l.Path, l.Line, fk, ErrSyntax, "%v", err)
				}
				if fk == "file" || it.files == 0 {
					it.files = n
				}
			}
		}
		if cv, ok := attrs["count"]; ok {
			c, ok := parseConfCount(cv)
			if !ok {
				return nil, nil, confError(l.Path, l.Line, "Count", ErrSyntax, "want a count (digits, optional K, M or G), got %q", cv)
			}
			it.count = c
		} else if it.files > 0 {
			it.count = int64(it.files)
		} else {
			it.count = 1
		}
		if it.name == "gpu" && it.files > 0 && it.count != int64(it.files) && !migTypeRE.MatchString(strings.ToLower(it.typ)) {
			im.warn(l.Path, l.Line, "Count=%d but File= names %d devices; using Count", it.count, it.files)
		}
		nv, ok := attrs["nodename"]
		if !ok {
			if !declared[it.name] {
				im.warn(l.Path, l.Line, "line without NodeName applies to the nodes whose slurm.conf Gres= declares %s, and none does; ignored", it.name)
				continue
			}
			anyNode = append(anyNode, it)
			continue
		}
		n, err := HostlistCount(nv, im.maxNodes)
		if err != nil {
			return nil, nil, confError(l.Path, l.Line, "NodeName", ErrSyntax, "%v", err)
		}
		if n > im.maxNodes {
			return nil, nil, confError(l.Path, l.Line, "NodeName", ErrRange, "names more than %d nodes (%s)", im.maxNodes, im.nodeLimitHint())
		}
		if assigned += n; assigned > maxAssigned {
			return nil, nil, confError(l.Path, l.Line, "NodeName", ErrRange, "the gres.conf lines up to this one name more than %d nodes in all (16 per node of the limit, %s)", maxAssigned, im.nodeLimitHint())
		}
		targets, err := ExpandHostlist(nv)
		if err != nil {
			return nil, nil, confError(l.Path, l.Line, "NodeName", ErrSyntax, "%v", err)
		}
		for _, t := range targets {
			perNode[t] = append(perNode[t], it)
		}
	}
	return perNode, anyNode, nil
}

// nodeGresItems returns a node's gres.conf items in file order: its own
// lines and the lines without NodeName for the GRES its Gres= declares.
func nodeGresItems(own, anyNode []gresItem, declared []string) []gresItem {
	if len(anyNode) == 0 {
		return own
	}
	out := slices.Clone(own)
	for _, it := range anyNode {
		if slices.Contains(declared, it.name) {
			out = append(out, it)
		}
	}
	slices.SortStableFunc(out, func(a, b gresItem) int { return a.seq - b.seq })
	return out
}

// validGresType reports whether t may be a GRES type name of the spec.
func validGresType(t string) bool {
	if t == "" || len(t) > maxNameLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !isNameByte(t[i]) {
			return false
		}
	}
	return true
}

// parseNodeGres parses a slurm.conf Gres= value ("gpu:h100:8,mps:800",
// "gpu:8(S:0-1)").
func parseNodeGres(s string) ([]gresItem, error) {
	var out []gresItem
	for _, item := range strings.Split(s, ",") {
		if i := strings.IndexByte(item, '('); i >= 0 {
			item = item[:i]
		}
		if item == "" {
			continue
		}
		f := strings.Split(item, ":")
		it := gresItem{name: strings.ToLower(f[0]), count: 1}
		if !validGresType(it.name) {
			return nil, fmt.Errorf("%q: GRES name %q: want letters, digits, '-', '_' and '.'", item, f[0])
		}
		switch len(f) {
		case 1:
		case 2:
			if c, ok := parseConfCount(f[1]); ok {
				it.count = c
			} else {
				it.typ = f[1]
			}
		case 3:
			it.typ = f[1]
			c, ok := parseConfCount(f[2])
			if !ok {
				return nil, fmt.Errorf("%q: bad count %q (want digits, optional K, M or G)", item, f[2])
			}
			it.count = c
		default:
			return nil, fmt.Errorf("%q: want name[:type][:count]", item)
		}
		if it.typ != "" && !validGresType(it.typ) {
			return nil, fmt.Errorf("%q: %q is neither a count (digits, optional K, M or G) nor a type (letters, digits, '-', '_' and '.')", item, it.typ)
		}
		out = append(out, it)
	}
	return out, nil
}

// resolveNode works out one node's attributes from its NodeName line and
// its gres.conf items.
func (im *importer) resolveNode(nd nodeDef, name string, gconf []gresItem) (importedNode, error) {
	sp := nd.path
	a := nd.attrs
	num := func(key string, def int64) (int64, error) {
		v, ok := a[key]
		if !ok {
			return def, nil
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x < 0 {
			return 0, confError(sp, nd.line, key, ErrSyntax, "want a non-negative integer, got %q", v)
		}
		return x, nil
	}
	var n importedNode
	var err error
	cpuKey := "cpus"
	if _, ok := a["cpus"]; !ok {
		cpuKey = "procs"
	}
	if n.cpus, err = num(cpuKey, 0); err != nil {
		return n, err
	}
	if n.cpus == 0 {
		boards, _ := num("boards", 1)
		spb, _ := num("socketsperboard", 0)
		sockets, err := num("sockets", 1)
		if err != nil {
			return n, err
		}
		if spb > 0 {
			sockets = boards * spb
		}
		cores, err := num("corespersocket", 1)
		if err != nil {
			return n, err
		}
		threads, err := num("threadspercore", 1)
		if err != nil {
			return n, err
		}
		n.cpus = sockets * cores * threads
	}
	if n.cpus < 1 || n.cpus > maxCPUsPerNode {
		return n, confError(sp, nd.line, "CPUs", ErrRange, "want 1 to %d CPUs, got %d", maxCPUsPerNode, n.cpus)
	}
	if n.mem, err = num("realmemory", 1); err != nil {
		return n, err
	}
	if _, ok := a["realmemory"]; !ok {
		im.warnOnce("mem:"+strconv.Itoa(nd.line), sp, nd.line, "NodeName line without RealMemory: Slurm's default of 1 MiB is used")
	}
	n.mem = min(max(n.mem, 1), maxMemMB)
	if n.weight, err = num("weight", 1); err != nil {
		return n, err
	}
	feat := a["features"]
	if feat == "" {
		feat = a["feature"]
	}
	if feat != "" {
		var fs []string
		for _, x := range strings.Split(feat, ",") {
			if x = strings.TrimSpace(x); x == "" {
				continue
			}
			x = yamlQuote(sanitizeName(x))
			if !slices.Contains(fs, x) {
				fs = append(fs, x)
			}
		}
		n.features = strings.Join(fs, ", ")
	}

	// GPUs: slurm.conf Gres= first; gres.conf when slurm.conf says none.
	var gpus []gresItem
	if g, ok := a["gres"]; ok {
		items, err := parseNodeGres(g)
		if err != nil {
			return n, confError(sp, nd.line, "Gres", ErrSyntax, "%v", err)
		}
		for _, it := range items {
			if it.name == "gpu" {
				gpus = append(gpus, it)
			}
		}
	}
	var confGPUs []gresItem
	for _, it := range gconf {
		if it.name == "gpu" {
			confGPUs = append(confGPUs, it)
		}
	}
	if len(gpus) == 0 && len(confGPUs) > 0 {
		im.warnOnce("gresonly:"+strconv.Itoa(nd.line), sp, nd.line, "gres.conf defines GPUs for %s but its NodeName line has no Gres=; taking gres.conf's", name)
		gpus = confGPUs
	}
	// An untyped slurm.conf Gres=gpu:8 takes its type from the node's
	// typed whole-GPU gres.conf lines (gres.c: slurmd's typed records
	// refine the untyped count slurm.conf configures).
	if len(gpus) == 1 && gpus[0].typ == "" {
		var types []string
		var sum int64
		var first gresItem
		for _, c := range confGPUs {
			if c.typ == "" || migTypeRE.MatchString(strings.ToLower(c.typ)) {
				continue
			}
			if len(types) == 0 {
				first = c
			}
			if !slices.Contains(types, strings.ToLower(c.typ)) {
				types = append(types, strings.ToLower(c.typ))
			}
			if strings.EqualFold(c.typ, first.typ) {
				sum += c.count
			}
		}
		if len(types) > 1 {
			im.warnOnce("multitype:"+strconv.Itoa(nd.line), first.path, first.line, "%s: gres.conf gives several GPU types (%s), which are not modeled on one node; keeping %s", name, strings.Join(types, ", "), types[0])
		}
		if len(types) > 0 {
			if sum != gpus[0].count {
				im.warnOnce("refine:"+name, first.path, first.line, "%s: gres.conf has %d GPUs of type %s, slurm.conf Gres= says %d; using slurm.conf's count", name, sum, first.typ, gpus[0].count)
			}
			gpus[0].typ = first.typ
		}
	}
	var whole, mig []gresItem
	for _, it := range gpus {
		if migTypeRE.MatchString(strings.ToLower(it.typ)) {
			mig = append(mig, it)
		} else {
			whole = append(whole, it)
		}
	}
	// A MIG type of slurm.conf takes its device files and line from the
	// gres.conf line of the same type; MIG types only in gres.conf still
	// describe the node's MIG layout.
	for i := range mig {
		for _, c := range confGPUs {
			if strings.EqualFold(c.typ, mig[i].typ) {
				mig[i].files, mig[i].line = c.files, c.line
			}
		}
	}
	for _, it := range confGPUs {
		if migTypeRE.MatchString(strings.ToLower(it.typ)) && !slices.ContainsFunc(mig, func(x gresItem) bool { return strings.EqualFold(x.typ, it.typ) }) {
			mig = append(mig, it)
		}
	}
	if len(whole) > 1 {
		im.warnOnce("multitype:"+strconv.Itoa(nd.line), sp, nd.line, "nodes with several GPU types (%s) are not modeled; keeping %s:%d", a["gres"], whole[0].typ, whole[0].count)
	}
	if len(whole) > 0 {
		w := whole[0]
		n.gpuType, n.gpus = strings.ToLower(w.typ), w.count
		for _, c := range confGPUs {
			if strings.EqualFold(c.typ, w.typ) && c.count != w.count {
				im.warnOnce("count:"+name, c.path, c.line, "%s: gres.conf Count=%d for type %s, slurm.conf Gres= says %d; using slurm.conf", name, c.count, c.typ, w.count)
			}
		}
	}
	if len(mig) > 0 {
		im.migLayout(&n, name, mig, len(whole) > 0)
	}
	if n.gpus > maxGPUsPerNode {
		return n, confError(sp, nd.line, "Gres", ErrRange, "%d GPUs on a node, more than %d", n.gpus, maxGPUsPerNode)
	}
	if n.gpus > 0 {
		if n.gpuType == "" {
			n.gpuModel = CustomGPUModel
		} else {
			n.gpuModel, n.guessed = guessGPUModel(n.gpuType)
		}
	}
	return n, nil
}

// migLayout turns a node's MIG GRES types into a per-GPU layout checked by
// geometry, or warns and leaves the node's GPUs whole.
func (im *importer) migLayout(n *importedNode, name string, mig []gresItem, hasWhole bool) {
	gp, line := mig[0].path, mig[0].line
	m := migTypeRE.FindStringSubmatch(strings.ToLower(mig[0].typ))
	if n.gpuType == "" {
		n.gpuType = m[1]
	}
	if n.gpus == 0 {
		n.gpus = int64(mig[0].files)
	}
	key := "mig:" + name
	if n.gpus == 0 {
		im.warnOnce(key, gp, line, "%s: MIG types without a GPU count (no whole-GPU Gres and no File=): MIG not imported", name)
		return
	}
	model, _ := guessGPUModel(n.gpuType)
	geo, ok := LookupMIG(model)
	if !ok {
		im.warnOnce(key, gp, line, "%s: no MIG table for GPU model %s: MIG not imported", name, model)
		return
	}
	var profiles []string
	var total []string
	for _, it := range mig {
		pm := migTypeRE.FindStringSubmatch(strings.ToLower(it.typ))
		if it.count%n.gpus != 0 {
			im.warnOnce(key, it.path, it.line, "%s: Type=%s Count=%d is not the same layout on each of %d GPUs: MIG not imported", name, it.typ, it.count, n.gpus)
			return
		}
		for range it.count / n.gpus {
			profiles = append(profiles, pm[2])
		}
		total = append(total, fmt.Sprintf("Type=%s Count=%d", it.typ, it.count))
	}
	idx, err := geo.ParseLayout(profiles)
	if err == nil {
		_, err = geo.Layout(idx)
	}
	if err != nil {
		im.warnOnce(key, gp, line, "%s: %s on %d GPUs cannot be configured (%v); MIG not imported, the node keeps %d whole GPUs", name, strings.Join(total, ", "), n.gpus, err, n.gpus)
		return
	}
	if hasWhole {
		im.warnOnce("migwhole:"+name, gp, line, "%s: both whole-GPU and MIG types describe the same %d GPUs; taking them all as MIG GPUs (Slurm would count both)", name, n.gpus)
	}
	n.migLayout, n.migGPUs = strings.Join(profiles, ", "), n.gpus
}

// topology writes the fabric section from topology.conf: the switch tree
// of its SwitchName lines, its BlockName lines as fabric.blocks and
// BlockSizes as fabric.block_sizes. Without SwitchName lines the tree is
// one switch per block under one top switch, so that the communication
// model has links between blocks.
func (im *importer) topology(b *strings.Builder, defined map[string]int) error {
	tp := orDefault(im.f.TopologyPath, "topology.conf")
	lines, err := im.reader.read(im.f.TopologyConf, tp)
	if err != nil {
		return err
	}
	tc, warns, err := parseTopologyLines(lines)
	im.warns = append(im.warns, warns...)
	if err != nil {
		return err
	}
	sw := tc.Switches
	// Each switch's file, for messages (includes may spread them).
	swPath := make([]string, len(sw))
	k := 0
	for _, l := range lines {
		if k < len(sw) && len(l.Pairs) > 0 && strings.EqualFold(l.Pairs[0].Key, "SwitchName") && l.Line == sw[k].Line {
			swPath[k] = l.Path
			k++
		}
	}
	for i := range sw {
		for _, h := range []string{sw[i].Nodes, sw[i].Switches} {
			if h == "" {
				continue
			}
			n, err := HostlistCount(h, im.maxNodes)
			if err != nil {
				return confError(swPath[i], sw[i].Line, "SwitchName", ErrSyntax, "%v", err)
			}
			if n > im.maxNodes {
				return confError(swPath[i], sw[i].Line, "SwitchName", ErrRange, "switch %s names more than %d members (%s)", sw[i].Name, im.maxNodes, im.nodeLimitHint())
			}
		}
	}
	if len(sw) == 0 && len(tc.Blocks) == 0 {
		im.warn(tp, 0, "no SwitchName or BlockName lines: no fabric imported")
		return nil
	}
	switch {
	case im.plugin == "topology/block" && len(tc.Blocks) == 0:
		im.warn(tp, 0, "TopologyPlugin=topology/block but no BlockName lines: the switch tree is imported, and the slurm policy places first-fit")
	case im.plugin == "topology/block" && len(sw) > 0:
		im.warn(tp, sw[0].Line, "SwitchName lines are topology/tree's (topology/block rejects them); imported as the fabric the blocks hang off")
	case im.plugin == "topology/tree" && len(tc.Blocks) > 0:
		im.warn(tp, tc.Blocks[0].Line, "BlockName lines are topology/block's (topology/tree rejects them); imported as NVLink domains, and the slurm policy places by the switch tree")
	}
	names := make([]string, 0, len(defined))
	for n := range defined {
		names = append(names, n)
	}
	slices.Sort(names)
	index := map[string]int32{}
	for i, n := range names {
		index[n] = int32(i)
	}
	nodeIndex := func(s string) (int32, bool) { i, ok := index[s]; return i, ok }
	blocks, err := im.blocks(&tc, tp, nodeIndex, names)
	if err != nil {
		return err
	}
	synth := len(sw) == 0
	if synth {
		sw, swPath = blockTree(blocks), nil
	}
	fab, err := BuildTree(sw, nodeIndex, len(names))
	if err != nil {
		line, path := 0, tp
		for i, s := range sw {
			if !synth && strings.HasPrefix(err.Error(), "switch "+strconv.Quote(s.Name)) {
				line, path = s.Line, swPath[i]
				break
			}
		}
		return confError(path, line, "SwitchName", ErrRange, "%v", err)
	}
	if n := fab.AttachedNodes(); n < len(names) {
		var missing []string
		for i, nm := range names {
			if fab.LeafOf(int32(i)) < 0 {
				missing = append(missing, nm)
			}
		}
		if synth {
			// block_record_validate: "blocks lack access to %d nodes".
			im.warn(tp, 0, "%d node(s) are in no block (%s): topology/block never places jobs on them", len(missing), CompressHostlist(missing))
		} else {
			im.warn(tp, 0, "%d node(s) hang off no switch (%s): topology-aware placement keeps them apart from other nodes", len(missing), CompressHostlist(missing))
		}
	}
	b.WriteString("fabric:\n  kind: tree\n  switches:")
	if synth {
		b.WriteString("  # one per block under a top switch: topology.conf has no SwitchName lines")
	}
	b.WriteByte('\n')
	for i, s := range sw {
		var items []string
		items = append(items, "name: "+yamlQuote(s.Name))
		if s.Nodes != "" {
			items = append(items, "nodes: "+yamlQuote(s.Nodes))
		}
		if s.Switches != "" {
			items = append(items, "switches: "+yamlQuote(s.Switches))
		}
		fmt.Fprintf(b, "    - {%s}", strings.Join(items, ", "))
		if !synth {
			fmt.Fprintf(b, "  # %s:%d", swPath[i], s.Line)
		}
		b.WriteByte('\n')
	}
	if len(blocks) > 0 {
		b.WriteString("  blocks:\n")
		for _, bl := range blocks {
			fmt.Fprintf(b, "    - {name: %s, nodes: %s}  # %s:%d\n", yamlQuote(bl.Name), yamlQuote(bl.Nodes), bl.Path, bl.Line)
		}
	}
	if tc.BlockSizes != nil && len(blocks) > 0 {
		var v []string
		for _, n := range tc.BlockSizes {
			v = append(v, strconv.FormatInt(n, 10))
		}
		fmt.Fprintf(b, "  block_sizes: [%s]  # %s:%d\n", strings.Join(v, ", "), tc.BlockSizesPath, tc.BlockSizesLine)
	}
	return nil
}

// blocks resolves topology.conf's blocks against the nodes as
// block_record.c block_record_validate does: a block name defined twice
// is an error; unknown node names are dropped with one warning
// ("Invalid hostnames in block configuration"); a block left with fewer
// nodes than the base block (BlockSizes' first value, else the first
// block's count) is an error. A node in two blocks is an error here:
// Slurm ORs the bitmaps, but a node is in one NVLink domain. The blocks
// returned name their known nodes as a compressed hostlist.
func (im *importer) blocks(tc *TopologyConf, tp string, nodeIndex func(string) (int32, bool), names []string) ([]BlockSpec, error) {
	if len(tc.Blocks) == 0 {
		if tc.BlockSizes != nil {
			im.warn(tc.BlockSizesPath, tc.BlockSizesLine, "BlockSizes without BlockName lines; ignored")
		}
		return nil, nil
	}
	owner := make([]int32, len(names)) // 1 + block index
	byName := map[string]int{}
	var unknown []string
	var base int64
	if len(tc.BlockSizes) > 0 {
		base = tc.BlockSizes[0]
	}
	out := make([]BlockSpec, 0, len(tc.Blocks))
	for i, bs := range tc.Blocks {
		bad := func(kind error, format string, args ...any) error {
			return confError(bs.Path, bs.Line, "BlockName", kind, format, args...)
		}
		if j, dup := byName[bs.Name]; dup {
			return nil, bad(ErrDuplicate, "block %s is already defined on line %d", bs.Name, tc.Blocks[j].Line)
		}
		byName[bs.Name] = i
		n, err := HostlistCount(bs.Nodes, im.maxNodes)
		if err != nil {
			return nil, bad(ErrSyntax, "block %s: Nodes: %v", bs.Name, err)
		}
		if n > im.maxNodes {
			return nil, bad(ErrRange, "block %s names more than %d nodes (%s)", bs.Name, im.maxNodes, im.nodeLimitHint())
		}
		hosts, err := ExpandHostlist(bs.Nodes)
		if err != nil {
			return nil, bad(ErrSyntax, "block %s: Nodes: %v", bs.Name, err)
		}
		var known []string
		for _, h := range hosts {
			ni, ok := nodeIndex(h)
			if !ok {
				unknown = append(unknown, h)
				continue
			}
			if o := owner[ni]; o > 0 && int(o) != i+1 {
				ob := tc.Blocks[o-1]
				return nil, bad(ErrRange, "block %s: node %s is already in block %s (line %d); a node is in one NVLink domain", bs.Name, h, ob.Name, ob.Line)
			} else if o == 0 {
				owner[ni] = int32(i + 1)
				known = append(known, h)
			}
		}
		if base == 0 {
			base = int64(len(known))
			if base == 0 {
				return nil, bad(ErrRange, "block %s has no node slurm.conf defines", bs.Name)
			}
		}
		if int64(len(known)) < base {
			what := "the first block's node count"
			if len(tc.BlockSizes) > 0 {
				what = "BlockSizes' first value"
			}
			return nil, bad(ErrRange, "block %s has %d known node(s), fewer than the base block size %d (%s)", bs.Name, len(known), base, what)
		}
		bs.Nodes = CompressHostlist(known)
		out = append(out, bs)
	}
	if len(unknown) > 0 {
		im.warn(tp, 0, "%d node name(s) in BlockName lines are not defined in slurm.conf (%s); dropped, as Slurm does", len(unknown), CompressHostlist(unknown))
	}
	return out, nil
}

// blockTree is the switch tree of blocks without SwitchName lines: one
// leaf switch per block and a top switch above them, named after no
// block.
func blockTree(blocks []BlockSpec) []TreeSwitch {
	taken := map[string]bool{}
	sw := make([]TreeSwitch, 0, len(blocks)+1)
	var leaves []string
	for _, bl := range blocks {
		taken[bl.Name] = true
		sw = append(sw, TreeSwitch{Name: bl.Name, Nodes: bl.Nodes, Line: bl.Line})
		leaves = append(leaves, bl.Name)
	}
	if len(blocks) == 1 {
		return sw
	}
	top := "top"
	for i := 1; taken[top]; i++ {
		top = "top" + strconv.Itoa(i)
	}
	// Names are joined, not compressed: a block name is not a hostlist.
	return append(sw, TreeSwitch{Name: top, Switches: strings.Join(leaves, ",")})
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// sanitizeName replaces characters a spec name may not hold with '_'.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !isNameByte(c) {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "imported"
	}
	if len(b) > maxNameLen {
		b = b[:maxNameLen]
	}
	return string(b)
}

// yamlQuote returns s as a YAML double-quoted string (JSON's quoting is
// valid YAML).
func yamlQuote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// splitTopLevel splits s at the commas outside brackets ("g[1-2,4],h1"
// is "g[1-2,4]" and "h1").
func splitTopLevel(s string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[from:i])
				from = i + 1
			}
		}
	}
	return append(out, s[from:])
}
