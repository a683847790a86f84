"""Sanity check of the hand-written data files (profiles, workload, topologies).

Loads profiles/object-detection.yaml, workloads/default.yaml and the three reference topologies,
applies the deployment rules of docs/model.md §2 (explicit replicas, then round-robin fill to saturation),
and prints per topology:
  - the total resource vector (must be identical across the three topologies),
  - replicas per variant per layer,
  - serving capacity (qps of ref-size queries) per model family, per layer and in total,
  - the fraction of each app's streams that has at least one latency+accuracy feasible binding
    (docs/model.md §5 rules 1, 3, 4; load ignored), Monte Carlo over the workload distributions;
and, for the workload, the expected offered qps per antenna at λ = 60 and λ = 100.

Usage: python3 -m experiments.checks.check_data [--samples N] [--per-variant]
(from the repository root).
Exit status 1 if the topologies' resource totals differ. Needs PyYAML (pip install pyyaml).
"""
import argparse
import math
import random
import sys
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "profiles" / "object-detection.yaml"
WORKLOAD = ROOT / "workloads" / "default.yaml"
TOPOLOGIES = [ROOT / "topologies" / f"{n}.yaml" for n in ("dc-cloud", "co-dc-cloud", "full-edge")]
LAYER_ORDER = ["access", "central-office", "regional-dc", "cloud"]


# ---------------------------------------------------------------- distributions (config/dist.rs)
def dist_mean(d):
    if isinstance(d, (int, float)):
        return float(d)
    (kind, arg), = d.items()
    if kind == "uniform":
        return (arg[0] + arg[1]) / 2
    if kind in ("normal", "lognormal"):
        return arg["mean"]
    if kind == "exponential":
        return arg["mean"]
    if kind == "choice":
        vals, w = (arg, [1.0] * len(arg)) if isinstance(arg, list) else (arg["values"], arg["weights"])
        return sum(v * x for v, x in zip(vals, w)) / sum(w)
    raise ValueError(f"unknown distribution {d}")


def dist_sample(d, rng):
    if isinstance(d, (int, float)):
        return float(d)
    (kind, arg), = d.items()
    if kind == "uniform":
        return rng.uniform(arg[0], arg[1])
    if kind == "normal":
        lo = arg.get("min", 0.0)
        for _ in range(64):
            x = rng.gauss(arg["mean"], arg["std"])
            if x >= lo:
                return x
        return lo
    if kind == "lognormal":
        m, s = arg["mean"], arg["std"]
        s2 = math.log(1 + (s / m) ** 2)
        return rng.lognormvariate(math.log(m) - s2 / 2, math.sqrt(s2))
    if kind == "exponential":
        return rng.expovariate(1 / arg["mean"])
    if kind == "choice":
        vals, w = (arg, [1.0] * len(arg)) if isinstance(arg, list) else (arg["values"], arg["weights"])
        return rng.choices(vals, weights=w)[0]
    raise ValueError(f"unknown distribution {d}")


# ---------------------------------------------------------------- profiles
def load_profile(path):
    p = yaml.safe_load(path.read_text())
    models = {m["name"]: m for m in p["models"]}
    variants = {}
    for v in p["variants"]:
        v = dict(v)
        v["accuracy"] = models[v["model"]]["accuracy"]
        d = v["delay"]
        ideal = v["batch"] * 1000.0 / (d["base_ms"] + d.get("per_kb_ms", 0.0) * v["ref_kb"])
        v["ideal_qps"] = ideal
        variants[v["name"]] = v
    return models, variants


# ---------------------------------------------------------------- topologies (topology/schema.rs)
def fits(free, need):
    return all(n <= free.get(k, 0.0) + 1e-9 for k, n in need.items())


def take(free, need):
    for k, n in need.items():
        if k in free:
            free[k] -= n


