#!/usr/bin/env python3
"""The README's main job as the benchmarks run it, and its worker's log read.

scripts/run_main_job.sh's job (1 chief evaluating every 10 s, 2 ps tasks,
1 worker, mnist at 0.05 for 6 epochs) with a seed, no HTTP port and the
worker's step parts logged (--vmodule=trainer=1). main_job_step_bench.py
imports it; main_job_bench.sh runs it:

    python3 bench/main_job.py run BUILD TRAIN_DIR SEED   # becomes the job (exec)
    python3 bench/main_job.py step LOG     # the worker's mean step, s
    python3 bench/main_job.py parts LOG    # its mean parts, ms
"""

import os
import re
import signal
import statistics
import sys

STEP_LINE = re.compile(r"^\[worker:0\] I\d{8} (\d\d:\d\d:\d\d\.\d+) .*: step (\d+), loss")
PARTS_LINE = re.compile(r"^\[worker:0\] .*per step: pull ([0-9.e+-]+) ms, waiting for variables "
                        r"([0-9.e+-]+) ms, compute ([0-9.e+-]+) ms, push ([0-9.e+-]+) ms")
PART_NAMES = ("pull", "waiting for variables", "compute", "push")


def command(build, train_dir, seed, epochs=6, eval_secs=10, extra=()):
    """pstrain_local's command line for the main job."""
    return [os.path.join(build, "deploy", "pstrain_local"), "--ps=2", "--workers=1",
            "--model=mnist", "--learning_rate=0.05", "--epochs=%d" % epochs,
            "--eval_secs=%d" % eval_secs, "--http_port=-1", "--train_dir=" + train_dir,
            "--vmodule=trainer=1", "--seed=%d" % seed] + list(extra)


def worker_steps(path):
    """The worker's step lines: [(seconds of day, step, parts of the steps since the last line)]."""
    points = []
    with open(path) as log:
        for line in log:
            m = STEP_LINE.match(line)
            if m:
                h, mi, s = m.group(1).split(":")
                points.append((int(h) * 3600 + int(mi) * 60 + float(s), int(m.group(2)), None))
            m = PARTS_LINE.match(line)
            if m and points:
                points[-1] = points[-1][:2] + ([float(g) for g in m.groups()],)
    return points


def mean_step(points):
    """Seconds per step from the first step line to the last."""
    (t0, s0), (t1, s1) = points[0][:2], points[-1][:2]
    return (t1 - t0) / (s1 - s0)


def mean_parts(parts):
    """The mean of each part over a list of parts."""
    return [statistics.mean(p[i] for p in parts) for i in range(len(PART_NAMES))]


def parts_text(means):
    return ", ".join("%s %.1f" % (name, v) for name, v in zip(PART_NAMES, means))


def main(argv):
    if len(argv) == 5 and argv[1] == "run":
        cmd = command(argv[2], argv[3], int(argv[4]))
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # as a shell would start it
        os.execv(cmd[0], cmd)
    if len(argv) == 3 and argv[1] == "step":
        print("%.4f" % mean_step(worker_steps(argv[2])))
        return 0
    if len(argv) == 3 and argv[1] == "parts":
        parts = [p[2] for p in worker_steps(argv[2]) if p[2] is not None]
        print(parts_text(mean_parts(parts)))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
