package hwmodels

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SlurmFiles are the Slurm configuration files ImportSlurm reads. Only
// SlurmConf is required; each Path names its file in messages.
type SlurmFiles struct {
	SlurmConf, GresConf, TopologyConf []byte
	SlurmPath, GresPath, TopologyPath string
}

// Keys of slurm.conf(5) by what the importer does with them (lower case).
var (
	// nodeKeysUsed are read from NodeName lines; nodeKeysKnown are valid
	// but not modeled (no warning).
	nodeKeysUsed  = []string{"nodename", "cpus", "procs", "boards", "socketsperboard", "sockets", "corespersocket", "threadspercore", "realmemory", "gres", "features", "feature", "weight"}
	nodeKeysKnown = []string{"nodehostname", "nodeaddr", "state", "tmpdisk", "port", "reason", "memspeclimit", "cpuspeclist", "corespeccount", "availablefeatures", "activefeatures", "restrictedcorespergpu", "topology", "bcastaddr", "cpubind", "parameters"}
	// partKeysMapped become spec fields; partKeysKept go to
	// slurm.partitions verbatim.
	partKeysMapped = []string{"partitionname", "nodes", "maxtime", "prioritytier", "priorityjobfactor", "priority", "default"}
	partKeysKept   = []string{"AllocNodes", "AllowAccounts", "AllowGroups", "AllowQos", "Alternate", "CpuBind", "DefCpuPerGPU", "DefMemPerCPU", "DefMemPerGPU", "DefMemPerNode", "DefaultTime", "DenyAccounts", "DenyQos", "DisableRootJobs", "Exclusive", "ExclusiveTopo", "ExclusiveUser", "GraceTime", "Hidden", "LLN", "MaxCPUsPerNode", "MaxCPUsPerSocket", "MaxMemPerCPU", "MaxMemPerNode", "MaxNodes", "MinNodes", "OverSubscribe", "OverTimeLimit", "PowerDownOnIdle", "PreemptMode", "QOS", "ReqResv", "ResumeTimeout", "RootOnly", "SelectTypeParameters", "Shared", "State", "SuspendTime", "SuspendTimeout", "Topology", "TRESBillingWeights"}
	// globalKept go to slurm.settings (with every Priority* key).
	globalKept = []string{"AccountingStorageEnforce", "AccountingStorageTRES", "BatchStartTimeout", "DefCpuPerGPU", "DefMemPerCPU", "DefMemPerGPU", "DefMemPerNode", "DependencyParameters", "EnforcePartLimits", "FairShareDampeningFactor", "GresTypes", "JobRequeue", "KillWait", "MaxArraySize", "MaxJobCount", "MaxMemPerCPU", "MaxMemPerNode", "MinJobAge", "OverTimeLimit", "PreemptExemptTime", "PreemptMode", "PreemptParameters", "PreemptType", "ResumeRate", "ResumeTimeout", "SchedulerParameters", "SchedulerTimeSlice", "SchedulerType", "SelectType", "SelectTypeParameters", "SuspendExcNodes", "SuspendExcParts", "SuspendRate", "SuspendTime", "SuspendTimeout", "TopologyParam", "TopologyPlugin", "TreeWidth"}
	// globalIgnored are daemon, path, plugin and logging settings that do
	// not change scheduling (no warning).
	globalIgnored = []string{"accountingstoragehost", "accountingstorageloc", "accountingstoragepass", "accountingstorageport", "accountingstoragetype", "accountingstorageuser", "accountingstorebatchscript", "accountingstorageexternalhost", "acctgatherenergytype", "acctgatherfilesystemtype", "acctgatherinterconnecttype", "acctgathernodefreq", "acctgatherprofiletype", "authalttypes", "authinfo", "authtype", "backupaddr", "backupcontroller", "burstbuffertype", "cliFilterplugins", "clustername", "communicationparameters", "completewait", "controladdr", "controlmachine", "corespecplugin", "credtype", "cryptotype", "debugflags", "disablerootjobs", "epilog", "epilogmsgtime", "epilogslurmctld", "federationparameters", "firstjobid", "getenvtimeout", "healthcheckinterval", "healthchecknodestate", "healthcheckprogram", "inactivelimit", "jobacctgatherfrequency", "jobacctgatherparams", "jobacctgathertype", "jobcompfields", "jobcomphost", "jobcomploc", "jobcomppass", "jobcompport", "jobcomptype", "jobcompuser", "jobcontainertype", "jobsubmitplugins", "launchparameters", "launchtype", "licenses", "logtimeformat", "mailprog", "maildomain", "maxdbdmsgs", "maxstepcount", "maxtaskspernode", "mcsplugin", "mcsparameters", "messagetimeout", "mpidefault", "mpiparams", "plugindir", "plugstackconfig", "preemptexempttime", "prioritytype", "privatedata", "proctracktype", "prolog", "prologepilogtimeout", "prologflags", "prologslurmctld", "propagateprioprocess", "propagateresourcelimits", "propagateresourcelimitsexcept", "rebootprogram", "reconfigflags", "requeueexit", "requeueexithold", "resumefailprogram", "resumeprogram", "resvepilog", "resvoverrun", "resvprolog", "returntoservice", "routeplugin", "scronparameters", "slurmctldaddr", "slurmctlddebug", "slurmctldhost", "slurmctldlogfile", "slurmctldparameters", "slurmctldpidfile", "slurmctldport", "slurmctldprimaryoffprog", "slurmctldprimaryonprog", "slurmctldsyslogdebug", "slurmctldtimeout", "slurmddebug", "slurmdlogfile", "slurmdparameters", "slurmdpidfile", "slurmdport", "slurmdspooldir", "slurmdsyslogdebug", "slurmdtimeout", "slurmduser", "slurmschedlogfile", "slurmschedloglevel", "slurmuser", "srunepilog", "srunportrange", "srunprolog", "statesavelocation", "suspendprogram", "switchparameters", "switchtype", "taskepilog", "taskplugin", "taskpluginparam", "taskprolog", "tcptimeout", "tmpfs", "trackwckey", "unkillablestepprogram", "unkillablesteptimeout", "usepam", "vsizefactor", "waittime", "x11parameters", "acctgatherinfinibandtype", "healthcheck", "jobfileappend", "killonbadexit", "maxjobid", "nodefeaturesplugins", "resvoverrun", "interactivestepoptions", "slurmctldparameters"}
	gresKeys      = []string{"nodename", "name", "type", "count", "file", "cores", "cpus", "links", "flags", "autodetect", "multiplefiles"}
)

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
	f      SlurmFiles
	warns  []ConfWarning
	warned map[string]bool
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
	line      int
	files     int // device files named (gres.conf File=), 0 if none
}

