package reports

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of a headless-capable Chromium, or skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: the browser test needs Debian's chromium package (.ci/run installs it: apt-get install -y chromium)")
	return ""
}

// renderPage loads path in headless Chromium and returns the DOM after
// load and the console messages Chromium logged.
func renderPage(t *testing.T, browser, path string) (dom string, console []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--dump-dom", "file://"+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	// Chromium logs page console messages as
	// [pid:tid:date/time.usec:LEVEL:CONSOLE(line)] "message", source: url (line)
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, line)
		}
	}
	return stdout.String(), console
}

// TestReportInBrowser renders the fixture's report.html in headless
// Chromium: the page loads with no console message, and every figure is
// there as an inline SVG. A page that logs an error checks that console
// messages are caught at all.
func TestReportInBrowser(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()

	bad := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><script>console.error("probe");</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, console := renderPage(t, browser, bad); len(console) == 0 || !strings.Contains(strings.Join(console, "\n"), "probe") {
		t.Fatalf("a console.error was not caught; console lines: %q", console)
	}

	rec := fixtureRecord()
	dir = filepath.Join(dir, "run") // a run directory holds nothing else
	if err := WriteOutputs(dir, rec, Analyze(rec, fixtureOptions), []byte("version: 1\nname: fixture\n")); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, ReportFile)
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Self-contained: nothing to fetch.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)`).Find(raw); m != nil {
		t.Errorf("report.html refers to the network: %s", m)
	}
	dom, console := renderPage(t, browser, page)
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	for _, id := range []string{`id="summary-table"`, `id="partition-table"`, `id="scenario-text"`} {
		if !strings.Contains(dom, id) {
			t.Errorf("rendered page lacks %s", id)
		}
	}
	figs := Figures(nil, &Timeline{}, "")
	for _, f := range figs {
		re := regexp.MustCompile(`(?s)<figure class="plot" id="plot-` + f.Name + `">\s*<svg[^>]*>.*?</svg>`)
		if !re.MatchString(dom) {
			t.Errorf("rendered page lacks the %s plot as inline SVG", f.Name)
		}
	}
	if n := strings.Count(dom, "<svg"); n != len(figs) {
		t.Errorf("rendered page has %d SVG elements, want %d", n, len(figs))
	}
	if !strings.Contains(dom, "name: fixture") {
		t.Errorf("rendered page lacks the scenario")
	}
}
