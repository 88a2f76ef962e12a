"""CPU seconds of a local cluster's task processes and of the idle CPUs.

Waits for process PID (pstrain_local) to exit, reading every task's CPU time
(user + system, from /proc/PID/stat) once a second meanwhile, and prints
"chief:0 54.6, ps:0 13.8, ..., idle CPUs 15.1": each task's last reading and
the machine's idle CPU seconds over the wait. One process sampling once a
second, so that the measuring takes next to nothing from what it measures.

usage: task_cpu.py PID
"""
import os
import re
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def idle_ticks():
    with open("/proc/stat") as f:
        return int(f.readline().split()[4])


def tasks():
    """{task: cpu ticks} of every process started with --job=J --task=N."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            m = re.search(r"--job=(\w+) --task=(\d+)", cmd)
            if not m:
                continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[f"{m.group(1)}:{m.group(2)}"] = int(fields[11]) + int(fields[12])
        except OSError:
            continue
    return out


def running(pid):
    """Whether pid runs (not gone, nor a zombie its parent has yet to reap)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    pid = int(sys.argv[1])
    start = idle_ticks()
    last = {}
    while running(pid):
        last.update(tasks())
        time.sleep(1)
    idle = idle_ticks() - start
    print(", ".join(f"{t} {last[t] / HZ:.1f}" for t in sorted(last)) + f", idle CPUs {idle / HZ:.1f}")


main()