type nodeDef struct {
	line  int
	names []string
	attrs map[string]string // lower-case key → value
}

type partDef struct {
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
// settings), gres.conf and topology.conf and writes a cluster spec (YAML,
// version 1) describing the same cluster, with warnings for what it could
// not carry over. Unknown keys are warned about once each; the settings the
// slurm policy needs (SchedulerParameters, Priority*, Preempt*, …) and
// partition keys the spec has no field for (MaxNodes, OverSubscribe,
// PreemptMode, …) go to the spec's slurm section verbatim. The result is
// checked with ParseCluster. Errors are *ParseError values naming the file,
// line and key.
func ImportSlurm(f SlurmFiles) ([]byte, []ConfWarning, error) {
	im := &importer{f: f, warned: map[string]bool{}}
	if f.SlurmPath == "" {
		f.SlurmPath = "slurm.conf"
	}
	lines, err := lexConf(f.SlurmConf, f.SlurmPath)
	if err != nil {
		return nil, nil, err
	}
	sp := f.SlurmPath
	clusterName := "imported"
	var nodes []nodeDef
	var parts []partDef
	var settings []KeyValue
	nodeDefault := map[string]string{}
	partDefault := map[string]string{}
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
				if !slices.Contains(nodeKeysUsed, k) && !slices.Contains(nodeKeysKnown, k) {
					im.warnOnce("node:"+k, sp, l.Line, "NodeName key %s is not used by schedsim; ignored", p.Key)
				}
				attrs[k] = p.Value
			}
			if strings.EqualFold(first.Value, "DEFAULT") {
				nodeDefault = attrs
				continue
			}
			names, err := ExpandHostlist(first.Value)
			if err != nil {
				return nil, im.warns, confError(sp, l.Line, "NodeName", ErrSyntax, "%v", err)
			}
			if len(names) == 0 {
				return nil, im.warns, confError(sp, l.Line, "NodeName", ErrMissing, "empty node name")
			}
			if len(names) > MaxClusterNodes {
				return nil, im.warns, confError(sp, l.Line, "NodeName", ErrRange, "more than %d nodes", MaxClusterNodes)
			}
			nodes = append(nodes, nodeDef{line: l.Line, names: names, attrs: attrs})
		case "partitionname":
			attrs := map[string]string{}
			for k, v := range partDefault {
				attrs[k] = v
			}
			for _, p := range l.Pairs[1:] {
				attrs[strings.ToLower(p.Key)] = p.Value
			}
			if strings.EqualFold(first.Value, "DEFAULT") {
				partDefault = attrs
				continue
			}
			pd := partDef{line: l.Line, name: first.Value, attrs: attrs}
			keys := make([]string, 0, len(attrs))
			for k := range attrs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if slices.Contains(partKeysMapped, k) {
					continue
				}
				i := slices.IndexFunc(partKeysKept, func(c string) bool { return strings.EqualFold(c, k) })
				if i < 0 {
					im.warnOnce("part:"+k, sp, l.Line, "PartitionName key %s is not used by schedsim; ignored", k)
					continue
				}
				pd.kept = append(pd.kept, KeyValue{partKeysKept[i], attrs[k]})
			}
			parts = append(parts, pd)
		case "nodeset", "downnodes", "frontendname", "include", "switchname":
			im.warnOnce("line:"+strings.ToLower(first.Key), sp, l.Line, "%s lines are not supported; skipped", first.Key)
		default:
			for _, p := range l.Pairs {
				k := strings.ToLower(p.Key)
				switch {
				case k == "clustername":
					clusterName = sanitizeName(p.Value)
				case strings.HasPrefix(k, "priority") && k != "prioritytype" || slices.ContainsFunc(globalKept, func(c string) bool { return strings.EqualFold(c, k) }):
					settings = append(settings, KeyValue{p.Key, p.Value})
				case k == "prioritytype":
					settings = append(settings, KeyValue{p.Key, p.Value})
				case slices.Contains(globalIgnored, k):
				default:
					im.warnOnce("global:"+k, sp, l.Line, "key %s is not used by schedsim; ignored", p.Key)
				}
			}
		}
	}
	if len(nodes) == 0 {
		return nil, im.warns, confError(sp, 0, "NodeName", ErrMissing, "no NodeName lines: the cluster has no nodes (want NodeName=gpu[01-04] CPUs=… RealMemory=… Gres=gpu:h100:8)")
	}

	gres, err := im.gresConf(nodes)
	if err != nil {
		return nil, im.warns, err
	}

	// Resolve every node, then group runs of equal nodes within each line.
	type group struct {
		names []string
		node  importedNode
		line  int
	}
	var groups []group
	defined := map[string]int{}
	for _, nd := range nodes {
		var cur *group
		for _, name := range nd.names {
			if prev, dup := defined[name]; dup {
				im.warn(sp, nd.line, "node %s is already defined on line %d; this definition is skipped", name, prev)
				cur = nil
				continue
			}
			defined[name] = nd.line
			n, err := im.resolveNode(nd, name, gres[name])
			if err != nil {
				return nil, im.warns, err
			}
			if cur != nil && cur.node == n {
				cur.names = append(cur.names, name)
				continue
			}
			groups = append(groups, group{names: []string{name}, node: n, line: nd.line})
			cur = &groups[len(groups)-1]
		}
	}

	if len(defined) > MaxClusterNodes {
		return nil, im.warns, confError(sp, 0, "NodeName", ErrRange, "more than %d nodes", MaxClusterNodes)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Cluster spec imported by schedsim cluster import from %s", sp)
	if f.GresConf != nil {
		fmt.Fprintf(&b, ", %s", orDefault(f.GresPath, "gres.conf"))
	}
	if f.TopologyConf != nil {
		fmt.Fprintf(&b, ", %s", orDefault(f.TopologyPath, "topology.conf"))
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "version: 1\nname: %s\nnode_groups:\n", clusterName)
	for _, g := range groups {
		n := g.node
		fmt.Fprintf(&b, "  - name: %s  # %s:%d\n", yamlQuote(CompressHostlist(g.names)), sp, g.line)
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

	if len(parts) > 0 {
		b.WriteString("partitions:\n")
	}
	var keptParts []PartitionSettings
	seenPart := map[string]int{}
	for _, pd := range parts {
		if prev, dup := seenPart[pd.name]; dup {
			return nil, im.warns, confError(sp, pd.line, "PartitionName", ErrDuplicate, "partition %s is already defined on line %d", pd.name, prev)
		}
		seenPart[pd.name] = pd.line
		if sanitizeName(pd.name) != pd.name {
			return nil, im.warns, confError(sp, pd.line, "PartitionName", ErrSyntax, "partition name %q: want letters, digits, '-', '_' and '.'", pd.name)
		}
		fmt.Fprintf(&b, "  - name: %s  # %s:%d\n", pd.name, sp, pd.line)
		nodesVal, ok := pd.attrs["nodes"]
		if !ok || nodesVal == "" {
			return nil, im.warns, confError(sp, pd.line, "Nodes", ErrMissing, "partition %s has no Nodes=", pd.name)
		}
		if !strings.EqualFold(nodesVal, "ALL") {
			names, err := ExpandHostlist(nodesVal)
			if err != nil {
				return nil, im.warns, confError(sp, pd.line, "Nodes", ErrSyntax, "%v", err)
			}
			for _, nm := range names {
				if _, ok := defined[nm]; !ok {
					return nil, im.warns, confError(sp, pd.line, "Nodes", ErrUnknownName, "partition %s names node %s, which no NodeName line defines", pd.name, nm)
				}
			}
			nodesVal = CompressHostlist(names)
		} else {
			nodesVal = "ALL"
		}
		fmt.Fprintf(&b, "    nodes: %s\n", yamlQuote(nodesVal))
		if v, ok := pd.attrs["maxtime"]; ok {
			secs, unlimited, err := ParseSlurmDuration(v)
			if err != nil {
				return nil, im.warns, confError(sp, pd.line, "MaxTime", ErrSyntax, "%v", err)
			}
			if !unlimited && secs == 0 {
				return nil, im.warns, confError(sp, pd.line, "MaxTime", ErrRange, "0 (want at least 1 minute or UNLIMITED)")
			}
			fmt.Fprintf(&b, "    max_time: %s\n", yamlQuote(v))
		}
		if v, ok := pd.attrs["default"]; ok {
			switch strings.ToUpper(v) {
			case "YES":
				b.WriteString("    default: true\n")
			case "NO":
			default:
				return nil, im.warns, confError(sp, pd.line, "Default", ErrSyntax, "want YES or NO, got %q", v)
			}
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
				return nil, im.warns, confError(sp, pd.line, x.name, ErrRange, "want an integer 0 to %d, got %q", maxPriority, x.val)
			}
			fmt.Fprintf(&b, "    %s: %d\n", x.key, v)
		}
		if len(pd.kept) > 0 {
			keptParts = append(keptParts, PartitionSettings{Partition: pd.name, Settings: pd.kept})
		}
	}

	if f.TopologyConf != nil {
		if err := im.topology(&b, defined); err != nil {
			return nil, im.warns, err
		}
	}

	if len(settings) > 0 || len(keptParts) > 0 {
		b.WriteString("slurm:\n")
		if len(settings) > 0 {
			b.WriteString("  settings:  # slurm.conf values kept for the slurm policy\n")
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
				fmt.Fprintf(&b, "    %s: {%s}\n", ps.Partition, strings.Join(items, ", "))
			}
		}
	}
	out := []byte(b.String())
	if _, err := ParseCluster(out, "imported spec"); err != nil {
		return nil, im.warns, fmt.Errorf("the imported spec does not load (please report): %w", err)
	}
	return out, im.warns, nil
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

