#!/usr/bin/env python3
"""Hostile and careless input against the kernbench CLI (docs/ci.md, "Hostile input").

Usage: scripts/hostile_inputs.py [--bin build/kernbench] [--json out.json]
                                 [--timeout 20] [--only TEXT] [--list]

Runs a few hundred bad (and a few good but unusual) inputs through the CLI,
each in its own folder of a fresh temporary directory (removed at the end),
and prints one row per case and a summary. Python 3 standard library only.

Every case runs in a new session (its own process group) under
`prlimit --as` (4 GiB per process, when prlimit exists), so a runaway
input cannot take the machine down. Recorded per case: the command, exit
status or signal, wall time, whether it hit --timeout, peak RSS of the
process tree (wait4's ru_maxrss: the largest of the process and the
children it reaped), the first stderr line (cut to 200 characters) and a
verdict:

  clean error            the expected failure: an expected exit status, a
                         short message (at most 500 characters, one line
                         plus CLI11's "Run with --help" hint) holding the
                         case's fragments (key, file, line, path, OS error),
                         nothing under an output's final name, no stray file
  accepted as documented a valid-but-unusual input the README accepts, and
                         the case's check of the result passed (said in
                         the note)
  silent wrong result    exit 0 where an error was expected, or an accepted
                         run whose figures fail the check (nan, a latency
                         lower than the default for a lower bandwidth, ...)
  crash                  killed by a signal nobody sent, or sanitizer /
                         terminate / segfault text on stderr
  hang                   still running at --timeout (the tree is killed)
  unclear message        an error with the expected exit status whose message
                         lacks a fragment, is too long, or spans many lines
  wrong exit status      an error, but not with the expected status (e.g. 2
                         for a failed output, which must be 1)
  refused valid input    an error for an input the README accepts
  damaged file           a guarded file, symlink or device changed, a stray
                         or temporary file left, or an output written under
                         its final name by a failed run
  orphans left           processes of the case's process group still alive
                         after the CLI ended
  excess memory          peak RSS over the case's bound (2 GiB for any case,
                         1 GiB where stated), or std::bad_alloc under the
                         4 GiB cap

The last five verdicts are stricter splits of the issue's list. Cases
whose expected behaviour is not written down anywhere are marked "unsure"
with the reading taken.
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

# fork, not vfork: a vforked child's ru_maxrss starts at this script's peak
# RSS, a forked one's at its current RSS (kept small: big inputs are built
# lazily), so the peak memory reported is the CLI's own
subprocess._USE_VFORK = False

CLEAN = "clean error"
ACCEPTED = "accepted as documented"
SILENT = "silent wrong result"
CRASH = "crash"
HANG = "hang"
UNCLEAR = "unclear message"
WRONG_EXIT = "wrong exit status"
REFUSED = "refused valid input"
DAMAGED = "damaged file"
ORPHANS = "orphans left"
MEMORY = "excess memory"
VERDICTS = [CLEAN, ACCEPTED, SILENT, CRASH, HANG, MEMORY, UNCLEAR, WRONG_EXIT,
            REFUSED, DAMAGED, ORPHANS]
MEM_BOUND_MIB = 2048  # any case: more than this is unbounded memory on bad input

MEM_LIMIT = 4 << 30
CLI11_HINT = "Run with --help for more information."
CRASH_TEXT = ("AddressSanitizer", "runtime error:", "LeakSanitizer",
              "Segmentation fault", "terminate called", "core dumped",
              "Aborted", "stack smashing")
U64_MAX = 2**64 - 1
STREAM_HEADER = "# kernbench command stream v1\n"


class Case:
    """One input. `args` are the CLI arguments (paths relative to the case
    folder); `setup(d)` creates the case's files in folder d; `expect` is
    "error", "accept" or "either" (unsure: a clean error or a passing check
    both count)."""

    def __init__(self, family, name, args, expect="error", exits=(2,),
                 frags=(), outputs=(), setup=None, check=None, guards=(),
                 action=None, allow_stray=(), note="", unsure="", crash_ok=False):
        self.family = family
        self.name = name
        self.args = list(args)
        self.expect = expect
        self.exits = tuple(exits)
        self.frags = list(frags)
        self.outputs = list(outputs)
        self.setup = setup
        self.check = check
        self.guards = list(guards)
        self.action = action
        self.allow_stray = list(allow_stray)
        self.note = note
        self.unsure = unsure
        self.crash_ok = crash_ok  # crash text expected (a crash the CLI contained)


# ---------------------------------------------------------------------------
# Helpers for setting up files

def write(path, data):
    if callable(data):
        data = data()  # big inputs are built when the case runs (see Runner)
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    with open(path, mode) as f:
        f.write(data)


def writer(name, data):
    return lambda d: write(os.path.join(d, name), data)


def chain(*fns):
    def run(d):
        for fn in fns:
            if fn:
                fn(d)
    return run


def mkfifo(name):
    return lambda d: os.mkfifo(os.path.join(d, name))


def mkdir(name):
    return lambda d: os.mkdir(os.path.join(d, name))


def symlink(name, target):
    return lambda d: os.symlink(target, os.path.join(d, name))


def snapshot(path):
    """Type, link target and content hash of a path (no following)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ("missing",)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return ("dev", st.st_mode, st.st_rdev)
    if stat.S_ISDIR(st.st_mode):
        return ("dir", tuple(sorted(os.listdir(path))))
    if stat.S_ISFIFO(st.st_mode):
        return ("fifo",)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return ("file", st.st_size, h.hexdigest())


def list_tree(d):
    out = set()
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(root, n), d))
    return out


def read_text(path, limit=1 << 20):
    with open(path, "rb") as f:
        return f.read(limit).decode("utf-8", "replace")


def children_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def group_members(pgid):
    pids = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % e) as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rfind(")") + 2:].split()
        # fields[0] state, [1] ppid, [2] pgrp
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(e))
    return pids


# ---------------------------------------------------------------------------
# Checks of accepted results

def json_file(name):
    def check(ctx):
        p = os.path.join(ctx["dir"], name)
        try:
            with open(p, "rb") as f:
                raw = f.read()
            raw.decode("utf-8")  # strict: must be valid UTF-8
            doc = json.loads(raw)
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            return False, "%s is not valid UTF-8 JSON: %s" % (name, e)
        ctx.setdefault("docs", {})[name] = doc
        return True, "%s parses as UTF-8 JSON" % name
    return check


def all_checks(*checks):
    def check(ctx):
        notes = []
        for c in checks:
            ok, n = c(ctx)
            notes.append(n)
            if not ok:
                return False, "; ".join(notes)
        return True, "; ".join(notes)
    return check


def no_nan_in_stdout(ctx):
    low = ctx["stdout"].lower()
    for bad in ("nan", "inf"):
        # "inf" inside words (e.g. "information") is not a figure
        for tok in low.replace("(", " ").replace(")", " ").split():
            if tok.strip(",;%") in (bad, "-" + bad):
                return False, "report prints %s" % tok
    return True, "no nan/inf in the report"


def latency_of(doc):
    v = doc.get("latency_ns")
    if v is None and isinstance(doc.get("launches"), list) and doc["launches"]:
        v = sum(l.get("latency_ns", 0) for l in doc["launches"])
    return v


def latency_vs_default(name, relation):
    """relation: '>' the figure must exceed the default run's, '<' fall
    below it, 'finite' only be finite and positive."""
    def check(ctx):
        doc = ctx.get("docs", {}).get(name)
        if doc is None:
            ok, n = json_file(name)(ctx)
            if not ok:
                return ok, n
            doc = ctx["docs"][name]
        lat = latency_of(doc)
        if not isinstance(lat, (int, float)) or not math.isfinite(lat) or lat <= 0:
            return False, "latency_ns is %r" % (lat,)
        if relation == "finite":
            return True, "latency %.6g ns finite" % lat
        base = ctx["baseline"]()
        if base is None:
            return False, "no baseline latency"
        if relation == ">" and not lat > base:
            return False, "latency %.6g ns not above default %.6g ns" % (lat, base)
        if relation == "<" and not lat < base:
            return False, "latency %.6g ns not below default %.6g ns" % (lat, base)
        return True, "latency %.6g ns %s default %.6g ns" % (lat, relation, base)
    return check


def file_starts(name, prefix, min_size=1):
    def check(ctx):
        p = os.path.join(ctx["dir"], name)
        try:
            with open(p, "rb") as f:
                data = f.read()
        except OSError as e:
            return False, "%s: %s" % (name, e)
        if len(data) < min_size or not data.startswith(prefix):
            return False, "%s does not start with %r (%d bytes)" % (name, prefix, len(data))
        return True, "%s written (%d bytes)" % (name, len(data))
    return check


def is_link_to(name, target):
    def check(ctx):
        p = os.path.join(ctx["dir"], name)
        if not os.path.islink(p) or os.readlink(p) != target:
            return False, "%s is no longer a symlink to %s" % (name, target)
        return True, "%s still links to %s" % (name, target)
    return check


