#!/usr/bin/env python3
"""Runs the command blocks of README.md and docs/*.md that are marked runnable,
on a built tree, and checks what each prints.

A block is marked by an HTML comment starting a line, on the line(s) right
before the block (blank lines between the two are allowed; nothing else
is):

    <!-- doc-test: args="--max_steps=30" expect="final: step \\d+, test accuracy 0\\.[2-9]"
                   timeout=300 needs="datasets/census" -->

Keys (each KEY=VALUE, VALUE in double quotes, single quotes or bare without
spaces; no escapes: a value cannot hold its own quote character):

  args      flags appended to every build/deploy/pstrain_local,
            build/chief/chief and build/worker/worker command of the block,
            to keep it short (the last of a repeated flag wins). chief and
            worker also get --undefok naming them, so that a flag only one of
            the two defines does not stop the other.
  expect    a Python regular expression that must occur in the block's
            output (stdout and stderr together, re.MULTILINE). May be given
            more than once: each must occur. It carries the tolerance of the
            figure it checks, e.g. "test accuracy 0\\.8[4-6]".
  timeout   seconds the block may run (default 120); past it the block's
            processes are stopped and it fails.
  needs     paths (relative to the repository root, separated by spaces or
            commas) the block reads but does not make, e.g. a data set that
            needs the network: when one is missing the block is skipped,
            saying which.

Both fenced (``` or ~~~) and indented (4 spaces) code blocks are found;
unmarked ones are listed as not run. The marked blocks of a file run in file
order in one bash session with `set -e` (each block's commands, stdin
/dev/null), so a later block can use the files and shell variables an earlier
one left. A block fails when a command of it fails, when it runs past its
timeout, or when an `expect` does not occur; the session then starts afresh
for the next block. Processes the blocks leave running are stopped when
their session ends, after the file's last block or a failed one (SIGTERM,
then SIGKILL 30 s later).

The blocks run from a view of the repository root under
runs/doc-test/<file>/: every entry of the root is a symbolic link to it,
except runs/ (a fresh, empty folder: what the blocks write lands there, never
in the source tree), datasets/ (a link to the root's, made if missing, so
data sets made once are kept) and build/ (links to the build directory's
entries, with the three binaries that take `args` replaced by wrappers that
append them). So `build/...` in a block means --build_dir, whatever it is,
and the commands run exactly as written. Each block's output is kept in
runs/doc-test/<file>-logs/NN.log (NN: its number among the file's marked
blocks).

  python3 tests/docs/run_doc_blocks.py [--root DIR] [--build_dir DIR]
      [--file README.md ...] [--readme PATH] [--list]

--file restricts the run to the named files (paths from the root);
--readme PATH runs the blocks of PATH (e.g. an edited copy of README.md)
instead of the repository's files; --list lists the blocks without running
them. Prints a line per block (PASS, FAIL, SKIP with file:line and seconds),
the last 40 lines of output and what was expected for each failure, and
ends with "N passed, N failed" (", N skipped" when some were). Exit status:
0 all passed, 1 some failed (or a marker is malformed), 77 a binary the
blocks use is missing from the build directory (ctest's skip).
"""

import argparse
import ctypes
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time

DEFAULT_TIMEOUT = 120
TAIL_LINES = 40
KEYS = {"args", "expect", "timeout", "needs"}

# The binaries the blocks use; a build without one of them cannot run them.
REQUIRED_BINARIES = [
    "deploy/pstrain_local",
    "ps/ps_server",
    "chief/chief",
    "chief/evaluator",
    "worker/worker",
    "cluster/make_cluster_spec",
    "export/pstrain_export",
    "tools/pstrain_model_info",
    "tools/pstrain_convert",
    "tools/pstrain_fmnist_to_cifar",
]

# The binaries that get a block's args, and whether they also get --undefok.
WRAPPED = {
    "deploy/pstrain_local": False,
    "chief/chief": True,
    "worker/worker": True,
}

