#!/usr/bin/env python3
"""Training cost as the topology grows: `continuum train` on generated ISP topologies of N
antennas (`continuum topology generate --antennas N --seed 1 --max-reach-ms 40`) with a short
fixed schedule (config/dqn.yaml with 2 episodes of 60 s, one fallback seed and one validation
episode), printing the simulated queries of its plan, wall time, time per simulated query, peak
RSS and the checkpoint's size. Prints a Markdown table.

Usage: python3 scripts/train_scaling.py [--sizes 16,64,256,1024] [--out out/train-scaling]
       [--threads 2]
It needs a release build (`cargo build --release`) and GNU time (/usr/bin/time).
"""
import argparse
import pathlib
import re
import subprocess
import time

p = argparse.ArgumentParser()
p.add_argument("--sizes", default="16,64,256,1024")
p.add_argument("--out", default="out/train-scaling")
p.add_argument("--threads", default="2")
p.add_argument("--bin", default="target/release/continuum")
a = p.parse_args()
out = pathlib.Path(a.out)
out.mkdir(parents=True, exist_ok=True)

SHORT = {"budget_queries": "1.0e12", "episodes": "2", "horizon_s": "60.0",
         "fallback_seeds": "1", "validation_episodes": "1"}
cfg_lines = []
for line in pathlib.Path("config/dqn.yaml").read_text().splitlines():
    key = line.split(":", 1)[0]
    cfg_lines.append(f"{key}: {SHORT[key]}" if key in SHORT else line)
cfg = out / "dqn-short.yaml"
cfg.write_text("\n".join(cfg_lines) + "\n")

print("| antennas N | simulated queries (plan) | wall s | ns per simulated query | peak RSS MiB | checkpoint KiB |")
print("|---|---|---|---|---|---|")
for n in [int(x) for x in a.sizes.split(",")]:
    topo = out / f"isp-{n}.yaml"
    subprocess.run([a.bin, "topology", "generate", "--antennas", str(n), "--seed", "1",
                    "--max-reach-ms", "40", "--out", str(topo)], check=True, capture_output=True)
    ck = out / f"isp-{n}.dqn"
    t0 = time.time()
    r = subprocess.run(["/usr/bin/time", "-v", a.bin, "train", str(topo), "--config", str(cfg),
                        "--threads", a.threads, "--out", str(ck)],
                       check=True, capture_output=True, text=True)
    wall = time.time() - t0
    text = r.stdout + r.stderr
    m = re.search(r"plan: (\d+) episodes of ([\d.e+]+) simulated queries.*?then ([\d.e+]+) for", text)
    queries = int(m.group(1)) * float(m.group(2)) + float(m.group(3))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
    size = ck.stat().st_size / 1024
    print(f"| {n} | {queries:.3g} | {wall:.1f} | {1e9 * wall / queries:.0f} | {rss:.0f} | {size:.0f} |",
          flush=True)
