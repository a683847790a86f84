"""Prints the median of every criterion benchmark under target/criterion as a Markdown table,
with element throughput where the benchmark declared one (docs/performance.md).

Usage: python3 -m experiments.performance_benches [DIR]   (default target/criterion)
"""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
rows = []
for est in sorted(root.glob("**/new/estimates.json")):
    bench = est.parent.parent
    meta = json.loads((est.parent / "benchmark.json").read_text())
    median_ns = json.loads(est.read_text())["median"]["point_estimate"]
    thr = meta.get("throughput") or {}
    elems = thr.get("Elements")
    rate = f"{elems / (median_ns / 1e9) / 1e6:.2f} M/s" if elems else ""
    rows.append((meta["full_id"], median_ns, rate))

def fmt(ns):
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"

print("| benchmark | median | throughput |")
print("|---|---|---|")
for name, ns, rate in rows:
    print(f"| {name} | {fmt(ns)} | {rate} |")
