package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/traces"
)

// writeValidateOut writes validate --out DIR: the figures as PNG and SVG,
// validate.html and validation.json (what --json prints), each
// atomically.
func writeValidateOut(dir string, v *reports.Validation, trace, cluster string) error {
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
		return reports.WriteValidatePage(w, reports.ValidatePageInput{Validation: v, Trace: trace, Cluster: cluster})
	}); err != nil {
		return err
	}
	return traces.WriteFileAtomic(filepath.Join(dir, "validation.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(jsonSafe(v))
	})
}
