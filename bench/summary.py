"""bench/summary.py: the summary of grpc.sh's and h2h3.sh's runs: one line per tool with the medians
across rounds, then each check, ok or FAIL.

  python3 bench/summary.py CSV RATE_HEAD CPU_HEAD TOOLS [--check TOOL OTHER LIMIT LABEL]...

CSV has the columns tool, rps, errors, and either cpu_us_per_req (CPU µs per request, empty when
unknown) or calls and cpu_s (the run's CPU seconds; rows with no call are left out). TOOLS is the
table's tools in order, comma-separated (a tool with no row is left out). RATE_HEAD and CPU_HEAD
head the requests/s and CPU µs per request columns. A check prints "LABEL: R (limit LIMIT): ok" or
FAIL, R the ratio of TOOL's median CPU per request to OTHER's, when both have one.
"""
import argparse
import csv
import statistics

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("rate_head")
ap.add_argument("cpu_head")
ap.add_argument("tools")
ap.add_argument("--check", nargs=4, action="append", default=[], metavar=("TOOL", "OTHER", "LIMIT", "LABEL"))
a = ap.parse_args()

rows = list(csv.DictReader(open(a.csv)))


def cpu_us(r):
    if "cpu_us_per_req" in r:
        return float(r["cpu_us_per_req"]) if r["cpu_us_per_req"] else None
    return float(r["cpu_s"]) * 1e6 / int(r["calls"])


cpu_w = len(a.cpu_head) + 1
print(f"{'tool':10} {a.rate_head:>10} {a.cpu_head:>{cpu_w}} {'errors':>7}")
med = {}
for tool in a.tools.split(","):
    rs = [r for r in rows if r["tool"] == tool and ("calls" not in r or int(r["calls"]) > 0)]
    if not rs:
        continue
    rps = statistics.median(float(r["rps"]) for r in rs)
    cpus = [c for c in map(cpu_us, rs) if c is not None]
    cpu = statistics.median(cpus) if cpus else None
    errs = sum(int(r["errors"] or 0) for r in rs)
    med[tool] = cpu
    print(f"{tool:10} {rps:10.0f} {('%.1f' % cpu) if cpu else '-':>{cpu_w}} {errs:7d}")
for tool, other, limit, label in a.check:
    limit = float(limit)
    if med.get(tool) and med.get(other):
        ratio = med[tool] / med[other]
        print(f"{label}: {ratio:.2f} (limit {limit}): {'ok' if ratio <= limit else 'FAIL'}")