// gresConf reads gres.conf into per-node GRES items.
func (im *importer) gresConf(nodes []nodeDef) (map[string][]gresItem, error) {
	out := map[string][]gresItem{}
	if im.f.GresConf == nil {
		return out, nil
	}
	gp := orDefault(im.f.GresPath, "gres.conf")
	lines, err := lexConf(im.f.GresConf, gp)
	if err != nil {
		return nil, err
	}
	var all []string
	for _, nd := range nodes {
		all = append(all, nd.names...)
	}
	for _, l := range lines {
		attrs := map[string]string{}
		for _, p := range l.Pairs {
			k := strings.ToLower(p.Key)
			if !slices.Contains(gresKeys, k) {
				im.warnOnce("gres:"+k, gp, l.Line, "gres.conf key %s is not used by schedsim; ignored", p.Key)
				continue
			}
			attrs[k] = p.Value
		}
		if ad, ok := attrs["autodetect"]; ok && !strings.EqualFold(ad, "off") {
			im.warnOnce("gres:autodetect", gp, l.Line, "AutoDetect=%s: schedsim cannot detect devices; GPU counts come from slurm.conf Gres= and explicit gres.conf lines", ad)
		}
		name, ok := attrs["name"]
		if !ok {
			if _, ad := attrs["autodetect"]; ad {
				continue
			}
			return nil, confError(gp, l.Line, "Name", ErrMissing, "want Name=gpu (or mps, shard)")
		}
		it := gresItem{name: strings.ToLower(name), typ: attrs["type"], line: l.Line}
		if fv, ok := attrs["file"]; ok {
			n, err := countFiles(fv)
			if err != nil {
				return nil, confError(gp, l.Line, "File", ErrSyntax, "%v", err)
			}
			it.files = n
		}
		if cv, ok := attrs["count"]; ok {
			c, ok := parseConfCount(cv)
			if !ok {
				return nil, confError(gp, l.Line, "Count", ErrSyntax, "want a count (digits, optional K, M or G), got %q", cv)
			}
			it.count = c
		} else if it.files > 0 {
			it.count = int64(it.files)
		} else {
			it.count = 1
		}
		if it.name == "gpu" && it.files > 0 && it.count != int64(it.files) && !migTypeRE.MatchString(strings.ToLower(it.typ)) {
			im.warn(gp, l.Line, "Count=%d but File= names %d devices; using Count", it.count, it.files)
		}
		targets := all
		if nv, ok := attrs["nodename"]; ok {
			if targets, err = ExpandHostlist(nv); err != nil {
				return nil, confError(gp, l.Line, "NodeName", ErrSyntax, "%v", err)
			}
		}
		for _, t := range targets {
			out[t] = append(out[t], it)
		}
	}
	return out, nil
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
				return nil, fmt.Errorf("%q: bad count %q", item, f[2])
			}
			it.count = c
		default:
			return nil, fmt.Errorf("%q: want name[:type][:count]", item)
		}
		out = append(out, it)
	}
	return out, nil
}

