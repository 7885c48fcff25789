package sweep

import (
	"fmt"
	"testing"
)

// BenchmarkSweep runs the 24 scenarios of testdata/small.yaml (every
// output of schedsim run --out written for each) on 1, 2 and 4 workers.
// The ratio of the workers=1 and workers=2 times is the pool's speed-up.
func BenchmarkSweep(b *testing.B) {
	sw := loadSmall(b)
	points := sw.PointsOf(0, len(sw.Points))
	for _, w := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				for _, r := range Run(sw, points, dir, Options{Workers: w, Force: true}) {
					if r.Err != nil || r.Skipped {
						b.Fatalf("%s: err %v, skipped %v", r.Point.Name, r.Err, r.Skipped)
					}
				}
			}
			b.ReportMetric(float64(len(points)*b.N)/b.Elapsed().Seconds(), "scenarios/s")
		})
	}
}
