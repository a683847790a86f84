"""Summarises a soak run (live/soak.sh): per process, RSS and open descriptors at start and
end, the growth per hour (least-squares slope over the whole run and over its second half),
and whether RSS plateaued (second-half slope under a fifth of the first half's, or under
1 MiB/h); draws RSS and descriptors over time as an SVG.

    python3 live/soak_report.py samples.csv soak.svg
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


def svg(series, path, width=900, height=520):
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
        for j, (name, s) in enumerate(sorted(series.items())):
            c = colors[j % len(colors)]
            pts = " ".join(f"{x0 + (x1 - x0) * t / tmax:.1f},{top + ph - ph * row_val * scale / ymax:.1f}"
                           for t, row_val in ((r[0], r[col]) for r in s))
            out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{pts}"/>')
            out.append(f'<text x="{x1 + 10}" y="{top + 16 + 16 * j}" fill="{c}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    rows = defaultdict(list)
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(f):
            rows[r["process"]].append((int(r["t_s"]), int(r["rss_kib"]), int(r["fds"])))
    for name, s in sorted(rows.items()):
        s.sort()
        half = s[len(s) // 2:]
        first = s[: len(s) // 2 + 1]
        mib = [(t, rss / 1024.0) for t, rss, _ in s]
        all_h = slope(mib)
        first_h = slope([(t, rss / 1024.0) for t, rss, _ in first])
        second_h = slope([(t, rss / 1024.0) for t, rss, _ in half])
        fd_h = slope([(t, fd) for t, _, fd in s])
        plateau = abs(second_h) < 1.0 or abs(second_h) < abs(first_h) / 5
        print(f"{name}: {len(s)} samples over {s[-1][0] / 60:.1f} min; RSS {s[0][1] / 1024:.1f} -> "
              f"{s[-1][1] / 1024:.1f} MiB (peak {max(r[1] for r in s) / 1024:.1f}); growth "
              f"{all_h:+.1f} MiB/h overall, {first_h:+.1f} MiB/h first half, {second_h:+.1f} MiB/h "
              f"second half ({'plateau' if plateau else 'still growing'}); fds {s[0][2]} -> {s[-1][2]} "
              f"({fd_h:+.1f}/h)")
    svg(rows, sys.argv[2])


if __name__ == "__main__":
    main()