// resolveNode works out one node's attributes from its NodeName line and
// its gres.conf items.
func (im *importer) resolveNode(nd nodeDef, name string, gconf []gresItem) (importedNode, error) {
	sp := orDefault(im.f.SlurmPath, "slurm.conf")
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
			x = sanitizeName(strings.TrimSpace(x))
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
	gp := orDefault(im.f.GresPath, "gres.conf")
	if len(whole) > 1 {
		im.warnOnce("multitype:"+strconv.Itoa(nd.line), sp, nd.line, "nodes with several GPU types (%s) are not modeled; keeping %s:%d", a["gres"], whole[0].typ, whole[0].count)
	}
	if len(whole) > 0 {
		w := whole[0]
		n.gpuType, n.gpus = strings.ToLower(w.typ), w.count
		for _, c := range confGPUs {
			if strings.EqualFold(c.typ, w.typ) && c.count != w.count {
				im.warnOnce("count:"+name, gp, c.line, "%s: gres.conf Count=%d for type %s, slurm.conf Gres= says %d; using slurm.conf", name, c.count, c.typ, w.count)
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
	gp := orDefault(im.f.GresPath, "gres.conf")
	line := mig[0].line
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
			im.warnOnce(key, gp, it.line, "%s: Type=%s Count=%d is not the same layout on each of %d GPUs: MIG not imported", name, it.typ, it.count, n.gpus)
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

// topology writes the fabric section from topology.conf.
func (im *importer) topology(b *strings.Builder, defined map[string]int) error {
	tp := orDefault(im.f.TopologyPath, "topology.conf")
	sw, warns, err := ParseTopologyConf(im.f.TopologyConf, tp)
	im.warns = append(im.warns, warns...)
	if err != nil {
		return err
	}
	if len(sw) == 0 {
		im.warn(tp, 0, "no SwitchName lines: no fabric imported")
		return nil
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
	fab, err := BuildTree(sw, func(s string) (int32, bool) { i, ok := index[s]; return i, ok }, len(names))
	if err != nil {
		line := 0
		for _, s := range sw {
			if strings.HasPrefix(err.Error(), "switch "+strconv.Quote(s.Name)) {
				line = s.Line
				break
			}
		}
		return confError(tp, line, "SwitchName", ErrRange, "%v", err)
	}
	if n := fab.AttachedNodes(); n < len(names) {
		var missing []string
		for i, nm := range names {
			if fab.LeafOf(int32(i)) < 0 {
				missing = append(missing, nm)
			}
		}
		im.warn(tp, 0, "%d node(s) hang off no switch (%s): topology-aware placement keeps them apart from other nodes", len(missing), CompressHostlist(missing))
	}
	b.WriteString("fabric:\n  kind: tree\n  switches:\n")
	for _, s := range sw {
		var items []string
		items = append(items, "name: "+yamlQuote(s.Name))
		if s.Nodes != "" {
			items = append(items, "nodes: "+yamlQuote(s.Nodes))
		}
		if s.Switches != "" {
			items = append(items, "switches: "+yamlQuote(s.Switches))
		}
		fmt.Fprintf(b, "    - {%s}  # %s:%d\n", strings.Join(items, ", "), tp, s.Line)
	}
	return nil
}