def load_topology(path, variants):
    t = yaml.safe_load(path.read_text())
    layers = t.get("layers", {}) or {}
    clusters = []
    index = {}
    for c in t["clusters"]:
        dflt = layers.get(c["layer"], {}) or {}
        link = c.get("link", dflt.get("link"))
        cap = c.get("capacity", dflt.get("capacity")) or {}
        dep = c.get("deploy", dflt.get("deploy"))
        for k, x in cap.items():
            assert x > 0, f"{path.name}: {c['id']} capacity.{k} must be > 0"
        if c.get("parent") is not None:
            assert link is not None, f"{path.name}: {c['id']} has a parent but no link"
        index[c["id"]] = len(clusters)
        clusters.append(dict(id=c["id"], layer=c["layer"], parent=c.get("parent"),
                             mean=(link or {}).get("mean_ms", 0.0) if c.get("parent") else 0.0,
                             jitter=(link or {}).get("jitter_ms", 0.0) if c.get("parent") else 0.0,
                             capacity=dict(cap), deploy=dep or {}))
    for c in clusters:
        c["parent_i"] = index[c["parent"]] if c["parent"] is not None else None
    workers = []  # (cluster index, variant name, replicas)
    for i, c in enumerate(clusters):
        free = dict(c["capacity"])
        counts = defaultdict(int)
        for name, n in sorted((c["deploy"].get("replicas") or {}).items()):
            need = variants[name]["resources"]
            for _ in range(n):
                if not fits(free, need):
                    sys.exit(f"{path.name}: {n} replicas of {name} exceed the capacity of {c['id']}")
                take(free, need)
            counts[name] += n
        fill = c["deploy"].get("fill") or []
        while True:
            added = False
            for name in fill:
                need = variants[name]["resources"]
                if any(x > 0 for x in need.values()) and fits(free, need):
                    take(free, need)
                    counts[name] += 1
                    added = True
            if not added:
                break
        c["free"] = free
        for name, n in sorted(counts.items(), key=lambda kv: list(variants).index(kv[0])):
            if n > 0:
                workers.append((i, name, n))
    scheds = t.get("schedulers") or [c["id"] for c in clusters if c["layer"] == "access"]
    return dict(name=t.get("name", path.stem), clusters=clusters, index=index, workers=workers,
                schedulers=[index[s] for s in scheds], overrides=t.get("overrides") or [])


def ancestors(clusters, c):
    chain = [c]
    while clusters[chain[-1]]["parent_i"] is not None:
        chain.append(clusters[chain[-1]]["parent_i"])
    return chain


def path_delay(clusters, a, b):
    ua, ub = ancestors(clusters, a), ancestors(clusters, b)
    lca = next(x for x in ua if x in ub)
    mean = var = 0.0
    for chain in (ua, ub):
        for c in chain:
            if c == lca:
                break
            mean += clusters[c]["mean"]
            var += clusters[c]["jitter"] ** 2
    return mean, math.sqrt(var)