MARKER_RE = re.compile(r"<!--\s*doc-test:(.*?)-->", re.DOTALL)
PAIR_RE = re.compile(r"""\s*([A-Za-z_]+)=("[^"]*"|'[^']*'|[^\s"']+)""")
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Block:
    def __init__(self, path, line, text):
        self.path = path  # as shown
        self.line = line  # 1-based line of the block's first command line
        self.text = text
        self.marker = None  # dict of the marker's keys, or None
        self.error = None  # a malformed marker


def parse_marker(body):
    """The keys of a marker's body: {"args": str, "expect": [str], ...}."""
    keys = {"expect": []}
    rest = body.strip()
    pos = 0
    while pos < len(rest):
        m = PAIR_RE.match(rest, pos)
        if not m:
            raise ValueError("cannot read the marker from: %r" % rest[pos:].strip())
        key, value = m.group(1), m.group(2)
        if value[0] in "\"'":
            value = value[1:-1]
        if key not in KEYS:
            raise ValueError("unknown key %r (keys: %s)" % (key, ", ".join(sorted(KEYS))))
        if key == "expect":
            re.compile(value)  # a bad pattern is the marker's error
            keys["expect"].append(value)
        elif key in keys:
            raise ValueError("key %r given twice" % key)
        elif key == "timeout":
            keys["timeout"] = float(value)
        else:
            keys[key] = value
        pos = m.end()
        while pos < len(rest) and rest[pos].isspace():
            pos += 1
    return keys


def extract_blocks(path, shown):
    """The code blocks of a Markdown file, each with the marker before it."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    pending = None  # (line, body) of a marker waiting for its block
    stray = []  # blocks standing for markers not followed by a block
    i = 0
    prev_blank = True

    def take(block):
        nonlocal pending
        if pending is not None:
            try:
                block.marker = parse_marker(pending[1])
            except (ValueError, re.error) as e:
                block.marker = {}
                block.error = "doc-test marker at line %d: %s" % (pending[0], e)
            pending = None
        blocks.append(block)

    while i < len(lines):
        line = lines[i]
        fence = FENCE_RE.match(line)
        if fence:
            mark = fence.group(1)
            start = i
            body = []
            i += 1
            while i < len(lines) and not (
                lines[i].lstrip().startswith(mark[0] * len(mark))
                and lines[i].strip().strip(mark[0]) == ""
            ):
                body.append(lines[i])
                i += 1
            i += 1  # the closing fence
            take(Block(shown, start + 2, "\n".join(body) + "\n"))
            prev_blank = False
            continue
        if (line.startswith("    ") or line.startswith("\t")) and prev_blank and line.strip():
            start = i
            body = []
            while i < len(lines) and (
                lines[i].startswith("    ") or lines[i].startswith("\t") or not lines[i].strip()
            ):
                body.append(lines[i][4:] if lines[i].startswith("    ") else lines[i][1:])
                i += 1
            while body and not body[-1].strip():
                body.pop()
            take(Block(shown, start + 1, "\n".join(body) + "\n"))
            prev_blank = False
            continue
        marker_line = i + 1
        # A marker is a line of its own (text quoting one is no marker).
        is_marker = line.lstrip().startswith("<!--") and "doc-test:" in line
        m = MARKER_RE.match(line.lstrip()) if is_marker else None
        if m is None and is_marker:
            # A marker over several lines.
            j = i
            joined = line
            while "-->" not in joined and j + 1 < len(lines):
                j += 1
                joined += "\n" + lines[j]
            m = MARKER_RE.match(joined.lstrip())
            if m:
                i = j
        if m:
            if pending is not None:
                stray.append(pending)
            pending = (marker_line, m.group(1))
            i += 1
            prev_blank = True  # an indented block may follow the marker directly
            continue
        if line.strip() and pending is not None:
            stray.append(pending)
            pending = None
        prev_blank = not line.strip()
        i += 1
    if pending is not None:
        stray.append(pending)
    for line_no, _ in stray:
        b = Block(shown, line_no, "")
        b.marker = {}
        b.error = "doc-test marker at line %d is not followed by a code block" % line_no
        blocks.append(b)
    blocks.sort(key=lambda b: b.line)
    return blocks


def first_line(text):
    for line in text.split("\n"):
        if line.strip():
            return line.strip()
    return ""


# --- the view of the repository the blocks run in -----------------------------

def make_view(root, build_dir, view):
    """runs/doc-test/<file>/: links to the root's entries, a fresh runs/, the
    build dir's entries with the wrapped binaries."""
    if os.path.lexists(view):
        shutil.rmtree(view)
    os.makedirs(view)
    datasets = os.path.join(root, "datasets")
    os.makedirs(datasets, exist_ok=True)
    for name in sorted(os.listdir(root)):
        if name in ("runs", "build", "datasets"):
            continue
        os.symlink(os.path.join(root, name), os.path.join(view, name))
    os.symlink(datasets, os.path.join(view, "datasets"))
    os.makedirs(os.path.join(view, "runs"))
    vbuild = os.path.join(view, "build")
    os.makedirs(vbuild)
    wrapped_dirs = {p.split("/")[0] for p in WRAPPED}
    for name in sorted(os.listdir(build_dir)):
        src = os.path.join(build_dir, name)
        if name in wrapped_dirs and os.path.isdir(src):
            os.makedirs(os.path.join(vbuild, name))
            for entry in sorted(os.listdir(src)):
                rel = name + "/" + entry
                dst = os.path.join(vbuild, rel)
                if rel in WRAPPED:
                    write_wrapper(dst, os.path.join(src, entry), WRAPPED[rel])
                else:
                    os.symlink(os.path.join(src, entry), dst)
        else:
            os.symlink(src, os.path.join(vbuild, name))


