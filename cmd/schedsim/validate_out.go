package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/schedsim/schedsim/bundle"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/traces"
)

// writeValidateOut writes validate --out DIR: the figures as PNG and SVG,
// validate.html, validation.json (what --json prints of a trace) and, for
// a records bundle (bd not nil), breakdown.json (what --json prints of
// it), each atomically.
func writeValidateOut(dir string, v *reports.Validation, bd *bundle.Breakdown, trace, cluster string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	figs := reports.ValidationFigures(v)
	for i := range figs {
		fig := &figs[i]
		if err := traces.WriteFileAtomic(filepath.Join(dir, fig.Name+".png"), fig.WritePNG); err != nil {
			return err
		}
		if err := traces.WriteFileAtomic(filepath.Join(dir, fig.Name+".svg"), fig.WriteSVG); err != nil {
			return err
		}
	}
	if err := traces.WriteFileAtomic(filepath.Join(dir, reports.ValidatePageFile), func(w io.Writer) error {
		in := reports.ValidatePageInput{Validation: v, Trace: trace, Cluster: cluster}
		if bd != nil {
			in.Breakdown = pageBreakdown(bd)
		}
		return reports.WriteValidatePage(w, in)
	}); err != nil {
		return err
	}
	writeJSON := func(name string, x any) error {
		return traces.WriteFileAtomic(filepath.Join(dir, name), func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(x)
		})
	}
	if bd != nil {
		if err := writeJSON("breakdown.json", bd); err != nil {
			return err
		}
	}
	return writeJSON("validation.json", jsonSafe(v))
}
