#!/usr/bin/python3
"""Draws scale_bench's measured points (its --csv file) as a PNG: per mode and
transport, against the number of workers W (log scale), the sync step or
cycle p50, the ps's CPU per push, its threads and its memory per worker, and
the chief's CPU per worker.

    /usr/bin/python3 bench/scale/plot_scale.py points.csv docs/images/scale.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PANELS = [
    ("cycle_p50_ms", "pull + push cycle p50 (ms)\n(sync: the step)", True),
    ("ps_cpu_ms_per_push", "ps CPU per push (ms)", True),
    ("ps_threads", "threads of the busiest ps", False),
    ("ps_kb_per_worker", "ps memory per worker (KB)", True),
    ("chief_cpu_ms_per_worker_s", "chief CPU per worker (ms/s)", True),
    ("steps_per_s", "global steps/s", True),
]


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    series = defaultdict(list)  # (mode, transport, ps, compute_ms, table rows) -> rows
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            row["ps_kb_per_worker"] = float(row["ps_rss_bytes"]) / 1e3 / float(row["workers"])
            key = (row["mode"], row["transport"], int(row["ps"]), int(row["compute_ms"]),
                   int(row.get("rows") or 0))
            series[key].append(row)
    if not series:
        sys.exit(f"{argv[1]}: no points")
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    # One colour per series in every panel, and one legend for all of them.
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {key: colours[i % len(colours)] for i, key in enumerate(sorted(series))}
    labels = {}
    for ax, (field, label, log_y) in zip(axes.flat, PANELS):
        for key, rows in sorted(series.items()):
            mode, transport, ps, compute_ms, table_rows = key
            rows = sorted(rows, key=lambda r: int(r["workers"]))
            # Not measured (no chief, no push in the window) is <= 0.
            points = [(int(r["workers"]), float(r[field])) for r in rows]
            points = [(x, y) for x, y in points if y > 0]
            if not points:
                continue
            xs, ys = zip(*points)
            (line,) = ax.plot(xs, ys, marker="o", color=colour[key])
            table = f", a table of {table_rows:.0e} rows" if table_rows else ""
            labels[key] = (line,
                           f"{mode}, {transport}, P={ps}, {compute_ms / 1000:g} s compute{table}")
        ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("workers W")
        ax.set_title(label, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    handles = [labels[key] for key in sorted(labels)]
    fig.legend([h for h, _ in handles], [t for _, t in handles], loc="lower center", ncol=3,
               fontsize=8)
    fig.suptitle("pstrain scale_bench: simulated workers against real ps_server processes "
                 "and a real chief (loopback, one machine)", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(argv[2], dpi=110)
    print(f"wrote {argv[2]}")


if __name__ == "__main__":
    main(sys.argv)