def write_wrapper(path, real, undefok):
    with open(path, "w") as f:
        f.write("#!/usr/bin/env bash\n")
        f.write("# doc test: %s with the block's args appended\n" % real)
        f.write('eval "doc_test_args=(${DOC_TEST_ARGS:-})"\n')
        if undefok:
            f.write('[ -z "${DOC_TEST_UNDEFOK:-}" ] || '
                    'doc_test_args+=("--undefok=$DOC_TEST_UNDEFOK")\n')
        f.write('exec %s "$@" "${doc_test_args[@]}"\n' % shlex.quote(real))
    os.chmod(path, 0o755)


# --- processes ------------------------------------------------------------------

def become_subreaper():
    """Orphans of the blocks (a background task whose shell ended) become our
    children, so that they can be found and stopped."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def descendants():
    """The pids of every process below this one."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(name))
    out = []
    todo = [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def stop_descendants(keep=(), grace=30.0):
    """SIGTERM to every process below this one but `keep`, SIGKILL after grace."""
    pids = [p for p in descendants() if p not in keep]
    if not pids:
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        reap()
        pids = [p for p in pids if alive(p)]
        pids += [p for p in descendants() if p not in keep and p not in pids]
        if not pids:
            return
        time.sleep(0.2)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.5)
    reap()


# --- running a file's blocks --------------------------------------------------------

class Session:
    """One bash with `set -e`, running blocks from a given one on; reports
    each block's start and end on a pipe."""

    def __init__(self, view, logdir, blocks, first):
        self.blocks = blocks
        rfd, wfd = os.pipe()
        script = ["set -e", "cd %s" % shlex.quote(view)]
        for n in range(first, len(blocks)):
            b = blocks[n]
            args = b.marker.get("args", "")
            names = re.findall(r"(?:^|\s)--?([A-Za-z_][A-Za-z0-9_]*)", args)
            log = os.path.join(logdir, "%02d.log" % n)
            sh = os.path.join(logdir, "%02d.sh" % n)
            with open(sh, "w") as f:
                f.write(b.text)
            script += [
                "export DOC_TEST_ARGS=%s" % shlex.quote(args),
                "export DOC_TEST_UNDEFOK=%s" % shlex.quote(",".join(dict.fromkeys(names))),
                "exec >%s 2>&1" % shlex.quote(log),
                "echo start %d >&%d" % (n, wfd),
                "source %s </dev/null %d>&-" % (shlex.quote(sh), wfd),
                "echo done %d >&%d" % (n, wfd),
            ]
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-c", "\n".join(script) + "\n"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(wfd,))
        os.close(wfd)
        self.rfd = rfd
        self.buf = b""

    def next_event(self, deadline):
        """("start"|"done", n), ("exit", rc) or ("timeout", None)."""
        while True:
            if b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                what, n = line.decode().split()
                return what, int(n)
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if wait is not None and wait == 0.0:
                return "timeout", None
            ready, _, _ = select.select([self.rfd], [], [], wait)
            if not ready:
                return "timeout", None
            data = os.read(self.rfd, 4096)
            if data:
                self.buf += data
                continue
            return "exit", self.proc.wait()

    def close(self):
        # What the blocks left running (and bash itself, after a timeout).
        stop_descendants()
        self.proc.wait()
        os.close(self.rfd)


