#!/usr/bin/env python3
"""The main job's worker step in turns with the step in one process.

The machine's speed moves by 10 to 40 % from one minute to the next, so a
job's step set beside a one-process step timed minutes apart measures the
drift as much as the job. This benchmark takes turns within the job: it
runs the README's main job (1 chief evaluating every 10 s, 2 ps tasks,
1 worker; scripts/run_main_job.sh's flags) and every --work_secs stops all
its processes (SIGSTOP), times --probe_steps steps of
mnist_step_bench alone on the machine, and lets the job go on (SIGCONT).
The launcher and each task it starts (each in a process group of its own)
are stopped one by one.

Each stretch of the job between two probes is set beside the mean of those
two probes: its worker step is the time between the worker's step lines
(one every 10 steps) that lie wholly inside the stretch, over their steps.
The first stretch (start-up) and the last (the job's end) are left out.
The chief's clock runs on while the job is stopped, so it evaluates a
little more often per step than in the real job: the figure errs against
the job.

    python3 bench/main_job_step_bench.py [--build build] [--work_secs 15] [-- JOB_FLAGS]
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

import main_job


def probe(build, steps):
    """The mean step of mnist_step_bench, in seconds."""
    out = subprocess.run([os.path.join(build, "bench", "mnist_step_bench"), "--steps=%d" % steps],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["step_s"]["mean"]


def family(pid):
    """pid and the processes it started, at any depth."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def signal_all(pids, sig):
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def seconds_of_day(t):
    """A wall-clock time as the worker's log writes it: seconds since local midnight."""
    d = datetime.fromtimestamp(t)
    return d.hour * 3600 + d.minute * 60 + d.second + d.microsecond / 1e6


def run_job(args, train_dir, log):
    """Runs the job, stopping it for each probe; returns [(stop, cont, probe_s)]."""
    cmd = main_job.command(args.build, train_dir, args.seed, args.epochs, args.eval_secs,
                           args.job_flags)
    job = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    probes = []
    try:
        while True:
            try:
                job.wait(timeout=args.work_secs)
                break
            except subprocess.TimeoutExpired:
                pass
            stop = time.time()
            # The launcher first, so that it sees no task stop.
            pids = family(job.pid)
            signal_all(pids, signal.SIGSTOP)
            try:
                step_s = probe(args.build, args.probe_steps)
            finally:
                signal_all(reversed(pids), signal.SIGCONT)
            probes.append((seconds_of_day(stop), seconds_of_day(time.time()), step_s))
            print("probe %d: one-process step %.4f s" % (len(probes), step_s), flush=True)
    finally:
        if job.poll() is None:
            job.terminate()
        job.wait()
    if job.returncode != 0:
        with open(log.name) as f:
            sys.stderr.write("".join(f.readlines()[-30:]))
        sys.exit("the job failed (exit %d); the end of its log is above" % job.returncode)
    return probes


def stretch_steps(points, begin, end):
    """(seconds, steps, parts of each 10 steps) between the step lines inside [begin, end]."""
    inside = [p for p in points if begin <= p[0] <= end]
    if len(inside) < 2:
        return 0.0, 0, []
    return (inside[-1][0] - inside[0][0], inside[-1][1] - inside[0][1],
            [p[2] for p in inside[1:] if p[2] is not None])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--work_secs", type=float, default=15, help="the job's stretch between probes")
    parser.add_argument("--probe_steps", type=int, default=40, help="timed steps per probe")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval_secs", type=int, default=10, help="the chief evaluates every this many seconds")
    parser.add_argument("job_flags", nargs="*", help="more flags for pstrain_local, after --")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="pstrain_main_job_step_bench.") as work:
        with open(os.path.join(work, "job.log"), "w") as log:
            probes = run_job(args, os.path.join(work, "train"), log)
        points = main_job.worker_steps(os.path.join(work, "job.log"))

    print("stretch  steps  job step (s)  probes around it (s)  ratio")
    ratios, job_secs, job_steps, probe_means, parts = [], 0.0, 0, [], []
    for k in range(1, len(probes)):
        secs, steps, stretch_parts = stretch_steps(points, probes[k - 1][1], probes[k][0])
        if steps == 0:
            continue
        parts += stretch_parts
        around = (probes[k - 1][2] + probes[k][2]) / 2
        ratios.append(secs / steps / around)
        job_secs, job_steps = job_secs + secs, job_steps + steps
        probe_means.append(around)
        print("%7d  %5d  %12.4f  %.4f, %.4f        %.3f" %
              (k, steps, secs / steps, probes[k - 1][2], probes[k][2], ratios[-1]))
    if not ratios:
        sys.exit("no stretch of the job lay between two probes: raise --epochs or lower --work_secs")
    means = main_job.mean_parts(parts)
    print("job step over the stretches %.4f s, the probes' mean %.4f s: %.3fx; median of the "
          "stretches' ratios %.3fx (min %.3f, max %.3f)" %
          (job_secs / job_steps, statistics.mean(probe_means),
           job_secs / job_steps / statistics.mean(probe_means), statistics.median(ratios),
           min(ratios), max(ratios)))
    print("the worker's step in ms over the stretches (its own counters): %s; the rest (input, "
          "logging) %.1f" % (main_job.parts_text(means), 1000 * job_secs / job_steps - sum(means)))


if __name__ == "__main__":
    main()
