"""The figures experiments/deeprm.py draws itself from its recorded results (docs/deeprm.md): the
adaptation curve, the held-out tasks' grouped bars (ask 3) and the share of jobs with slowdown
≤ 2 per objective (ask 2). Every function reads results only, so `--from-json` redraws them
without training.

Page: docs/deeprm.md (the figures experiments/deeprm.py draws; no command of its own).
"""
import math
import os
import shutil
import statistics

COLOURS = ["#d62728", "#1f77b4", "#555555", "#999999", "#2ca02c", "#ff7f0e", "#9467bd",
           "#8c564b", "#17becf"]


def curve(csv_text):
    """(iteration, validation slowdown, wall s) of a training log's validated iterations."""
    rows = [x.split(",") for x in csv_text.splitlines()[1:]]
    return [(int(x[0]), float(x[5]), float(x[4])) for x in rows if x[5]]


def mean_curve(res, start):
    """Mean over the tasks of the validation slowdown at each validated iteration of `start`."""
    by_it = {}
    for t in res:
        for i, v, _ in curve(t["curves"][start]):
            by_it.setdefault(i, []).append(v)
    return sorted((i, statistics.mean(v)) for i, v in by_it.items() if len(v) == len(res))


def copy_to_docs(src, dst):
    """Copies a figure into docs/, except under DOCGEN_CHECK=1 (`check_docs --rerender`),
    which writes nothing."""
    if os.environ.get("DOCGEN_CHECK") != "1":
        shutil.copy(src, dst)


def adaptation_svg(res, n, extra, path):
    """The adaptation curve: validation slowdown (mean over the held-out tasks) against
    adaptation iterations, one line per start."""
    lines = {"meta (Reptile) start": mean_curve(res, "meta"),
             "transfer start": mean_curve(res, "transfer"),
             "scratch": mean_curve(res, "scratch-long")}
    w, h, l, r, t, b = 760, 420, 70, 230, 40, 50
    xs = [i for pts in lines.values() for i, _ in pts]
    ys = [v for pts in lines.values() for _, v in pts]
    x1, y0, y1 = max(xs), min(ys) * 0.95, max(ys) * 1.05

    def px(x):
        return l + x / x1 * (w - l - r)

    def py(y):
        return h - b - (y - y0) / (y1 - y0) * (h - t - b)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{(w - r + l) / 2}" y="24" text-anchor="middle" font-size="15">Adaptation to '
           f'{len(res)} held-out tasks (mean validation slowdown)</text>',
           f'<polyline points="{l},{t} {l},{h - b} {w - r},{h - b}" fill="none" stroke="black"/>',
           f'<line x1="{px(n):.1f}" y1="{t}" x2="{px(n):.1f}" y2="{h - b}" stroke="black" '
           f'stroke-dasharray="4 4"/>',
           f'<text x="{px(n) + 4:.1f}" y="{t + 12}" font-size="11">{n} it</text>',
           f'<text x="{(w - r + l) / 2}" y="{h - 12}" text-anchor="middle" font-size="13">'
           f'adaptation iterations ({n} + {extra}: scratch with the meta-training\'s rollouts)</text>',
           f'<text transform="translate(18,{(h - b + t) / 2}) rotate(-90)" text-anchor="middle" '
           f'font-size="13">mean slowdown</text>']
    step = 10 ** math.floor(math.log10((y1 - y0) / 2))
    y = math.ceil(y0 / step) * step
    while y <= y1:
        svg.append(f'<text x="{l - 6}" y="{py(y):.1f}" dy="0.35em" text-anchor="end" '
                   f'font-size="11">{y:g}</text>')
        y += step
    for x in range(0, x1 + 1, 25):
        svg.append(f'<text x="{px(x):.1f}" y="{h - b + 16}" text-anchor="middle" font-size="11">{x}</text>')
    for k, (name, pts) in enumerate(lines.items()):
        c = COLOURS[k]
        svg.append(f'<polyline points="{" ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in pts)}" '
                   f'fill="none" stroke="{c}" stroke-width="{3 if k == 0 else 2}"/>')
        svg.append(f'<line x1="{w - r + 16}" y1="{t + 20 + 22 * k}" x2="{w - r + 40}" '
                   f'y2="{t + 20 + 22 * k}" stroke="{c}" stroke-width="3"/>')
        svg.append(f'<text x="{w - r + 46}" y="{t + 20 + 22 * k}" dy="0.35em" font-size="12">{name}</text>')
    svg.append("</svg>")
    path.write_text("\n".join(svg) + "\n")


def bars_svg(title, ylabel, groups, series, path):
    """Grouped bars: one group per entry of `groups` (its label), one bar per series, each
    the mean of its values with a ± sd whisker. `series` is [(name, [values per group])]; a
    group's values are a list over the seeds (an empty list draws no bar)."""
    w, h, l, r, t, b = 960, 440, 70, 290, 44, 60
    stats = [[(statistics.mean(v), statistics.stdev(v) if len(v) > 1 else 0.0) if v else None
              for v in vals] for _, vals in series]
    top = max(m + s for row in stats for c in row if c for m, s in [c]) * 1.08
    step = 10 ** math.floor(math.log10(top / 2))
    if top / step > 10:
        step *= 2
    elif top / step < 4:
        step /= 2

    def py(y):
        return h - b - y / top * (h - t - b)
    gw = (w - l - r) / len(groups)
    bw = gw * 0.8 / len(series)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{(w - r + l) / 2}" y="24" text-anchor="middle" font-size="15">{title}</text>',
           f'<polyline points="{l},{t} {l},{h - b} {w - r},{h - b}" fill="none" stroke="black"/>',
           f'<text transform="translate(18,{(h - b + t) / 2}) rotate(-90)" text-anchor="middle" '
           f'font-size="13">{ylabel}</text>']
    y = 0.0
    while y <= top:
        svg.append(f'<line x1="{l}" y1="{py(y):.1f}" x2="{w - r}" y2="{py(y):.1f}" stroke="#eeeeee"/>')
        svg.append(f'<text x="{l - 6}" y="{py(y):.1f}" dy="0.35em" text-anchor="end" '
                   f'font-size="11">{y:g}</text>')
        y = round(y + step, 10)
    for g, label in enumerate(groups):
        x0 = l + g * gw + gw * 0.1
        for line, text in enumerate(label.split("\n")):
            svg.append(f'<text x="{l + (g + 0.5) * gw:.1f}" y="{h - b + 16 + 14 * line}" '
                       f'text-anchor="middle" font-size="11">{text}</text>')
        for k, row in enumerate(stats):
            if row[g] is None:
                continue
            m, s = row[g]
            x = x0 + k * bw
            c = COLOURS[k % len(COLOURS)]
            svg.append(f'<rect x="{x:.1f}" y="{py(m):.1f}" width="{bw * 0.9:.1f}" '
                       f'height="{py(0) - py(m):.1f}" fill="{c}"/>')
            mid = x + bw * 0.45
            svg.append(f'<line x1="{mid:.1f}" y1="{py(max(m - s, 0)):.1f}" x2="{mid:.1f}" '
                       f'y2="{py(m + s):.1f}" stroke="black"/>')
    for k, (name, _) in enumerate(series):
        c = COLOURS[k % len(COLOURS)]
        svg.append(f'<rect x="{w - r + 16}" y="{t + 14 + 22 * k}" width="14" height="12" fill="{c}"/>')
        svg.append(f'<text x="{w - r + 36}" y="{t + 20 + 22 * k}" dy="0.35em" font-size="12">{name}</text>')
    svg.append("</svg>")
    path.write_text("\n".join(svg) + "\n")
