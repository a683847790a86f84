"""Prints the median of every criterion benchmark under target/criterion as a Markdown table,
with element throughput where the benchmark declared one (docs/performance.md; its numbers are
quoted by hand, no generated block).

Usage: python3 -m experiments.performance_benches [DIR]   (default target/criterion)

Page: docs/performance.md (quoted by hand).
"""
import argparse
import json
import pathlib


def rows(root):
    """(benchmark id, median ns, throughput or "") of every benchmark under `root`."""
    out = []
    for est in sorted(pathlib.Path(root).glob("**/new/estimates.json")):
        meta = json.loads((est.parent / "benchmark.json").read_text())
        median_ns = json.loads(est.read_text())["median"]["point_estimate"]
        thr = meta.get("throughput") or {}
        elems = thr.get("Elements")
        rate = f"{elems / (median_ns / 1e9) / 1e6:.2f} M/s" if elems else ""
        out.append((meta["full_id"], median_ns, rate))
    return out


def fmt(ns):
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"


def main(argv=None):
    """Prints the table of the criterion results under DIR (the one argument)."""
    p = argparse.ArgumentParser(description="the criterion benchmarks' medians as a table")
    p.add_argument("dir", nargs="?", default="target/criterion")
    a = p.parse_args(argv)
    print("| benchmark | median | throughput |")
    print("|---|---|---|")
    for name, ns, rate in rows(a.dir):
        print(f"| {name} | {fmt(ns)} | {rate} |")


if __name__ == "__main__":
    main()
