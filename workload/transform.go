package workload

import (
	"fmt"
	"slices"
	"strings"
)

// MapPartitions renames the partitions of every job by m (trace name →
// cluster name), element-wise for multi-partition submissions ("a,b"), and
// appends a note counting the jobs changed. Names m does not list are kept.
func MapPartitions(t *Trace, m map[string]string) {
	if len(m) == 0 {
		return
	}
	changed := 0
	for i := range t.Jobs {
		j := &t.Jobs[i]
		if j.Partition == "" {
			continue
		}
		parts := strings.Split(j.Partition, ",")
		hit := false
		for k, p := range parts {
			if to, ok := m[p]; ok {
				parts[k] = to
				hit = true
			}
		}
		if hit {
			j.Partition = strings.Join(parts, ",")
			changed++
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var pairs []string
	for _, k := range keys {
		pairs = append(pairs, k+"→"+m[k])
	}
	t.Notes = append(t.Notes, fmt.Sprintf("partitions mapped (%s): %d jobs", strings.Join(pairs, ", "), changed))
}