def tail(path, n):
    try:
        with open(path, errors="replace") as f:
            return f.read().rstrip("\n").split("\n")[-n:]
    except OSError:
        return ["(no output)"]


def run_file(blocks, view, logdir, results):
    """Runs the marked blocks of one file; appends (block, status, secs, detail)
    and prints the file's blocks in order."""
    unreported = list(blocks)
    done = {}  # id(block): its result, until printed

    def report(result):
        # Printed in file order: a block waits for those before it.
        done[id(result[0])] = result
        while unreported and (unreported[0].marker is None or id(unreported[0]) in done):
            b = unreported.pop(0)
            if b.marker is None:
                print("not run (no doc-test marker) %s:%d %s"
                      % (b.path, b.line, first_line(b.text)), flush=True)
            else:
                print_result(done.pop(id(b)))

    runnable = []
    for b in blocks:
        if b.marker is None:
            continue
        if b.error:
            results.append((b, "FAIL", 0.0, [b.error]))
            report(results[-1])
            continue
        missing = [p for p in re.split(r"[\s,]+", b.marker.get("needs", "").strip())
                   if p and not os.path.exists(os.path.join(ROOT, p))]
        if missing:
            results.append((b, "SKIP", 0.0, ["needs %s, missing" % ", ".join(missing)]))
            report(results[-1])
            continue
        runnable.append(b)
    if runnable:
        run_blocks(runnable, view, logdir, results, report)


def run_blocks(runnable, view, logdir, results, report):
    """Runs blocks in one session after another, a new one after a failure."""
    os.makedirs(logdir, exist_ok=True)
    n = 0
    while n < len(runnable):
        session = Session(view, logdir, runnable, n)
        started = None
        while True:
            b = runnable[n]
            timeout = b.marker.get("timeout", DEFAULT_TIMEOUT)
            deadline = None if started is None else started + timeout
            what, value = session.next_event(deadline)
            if what == "start":
                started = time.monotonic()
                continue
            log = os.path.join(logdir, "%02d.log" % n)
            secs = time.monotonic() - started if started else 0.0
            if what == "done":
                results.append(check(b, log, secs))
                report(results[-1])
                n += 1
                started = None
                if n == len(runnable):
                    break
                continue
            if what == "timeout":
                stop_descendants()
                detail = ["timed out after %d s (timeout=%g): its processes were stopped"
                          % (secs, timeout)]
            elif value != 0:
                detail = ["a command exited %d (set -e)" % value]
            else:
                detail = ["the block ended the shell (exit 0) before its end"]
            results.append((b, "FAIL", secs, detail + expected(b) + output(log)))
            report(results[-1])
            n += 1
            break
        session.close()


def expected(b):
    return ["expected: %s" % e for e in b.marker.get("expect", [])]


def output(log):
    return ["--- its last %d lines of output:" % TAIL_LINES] + tail(log, TAIL_LINES) + ["---"]


