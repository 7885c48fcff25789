package schedsim

import (
	"strings"
	"testing"

	"github.com/schedsim/schedsim/traces"
)

// TestHeaderClusterBounds: an SWF header's MaxNodes and MaxProcs are
// checked against what a cluster may hold before the machine is built.
func TestHeaderClusterBounds(t *testing.T) {
	fields := []traces.SWFHeaderField{{Key: "Version", Value: "2.2"}, {Key: "MaxNodes"}, {Key: "MaxProcs"}}
	for _, tt := range []struct {
		name         string
		nodes, procs int
		perGPU       int
		want         string // error prefix, "" for none
		cpus, gpus   int32
	}{
		// 338 nodes, 338 processors: one a node.
		{"ctc", 338, 338, 0, "", 1, 0},
		// 1,024 nodes, 4,008 processors: ceil(4008/1024) = 4 a node;
		// procs_per_gpu 10: ceil(4/10) = 1 GPU a node.
		{"thunder", 1024, 4008, 10, "", 4, 1},
		{"too many nodes", 1000000000, 1000000000, 0, "t.swf:2: MaxNodes: 1000000000 nodes, more than the 65536 a cluster may have", 0, 0},
		{"too many procs a node", 10, 100000000000, 0, "t.swf:3: MaxProcs: 100000000000 processors on 10 nodes is 10000000000 a node, more than the 1048576 a node may have", 0, 0},
		{"procs only", 0, 1 << 40, 0, "t.swf:3: MaxProcs: 1099511627776 processors and no MaxNodes", 0, 0},
		{"overflow", 3, 1<<63 - 1, 0, "t.swf:3: MaxProcs: 9223372036854775807 processors on 3 nodes", 0, 0},
		{"gpus", 2, 1 << 20, 1, "t.swf:3: MaxProcs: 524288 processors a node at procs_per_gpu 1 is 524288 GPUs a node, more than the 1024", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &traces.SWFHeader{MaxNodes: tt.nodes, MaxProcs: tt.procs, Fields: fields}
			c, err := headerCluster(h, SWF{ProcsPerGPU: tt.perGPU}, "t.swf")
			if tt.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
					t.Fatalf("error %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Nodes) != tt.nodes || c.Nodes[0].CPUs != tt.cpus || c.Nodes[0].GPUs != tt.gpus {
				t.Errorf("%d nodes of %d CPUs, %d GPUs; want %d, %d, %d", len(c.Nodes), c.Nodes[0].CPUs, c.Nodes[0].GPUs, tt.nodes, tt.cpus, tt.gpus)
			}
		})
	}
}
