//go:build !unix

package sweep

import "runtime"

// peakRSS approximates the peak resident set size by the memory the Go
// runtime has obtained from the system.
func peakRSS() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.Sys)
}