def check(b, log, secs):
    with open(log, errors="replace") as f:
        text = f.read()
    missing = [e for e in b.marker.get("expect", []) if not re.search(e, text, re.MULTILINE)]
    if not missing:
        return (b, "PASS", secs, [])
    return (b, "FAIL", secs, ["not in its output: %s" % e for e in missing] + output(log))


def print_result(result):
    b, status, secs, detail = result
    print("%s %s:%d (%.1f s) %s" % (status, b.path, b.line, secs, first_line(b.text)),
          flush=True)
    for line in detail:
        print("    " + line, flush=True)


# --- main ----------------------------------------------------------------------------

def main():
    global ROOT
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description="Runs the marked command blocks of README.md and docs/*.md.")
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")),
                        help="the repository root (default: this script's)")
    parser.add_argument("--build_dir", help="the build directory (default: ROOT/build)")
    parser.add_argument("--file", action="append", default=[],
                        help="run only this file's blocks (a path from the root); repeatable")
    parser.add_argument("--readme", help="run the blocks of this file (a copy of README.md) "
                                         "instead of the repository's files")
    parser.add_argument("--list", action="store_true", help="list the blocks; run nothing")
    opts = parser.parse_args()
    ROOT = os.path.abspath(opts.root)
    build_dir = os.path.abspath(opts.build_dir or os.path.join(ROOT, "build"))

    if opts.readme:
        files = [(os.path.abspath(opts.readme), opts.readme)]
    elif opts.file:
        files = [(os.path.join(ROOT, f), f) for f in opts.file]
    else:
        docs = os.path.join(ROOT, "docs")
        files = [(os.path.join(ROOT, "README.md"), "README.md")] + [
            (os.path.join(docs, f), "docs/" + f)
            for f in sorted(os.listdir(docs)) if f.endswith(".md")]
    for path, shown in files:
        if not os.path.isfile(path):
            print("run_doc_blocks: no file %s" % shown)
            return 1
    by_file = [(shown, extract_blocks(path, shown)) for path, shown in files]

    if opts.list:
        for shown, blocks in by_file:
            for b in blocks:
                if b.marker is None:
                    what = "not run (no doc-test marker)"
                elif b.error:
                    what = "error: " + b.error
                else:
                    keys = []
                    if b.marker.get("args"):
                        keys.append("args=\"%s\"" % b.marker["args"])
                    keys += ["expect=\"%s\"" % e for e in b.marker["expect"]]
                    keys.append("timeout=%g" % b.marker.get("timeout", DEFAULT_TIMEOUT))
                    if b.marker.get("needs"):
                        keys.append("needs=\"%s\"" % b.marker["needs"])
                    what = "run: " + " ".join(keys)
                print("%s:%d %s\n    %s" % (b.path, b.line, first_line(b.text), what))
        return 0

    missing = [p for p in REQUIRED_BINARIES if not os.access(os.path.join(build_dir, p), os.X_OK)]
    if missing:
        print("SKIP: the build directory %s lacks %s" % (build_dir, ", ".join(missing)))
        return 77

    become_subreaper()
    results = []
    for shown, blocks in by_file:
        if not any(b.marker is not None for b in blocks):
            for b in blocks:
                print("not run (no doc-test marker) %s:%d %s" % (b.path, b.line,
                                                                first_line(b.text)))
            continue
        name = re.sub(r"[^A-Za-z0-9_.-]", "-", os.path.splitext(os.path.basename(shown))[0]
                      if opts.readme else os.path.splitext(shown)[0])
        view = os.path.join(ROOT, "runs", "doc-test", name)
        make_view(ROOT, build_dir, view)
        shutil.rmtree(view + "-logs", ignore_errors=True)
        run_file(blocks, view, view + "-logs", results)
        stop_descendants()

    passed = sum(1 for r in results if r[1] == "PASS")
    failed = sum(1 for r in results if r[1] == "FAIL")
    skipped = sum(1 for r in results if r[1] == "SKIP")
    print("%d passed, %d failed%s" % (passed, failed,
                                      ", %d skipped" % skipped if skipped else ""))
    return 1 if failed else 0


ROOT = None

if __name__ == "__main__":
    sys.exit(main())
