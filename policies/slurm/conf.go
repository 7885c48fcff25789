package slurm

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
)

// configure makes the arguments in effect the scenario's (the keys it
// gave) over the cluster's slurm.conf settings over Slurm's defaults;
// Begin calls it. The settings read are SchedulerParameters (the bf_* keys, default_queue_depth, sched_interval; other keys are ignored),
// the Priority* keys and FairShareDampeningFactor, PreemptType,
// PreemptMode, PreemptExemptTime, PreemptParameters, DefCpuPerGPU and
// AccountingStorageEnforce, each partition's
// PreemptMode, and TopologyPlugin: topology/tree on a cluster with a
// fabric makes the placement topology-tree unless the scenario names one
// (Slurm's select plugin then places by the switch tree, topology.conf).
// A partition's DefCpuPerGPU is its spec field (hwmodels.Partition,
// which cluster import fills from the partition line, else the global
// value). A cluster without a slurm section leaves the arguments as
// given. An error names the setting.
func (s *Policy) configure(c *hwmodels.Cluster) error {
	s.confCluster = c
	s.partModes = nil
	if s.basePlacer != nil && s.placer != s.basePlacer {
		s.placer, s.pass = s.basePlacer, policies.NewPass(s.basePlacer, true)
	}
	if c == nil || c.Slurm == nil {
		s.cfg, s.effective = s.baseCfg, s.args
		s.clockPlacer()
		return nil
	}
	merged := defaultArgs()
	inOrder := s.basePlacer.InOrder() // another placer handed to New stays
	if v, ok := c.Slurm.Get("TopologyPlugin"); ok && strings.EqualFold(strings.TrimSpace(v), "topology/tree") && c.Fabric != nil && inOrder {
		merged.Placement = policies.PlacementTopologyTree
	} else if ok && strings.EqualFold(strings.TrimSpace(v), "topology/block") && c.Fabric != nil && len(c.Fabric.Blocks) > 0 && inOrder {
		merged.Placement = policies.PlacementTopologyBlock // Slurm 23.11+: eval_nodes_block
	} else if v, ok := c.Slurm.Get("SelectType"); ok && strings.EqualFold(strings.TrimSpace(v), "select/cons_tres") && inOrder {
		merged.Placement = policies.PlacementConsTres // cons_tres/job_test.c _eval_nodes
	}
	for _, kv := range c.Slurm.Settings {
		key := kv.Key
		if strings.EqualFold(key, "SchedulerParameters") {
			for item := range strings.SplitSeq(kv.Value, ",") {
				item = strings.TrimSpace(item)
				if item == "" {
					continue
				}
				k, v, hasVal := strings.Cut(item, "=")
				if !hasVal {
					v = "true" // a flag such as bf_continue
				}
				if _, err := setArg(&merged, k, v, false); err != nil {
					return fmt.Errorf("cluster slurm setting SchedulerParameters: %s: %w", k, err)
				}
			}
			continue
		}
		if !slurmConfKey(key) {
			continue
		}
		if _, err := setArg(&merged, key, kv.Value, true); err != nil {
			return fmt.Errorf("cluster slurm setting %s: %w", key, err)
		}
	}
	// The scenario's keys win.
	mv, av, dv := reflect.ValueOf(&merged).Elem(), reflect.ValueOf(&s.args).Elem(), reflect.ValueOf(defaultArgs())
	t := mv.Type()
	for i := range t.NumField() {
		name := yamlName(t.Field(i))
		if s.explicit[name] || s.explicit == nil && !reflect.DeepEqual(av.Field(i).Interface(), dv.Field(i).Interface()) {
			mv.Field(i).Set(av.Field(i))
		}
	}
	cfg, err := merged.config(nil, true) // the shares in s.args are resolved (Factory, New)
	if err != nil {
		return fmt.Errorf("cluster slurm settings with the scenario's arguments: %w", err)
	}
	if merged.Placement != s.args.Placement {
		p, err := policies.NewPlacer(merged.Placement)
		if err != nil {
			return fmt.Errorf("cluster slurm setting TopologyPlugin: %w", err)
		}
		s.placer, s.pass = p, policies.NewPass(p, true)
	}
	modes := make([]preemptMode, len(c.Partitions))
	for i := range c.Partitions {
		for _, kv := range c.Slurm.PartitionKeys(c.Partitions[i].Name) {
			if !strings.EqualFold(kv.Key, "PreemptMode") {
				continue
			}
			m, err := parsePreemptMode(kv.Value)
			if err != nil {
				return fmt.Errorf("cluster slurm setting PreemptMode of partition %s: %w", c.Partitions[i].Name, err)
			}
			modes[i] = m
		}
	}
	s.cfg = cfg
	s.effective = merged
	s.partModes = modes
	s.clockPlacer()
	return nil
}

// clockPlacer gives a topology-tree placer the pass clock and
// max_switch_wait, so that it honours each job's --switches while the job
// waits for them (TopologyTree.Clock). Main and backfill passes both place
// through s.pass, whose now is the pass's time: Slurm too compares the
// wait with time(NULL) in a will-run test, not with the planned start.
func (s *Policy) clockPlacer() {
	s.switchTree = nil
	if t, ok := s.placer.(*policies.TopologyTree); ok {
		s.switchTree = t
		t.Clock = func() sim.Time { return s.pass.Now }
		t.MaxSwitchWait = s.cfg.maxSwitchWait
	}
}

// Args returns the arguments in effect: those given, over the cluster's
// slurm.conf settings of the last Begin, over Slurm's defaults.
func (s *Policy) Args() Args { return s.effective }

// slurmConfKey reports whether a global slurm.conf key is one the policy
// takes (besides SchedulerParameters).
func slurmConfKey(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "priority") || k == "fairsharedampeningfactor" ||
		k == "preempttype" || k == "preemptmode" || k == "preemptexempttime" || k == "defcpupergpu" ||
		k == "accountingstorageenforce" || k == "preemptparameters"
}

// yamlName returns a Args field's YAML key.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// setArg sets the Args field whose YAML key is key (ignoring case
// when fold is set) from a slurm.conf string. It returns false for a key
// Args does not have (the setting is ignored).
func setArg(a *Args, key, val string, fold bool) (bool, error) {
	v := reflect.ValueOf(a).Elem()
	t := v.Type()
	key = strings.TrimSpace(key)
	val = strings.TrimSpace(val)
	for i := range t.NumField() {
		name := yamlName(t.Field(i))
		if name != key && !(fold && strings.EqualFold(name, key)) {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(val)
		case reflect.Int, reflect.Int64:
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return true, fmt.Errorf("%q is not an integer", val)
			}
			f.SetInt(n)
		case reflect.Float64:
			x, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return true, fmt.Errorf("%q is not a number", val)
			}
			f.SetFloat(x)
		case reflect.Bool:
			b, err := strconv.ParseBool(val)
			if err != nil {
				return true, fmt.Errorf("%q is not a boolean", val)
			}
			f.SetBool(b)
		default:
			return false, nil // lists (accounts, users, qos) come from sacctmgr, not slurm.conf
		}
		return true, nil
	}
	return false, nil
}