# ---------------------------------------------------------------- report
def fmt_res(r):
    return ", ".join(f"{k}={v:g}" for k, v in sorted(r.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=4000, help="Monte Carlo streams per app and scheduler class")
    ap.add_argument("--per-variant", action="store_true",
                    help="also print, per app, the feasible fraction of each (place, variant) pair")
    args = ap.parse_args()

    models, variants = load_profile(PROFILE)
    wl = yaml.safe_load(WORKLOAD.read_text())

    print("== profile: variants ==")
    print(f"{'variant':24} {'acc':>6} {'B':>2} {'D(ref) ms':>9} {'ideal qps':>9} {'C_v':>7} {'C/ideal':>7}  resources")
    for v in variants.values():
        d = v["delay"]
        dref = d["base_ms"] + d.get("per_kb_ms", 0) * v["ref_kb"]
        print(f"{v['name']:24} {v['accuracy']:6.3f} {v['batch']:2d} {dref:9.1f} {v['ideal_qps']:9.1f} "
              f"{v['capacity_qps']:7.1f} {v['capacity_qps'] / v['ideal_qps']:7.2f}  {fmt_res(v['resources'])}")
        if v["capacity_qps"] > v["ideal_qps"]:
            print(f"  WARNING: capacity_qps above batch*1000/D(ref_kb)")

    # ---- workload
    apps = wl["apps"]
    share_sum = sum(a["share"] for a in apps)
    lam = wl["lambda_per_min"] if isinstance(wl["lambda_per_min"], (int, float)) else None
    print("\n== workload: expected offered load per antenna ==")
    print(f"{'app':22} {'share':>6} {'E[dur] s':>8} {'E[qps]':>6} {'E[KB]':>6} {'qps@60':>7} {'units@60':>8} {'qps@100':>8}")
    tot_q = tot_u = 0.0
    demand = {}  # app -> (qps, load units vs ref 50 KB) at λ=60 per antenna
    for a in apps:
        rate = dist_mean(a.get("rate_qps", a.get("rate_fps")))  # rate_fps: the deprecated name
        sdr = a["share"] / share_sum * dist_mean(a["duration_s"]) * rate
        q60 = 60 / 60 * sdr
        kb = dist_mean(a["frame_kb"])
        u60 = q60 * kb / 50.0
        demand[a["name"]] = (q60, u60)
        tot_q += q60
        tot_u += u60
        print(f"{a['name']:22} {a['share'] / share_sum:6.3f} {dist_mean(a['duration_s']):8.1f} "
              f"{rate:6.1f} {kb:6.1f} {q60:7.1f} {u60:8.1f} {q60 * 100 / 60:8.1f}")
    print(f"{'TOTAL per antenna':22} {'':6} {'':8} {'':6} {'':6} {tot_q:7.1f} {tot_u:8.1f} {tot_q * 100 / 60:8.1f}")
    if lam is not None:
        print(f"(file's lambda_per_min = {lam}: {lam / 60 * tot_q:.1f} qps per antenna)")
    print("(units = qps weighted by frame_kb / 50 KB, the ref_kb of every variant: the load the capacity check counts)")

    # ---- topologies
    totals = {}
    rng = random.Random(1)
    for tpath in TOPOLOGIES:
        t = load_topology(tpath, variants)
        cl = t["clusters"]
        print(f"\n================ topology {t['name']} ({tpath.name}) ================")
        tot = defaultdict(float)
        for c in cl:
            for k, x in c["capacity"].items():
                tot[k] += x
        totals[t["name"]] = dict(tot)
        print(f"total resources: {fmt_res(tot)}")
        left = defaultdict(float)
        for c in cl:
            for k, x in c["free"].items():
                left[k] += x
        print(f"left unused by the deployment: {fmt_res(left)}")
        n_sched = len(t["schedulers"])
        print(f"clusters: {len(cl)}, schedulers: {n_sched}, workers ((variant, cluster) pairs): {len(t['workers'])}")

        layers = [l for l in LAYER_ORDER if any(c["layer"] == l for c in cl)]
        reps = defaultdict(lambda: defaultdict(int))
        cap_fam = defaultdict(lambda: defaultdict(float))
        for ci, v, n in t["workers"]:
            reps[v][cl[ci]["layer"]] += n
            cap_fam[variants[v]["model"]][cl[ci]["layer"]] += n * variants[v]["capacity_qps"]
        print("\nreplicas per variant per layer (summed over the layer's clusters):")
        print(f"  {'variant':24}" + "".join(f"{l:>15}" for l in layers) + f"{'total':>8}")
        for v in variants:
            if v in reps:
                print(f"  {v:24}" + "".join(f"{reps[v].get(l, 0):15d}" for l in layers) + f"{sum(reps[v].values()):8d}")
        print("\nserving capacity (qps of ref-size queries) per model family per layer:")
        print(f"  {'model':24}" + "".join(f"{l:>15}" for l in layers) + f"{'total':>8}")
        grand = 0.0
        for m in models:
            row = cap_fam.get(m, {})
            grand += sum(row.values())
            print(f"  {m:24}" + "".join(f"{row.get(l, 0):15.0f}" for l in layers) + f"{sum(row.values()):8.0f}")
        per_layer = [sum(cap_fam[m].get(l, 0) for m in cap_fam) for l in layers]
        print(f"  {'ALL':24}" + "".join(f"{x:15.0f}" for x in per_layer) + f"{grand:8.0f}")
        off60 = tot_q * n_sched
        off100 = tot_q * 100 / 60 * n_sched
        print(f"offered at λ=60: {off60:.0f} qps ({tot_u * n_sched:.0f} load units); capacity / offered = "
              f"{grand / off60:.2f} (qps), {grand / (tot_u * n_sched):.2f} (units); at λ=100: {grand / off100:.2f} (qps)")
        yolo_only = 0.0
        # accuracy classes: load units that only YOLOv3 can serve
        acc_yolo = models["yolov3"]["accuracy"]
        others = max(m["accuracy"] for n, m in models.items() if n != "yolov3")
        for a in apps:
            ma = a["min_accuracy"]
            if isinstance(ma, (int, float)):
                frac = 1.0 if ma > others else 0.0
            else:
                (k, arg), = ma.items()
                vals, w = (arg, [1.0] * len(arg)) if isinstance(arg, list) else (arg["values"], arg["weights"])
                frac = sum(x for v_, x in zip(vals, w) if v_ > others) / sum(w)
            yolo_only += frac * demand[a["name"]][1] * n_sched
        print(f"demand only YOLOv3 can serve at λ=60: {yolo_only:.0f} units; YOLOv3 capacity {sum(cap_fam['yolov3'].values()):.0f} "
              f"(ratio {sum(cap_fam['yolov3'].values()) / yolo_only:.2f})")

        # ---- latency/accuracy feasibility (docs/model.md §5 rules 1, 3, 4), load ignored
        # one representative scheduler per distinct reach table
        print("\nfeasible fraction of streams per app (docs/model.md §5 latency + accuracy; load ignored): overall,")
        print("then per place (some variant there is feasible). 'own' = the scheduler's own antenna cluster,")
        print("'access' = a sibling antenna (via the CO):")
        classes = {}
        for s in t["schedulers"]:
            reach = []
            for ci, v, n in t["workers"]:
                d, sg = path_delay(cl, s, ci)
                for o in t["overrides"]:
                    if o["scheduler"] == cl[s]["id"] and o["cluster"] == cl[ci]["id"]:
                        d, sg = o["mean_ms"], o.get("jitter_ms", 0.0)
                reach.append((round(d + 2 * sg, 6), "own" if ci == s else cl[ci]["layer"], v))
            key = tuple(sorted(reach))
            classes.setdefault(key, []).append(cl[s]["id"])
        places = ["own"] + layers
        for key, ids in classes.items():
            label = ids[0] if len(ids) == 1 else f"{ids[0]} (+{len(ids) - 1} alike)"
            print(f"  scheduler {label}:")
            print(f"    {'app':22} {'any':>7}" + "".join(f"{p:>15}" for p in places))
            for a in apps:
                feas = 0
                where = defaultdict(int)
                pair_ok = defaultdict(int)
                for _ in range(args.samples):
                    delta = dist_sample(a.get("access_delay_ms", wl["access_delay_ms"]), rng)
                    kb = dist_sample(a["frame_kb"], rng)
                    up = dist_sample(a["uplink_mbps"], rng)
                    dl = dist_sample(a["max_delay_ms"], rng)
                    acc = dist_sample(a["min_accuracy"], rng)
                    tx = kb * 8 / up
                    ok_at = set()
                    ok_pairs = set()
                    for net, place, v in key:
                        var = variants[v]
                        if var["accuracy"] < acc:
                            continue
                        dv = var["delay"]["base_ms"] + var["delay"].get("per_kb_ms", 0) * kb
                        if 2 * (delta + net) + tx + dv <= dl:
                            ok_at.add(place)
                            ok_pairs.add((place, v))
                    feas += bool(ok_at)
                    for pv in ok_pairs:
                        pair_ok[pv] += 1
                    for p in ok_at:
                        where[p] += 1
                print(f"    {a['name']:22} {feas / args.samples:7.1%}" + "".join(
                    f"{where[p] / args.samples:15.1%}" for p in places))
                if args.per_variant:
                    for p in places:
                        here = sorted({v for _, pl, v in key if pl == p}, key=list(variants).index)
                        if here:
                            print(f"      {p:15} " + "  ".join(f"{v} {pair_ok[(p, v)] / args.samples:.0%}" for v in here))

    print("\n== resource totals across topologies ==")
    ref = None
    ok = True
    for n, tot in totals.items():
        print(f"  {n:14} {fmt_res(tot)}")
        if ref is None:
            ref = tot
        elif any(abs(tot.get(k, 0) - ref.get(k, 0)) > 1e-9 for k in set(tot) | set(ref)):
            ok = False
    print("  IDENTICAL" if ok else "  MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
