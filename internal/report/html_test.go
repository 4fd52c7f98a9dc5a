package report

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"hail/internal/stats"
)

// richResult is a scenario run with ten seconds of series, two steps, a
// monitored target and an error mix: every section of the HTML report.
func richResult(t *testing.T) *Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	steps := []*stats.Totals{randomTotals(rng, 4000), randomTotals(rng, 2000)}
	all := stats.NewTotals()
	for _, s := range steps {
		all.Add(s)
	}
	all.Errors[stats.ErrTimeout] += 7
	var series []stats.Second
	for k := range 10 {
		series = append(series, stats.Second{Index: k, Span: 1, Requests: 600 + int64(rng.IntN(50)), Errors: int64(k % 3),
			P50: 150_000, P90: 400_000, P99: 900_000 + int64(k)*50_000, Max: 3_000_000, CPU: 0.4, TargetRSS: int64(50+k) << 20, TargetCPU: 0.7})
	}
	r := Build(Input{Totals: all, Series: series, Elapsed: 10 * time.Second, Cores: 2, Usage: stats.Usage{User: 3 * time.Second, System: time.Second},
		Engine: "net", EngineReason: "--engine net", Open: true, Rate: 600, Start: time.Unix(1700000000, 0),
		Config:  map[string]any{"url": "http://127.0.0.1:8080/items?<x>", "method": "GET", "connections": 16, "rate": 600.0, "headers": map[string]string{"Authorization": "[redacted]"}},
		Version: "test", SuccessSplit: true})
	r.Hail.Steps = BuildSteps([]string{"login", "browse <items>"}, steps, [][]stats.Second{series, series}, 10*time.Second)
	r.Hail.Thresholds = []Threshold{{Expr: "p99 < 5ms", Value: 0.001, Measured: "1.0ms", Pass: true}, {Expr: "error_rate < 0.1%", Step: "login", Measured: "2%", Pass: false}}
	r.Hail.Target = &Target{PID: 42, Command: "nginx", Samples: 10, PeakRSSBytes: 59 << 20, MeanRSSBytes: 55 << 20, CPUSeconds: 7, MeanCPU: 0.7, PeakCPU: 0.8}
	return r
}

func TestHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, richResult(t)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, id := range append(HTMLCharts, "chart-target-rss", "chart-target-cpu", "chart-generator", "chart-step-0-rps", "chart-step-1-spectrum") {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("no chart %s", id)
		}
	}
	for _, want := range []string{"browse &lt;items&gt;", "Thresholds", "nginx", "99.9%", "Configuration", "[redacted]", "Bottleneck: none"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Offline: nothing is loaded from anywhere.
	if regexp.MustCompile(`(src|href)=["']?(https?:)?//`).MatchString(page) || strings.Contains(page, "@import") {
		t.Error("the page loads something from the network")
	}
	if strings.Contains(page, "<items?<x>") || strings.Contains(page, "NaN") {
		t.Error("unescaped text or NaN coordinates in the page")
	}
}

// chromium returns the headless browser to test with, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// ChromiumArgs are the flags the HTML tests and the screenshot run use.
func chromiumArgs(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile}
}

// The page renders in a real browser: every chart is there, the inline
// scripts ran, and no script error was raised. With HAIL_SCREENSHOT=PATH it
// also writes a screenshot (how docs/img/report.png is made).
func TestHTMLInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (CI installs Debian's chromium package)")
		}
		t.Skip("chromium not installed")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, richResult(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(chromiumArgs(filepath.Join(dir, "profile")), "--dump-dom", "file://"+page)
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	dom := string(out)
	root := regexp.MustCompile(`<html[^>]*>`).FindString(dom)
	if !strings.Contains(root, `data-ready="1"`) {
		t.Errorf("the page's script did not finish: %s", root)
	}
	if strings.Contains(root, "data-errors") {
		m := regexp.MustCompile(`data-error-message="([^"]*)"`).FindStringSubmatch(root)
		t.Errorf("script errors in the page: %v", m)
	}
	n := regexp.MustCompile(`data-charts="(\d+)"`).FindStringSubmatch(root)
	if len(n) < 2 {
		t.Fatalf("no chart count in %s", root)
	}
	if k, _ := strconv.Atoi(n[1]); k < len(HTMLCharts)+3 {
		t.Errorf("%d charts rendered", k)
	}
	for _, id := range HTMLCharts {
		if !strings.Contains(dom, `id="`+id+`"`) {
			t.Errorf("chart %s missing from the rendered page", id)
		}
	}
	if shot := os.Getenv("HAIL_SCREENSHOT"); shot != "" {
		args := append(chromiumArgs(filepath.Join(dir, "profile2")), "--hide-scrollbars", "--window-size=1100,3000", "--screenshot="+shot, "file://"+page)
		if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("screenshot: %v\n%s", err, out)
		}
	}
}

func TestMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, richResult(t)); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"| requests | requests/s |", "| login |", "browse &lt;items>", "Target (pid 42, nginx)", "❌ fail", "status 200"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
