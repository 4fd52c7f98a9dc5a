package report

import (
	"bytes"
	"context"
	"encoding/json"
	stdhtml "html"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/testtier"
	"github.com/hail-loadgen/hail/result"
)

// richResult is a scenario run with ten seconds of series, two steps, a
// monitored target and an error mix: every section of the HTML report.
func richResult(t *testing.T) *result.Result {
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
		series = append(series, stats.Second{Index: k, Span: time.Second, Requests: 600 + int64(rng.IntN(50)), Errors: int64(k % 3),
			P50: 150_000, P90: 400_000, P99: 900_000 + time.Duration(k)*50_000, Max: 3_000_000, CPU: 0.4, TargetRSS: int64(50+k) << 20, TargetCPU: 0.7})
	}
	r := Build(Input{Totals: all, Series: series, Elapsed: 10 * time.Second, Cores: 2, Usage: stats.Usage{User: 3 * time.Second, System: time.Second},
		Engine: "net", EngineReason: "--engine net", Open: true, Rate: 600, Start: time.Unix(1700000000, 0),
		Config:  map[string]any{"url": "http://127.0.0.1:8080/items?<x>", "method": "GET", "connections": 16, "rate": 600.0, "headers": map[string]string{"Authorization": "[redacted]"}},
		Version: "test", SuccessSplit: true})
	r.Hail.Steps = BuildSteps([]string{"login", "browse <items>"}, steps, [][]stats.Second{series, series}, 10*time.Second)
	r.Hail.Thresholds = []result.ThresholdResult{{Expr: "p99 < 5ms", Value: 0.001, Measured: "1.0ms", Pass: true}, {Expr: "error_rate < 0.1%", Step: "login", Measured: "2%", Pass: false}}
	r.Hail.Target = &result.TargetUse{PID: 42, Command: "nginx", Samples: 10, PeakRSSBytes: 59 << 20, MeanRSSBytes: 55 << 20, CPU: 7 * time.Second, MeanCPU: 0.7, PeakCPU: 0.8}
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

// needChromium returns the headless browser. The browser tests are a slow
// tier (testtier.Browser): skipped unless it is set, and then failing
// without chromium.
func needChromium(t *testing.T) string {
	t.Helper()
	testtier.Require(t, testtier.Browser)
	bin := chromium()
	if bin == "" {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium package)")
	}
	return bin
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
	bin := needChromium(t)
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

// Axes tick at 1, 2 or 5 times a power of ten, and their labels carry no
// float noise, whatever the range.
func TestAxisTicks(t *testing.T) {
	noise := regexp.MustCompile(`\d\.\d*(0000|9999)|e[-+]`)
	for _, hi := range []float64{0.3, 0.7, 1, 1.1, 3.3, 7.77, 12, 99, 101, 0.0123, 4.5e-4, 0.071, 123456, 1e9, 3.000000001} {
		for _, format := range []func(float64) string{compactNum, fmtDurShort, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }} {
			a := linearAxis(hi, format)
			if a.hi < hi || len(a.ticks) < 3 || len(a.ticks) > 8 {
				t.Errorf("linearAxis(%g): top %g, %d ticks", hi, a.hi, len(a.ticks))
			}
			step := a.ticks[1].v - a.ticks[0].v
			m := step / math.Pow10(int(math.Floor(math.Log10(step)+1e-9)))
			if math.Abs(m-1) > 1e-6 && math.Abs(m-2) > 1e-6 && math.Abs(m-5) > 1e-6 {
				t.Errorf("linearAxis(%g): step %g is not 1, 2 or 5 × 10^k", hi, step)
			}
			for _, tk := range a.ticks {
				if noise.MatchString(tk.label) {
					t.Errorf("linearAxis(%g): label %q", hi, tk.label)
				}
			}
		}
		b := byteAxis(hi * 1e6)
		for _, tk := range b.ticks {
			if noise.MatchString(tk.label) || strings.Contains(tk.label, ".") && !strings.Contains(tk.label, ".5 ") && !regexp.MustCompile(`\.\d `).MatchString(tk.label) {
				t.Errorf("byteAxis(%g): label %q", hi*1e6, tk.label)
			}
		}
	}
	for _, r := range [][2]float64{{1e-5, 3e-3}, {2e-4, 0.9}, {0.5, 30}, {1e-6, 100}} {
		for _, tk := range logAxis(r[0], r[1], fmtDurShort).ticks {
			if noise.MatchString(tk.label) {
				t.Errorf("logAxis(%g, %g): label %q", r[0], r[1], tk.label)
			}
		}
	}
}

// The scenario's configuration is readable in the page: indented, "<" as
// "<" (escaped for HTML), never JSON's \u003c.
func TestHTMLConfigReadable(t *testing.T) {
	r := richResult(t)
	r.Hail.Config["scenario"] = map[string]any{"name": "vm", "thresholds": []string{"p99 < 50ms", "error_rate < 1%"}}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, `\u003c`) || !strings.Contains(page, "p99 &lt; 50ms") || !strings.Contains(page, `<pre class="cfg">`) {
		t.Errorf("configuration not readable:\n%s", page[strings.Index(page, "Configuration"):])
	}
	buf.Reset()
	if err := result.WriteJSON(&buf, r); err != nil || strings.Contains(buf.String(), `\u003c`) || !strings.Contains(buf.String(), "p99 < 50ms") {
		t.Errorf("JSON: %v, escapes < as \\u003c", err)
	}
}