def peak_below(mib):
    def check(ctx):
        if ctx["peak_kib"] is not None and ctx["peak_kib"] > mib * 1024:
            ctx["mem_fail"] = True
            return False, "peak RSS %d MiB > %d MiB" % (ctx["peak_kib"] // 1024, mib)
        return True, "peak RSS below %d MiB" % mib
    return check


def stdout_has(text):
    def check(ctx):
        if text not in ctx["stdout"]:
            return False, "stdout lacks %r" % text
        return True, "stdout has %r" % text
    return check


# content that marks each output kind as complete and of the right format
OUTPUT_KINDS = {
    "--json": ("out.json", None),
    "--stats": ("stats.json", None),
    "--trace": ("trace.json", None),
    "--oplog": ("op.csv", b"component,"),
    "--vcd": ("wave.vcd", b"$"),
    "--record": ("rec.stream", STREAM_HEADER.encode()),
}


def output_valid(opt, name):
    prefix = OUTPUT_KINDS[opt][1]
    if prefix is None:
        return json_file(name)
    return file_starts(name, prefix)


# ---------------------------------------------------------------------------
# Signal actions (run in a thread while the CLI runs)

def wait_children(pid, n=1, limit=8.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        kids = children_of(pid)
        if len(kids) >= n:
            return kids
        time.sleep(0.02)
    return children_of(pid)


def signal_parent(sig, delay=1.0):
    def act(proc, log):
        wait_children(proc.pid)
        time.sleep(delay)
        if proc.returncode is None:
            os.kill(proc.pid, sig)
            log.append("sent %s to the CLI after %.1f s" % (signal.Signals(sig).name, delay))
    return act


def signal_child(sig, delay=1.0):
    def act(proc, log):
        kids = wait_children(proc.pid)
        time.sleep(delay)
        kids = children_of(proc.pid) or kids
        if kids:
            try:
                os.kill(kids[0], sig)
                log.append("sent %s to child %d after %.1f s" % (signal.Signals(sig).name, kids[0], delay))
            except ProcessLookupError:
                log.append("child already gone")
        else:
            log.append("no child seen")
    return act


# ---------------------------------------------------------------------------
# Case families

SMALL_RUN = ["run", "softmax-merge", "--param", "tiles=1"]


def parse_keys(binary):
    """Numeric configuration keys and bounds from `kernbench run --help`."""
    out = subprocess.run([binary, "run", "--help"], capture_output=True,
                         text=True, timeout=30).stdout
    keys = []
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("pe.") or " (" not in line:
            continue
        key, rest = line.split(" (", 1)
        kind = rest.split()[0]
        if kind in ("uint", "float") and " in [" in rest:
            lo, hi = rest.split(" in [", 1)[1].split("]", 1)[0].split(",")
            keys.append((key, kind, lo.strip(), hi.strip()))
        elif kind.startswith("bool"):
            keys.append((key, "bool", None, None))
    return keys


def num(text):
    return int(text) if text.lstrip("-").isdigit() else float(text)


def nested_yaml(key, value):
    """Block YAML for a dotted key."""
    parts = key.split(".")
    lines = []
    for i, p in enumerate(parts[:-1]):
        lines.append("  " * i + p + ":")
    lines.append("  " * (len(parts) - 1) + parts[-1] + ": " + value)
    return "\n".join(lines) + "\n", len(parts)


def config_cases(keys):
    cases = []
    # every numeric key: below min, above max, wrong type (via --set), and
    # above max from a file (file:line: key)
    for key, kind, lo, hi in keys:
        short = key.rsplit(".", 1)[1]
        if kind == "bool":
            for v in ("2", "yes please", "[true]"):
                cases.append(Case("config --set", "%s=%s" % (short, v),
                                  ["config", "--set", "%s=%s" % (key, v)],
                                  frags=[key]))
            continue
        lo_v, hi_v = num(lo), num(hi)
        if kind == "uint":
            below = str(lo_v - 1)
            above = str(hi_v + 1)
            extra = ["1.5", str(2**64), "1e3", "0x10", ""]
        else:
            below = repr(lo_v / 2) if lo_v > 0 else "-0.001"
            above = repr(hi_v * 2)
            extra = ["nan", "inf", "-inf", "1e400", ""]
        for label, v in [("below min", below), ("above max", above),
                         ("wrong type", "x")] + [("odd", e) for e in extra]:
            cases.append(Case("config --set", "%s=%s (%s)" % (short, v or "''", label),
                              ["config", "--set", "%s=%s" % (key, v)],
                              frags=[key, "expected"]))
        body, line = nested_yaml(key, above)
        cases.append(Case("config file", "%s above max in a file" % short,
                          ["config", "--config", "c.yaml"],
                          setup=writer("c.yaml", body),
                          frags=["c.yaml:%d" % line, key, "expected"]))

    # out-of-range and malformed values, each as a run that would write --json
    repro = [
        ("pe.attrs.clock_freq_ghz", v) for v in ("1e9", "0", "-1", "nan", "inf", "1e-300")
    ] + [
        ("pe.attrs.hbm.channel_gbps", "1e-300"),
        ("pe.attrs.scheduler.queue_depth", "4294967296"),
        ("pe.attrs.scheduler.queue_depth", "0"),
        ("pe.attrs.scheduler.queue_depth", "1.5"),
        ("pe.attrs.scheduler.queue_depth", '"x"'),
        ("pe.attrs.tile.m", str(U64_MAX)),
        ("pe.attrs.tile.m", "0"),
        ("pe.attrs.tile.m", "-1"),
        ("pe.attrs.hbm.efficiency", "0"),
        ("pe.attrs.hbm.efficiency", "1.5"),
    ] + [
        (k, str(U64_MAX)) for k, kind, _, _ in keys
        if kind == "uint" and k.endswith("cycles")
    ]
    for key, v in repro:
        short = key.rsplit(".", 1)[1]
        sv = v.strip('"')
        cases.append(Case("issue config", "--set %s=%s" % (short, v),
                          SMALL_RUN + ["--set", "%s=%s" % (key, v), "--json", "out.json"],
                          frags=[key, "expected"], outputs=["out.json"]))
        body, line = nested_yaml(key, v)
        cases.append(Case("issue config", "file %s: %s" % (short, v),
                          SMALL_RUN + ["--config", "c.yaml", "--json", "out.json"],
                          setup=writer("c.yaml", body),
                          frags=["c.yaml:%d" % line, key, sv[:20]],
                          outputs=["out.json"]))

    # documented bounds that must be accepted, with figures that make sense
    bounds = [
        ("clock_freq_ghz", "pe.attrs.clock_freq_ghz=1000", "finite"),
        ("clock_freq_ghz", "pe.attrs.clock_freq_ghz=0.001", ">"),
        ("channel_gbps", "pe.attrs.hbm.channel_gbps=0.001", ">"),
        ("efficiency", "pe.attrs.hbm.efficiency=0.001", ">"),
        ("bytes_per_cycle", "pe.attrs.tcm.bytes_per_cycle=0.001", ">"),
        ("channel_gbps", "pe.attrs.hbm.channel_gbps=1000000", "<"),
        ("queue_depth", "pe.attrs.scheduler.queue_depth=4096", "finite"),
        ("tcm.size_bytes", "pe.attrs.tcm.size_bytes=4294967296", "finite"),
    ] + [(k.rsplit(".", 1)[1], "%s=%s" % (k, hi), "finite")
         for k, kind, lo, hi in keys if kind == "uint" and k.endswith("cycles")]
    for short, kv, rel in bounds:
        cases.append(Case("config bound", "accepts %s" % kv.split(".", 2)[2],
                          SMALL_RUN + ["--set", kv, "--json", "out.json"],
                          expect="accept", allow_stray=["out.json"],
                          check=all_checks(json_file("out.json"),
                                           latency_vs_default("out.json", rel),
                                           no_nan_in_stdout)))
    cases.append(Case("config bound", "every cycles key at its max at once",
                      SMALL_RUN + sum([["--set", "%s=%s" % (k, hi)] for k, kind, lo, hi in keys
                                       if kind == "uint" and k.endswith("cycles")], [])
                      + ["--json", "out.json"],
                      expect="accept", allow_stray=["out.json"],
                      check=all_checks(latency_vs_default("out.json", ">"), no_nan_in_stdout)))
    return cases


def yaml_cases():
    c = []
    clock = "pe.attrs.clock_freq_ghz"
    files = [
        ("one-byte ','", b",", ["c.yaml:1", "','"]),
        ("'!,'", b"!,", ["c.yaml:1"]),
        ("'&a ,'", b"&a ,", ["c.yaml:1"]),
        ("'\"a\",'", b'"a",', ["c.yaml:1"]),
        ("',]'", b",]", ["c.yaml:1"]),
        ("BOM + '\"a\",'", b'\xef\xbb\xbf"a",', ["c.yaml:1"]),
        ("'- ,' block sequence", b"- ,\n", ["c.yaml:1"]),
        ("trailing ',' after a map", b"pe:\n  attrs: {}\n,\n", ["c.yaml:3"]),
        ("10000 '['", b"[" * 10000, ["c.yaml", "deep"]),
        ("10000 '{'", b"{" * 10000, ["c.yaml", "deep"]),
        ("10000 '[' closed", b"[" * 10000 + b"]" * 10000, ["c.yaml", "deep"]),
        ("17 nested block maps", "".join("  " * i + "k%d:\n" % i for i in range(17)).encode()
         + b"  " * 17 + b"v: 1\n", ["c.yaml", "deep"]),
        ("500 nested block sequences", b"".join(b"  " * i + b"-\n" for i in range(500)),
         ["c.yaml", "deep"]),
        ("10 MB value", lambda: ("pe:\n  attrs:\n    clock_freq_ghz: " + "9" * 10_000_000 + "\n").encode(),
         ["c.yaml"]),
        ("10 MB sequence", lambda: b"pe:\n  attrs:\n    clock_freq_ghz: [" + b"1," * 5_000_000 + b"1]\n",
         ["c.yaml"]),
        ("900 KB value (under the size limit)",
         lambda: ("pe:\n  attrs:\n    clock_freq_ghz: " + "9" * 900_000 + "\n").encode(),
         ["c.yaml:3", clock]),
        ("900 KB flow sequence (under the size limit)",
         lambda: b"pe:\n  attrs:\n    clock_freq_ghz: [" + b"1," * 450_000 + b"1]\n",
         ["c.yaml"]),
        ("20000 keys", lambda: b"pe:\n  attrs:\n" + b"".join(b"    k%d: 1\n" % i for i in range(20000)),
         ["c.yaml"]),
        ("NUL byte", b"pe:\n  attrs:\n    clock_freq_ghz: 1\x00\n", ["c.yaml", "NUL"]),
        ("non-UTF-8 bytes in a key", b"pe:\n  attrs:\n    clock\xff\xfe: 1\n", ["c.yaml"]),
        ("non-UTF-8 bytes in a value", b"pe:\n  attrs:\n    clock_freq_ghz: \xff\xfe\n",
         ["c.yaml:3", clock]),
        ("two documents", b"pe:\n  attrs:\n    clock_freq_ghz: 1\n---\npe:\n  attrs:\n    clock_freq_ghz: 2\n",
         ["c.yaml"]),
        ("alias", b"pe:\n  attrs:\n    tile: &t {m: 64}\n    gemm: *t\n", ["c.yaml"]),
        ("merge key", b"base: &b {clock_freq_ghz: 1}\npe:\n  attrs:\n    <<: *b\n", ["c.yaml"]),
        ("tag !!binary", b"pe:\n  attrs:\n    clock_freq_ghz: !!binary AAAA\n", ["c.yaml"]),
        ("duplicate key", b"pe:\n  attrs:\n    clock_freq_ghz: 1\n    clock_freq_ghz: 2\n",
         ["c.yaml", "clock_freq_ghz"]),
        ("unknown key", b"pe:\n  attrs:\n    clock_freq_ghz: 1\n    bogus: 2\n", ["c.yaml:4", "bogus"]),
        ("unknown top-level key", b"pf:\n  attrs: {}\n", ["c.yaml:1", "pf"]),
        ("top-level sequence", b"- 1\n- 2\n", ["c.yaml"]),
        ("top-level scalar", b"hello\n", ["c.yaml"]),
        ("pe is a scalar", b"pe: 3\n", ["c.yaml:1", "pe"]),
        ("key is a map", b"pe:\n  attrs:\n    clock_freq_ghz: {a: 1}\n", ["c.yaml:3", clock]),
        ("key is a sequence", b"pe:\n  attrs:\n    clock_freq_ghz: [1]\n", ["c.yaml:3", clock]),
        ("key is null", b"pe:\n  attrs:\n    clock_freq_ghz:\n", ["c.yaml:3", clock]),
        ("tab indentation", b"pe:\n\tattrs:\n\t\tclock_freq_ghz: 1\n", ["c.yaml"]),
        ("unclosed quote", b'pe:\n  attrs:\n    clock_freq_ghz: "1\n', ["c.yaml"]),
        ("unclosed flow map", b"pe: {attrs: {clock_freq_ghz: 1}\n", ["c.yaml"]),
        ("2 MB of comments", lambda: b"#" * (2 << 20) + b"\n", ["c.yaml"]),
    ]
    for name, data, frags in files:
        c.append(Case("yaml file", name, ["config", "--config", "c.yaml"],
                      setup=writer("c.yaml", data), frags=frags))
    c.append(Case("yaml file", "empty file (defaults apply)",
                  ["config", "--config", "c.yaml"], setup=writer("c.yaml", b""),
                  expect="either", exits=(2,), frags=["c.yaml"],
                  check=stdout_has("clock_freq_ghz"),
                  unsure="README: missing keys fall back to defaults; an empty file may be either"))
    c.append(Case("yaml file", "/dev/zero", ["config", "--config", "/dev/zero"],
                  frags=["/dev/zero"]))
    c.append(Case("yaml file", "a directory", ["config", "--config", "adir"],
                  setup=mkdir("adir"), frags=["adir"]))
    c.append(Case("yaml file", "a FIFO without a writer", ["config", "--config", "fifo"],
                  setup=mkfifo("fifo"), frags=["fifo"]))
    c.append(Case("yaml file", "symlink to /dev/zero", ["config", "--config", "z.yaml"],
                  setup=symlink("z.yaml", "/dev/zero"), frags=["z.yaml"]))
    c.append(Case("yaml file", "missing file", ["config", "--config", "nope.yaml"],
                  frags=["nope.yaml"]))
    c.append(Case("yaml file", "dangling symlink", ["config", "--config", "d.yaml"],
                  setup=symlink("d.yaml", "gone.yaml"), frags=["d.yaml"]))
    c.append(Case("yaml file", "hang file ',' under run", SMALL_RUN + ["--config", "c.yaml",
                                                                         "--json", "out.json"],
                  setup=writer("c.yaml", b","), frags=["c.yaml:1"], outputs=["out.json"]))

    sets = [
        (",", [","]),
        ("=", ["="]),
        ("=1", ["=1"]),
        (clock, [clock]),
        (clock + "=", [clock]),
        (clock + "=,", [clock]),
        (clock + "=!,", [clock]),
        (clock + "=&a ,", [clock]),
        (clock + '="a",', [clock]),
        (clock + "=,]", [clock]),
        (clock + "=[1]", [clock]),
        (clock + "={a: 1}", [clock]),
        (clock + "=*a", [clock]),
        (clock + "=1\n---\n2", [clock]),
        (clock + "=" + "[" * 10000, [clock]),
        (clock + "=" + "9" * 100_000, [clock]),
        (clock + "=\udcff\udcfe", [clock]),
        ("pe.attrs=1", ["pe.attrs"]),
        ("pe=1", ["pe"]),
        ("pe.attrs.bogus=1", ["pe.attrs.bogus"]),
        ("pe.attrs.tile=64", ["pe.attrs.tile"]),
        ("pe.attrs.tile.m.x=1", ["pe.attrs.tile.m"]),
        ("pe..attrs.clock_freq_ghz=1", ["pe..attrs"]),
        (".pe.attrs.clock_freq_ghz=1", [".pe"]),
        ("pe.attrs.clock\udcff=1", ["pe.attrs.clock"]),
    ]
    for kv, frags in sets:
        shown = kv if len(kv) < 50 else kv[:40] + "...(%d chars)" % len(kv)
        c.append(Case("--set", shown.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
                      ["config", "--set", kv], frags=frags))
    for kv in (clock + "=&a 1", clock + "=1 # comment"):
        c.append(Case("--set", kv, ["config", "--set", kv], expect="either", frags=[clock],
                      check=stdout_has("clock_freq_ghz: 1"),
                      unsure="an anchor without an alias, or a YAML comment, read as the value 1 is "
                             "harmless; an error is fine too"))
    c.append(Case("--set", "100 KB value under run", SMALL_RUN + ["--set", clock + "=" + "9" * 100_000,
                                                                   "--json", "out.json"],
                  frags=[clock], outputs=["out.json"]))
    return c


def stream(body):
    return STREAM_HEADER + body


BASE_TENSORS = ("kernel k\n"
                "tensor 1 x hbm fp32 64x64 @0x10000000000\n"
                "tensor 2 a tcm fp32 64x64 @0x0\n")


def replay_cases():
    c = []
    # (name, file body, expected exits, fragments besides the file name, unsure)
    bad = [
        ("misaligned fp32 in HBM",
         stream("kernel k\ntensor 1 x hbm fp32 64x64 @0x10000000002\ntensor 2 a tcm fp32 64x64 @0x0\n"
                "host_random 1 seed=7\ndma_read dst=2 src=1\n"), (1, 2), [":3"]),
        ("misaligned fp32 in TCM",
         stream("kernel k\ntensor 1 x hbm fp32 64x64 @0x10000000000\ntensor 2 a tcm fp32 64x64 @0x2\n"
                "host_random 1 seed=7\ndma_read dst=2 src=1\n"), (1, 2), [":4"]),
        ("misaligned fp32 host_random at a page end",
         stream("kernel k\ntensor 1 x hbm fp32 1x4 @0x1000000fffe\nhost_random 1 seed=7\n"),
         (1, 2), [":3"]),
        ("TCM tensor at 0xffff0000 (TCM is 4 MiB)",
         stream("kernel k\ntensor 1 x hbm fp32 64x64 @0x10000000000\ntensor 2 a tcm fp32 64x64 @0xffff0000\n"
                "host_random 1 seed=7\ndma_read dst=2 src=1\n"), (1, 2), [":4"]),
        ("10^24-byte TCM tensor",
         stream("kernel k\ntensor 2 a tcm fp32 1000000000000x250000000000 @0x0\n"
                "math fill out=2 extra=value:float:1\n"), (1, 2), [":3"]),
        ("HBM range wrapping past 2^64",
         stream("kernel k\ntensor 1 x hbm fp32 64x64 @0xffffffffffffff00\ntensor 2 a tcm fp32 64x64 @0x0\n"
                "host_random 1 seed=7\ndma_read dst=2 src=1\n"), (1, 2), [":3"]),
        ("HBM tensor below the HBM base",
         stream("kernel k\ntensor 1 x hbm fp32 64x64 @0x1000\ntensor 2 a tcm fp32 64x64 @0x0\n"
                "host_random 1 seed=7\ndma_read dst=2 src=1\n"), (1, 2), [":3"]),
        ("address near 2^64, one element",
         stream("kernel k\ntensor 1 x hbm fp32 1x1 @0xfffffffffffffffc\nhost_random 1 seed=7\n"),
         (1, 2), [":3"]),
        ("row stride 2^63",
         stream("kernel k\ntensor 1 x hbm fp32 4x4 @0x10000000000 stride=9223372036854775808\n"
                "host_random 1 seed=7\n"), (1, 2), [":3"]),
        ("row stride below cols",
         stream("kernel k\ntensor 1 x hbm fp32 4x4 @0x10000000000 stride=2\nhost_random 1 seed=7\n"),
         (1, 2), [":3"]),
        ("zero rows", stream("kernel k\ntensor 1 x hbm fp32 0x4 @0x10000000000\nhost_random 1 seed=7\n"),
         (1, 2), [":3"]),
        ("huge GEMM shape vs 64x64 tensors",
         stream(BASE_TENSORS + "tensor 3 b tcm fp32 64x64 @0x4000\ntensor 4 o tcm fp32 64x64 @0x8000\n"
                "host_random 1 seed=1\ndma_read dst=2 src=1\ndma_read dst=3 src=1\n"
                "gemm out=4 a=2 b=3 m=4294967296 n=4294967296 k=4294967296\n"), (1, 2), [":10"]),
        ("huge GEMM composite on 2^31x2^31 HBM tensors",
         stream("kernel k\ntensor 1 a hbm bf16 2147483648x2147483648 @0x10000000000\n"
                "tensor 2 b hbm bf16 2147483648x2147483648 @0x20000000000000\n"
                "tensor 3 c hbm fp32 2147483648x2147483648 @0x40000000000000\n"
                "host_random 1 seed=1\nhost_random 2 seed=2\ncomposite gemm rw=3\n"
                "  op gemm tile out=3 a=1 b=2 extra=m:int:2147483648 extra=k:int:2147483648 "
                "extra=n:int:2147483648\nend\n"), (1, 2), [],
         "a TCM/HBM capacity or span error is expected; no bound on HBM size is documented"),
        ("cycles 2^64-1", stream("kernel k\ncycles %d\n" % U64_MAX), (1, 2), [":3"]),
        ("cycles 2^63", stream("kernel k\ncycles %d\n" % 2**63), (1, 2), [":3"]),
        ("cycles 2^64", stream("kernel k\ncycles %d\n" % 2**64), (2,), [":3"]),
        ("cycles -1", stream("kernel k\ncycles -1\n"), (2,), [":3"]),
        ("cycles 1e3", stream("kernel k\ncycles 1e3\n"), (2,), [":3"]),
        ("cycles 0x10", stream("kernel k\ncycles 0x10\n"), (2,), [":3"]),
        ("cycles missing", stream("kernel k\ncycles\n"), (2,), [":3"]),
        ("NUL byte", (STREAM_HEADER + "kernel k\ncycles 1\x00\n").encode(), (2,), ["NUL"]),
        ("non-UTF-8 keyword", (STREAM_HEADER + "kernel k\n").encode() + b"cycl\xffes 1\n", (2,), [":3"]),
        ("unknown command", stream("kernel k\nfrobnicate 1\n"), (2,), [":3", "frobnicate"]),
        ("command before kernel", stream("cycles 1\nkernel k\n"), (2,), [":2"]),
        ("missing header", "kernel k\ncycles 1\n", (2,), [":1"]),
        ("header v2", "# kernbench command stream v2\nkernel k\ncycles 1\n", (2,), [":1"]),
        ("empty file", "", (2,), []),
        ("unknown dtype", stream("kernel k\ntensor 1 x hbm fp64 4x4 @0x10000000000\n"), (2,), [":3", "fp64"]),
        ("unknown space", stream("kernel k\ntensor 1 x ddr fp32 4x4 @0x10000000000\n"), (2,), [":3", "ddr"]),
        ("bad address", stream("kernel k\ntensor 1 x hbm fp32 4x4 @0xZZ\n"), (2,), [":3"]),
        ("address over 2^64", stream("kernel k\ntensor 1 x hbm fp32 4x4 @0x1ffffffffffffffff\n"), (2,), [":3"]),
        ("bad shape", stream("kernel k\ntensor 1 x hbm fp32 4xq @0x10000000000\n"), (2,), [":3"]),
        ("shape over 2^64", stream("kernel k\ntensor 1 x hbm fp32 %dx4 @0x10000000000\n" % 2**64), (2,), [":3"]),
        ("bad tensor id", stream("kernel k\ntensor x x hbm fp32 4x4 @0x10000000000\n"), (2,), [":3"]),
        ("undeclared id", stream("kernel k\ndma_read dst=5 src=6\n"), (2,), [":3"]),
        ("id over 2^64", stream(BASE_TENSORS + "dma_read dst=99999999999999999999999 src=1\n"), (2,), [":5"]),
        ("seed=-1", stream(BASE_TENSORS + "host_random 1 seed=-1\n"), (2,), [":5"]),
        ("bad float extra", stream(BASE_TENSORS + "math scale out=2 src_a=2 extra=factor:float:abc\n"),
         (2,), [":5"]),
        ("int extra 1e400", stream(BASE_TENSORS + "math scale out=2 src_a=2 extra=factor:int:1e400\n"),
         (2,), [":5"]),
        ("extra without type", stream(BASE_TENSORS + "math scale out=2 src_a=2 extra=factor\n"), (2,), [":5"]),
        ("unknown math op", stream(BASE_TENSORS + "math frob out=2 src_a=2\n"), (2,), [":5", "frob"]),
        ("missing end", stream(BASE_TENSORS + "host_random 1 seed=1\ncomposite c rw=2\n"
                               "  op exp prologue out=2 src_a=2\n"), (2,), []),
        ("end without composite", stream("kernel k\nend\n"), (2,), [":3"]),
        ("op outside composite", stream(BASE_TENSORS + "op exp prologue out=2 src_a=2\n"), (2,), [":5"]),
        ("empty composite", stream(BASE_TENSORS + "composite c rw=2\nend\n"), (0, 1, 2), [":5"],
         "a composite without ops is not forbidden anywhere; an error or a run both count"),
        ("unknown scope", stream(BASE_TENSORS + "composite c rw=2\n  op exp sideways out=2 src_a=2\nend\n"),
         (2,), [":6"]),
        ("duplicate field", stream(BASE_TENSORS + "dma_read dst=2 dst=2 src=1\n"), (2,), [":5"]),
        ("read before write", stream(BASE_TENSORS + "dma_read dst=2 src=1\n"), (1,), [":5"]),
        ("1 MB name", lambda: stream("kernel " + "n" * (1 << 20) + "\ncycles 1\n"), (0, 2), [],
         "a long name is legal; checked only that it does not crash"),
    ]
    for name, body, exits, frags, *rest in bad:
        unsure = rest[0] if rest else ""
        for data_mode in (False, True):
            args = ["replay", "s.stream", "--json", "out.json"] + (["--data"] if data_mode else [])
            ex = "either" if 0 in exits else "error"
            c.append(Case("replay" + (" --data" if data_mode else ""), name, args,
                          setup=writer("s.stream", body), exits=[e for e in exits if e] or (2,),
                          expect=ex, check=json_file("out.json") if ex == "either" else None,
                          allow_stray=["out.json"] if ex == "either" else [],
                          frags=["s.stream"] + frags,
                          outputs=["out.json"], unsure=unsure))

    c.append(Case("replay", "/dev/zero", ["replay", "/dev/zero"], frags=["/dev/zero"]))
    c.append(Case("replay", "a directory", ["replay", "adir"], setup=mkdir("adir"), frags=["adir"]))
    c.append(Case("replay", "a FIFO without a writer", ["replay", "fifo"], setup=mkfifo("fifo"),
                  frags=["fifo"]))
    c.append(Case("replay", "missing file", ["replay", "nope.stream"], frags=["nope.stream"]))
    c.append(Case("replay", "symlink to /dev/zero", ["replay", "z.stream"],
                  setup=symlink("z.stream", "/dev/zero"), frags=["z.stream"]))

    many = lambda: stream("".join("kernel k%d\ncycles 1\n" % i for i in range(100_000)))
    c.append(Case("replay", "100k launches (memory)", ["replay", "s.stream"],
                  setup=writer("s.stream", many), expect="either", exits=(2,), frags=["s.stream"],
                  check=peak_below(1024),
                  unsure="no launch limit is documented; accepted if peak RSS stays under 1 GiB"))
    long_k = lambda: stream("kernel k\n" + "cycles 1\n" * 1_000_000)
    c.append(Case("replay", "1M commands in one launch (memory)", ["replay", "s.stream"],
                  setup=writer("s.stream", long_k), expect="either", exits=(2,), frags=["s.stream"],
                  check=peak_below(1024),
                  unsure="accepted if peak RSS stays under 1 GiB"))
    ok_cycles = stream("kernel k\ncycles 1000000\n")
    c.append(Case("replay", "cycles 10^6 gives >= 10^6 ns", ["replay", "s.stream", "--json", "out.json"],
                  setup=writer("s.stream", ok_cycles), expect="accept", allow_stray=["out.json"],
                  check=latency_at_least("out.json", 1e6)))
    names = (STREAM_HEADER.encode() + b"kernel k\xff\xfe%20x\n"
             b"tensor 1 t\xc3\x28 hbm fp32 4x4 @0x10000000000\nhost_random 1 seed=1\n"
             b"tensor 2 u\xed\xa0\x80 tcm fp32 4x4 @0x0\ndma_read dst=2 src=1\n")
    for data_mode in (False, True):
        c.append(Case("replay" + (" --data" if data_mode else ""), "non-UTF-8 kernel and tensor names",
                      ["replay", "s.stream", "--json", "out.json", "--stats", "stats.json",
                       "--trace", "trace.json"] + (["--data"] if data_mode else []),
                      setup=writer("s.stream", names), expect="accept",
                      allow_stray=["out.json", "stats.json", "trace.json"],
                      check=all_checks(json_file("out.json"), json_file("stats.json"),
                                       json_file("trace.json"),
                                       lambda ctx: ("\ufffd" in json.dumps(ctx["docs"], ensure_ascii=False),
                                                    "U+FFFD in place of the bad bytes"))))
    return c


def bench_cases():
    c = []
    params = [
        ("softmax-merge", "tiles=%d" % (2**63 - 1)),
        ("softmax-merge", "tiles=%d" % 2**63),
        ("softmax-merge", "tiles=%d" % 2**64),
        ("softmax-merge", "tiles=0"),
        ("softmax-merge", "tiles=-1"),
        ("softmax-merge", "tiles=1.5"),
        ("softmax-merge", "tiles=1e3"),
        ("softmax-merge", "tiles=x"),
        ("softmax-merge", "tiles="),
        ("softmax-merge", "heads=0"),
        ("softmax-merge", "kv_tile=0"),
        ("softmax-merge", "head_dim=%d" % 2**40),
        ("softmax-merge", "bogus=1"),
        ("softmax-merge", "tiles"),
        ("gqa-decode", "context=0"),
        ("gqa-decode", "context=-1"),
        ("gqa-decode", "context=%d" % (2**63 - 1)),
        ("gqa-decode", "context=%d" % 2**64),
        ("gqa-decode", "kv_tile=0"),
        ("gqa-decode", "q_heads=3"),
        ("gqa-decode", "kv_heads=0"),
        ("gqa-decode", "head_dim=0"),
        ("gqa-decode", "dtype=fp64"),
        ("gqa-decode", "input_range=nan"),
        ("gqa-decode", "input_range=inf"),
        ("gemm-composite", "m=0"),
        ("gemm-composite", "k=-5"),
        ("gemm-composite", "m=%d" % 2**40),
        ("gemm-composite", "dtype=int4"),
        ("gemm-tiled-single-op", "tile_m=0"),
        ("gemm-tiled-single-op", "tile_k=%d" % 2**63),
        ("gemm-async-vs-composite", "ks="),
        ("gemm-async-vs-composite", "ks=0"),
        ("gemm-async-vs-composite", "ks=,"),
        ("gemm-async-vs-composite", "ks=1,-1"),
        ("gemm-async-vs-composite", "tile_k=0"),
        ("gqa-long-ctx", "contexts=0"),
        ("gqa-long-ctx", "contexts=1"),
        ("gqa-long-ctx", "contexts=%d" % 2**64),
        ("gqa-long-ctx", "contexts=%d" % (2**63 - 1)),
        ("gqa-long-ctx", "contexts=8192,8192"),
        ("gqa-long-ctx", "cases=ring"),
        ("gqa-long-ctx", "cases="),
        ("gqa-long-ctx", "q_heads=3"),
        ("gqa-long-ctx", "kv_heads=0"),
        ("gqa-long-ctx", "kv_tile=%d" % (2**63 - 1)),
        ("gqa-long-ctx", "dtype=fp64"),
    ]
    # sizes the kernel itself refuses (TCM capacity) fail the run: 1 or 2
    kernel_level = {"head_dim=%d" % 2**40, "m=%d" % 2**40}
    for bench, p in params:
        name = p.split("=")[0]
        c.append(Case("bench param", "%s %s" % (bench, p),
                      ["run", bench, "--param", p, "--json", "out.json"],
                      exits=(1, 2) if p in kernel_level else (2,),
                      frags=[name] if p not in kernel_level else [],
                      outputs=["out.json"],
                      unsure="a kernel error (1, e.g. does not fit in TCM) or a parameter error (2)"
                      if p in kernel_level else ""))
    c.append(Case("bench param", "gqa-decode context=10^9 (huge but in range?)",
                  ["run", "gqa-decode", "--param", "context=1000000000", "--json", "out.json",
                   "--timeout", "5"],
                  exits=(1, 2), frags=[], outputs=["out.json"],
                  unsure="no documented bound: a parameter error (2) or the run's --timeout (1) are clean"))
    return c


def cli_cases():
    c = []
    sw = ["sweep", "softmax-merge", "--param", "tiles=1,2"]
    for v in ("0", "-1", "1025", "1" + "0" * 300, "x", "1.5", ""):
        c.append(Case("cli", "sweep -j %s" % (v[:8] + ("..." if len(v) > 8 else "")),
                      sw + ["-j", v], frags=["jobs"]))
    for v in ("0", "-1", "nan", "inf", "1e400", "604801", "x", "", "-0"):
        for sub in (SMALL_RUN, sw, ["replay", "s.stream"]):
            c.append(Case("cli", "%s --timeout %s" % (sub[0], v or "''"),
                          sub + ["--timeout", v], frags=["--timeout"],
                          setup=writer("s.stream", stream("kernel k\ncycles 1\n"))))
    misc = [
        ("unknown option", SMALL_RUN + ["--bogus"], ["--bogus"]),
        ("unknown subcommand", ["frobnicate"], ["frobnicate"]),
        ("no subcommand", [], []),
        ("run without a bench", ["run"], ["name"]),
        ("unknown bench", ["run", "nosuch"], ["nosuch"]),
        ("bench name with bad bytes", ["run", "no\udcffsuch"], ["no"]),
        ("--param without =", SMALL_RUN + ["--param", "tiles"], ["tiles"]),
        ("--set without =", SMALL_RUN + ["--set", "pe.attrs.tile.m"], ["pe.attrs.tile.m"]),
        ("sweep without --param", ["sweep", "softmax-merge"], ["param"]),
        ("sweep empty value list", ["sweep", "softmax-merge", "--param", "tiles="], ["tiles"]),
        ("sweep bad value in list", ["sweep", "softmax-merge", "--param", "tiles=1,x"], ["tiles"]),
        ("sweep config key bad value", ["sweep", "softmax-merge", "--param",
                                        "pe.attrs.clock_freq_ghz=1,0"], ["pe.attrs.clock_freq_ghz"]),
        ("goldens --dir missing", ["goldens", "--dir", "nope"], ["nope"]),
        ("perf --context 0", ["perf", "--context", "0"], ["context"]),
        ("perf --context -1", ["perf", "--context", "-1"], ["context"]),
        ("perf --context 2^64", ["perf", "--context", str(2**64)], ["context"]),
        ("perf --repeats 0", ["perf", "--repeats", "0"], ["repeats"]),
        ("--config twice", SMALL_RUN + ["--config", "a.yaml", "--config", "a.yaml"], ["config"]),
    ]
    for name, args, frags in misc:
        c.append(Case("cli", name, args, frags=frags, exits=(1, 2) if name.startswith("goldens") else (2,),
                      setup=writer("a.yaml", "pe:\n  attrs:\n    clock_freq_ghz: 1\n")))
    c.append(Case("cli", "sweep list param ks=1,2", ["sweep", "gemm-async-vs-composite", "--param",
                                                     "ks=1,2", "--csv", "s.csv"],
                  expect="either", frags=["ks"], check=csv_rows("s.csv", 2),
                  unsure="README: list parameters cannot be swept; points ks=1 and ks=2 (one-element "
                         "lists) or an error both count"))
    grid = ",".join(str(i) for i in range(1, 2001))
    c.append(Case("cli", "sweep grid of 2000x2000 points", ["sweep", "softmax-merge", "--param",
                                                           "tiles=" + grid, "--param", "heads=" + grid],
                  expect="either", exits=(2,), frags=["points"],
                  check=peak_below(1024),
                  unsure="no grid limit is documented; 4 M points cannot finish in time, so a clean "
                         "error is the only good outcome short of a hang"))
    return c


def collect_cases():
    """`sweep --collect DIR` over hostile point folders (docs/cli.md, "Sweeps on many machines"):
    bounded in size, depth and count, never blocking, exit 2 naming the file."""
    c = []
    col = ["sweep", "--collect", "pts", "--csv", "s.csv"]

    def files(*entries):
        def run(d):
            os.mkdir(os.path.join(d, "pts"))
            for name, data in entries:
                write(os.path.join(d, "pts", name), data)
        return run

    def sparse(name, size):
        def run(d):
            with open(os.path.join(d, "pts", name), "wb") as f:
                f.truncate(size)
        return run

    def many(n, fmt):
        def run(d):
            for i in range(n):
                open(os.path.join(d, "pts", fmt % i), "w").close()
        return run

    cases = [
        ("collect 1 M nested arrays", files(("point-0.json", "[" * 1000000)), ["point-0.json", "nested deeper"]),
        ("collect an 8 GiB sparse point file", chain(files(), sparse("point-0.json", 8 << 30)),
         ["point-0.json", "a point file has at most"]),
        ("collect a FIFO point file", chain(files(), mkfifo("pts/point-0.json")), ["point-0.json", "not a regular file"]),
        ("collect a folder named point-0.json", chain(files(), mkdir("pts/point-0.json")),
         ["point-0.json", "not a regular file"]),
        ("collect a symlink loop", chain(files(), symlink("pts/point-0.json", "point-0.json")),
         ["point-0.json", "cannot open"]),
        ("collect binary garbage", files(("point-0.json", bytes(range(256)) * 64)), ["point-0.json", "not valid JSON"]),
        ("collect invalid UTF-8 in a string", files(("point-0.json", b'{"format": "\xff"}')),
         ["point-0.json", "not valid JSON"]),
        ("collect 20000 other files", chain(files(), many(20000, "other-%d.txt")), ["holds no point file"]),
        ("collect 10001 point names", chain(files(), many(10001, "point-%d.json")), ["index beyond"]),
        ("collect a missing folder", None, ["pts", "cannot read the folder"]),
    ]
    for name, setup, frags in cases:
        c.append(Case("collect", name, col, frags=frags, setup=setup, check=peak_below(512)))
    c.append(Case("collect", "collect with --param", col + ["--param", "tiles=1"], setup=files(),
                  frags=["--collect takes only --csv", "--param"]))
    c.append(Case("collect", "emit-jobs with -j", ["sweep", "softmax-merge", "--param", "tiles=1,2",
                                                   "--emit-jobs", "j.txt", "-j", "2"], frags=["-j"]))
    return c


def output_cases():
    c = []
    for opt, (fname, _) in OUTPUT_KINDS.items():
        base = SMALL_RUN
        what = opt.lstrip("-")
        c.append(Case("output", "run %s /dev/full" % opt, base + [opt, "/dev/full"],
                      exits=(1,), frags=["/dev/full", "No space left on device"]))
        c.append(Case("output", "run %s to a directory" % opt, base + [opt, "adir"],
                      setup=mkdir("adir"), exits=(1,), frags=["adir"],
                      guards=["adir"], outputs=["adir.vcd"] if opt == "--vcd" else []))
        c.append(Case("output", "run %s to a missing directory" % opt, base + [opt, "nodir/" + fname],
                      exits=(1,), frags=["nodir/" + fname, "No such file"]))
        c.append(Case("output", "run %s through a symlink" % opt, base + [opt, "link"],
                      setup=chain(writer("target", "old\n"), symlink("link", "target")),
                      expect="accept",
                      check=all_checks(is_link_to("link", "target"), output_valid(opt, "target"))))
        c.append(Case("output", "run %s over an existing file" % opt, base + [opt, fname],
                      setup=writer(fname, "old content\n"), expect="accept",
                      check=output_valid(opt, fname)))
        c.append(Case("output", "run %s /dev/null" % opt, base + [opt, "/dev/null"],
                      expect="accept", check=lambda ctx: (True, "exit 0; /dev/null checked below")))
        c.append(Case("output", "run %s to a dangling symlink" % opt, base + [opt, "link"],
                      setup=symlink("link", "made"), expect="either", exits=(1,), frags=["link"],
                      allow_stray=["made"],
                      check=all_checks(is_link_to("link", "made"), output_valid(opt, "made")),
                      unsure="README: a symlink is written through; its target not existing yet is "
                             "not covered: writing the target or a clean error both count"))
        if opt != "--record":
            c.append(Case("output", "replay %s /dev/full" % opt,
                          ["replay", "s.stream", opt, "/dev/full"],
                          setup=writer("s.stream", stream("kernel k\ncycles 10\n")),
                          exits=(1,), frags=["/dev/full", "No space left on device"]))
    # --vcd names without .vcd: written under the name given, nothing else touched
    c.append(Case("output", "--vcd PATH (no .vcd) over a regular file, PATH.vcd kept",
                  SMALL_RUN + ["--vcd", "wave"],
                  setup=chain(writer("wave", "old\n"), writer("wave.vcd", "precious\n")),
                  guards=["wave.vcd"], expect="accept", check=file_starts("wave", b"$")))
    c.append(Case("output", "--vcd PATH (no .vcd) through a symlink",
                  SMALL_RUN + ["--vcd", "wave"],
                  setup=chain(writer("target", "old\n"), symlink("wave", "target"),
                              writer("target.vcd", "precious\n"), writer("wave.vcd", "precious\n")),
                  guards=["target.vcd", "wave.vcd"], expect="accept",
                  check=all_checks(is_link_to("wave", "target"), file_starts("target", b"$"))))
    c.append(Case("output", "--vcd DIR leaves no DIR.vcd", SMALL_RUN + ["--vcd", "adir"],
                  setup=mkdir("adir"), exits=(1,), frags=["adir"], outputs=["adir.vcd"],
                  guards=["adir"]))
    c.append(Case("output", "--vcd DIR keeps an existing DIR.vcd", SMALL_RUN + ["--vcd", "adir"],
                  setup=chain(mkdir("adir"), writer("adir.vcd", "precious\n")), exits=(1,),
                  frags=["adir"], guards=["adir", "adir.vcd"]))
    c.append(Case("output", "--vcd to a FIFO with a reader", SMALL_RUN + ["--vcd", "fifo"],
                  setup=mkfifo("fifo"), expect="accept", action=fifo_reader("fifo"),
                  check=lambda ctx: (ctx["fifo_bytes"] > 0 and ctx["fifo_data"].startswith(b"$"),
                                     "read %d VCD bytes from the FIFO" % ctx["fifo_bytes"])))
    c.append(Case("output", "--json name with a newline", SMALL_RUN + ["--json", "a\nb.json"],
                  expect="accept", check=json_file("a\nb.json")))
    c.append(Case("output", "--json and --stats to one path", SMALL_RUN + ["--json", "x.json",
                                                                            "--stats", "x.json"],
                  expect="either", exits=(2,), frags=["x.json"], check=json_file("x.json"),
                  unsure="not documented; one complete JSON file or a usage error both count"))
    sw = ["sweep", "softmax-merge", "--param", "tiles=1,2"]
    c.append(Case("output", "sweep --csv /dev/full", sw + ["--csv", "/dev/full"], exits=(1,),
                  frags=["/dev/full", "No space left on device"]))
    c.append(Case("output", "sweep --csv to a directory", sw + ["--csv", "adir"], setup=mkdir("adir"),
                  exits=(1,), frags=["adir"], guards=["adir"]))
    c.append(Case("output", "sweep --csv to a missing directory", sw + ["--csv", "nodir/s.csv"],
                  exits=(1,), frags=["nodir/s.csv"]))
    c.append(Case("output", "sweep --csv through a symlink", sw + ["--csv", "link"],
                  setup=chain(writer("target", "old\n"), symlink("link", "target")), expect="accept",
                  check=all_checks(is_link_to("link", "target"), csv_rows("target", 2))))
    c.append(Case("output", "sweep --csv over an existing file", sw + ["--csv", "s.csv"],
                  setup=writer("s.csv", "old\n"), expect="accept", check=csv_rows("s.csv", 2)))
    c.append(Case("output", "sweep --csv figures equal run --json exactly",
                  ["sweep", "gqa-decode", "--param", "context=1000", "--csv", "s.csv"],
                  expect="accept", check=csv_matches_run("s.csv", "gqa-decode", "context=1000")))
    for opt in OUTPUT_KINDS:
        c.append(Case("output", "%s to a missing directory fails before a long run" % opt,
                      ["run", "gqa-decode", "--param", "context=16777216", opt, "nodir/x",
                       "--timeout", "5"],
                      exits=(1,), frags=["nodir/x", "No such file"],
                      note="with --timeout 5: an output opened only after the run would time out "
                           "and lack the path (README: outputs are opened before the simulation)"))
    c.append(Case("output", "failed run still fails fast on /dev/full",
                  ["run", "softmax-merge", "--param", "tiles=0", "--oplog", "/dev/full"],
                  exits=(1, 2), frags=["tiles"],
                  unsure="bad parameter (2) or the output (1) may be reported first"))
    return c


def csv_rows(name, n):
    def check(ctx):
        p = os.path.join(ctx["dir"], name)
        try:
            lines = read_text(p).splitlines()
        except OSError as e:
            return False, str(e)
        if len(lines) != n + 1:
            return False, "%s has %d lines, expected %d" % (name, len(lines), n + 1)
        return True, "%s has a header and %d rows" % (name, n)
    return check


def flatten(doc, prefix=""):
    out = {}
    for k, v in doc.items():
        if isinstance(v, dict):
            out.update(flatten(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


def csv_matches_run(name, bench, param):
    """The sweep CSV row of one point holds the same figures, exactly, as
    `run --json` of that point (README: the CSV "writes every figure")."""
    def check(ctx):
        import csv
        with open(os.path.join(ctx["dir"], name), newline="") as f:
            rows = list(csv.DictReader(f))
        r = subprocess.run([ctx["binary"], "run", bench, "--param", param, "--json", "ref.json"],
                           cwd=ctx["dir"], capture_output=True, timeout=120)
        if r.returncode != 0:
            return False, "reference run failed"
        with open(os.path.join(ctx["dir"], "ref.json")) as f:
            figures = flatten(json.load(f)["figures"])
        os.unlink(os.path.join(ctx["dir"], "ref.json"))
        if len(rows) != 1:
            return False, "%d rows" % len(rows)
        diff = []
        for k, v in figures.items():
            cell = rows[0].get(k)
            if cell is None:
                diff.append("%s missing" % k)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                if float(cell) != float(v):
                    diff.append("%s: %s vs %r" % (k, cell, v))
            elif str(v) != cell:
                diff.append("%s: %s vs %r" % (k, cell, v))
        if diff:
            return False, "CSV differs from run --json: " + "; ".join(diff[:3])
        return True, "all %d figures equal run --json exactly" % len(figures)
    return check


def fifo_reader(name):
    def act(proc, log, ctx):
        path = os.path.join(ctx["dir"], name)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        data = bytearray()
        try:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    chunk = None
                if chunk:
                    data += chunk
                elif chunk == b"" and proc.returncode is not None:
                    break
                else:
                    if proc.returncode is not None and chunk is None:
                        break
                    time.sleep(0.01)
        finally:
            os.close(fd)
        ctx["fifo_bytes"] = len(data)
        ctx["fifo_data"] = bytes(data)
        log.append("read %d bytes from the FIFO" % len(data))
    act.wants_ctx = True
    return act


def signal_cases():
    c = []
    long_ctx = "context=16777216"
    long_run = ["run", "gqa-decode", "--param", long_ctx]
    outs = ["--oplog", "op.csv", "--trace", "trace.json", "--stats", "stats.json",
            "--json", "out.json", "--vcd", "wave.vcd", "--record", "rec.stream"]
    finals = ["op.csv", "trace.json", "stats.json", "out.json", "wave.vcd", "rec.stream"]
    sweep = ["sweep", "gqa-decode", "--param", "context=16777216,16777217,16777218,16777219",
             "-j", "2", "--csv", "s.csv"]
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        n = signal.Signals(sig).name
        c.append(Case("signal", "%s to a long run with every output" % n, long_run + outs,
                      exits=(128 + sig,), outputs=finals, action=signal_parent(sig, 1.5),
                      note="no file under any output name, no temp file, no process left"))
        c.append(Case("signal", "%s to a sweep (-j 2)" % n, sweep, exits=(128 + sig,),
                      outputs=["s.csv"], action=signal_parent(sig, 1.5)))
    c.append(Case("signal", "SIGKILL to a long run: children die with it", long_run + outs,
                  exits=(-9,), outputs=finals, action=signal_parent(signal.SIGKILL, 1.5),
                  allow_stray=["*.tmp.*"],
                  note="temp files of a SIGKILLed CLI cannot be removed; only the final names "
                       "and the children are checked"))
    c.append(Case("signal", "SIGKILL to a sweep: children die with it", sweep,
                  exits=(-9,), outputs=["s.csv"], action=signal_parent(signal.SIGKILL, 1.5),
                  allow_stray=["*.tmp.*"]))
    c.append(Case("signal", "SIGSTOP to the child of a run", long_run + ["--json", "out.json"],
                  exits=(1,), frags=["stop"], action=signal_child(signal.SIGSTOP, 1.0),
                  allow_stray=["out.json"],
                  unsure="README: the stopped child is ended and its run fails; whether --json is "
                         "still written for a failed run is allowed (outputs are written after a "
                         "failed kernel)"))
    short_sweep = ["sweep", "gqa-decode", "--param", "context=2097152,2097153,2097154,2097155",
                   "-j", "2", "--csv", "s.csv"]
    c.append(Case("signal", "SIGSTOP to one child of a sweep", short_sweep, exits=(1,), frags=["stop"],
                  action=signal_child(signal.SIGSTOP, 1.0), allow_stray=["s.csv"],
                  unsure="the sweep may still write the points that finished"))
    c.append(Case("signal", "SIGSEGV to the child of a run", long_run + ["--json", "out.json"],
                  exits=(1,), frags=[("SIGSEGV", "Segmentation fault")], crash_ok=True,
                  action=signal_child(signal.SIGSEGV, 1.0), allow_stray=["out.json"],
                  note="a crashing run is contained: the CLI reports it and exits 1"))
    c.append(Case("signal", "SIGTERM to the child of a run", long_run,
                  exits=(1,), frags=[("SIGTERM", "signal 15", "terminated")],
                  action=signal_child(signal.SIGTERM, 1.0),
                  unsure="the message should say the run was ended by SIGTERM; an exit status "
                         "of 143 alone is taken as unclear"))
    c.append(Case("signal", "--timeout 1 on a long run", long_run + ["--timeout", "1", "--oplog", "op.csv"],
                  exits=(1,), frags=["timed out"], allow_stray=["op.csv"],
                  note="outputs are written after a failed run (README)"))
    return c


def tile_cases():
    c = []
    t111 = ["--set", "pe.attrs.tile.m=1", "--set", "pe.attrs.tile.n=1", "--set", "pe.attrs.tile.k=1"]
    c.append(Case("tile plan", "tile 1x1x1 gemm-composite 256^3 (16 M tiles)",
                  ["run", "gemm-composite"] + t111 + ["--timeout", "15"],
                  expect="either", exits=(1, 2), frags=[],
                  check=peak_below(4096),
                  unsure="tile 1 is inside the documented bounds, so the run is legal; it must stay "
                         "under 4 GiB, and may end by its own --timeout 15 (exit 1)"))
    c.append(Case("tile plan", "tile 1x1x1 softmax-merge",
                  SMALL_RUN + t111 + ["--timeout", "15", "--json", "out.json"],
                  expect="either", exits=(1,), frags=["timed out"], allow_stray=["out.json"],
                  check=all_checks(peak_below(4096), latency_vs_default("out.json", ">")),
                  unsure="legal; a 1x1x1 tile must be slower than the default tile"))
    c.append(Case("tile plan", "tile 1x1x1 gemm-composite --data 64^3",
                  ["run", "gemm-composite", "--param", "m=64", "--param", "n=64", "--param", "k=64",
                   "--data", "--json", "out.json"] + t111,
                  expect="accept", allow_stray=["out.json"],
                  check=all_checks(peak_below(4096), latency_vs_default_gemm64())))
    for v in (str(U64_MAX), "65537", str(2**32)):
        c.append(Case("tile plan", "tile.m=%s composite run" % v,
                      ["run", "gemm-composite", "--set", "pe.attrs.tile.m=" + v, "--json", "out.json"],
                      frags=["pe.attrs.tile.m"], outputs=["out.json"]))
    c.append(Case("tile plan", "tile 65536^3 composite run",
                  ["run", "gemm-composite", "--set", "pe.attrs.tile.m=65536", "--set",
                   "pe.attrs.tile.n=65536", "--set", "pe.attrs.tile.k=65536", "--json", "out.json"],
                  expect="either", exits=(1,), frags=["tcm"], allow_stray=["out.json"],
                  check=all_checks(peak_below(4096), latency_vs_default("out.json", "finite")),
                  unsure="legal config; a tile bigger than TCM may fail the run (1) or be clamped"))
    return c


def latency_at_least(name, ns):
    def check(ctx):
        ok, n = json_file(name)(ctx)
        if not ok:
            return ok, n
        lat = latency_of(ctx["docs"][name])
        good = isinstance(lat, (int, float)) and math.isfinite(lat) and lat >= ns
        return good, "latency %r ns (at least %g expected)" % (lat, ns)
    return check


def latency_vs_default_gemm64():
    def check(ctx):
        ok, n = json_file("out.json")(ctx)
        if not ok:
            return ok, n
        lat = latency_of(ctx["docs"]["out.json"])
        return (isinstance(lat, (int, float)) and math.isfinite(lat) and lat > 0,
                "latency %r ns" % (lat,))
    return check


# ---------------------------------------------------------------------------
# Running

class Runner:
    def __init__(self, binary, timeout, work):
        self.binary = binary
        self.timeout = timeout
        self.work = work
        self.prefix = []
        if shutil.which("prlimit"):
            self.prefix = ["prlimit", "--as=%d" % MEM_LIMIT, "--"]
        self._baseline = None
        # what a process started this way shows as peak RSS before it does anything
        p = subprocess.Popen(self.prefix + ["true"], start_new_session=True)
        self.rss_floor_kib = os.wait4(p.pid, 0)[2].ru_maxrss

    def baseline(self):
        if self._baseline is None:
            d = tempfile.mkdtemp(dir=self.work, prefix="baseline-")
            subprocess.run([self.binary] + SMALL_RUN + ["--json", "b.json"], cwd=d,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            try:
                with open(os.path.join(d, "b.json")) as f:
                    self._baseline = latency_of(json.load(f))
            except (OSError, ValueError):
                self._baseline = None
        # what a process started this way shows as peak RSS before it does anything
        p = subprocess.Popen(self.prefix + ["true"], start_new_session=True)
        self.rss_floor_kib = os.wait4(p.pid, 0)[2].ru_maxrss
        return self._baseline

    def run(self, idx, case):
        d = os.path.join(self.work, "case-%03d" % idx)
        os.mkdir(d)
        if case.setup:
            case.setup(d)
        guards = {g: snapshot(os.path.join(d, g)) for g in case.guards}
        devs = {p: snapshot(p) for p in ("/dev/full", "/dev/null", "/dev/zero")}
        before = list_tree(d)
        logs = os.path.join(self.work, "logs")
        os.makedirs(logs, exist_ok=True)
        out_path = os.path.join(logs, "%03d.out" % idx)
        err_path = os.path.join(logs, "%03d.err" % idx)
        argv = [a.encode("utf-8", "surrogateescape") for a in [self.binary] + case.args]
        cmd = [a.encode() for a in self.prefix] + argv
        ctx = {"dir": d, "baseline": self.baseline, "binary": self.binary}
        log = []
        t0 = time.monotonic()
        with open(out_path, "wb") as fo, open(err_path, "wb") as fe, \
                open(os.devnull, "rb") as fi:
            proc = subprocess.Popen(cmd, cwd=d, stdin=fi, stdout=fo, stderr=fe,
                                    start_new_session=True)
        th = None
        if case.action:
            if getattr(case.action, "wants_ctx", False):
                th = threading.Thread(target=case.action, args=(proc, log, ctx), daemon=True)
            else:
                th = threading.Thread(target=case.action, args=(proc, log), daemon=True)
            th.start()
        hung = False
        rusage = None
        status = None
        while True:
            pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status, rusage = st, ru
                break
            if time.monotonic() - t0 > self.timeout:
                hung = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                _, status, rusage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        wall = time.monotonic() - t0
        if os.WIFSIGNALED(status):
            code = -os.WTERMSIG(status)
        else:
            code = os.WEXITSTATUS(status)
        proc.returncode = code
        if th:
            th.join(timeout=5)
        # processes left in the case's group (children die with the CLI
        # through PR_SET_PDEATHSIG, which takes a moment)
        left = []
        for _ in range(50):
            left = group_members(proc.pid)
            if not left:
                break
            time.sleep(0.02)
        if left:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        stderr = read_text(err_path, 1 << 22)
        stdout = read_text(out_path, 1 << 22)
        ctx.update(stdout=stdout, stderr=stderr, exit=code,
                   peak_kib=rusage.ru_maxrss if rusage else None)
        rec = {
            "id": idx, "family": case.family, "case": case.name,
            "command": " ".join(shell_quote(a) for a in ["kernbench"] + case.args),
            "exit": code, "signal": signal.Signals(-code).name if code < 0 else None,
            "wall_s": round(wall, 3), "timed_out": hung,
            "peak_rss_mib": round(rusage.ru_maxrss / 1024, 1) if rusage else None,
            "stderr_first_line": first_line(stderr)[:200],
            "stderr_chars": len(stderr),
            "expect": case.expect, "expected_exits": list(case.exits),
            "fragments": case.frags, "unsure": case.unsure,
        }
        notes = list(log)
        verdict = self.judge(case, ctx, code, hung, left, stderr, d, before, guards, devs, notes)
        if case.note:
            notes.append(case.note)
        rec["verdict"] = verdict
        rec["notes"] = "; ".join(notes)
        return rec

    def judge(self, case, ctx, code, hung, left, stderr, d, before, guards, devs, notes):
        # the devices first: repair what a bad run did to them
        damage = []
        for p, snap in devs.items():
            now = snapshot(p)
            if now != snap:
                damage.append("%s changed: %s -> %s" % (p, snap, now))
        for g, snap in guards.items():
            now = snapshot(os.path.join(d, g))
            if now != snap:
                damage.append("%s changed" % g)
        after = list_tree(d)
        new = sorted(after - before)
        allowed = set(case.allow_stray)
        if code == 0:  # outputs of a successful run are no strays
            allowed |= set(case.outputs)
            for a in case.args:
                if not a.startswith("-") and "/" not in a:
                    allowed.add(a)  # outputs named on the command line
        strays = []
        for n in new:
            base = os.path.basename(n)
            if n in allowed or n.split("/")[0] in allowed:
                if ".tmp." in base and "*.tmp.*" not in allowed and code == 0:
                    strays.append(n)
                continue
            if ".tmp." in base and "*.tmp.*" in allowed:
                notes.append("temp file %s left (allowed here)" % n)
                continue
            if code != 0 and n in case.outputs:
                damage.append("output %s written by a failed run" % n)
                continue
            strays.append(n)
        if code != 0:
            for o in case.outputs:
                if o in before:
                    continue
                if os.path.lexists(os.path.join(d, o)) and ("output %s written by a failed run" % o) not in damage:
                    damage.append("output %s written by a failed run" % o)
        if strays:
            damage.append("stray files: %s" % ", ".join(strays[:5]))

        crash_text = [] if case.crash_ok else [t for t in CRASH_TEXT if t in stderr]
        expected_signal = any(e < 0 for e in case.exits)
        if hung:
            notes.append("killed after %.0f s" % self.timeout)
            if damage:
                notes.extend(damage)
            return HANG
        if (code < 0 and not expected_signal) or crash_text:
            notes.append("signal %s" % (-code) if code < 0 else "stderr: %s" % crash_text[0])
            notes.extend(damage)
            return CRASH
        peak = ctx.get("peak_kib") or 0
        if peak > MEM_BOUND_MIB * 1024 or "bad_alloc" in stderr:
            notes.append("peak RSS %d MiB" % (peak // 1024))
            notes.extend(damage)
            return MEMORY
        if left:
            notes.append("%d process(es) left in the group: %s" % (len(left), left[:5]))
            notes.extend(damage)
            return ORPHANS
        if damage:
            notes.extend(damage)
            return DAMAGED

        if code == 0:
            if case.expect == "error":
                notes.append("exit 0 where exit %s was expected" % "/".join(map(str, case.exits)))
                return SILENT
            ok, n = case.check(ctx) if case.check else (True, "exit 0")
            notes.append(n)
            if ctx.get("mem_fail"):
                return MEMORY
            return ACCEPTED if ok else SILENT
        if case.expect == "accept":
            notes.append("exit %d for an input the README accepts" % code)
            return REFUSED
        if code not in case.exits:
            notes.append("exit %d, expected %s" % (code, "/".join(map(str, case.exits))))
            return WRONG_EXIT
        if expected_signal or code >= 128:
            return CLEAN  # an expected signal exit carries no message
        lines = [l for l in stderr.splitlines() if l.strip() and l.strip() != CLI11_HINT]
        # a fragment is a string, or a tuple of alternatives
        missing = [f if isinstance(f, str) else "|".join(f) for f in case.frags
                   if not any(x in stderr for x in ((f,) if isinstance(f, str) else f))]
        if missing:
            notes.append("message lacks %s" % ", ".join(repr(m[:40]) for m in missing))
            return UNCLEAR
        if not lines:
            notes.append("no message on stderr")
            return UNCLEAR
        if len(stderr) > 500:
            notes.append("message is %d chars" % len(stderr))
            return UNCLEAR
        if len(lines) > 1:
            notes.append("message spans %d lines" % len(lines))
            return UNCLEAR
        return CLEAN


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def shell_quote(a):
    s = a.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if len(s) > 80:
        s = s[:60] + "...(%d chars)" % len(s)
    if s and all(ch.isalnum() or ch in "-_=./,:@+%" for ch in s):
        return s
    return "'" + s.replace("'", "'\\''").replace("\n", "\\n") + "'"


def copy_binary(binary, work):
    for attempt in range(30):
        dst = os.path.join(work, "kernbench")
        try:
            shutil.copy2(binary, dst)
            r = subprocess.run([dst, "--help"], capture_output=True, timeout=30)
            if r.returncode == 0:
                h = hashlib.sha256()
                with open(dst, "rb") as f:
                    h.update(f.read())
                print("binary %s (sha256 %s, modified %s)" % (
                    binary, h.hexdigest()[:16],
                    time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.stat(binary).st_mtime))))
                return dst
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(10)  # being rebuilt: wait for the new one
    sys.exit("cannot run %s --help" % binary)


def all_cases(binary):
    keys = parse_keys(binary)
    if not keys:
        sys.exit("could not read the configuration keys from `%s run --help`" % binary)
    return (config_cases(keys) + yaml_cases() + replay_cases() + bench_cases() + cli_cases()
            + collect_cases() + output_cases() + tile_cases() + signal_cases())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="build/kernbench", help="the kernbench binary")
    ap.add_argument("--json", help="write every case's record and the counts as JSON")
    ap.add_argument("--timeout", type=float, default=20.0,
                    help="seconds before a case counts as a hang (default 20)")
    ap.add_argument("--only", help="run only cases whose family or name contains TEXT")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        sys.exit("no kernbench binary at %s (build it, or pass --bin)" % binary)
    cases = all_cases(binary)
    if a.only:
        cases = [c for c in cases if a.only in c.family or a.only in c.name]
    if a.list:
        for i, c in enumerate(cases, 1):
            print("%3d  %-16s %s" % (i, c.family, c.name))
        print("%d cases" % len(cases))
        return 0
    work = tempfile.mkdtemp(prefix="kb-hostile-")
    records = []
    try:
        # a private copy: the binary under test cannot change (be rebuilt)
        # in the middle of the campaign
        runner = Runner(copy_binary(binary, work), a.timeout, work)
        print("%3s  %-22s %-16s %-48s %5s %7s %7s  %s" % (
            "#", "verdict", "family", "case", "exit", "wall s", "MiB", "stderr (first line)"))
        for i, case in enumerate(cases, 1):
            rec = runner.run(i, case)
            records.append(rec)
            print("%3d  %-22s %-16s %-48s %5s %7.2f %7s  %s" % (
                i, rec["verdict"], rec["family"][:16], rec["case"].replace("\n", "\\n")[:48],
                rec["signal"] or rec["exit"], rec["wall_s"],
                "-" if rec["peak_rss_mib"] is None else "%.0f" % rec["peak_rss_mib"],
                rec["stderr_first_line"][:100]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts = {v: sum(1 for r in records if r["verdict"] == v) for v in VERDICTS}
    print()
    print("%d cases, binary %s, timeout %g s, memory cap %s, RSS floor %.0f MiB" % (
        len(records), binary, a.timeout,
        "%d GiB per process (prlimit --as)" % (MEM_LIMIT >> 30) if shutil.which("prlimit") else "none",
        runner.rss_floor_kib / 1024))
    for v in VERDICTS:
        print("  %-24s %4d" % (v, counts[v]))
    odd = [r for r in records if r["verdict"] != CLEAN]
    if odd:
        print()
        print("every case other than \"clean error\":")
        for r in odd:
            print("  #%d [%s] %s / %s: %s" % (r["id"], r["verdict"], r["family"],
                                             r["case"].replace("\n", "\\n"),
                                             (r["notes"] or r["stderr_first_line"][:120]).replace("\n", "\\n")))
            if r["verdict"] != ACCEPTED:
                print("      $ %s" % r["command"][:200])
                if r["stderr_first_line"]:
                    print("      stderr: %s" % r["stderr_first_line"][:200])
            if r["unsure"]:
                print("      unsure: %s" % r["unsure"])
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"binary": binary, "timeout_s": a.timeout, "counts": counts,
                       "rss_floor_mib": round(runner.rss_floor_kib / 1024, 1),
                       "cases": records}, f, indent=1)
    bad = sum(counts[v] for v in VERDICTS if v not in (CLEAN, ACCEPTED))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
