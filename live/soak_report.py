"""Summarises a soak run (live/soak.sh): per process, RSS and open descriptors at start and
end, the growth per hour (least-squares slope over the whole run, its two halves, and after
warm-up: from WARMUP seconds, default 600, to the end; the second half for a run shorter than
twice that), whether RSS plateaued (second-half slope under a fifth of the first half's, or
under 1 MiB/h, falling included), and where the RSS lies (brk heap, anonymous mappings, file-backed pages, from
/proc/<pid>/smaps) at start and end with the anonymous mappings' growth after warm-up; draws
RSS and descriptors over time as an SVG, the end of the warm-up marked.

    python3 live/soak_report.py samples.csv soak.svg [WARMUP]
"""

import csv
import sys
from collections import defaultdict


def slope(points):
    """Least-squares slope of (t, y) points, y units per hour."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return sum((t - mt) * (y - my) for t, y in points) / var * 3600.0


def svg(series, path, warmup=None, width=900, height=520):
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    tmax = max((t for s in series.values() for t, _, _ in s), default=1) or 1
    panels = [("RSS (MiB)", 1, 1 / 1024.0), ("open file descriptors", 2, 1.0)]
    ph = (height - 80) // 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>']
    for k, (title, col, scale) in enumerate(panels):
        top = 30 + k * (ph + 30)
        ymax = max((row[col] * scale for s in series.values() for row in s), default=1) * 1.1 or 1
        x0, x1 = 70, width - 170
        out.append(f'<text x="{x0}" y="{top - 8}" font-weight="bold">{title}</text>')
        out.append(f'<rect x="{x0}" y="{top}" width="{x1 - x0}" height="{ph}" fill="none" stroke="#999"/>')
        for i in range(5):
            yv = ymax * i / 4
            y = top + ph - ph * i / 4
            out.append(f'<text x="{x0 - 6}" y="{y + 4}" text-anchor="end">{yv:.0f}</text>')
        for i in range(5):
            tv = tmax * i / 4
            x = x0 + (x1 - x0) * i / 4
            out.append(f'<text x="{x}" y="{top + ph + 14}" text-anchor="middle">{tv / 60:.0f} min</text>')
        if warmup is not None and 0 < warmup < tmax:
            x = x0 + (x1 - x0) * warmup / tmax
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#999" stroke-dasharray="4,3"/>')
            if k == 0:
                out.append(f'<text x="{x + 4:.1f}" y="{top + 12}" fill="#777">warm-up ends</text>')
        for j, (name, s) in enumerate(sorted(series.items())):
            c = colors[j % len(colors)]
            pts = " ".join(f"{x0 + (x1 - x0) * t / tmax:.1f},{top + ph - ph * row_val * scale / ymax:.1f}"
                           for t, row_val in ((r[0], r[col]) for r in s))
            out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{pts}"/>')
            out.append(f'<text x="{x1 + 10}" y="{top + 16 + 16 * j}" fill="{c}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


def window(s, warmup):
    """The samples after warm-up and the start of that window: from `warmup` seconds on, or
    the second half of a run shorter than twice the warm-up."""
    if s[-1][0] >= 2 * warmup:
        return [r for r in s if r[0] >= warmup], warmup
    half = s[len(s) // 2:]
    return half, half[0][0]


def main():
    warmup = float(sys.argv[3]) if len(sys.argv) > 3 else 600.0
    rows = defaultdict(list)
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(f):
            split = tuple(int(r[k]) if r.get(k) not in (None, "") else -1
                          for k in ("heap_kib", "anon_kib", "file_kib"))
            rows[r["process"]].append((int(r["t_s"]), int(r["rss_kib"]), int(r["fds"])) + split)
    marks = []
    for name, s in sorted(rows.items()):
        s.sort()
        half = s[len(s) // 2:]
        first = s[: len(s) // 2 + 1]
        after, w0 = window(s, warmup)
        marks.append(w0)
        mib = [(t, rss / 1024.0) for t, rss, *_ in s]
        all_h = slope(mib)
        second_h = slope([(r[0], r[1] / 1024.0) for r in half])
        first_h = slope([(r[0], r[1] / 1024.0) for r in first])
        warm_h = slope([(r[0], r[1] / 1024.0) for r in after])
        fd_h = slope([(t, fd) for t, _, fd, *_ in s])
        plateau = second_h < 1.0 or abs(second_h) < abs(first_h) / 5
        print(f"{name}: {len(s)} samples over {s[-1][0] / 60:.1f} min; RSS {s[0][1] / 1024:.1f} -> "
              f"{s[-1][1] / 1024:.1f} MiB (peak {max(r[1] for r in s) / 1024:.1f}; "
              f"{after[0][1] / 1024:.1f} at {w0 / 60:.1f} min); growth "
              f"{all_h:+.1f} MiB/h overall, {first_h:+.1f} MiB/h first half, {second_h:+.1f} MiB/h "
              f"second half ({'plateau' if plateau else 'still growing'}), {warm_h:+.1f} MiB/h after "
              f"warm-up ({w0 / 60:.1f}-{s[-1][0] / 60:.1f} min; goal <= 2 MiB/h); fds {s[0][2]} -> "
              f"{s[-1][2]} ({fd_h:+.1f}/h)")
        if s[0][3] >= 0 and s[-1][3] >= 0:
            a, b = s[0], s[-1]
            anon_h = slope([(r[0], r[4] / 1024.0) for r in after])
            print(f"  split (MiB, start -> end): heap {a[3] / 1024:.1f} -> {b[3] / 1024:.1f}, anon "
                  f"{a[4] / 1024:.1f} -> {b[4] / 1024:.1f} ({anon_h:+.1f} MiB/h after warm-up), file "
                  f"{a[5] / 1024:.1f} -> {b[5] / 1024:.1f}")
    svg({k: [r[:3] for r in v] for k, v in rows.items()}, sys.argv[2], warmup=min(marks, default=None))


if __name__ == "__main__":
    main()