// checkScript, appended to a report, measures every chart's text in the
// browser: the tick labels, and any two labels, titles or legend entries
// whose boxes overlap. It leaves them in data-check on <html>.
const checkScript = `<script>
(function () {
  var out = {labels: [], overlaps: [], charts: 0};
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    out.charts++;
    var texts = Array.prototype.slice.call(svg.querySelectorAll("text.ytick, text.xtick, text.ylabel, text.xlabel, text.title, text.legend, text.mark, text.stagelabel, text.bandlabel"));
    var boxes = texts.map(function (t) {
      if (t.classList.contains("ytick") || t.classList.contains("xtick")) { out.labels.push(t.textContent); }
      return {t: t.textContent, r: t.getBoundingClientRect()};
    });
    for (var i = 0; i < boxes.length; i++) {
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i].r, b = boxes[j].r;
        if (a.width === 0 || b.width === 0) { continue; }
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
          out.overlaps.push(svg.id + ": \"" + boxes[i].t + "\" overlaps \"" + boxes[j].t + "\"");
        }
      }
    }
  });
  document.documentElement.setAttribute("data-check", JSON.stringify(out));
})();
</script>`

// Rendered in a real browser, every tick label of every chart is tidy (no
// float noise) and no two labels, titles or legend entries overlap — for
// small, large and fractional values.
func TestHTMLTicksInChromium(t *testing.T) {
	bin := needChromium(t)
	big := richResult(t)
	for i := range big.Hail.Series {
		s := &big.Hail.Series[i]
		s.Requests, s.P50, s.P99, s.Max = 123_456+int64(i)*997, 1_234_567_890, 3_456_789_012, 9_876_543_210
		s.TargetRSS, s.TargetCPU, s.CPU = int64(3<<30)+int64(i)<<27, 1.37, 0.33
	}
	big.Hail.Series[3].Span = 770 * time.Millisecond
	tiny := richResult(t)
	for i := range tiny.Hail.Series {
		s := &tiny.Hail.Series[i]
		s.Requests, s.Errors, s.P50, s.P99, s.Max = 3, 1, 1_100, 2_300, 70_000
		s.TargetRSS, s.TargetCPU, s.CPU = 700<<10, 0.003, 0.07
	}
	// Stages with warmups, one a second long among many (their labels
	// close together), and a -w drain.
	staged := richResult(t)
	var sg []schedule.Stage
	for k := range 6 {
		sg = append(sg, schedule.Stage{Duration: time.Duration(1+k%2) * 800 * time.Millisecond, Target: float64(10 * (k + 1)), Step: true, Warmup: 300 * time.Millisecond})
	}
	for k := range 10 { // stages 7 to 16, 50 ms each: their labels would collide
		sg = append(sg, schedule.Stage{Duration: 50 * time.Millisecond, Target: float64(k)})
	}
	slots := make([]*stats.Totals, 22)
	for i := range slots {
		slots[i] = stats.NewTotals()
	}
	staged.Hail.Stages = BuildStages(StageInput{Clock: schedule.NewStageClock(sg, 0), Kind: "connections", Totals: slots, Series: staged.Hail.Series, Stopped: 10 * time.Second})
	staged.Hail.Drain = &result.Drain{Duration: 1500 * time.Millisecond, Requests: 40, InRates: true}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	noise := regexp.MustCompile(`\d\.\d*(0000|9999)|e[-+]\d|NaN|Inf`)
	for name, r := range map[string]*result.Result{"rich": richResult(t), "big": big, "tiny": tiny, "staged": staged} {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, r); err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(dir, name+".html")
		html := strings.Replace(buf.String(), "</body>", checkScript+"</body>", 1)
		if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append(chromiumArgs(filepath.Join(dir, "profile-"+name)), "--window-size=1100,3000", "--dump-dom", "file://"+page)
		out, err := exec.CommandContext(ctx, bin, args...).Output()
		if err != nil {
			t.Fatalf("%s: chromium --dump-dom: %v", name, err)
		}
		m := regexp.MustCompile(`data-check="([^"]*)"`).FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("%s: the check script did not run", name)
		}
		var got struct {
			Labels, Overlaps []string
			Charts           int
		}
		if err := json.Unmarshal([]byte(stdhtml.UnescapeString(m[1])), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Charts < len(HTMLCharts) || len(got.Labels) < 30 {
			t.Errorf("%s: %d charts, %d tick labels read", name, got.Charts, len(got.Labels))
		}
		for _, l := range got.Labels {
			if noise.MatchString(l) || strings.TrimSpace(l) == "" {
				t.Errorf("%s: tick label %q", name, l)
			}
		}
		for _, o := range got.Overlaps {
			t.Errorf("%s: %s", name, o)
		}
		if testing.Verbose() {
			t.Logf("%s: %d charts, labels %q", name, got.Charts, got.Labels)
		}
	}
}
