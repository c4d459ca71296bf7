#!/usr/bin/env python3
"""Hostile and careless input against the kernbench CLI (docs/ci.md, "Hostile input").

Usage: scripts/hostile_inputs.py [--bin build/kernbench] [--json out.json]
                                 [--timeout 20] [--only TEXT] [--list]

Runs about 1200 bad (and some good but unusual) inputs through the CLI,
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
                         short message (at most 1100 characters, one line
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
                         lacks a fragment, is too long, spans many lines, or
                         (where the case checks it) holds a raw control
                         character (C0 but the line break, DEL, C1)
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
import atexit
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
                 action=None, allow_stray=(), note="", unsure="", crash_ok=False,
                 plain_stderr=False):
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
        # stderr must hold no raw control byte (docs/cli.md: they are escaped)
        self.plain_stderr = plain_stderr


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


def key_cases(keys, fam_set="config --set", fam_file="config file", extra_uint=(), extra_float=()):
    """Every numeric key: below min, above max, wrong type (via --set), and
    above max from a file (file:line: key)."""
    cases = []
    for key, kind, lo, hi in keys:
        short = key.rsplit(".", 1)[1]
        if kind == "bool":
            for v in ("2", "yes please", "[true]"):
                cases.append(Case(fam_set, "%s=%s" % (short, v),
                                  ["config", "--set", "%s=%s" % (key, v)],
                                  frags=[key]))
            continue
        lo_v, hi_v = num(lo), num(hi)
        if kind == "uint":
            below = str(lo_v - 1)
            above = str(hi_v + 1)
            extra = ["1.5", str(2**64), "1e3", "0x10", ""] + list(extra_uint)
        else:
            below = repr(lo_v / 2) if lo_v > 0 else "-0.001"
            above = repr(hi_v * 2)
            extra = ["nan", "inf", "-inf", "1e400", ""] + list(extra_float)
        for label, v in [("below min", below), ("above max", above),
                         ("wrong type", "x")] + [("odd", e) for e in extra]:
            cases.append(Case(fam_set, "%s=%s (%s)" % (short, v or "''", label),
                              ["config", "--set", "%s=%s" % (key, v)],
                              frags=[key, "expected"]))
        body, line = nested_yaml(key, above)
        cases.append(Case(fam_file, "%s above max in a file" % short,
                          ["config", "--config", "c.yaml"],
                          setup=writer("c.yaml", body),
                          frags=["c.yaml:%d" % line, key, "expected"]))
    return cases


def config_cases(keys):
    cases = key_cases(keys)

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
        # A valid one-point sweep.json beside them, so that the point files are what is read.
        def run(d):
            os.mkdir(os.path.join(d, "pts"))
            write(os.path.join(d, "pts", "sweep.json"), json.dumps(manifest("softmax-merge", [("tiles", ["1"])])))
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
# Mesh benches, output paths, list parameters, duplicate keys, topology,
# tampered point files and the remaining argument forms

RUN_OUTPUTS = ["--oplog", "--trace", "--vcd", "--stats", "--json", "--record"]
REPLAY_OUTPUTS = ["--oplog", "--trace", "--vcd", "--stats", "--json"]
MESH_SMALL = ["run", "allreduce", "--param", "sizes=4096", "--param", "algos=lrab"]
ONE_PE = ["--set", "topology.mesh.h=1", "--set", "topology.mesh.w=1", "--set", "topology.cube.pes=1"]
SMALL_SWEEP = ["sweep", "softmax-merge", "--param", "tiles=1,2"]
SHORT_STREAM = stream("kernel k\ncycles 10\n")


def hardlink(name, target):
    return lambda d: os.link(os.path.join(d, target), os.path.join(d, name))


def default_config(d):
    write(os.path.join(d, "c.yaml"), "pe:\n  attrs:\n    clock_freq_ghz: 1.0\n")


def parse_key_info(binary):
    """Every configuration key from `kernbench run --help`:
    (key, kind, lo, hi, default), pe.* and topology.* alike."""
    out = subprocess.run([binary, "run", "--help"], capture_output=True,
                         text=True, timeout=30).stdout
    keys = []
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith(("pe.", "topology.")) or " (" not in line:
            continue
        key, rest = line.split(" (", 1)
        kind = rest.split()[0]
        default = rest.split("default ", 1)[1].split(")", 1)[0] if "default " in rest else None
        if kind in ("uint", "float") and " in [" in rest:
            lo, hi = rest.split(" in [", 1)[1].split("]", 1)[0].split(",")
            keys.append((key, kind, lo.strip(), hi.strip(), default))
        elif kind.startswith("bool"):
            keys.append((key, "bool", None, None, default))
    return keys


def parse_benches(binary):
    """`kernbench list`: {bench: [(param, default, description)]}."""
    out = subprocess.run([binary, "list"], capture_output=True, text=True, timeout=30).stdout
    benches = {}
    bench = None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            bench = line.split()[0]
            benches[bench] = []
        elif bench and line.strip().startswith("--param "):
            spec = line.strip()[len("--param "):]
            nv, _, desc = spec.partition("  ")
            name, _, default = nv.partition("=")
            benches[bench].append((name, default, desc.strip()))
    return benches


def is_list_param(default, desc):
    return "comma-separated" in desc or "," in default


def figures_finite(name, positive=("time_us", "latency_us", "latency_ns")):
    """Every number in `figures` of a --json file is finite, and the times
    named in `positive` are above 0."""
    def check(ctx):
        ok, n = json_file(name)(ctx)
        if not ok:
            return ok, n
        doc = ctx["docs"][name].get("figures")
        if not isinstance(doc, dict) or not doc:
            return False, "%s has no figures" % name
        flat = flatten(doc)
        count = 0
        for k, v in flat.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            count += 1
            if not math.isfinite(v):
                return False, "%s is %r" % (k, v)
            if k.rsplit(".", 1)[-1] in positive and not v > 0:
                return False, "%s is %r" % (k, v)
        return True, "%d figures finite" % count
    return check


def lines_at_least(name, n):
    def check(ctx):
        try:
            got = len(read_text(os.path.join(ctx["dir"], name), 64 << 20).splitlines())
        except OSError as e:
            return False, str(e)
        return got >= n, "%s has %d lines (%d expected)" % (name, got, n)
    return check


def trace_window_is(name, start_ps, end_ps):
    def check(ctx):
        ok, n = json_file(name)(ctx)
        if not ok:
            return ok, n
        tw = (ctx["docs"][name].get("otherData") or {}).get("trace_window")
        want = {"start_ps": start_ps, "end_ps": end_ps}
        if tw != want:
            return False, "trace_window %r, expected %r" % (tw, want)
        return True, "trace_window %r" % (tw,)
    return check


def mesh_timeout_cases():
    """--timeout bounds a mesh bench's mesh runs together, in run and in
    sweep (docs/cli.md, Limits): exit 1, "timed out after N s"."""
    c = []
    runs = [
        ("run allreduce --timeout 1", ["run", "allreduce", "--timeout", "1"], "1"),
        ("run allreduce ring --timeout 2", ["run", "allreduce", "--param", "algos=ring", "--timeout", "2"], "2"),
        ("run allreduce --timeout 0.5", ["run", "allreduce", "--timeout", "0.5"], "0.5"),
        ("run allreduce 1 GiB lrab --timeout 1",
         ["run", "allreduce", "--param", "sizes=1073741824", "--param", "algos=lrab", "--timeout", "1"], "1"),
        ("run gqa-long-ctx --timeout 1", ["run", "gqa-long-ctx", "--timeout", "1"], "1"),
        ("run gqa-long-ctx cube_sp_pe_sp --timeout 2",
         ["run", "gqa-long-ctx", "--param", "cases=cube_sp_pe_sp", "--timeout", "2"], "2"),
    ]
    for name, args, n in runs:
        c.append(Case("mesh timeout", name, args, exits=(1,), frags=["timed out after %s s" % n]))
    outs = ["--json", "out.json", "--oplog", "op.csv", "--stats", "stats.json", "--trace", "trace.json",
            "--vcd", "wave.vcd"]
    # --oplog, --trace, --vcd and --stats need one mesh run (docs/mesh.md)
    one_run = {"allreduce": ["--param", "sizes=1073741824", "--param", "algos=lrab"],
               "gqa-long-ctx": ["--param", "contexts=524288", "--param", "cases=cube_sp_pe_sp"]}
    for bench in ("allreduce", "gqa-long-ctx"):
        c.append(Case("mesh timeout", "run %s (one mesh run) --timeout 1 with every output" % bench,
                      ["run", bench] + one_run[bench] + ["--timeout", "1"] + outs, exits=(1,),
                      frags=["timed out after 1 s"],
                      allow_stray=["out.json", "op.csv", "stats.json", "trace.json", "wave.vcd"],
                      note="outputs are written after a failed run (README); no temp file may stay"))
    sweeps = [
        ("sweep allreduce window=1 --timeout 1", ["sweep", "allreduce", "--param", "window=1"], "1"),
        ("sweep allreduce clock axis --timeout 2",
         ["sweep", "allreduce", "--param", "pe.attrs.clock_freq_ghz=1"], "2"),
        ("sweep gqa-long-ctx q_heads=32 --timeout 1", ["sweep", "gqa-long-ctx", "--param", "q_heads=32"], "1"),
        ("sweep gqa-long-ctx kv_tile=128 --timeout 2", ["sweep", "gqa-long-ctx", "--param", "kv_tile=128"], "2"),
    ]
    for name, args, n in sweeps:
        c.append(Case("mesh timeout", name, args + ["--timeout", n, "-j", "1", "--csv", "s.csv"],
                      exits=(1,), frags=["timed out after %s s" % n], allow_stray=["s.csv"],
                      note="one point, so one line: the point fails and the sweep exits 1"))
    # outputs of a mesh bench need one mesh run; gqa-long-ctx has no --data
    # (docs/mesh.md, docs/long-context.md): exit 2 before any run
    for bench, par in (("allreduce", ["--param", "algos=lrab"]),
                       ("gqa-long-ctx", ["--param", "contexts=8192"])):
        for opt, fname in (("--oplog", "op.csv"), ("--trace", "trace.json"), ("--vcd", "wave.vcd"),
                           ("--stats", "stats.json")):
            c.append(Case("mesh outputs", "%s %s with several mesh runs" % (bench, opt),
                          ["run", bench] + par + [opt, fname, "--timeout", "5"],
                          frags=[opt], outputs=[fname]))
    c.append(Case("mesh outputs", "gqa-long-ctx --data", ["run", "gqa-long-ctx", "--data", "--param",
                                                          "contexts=8192", "--param", "cases=cube_sp_pe_sp",
                                                          "--json", "out.json", "--timeout", "5"],
                  frags=["--data"], outputs=["out.json"]))
    c.append(Case("mesh timeout", "sweep point (--point-json) allreduce --timeout 1",
                  ["sweep", "allreduce", "--param", "window=1", "--point-index", "0", "--point-count", "1",
                   "--sweep-id", "0123456789abcdef", "--point-json", "p.json", "--timeout", "1"],
                  exits=(1,), frags=["timed out after 1 s"], allow_stray=["p.json"],
                  note="a failed point exits 1 and still writes its point file"))
    return c


def fifo_output_cases():
    """An output that is a FIFO nobody reads is refused within 2 s
    (kFifoReaderWait), exit 1, never blocking (docs/cli.md, Outputs)."""
    c = []
    frags = ["'fifo'", "FIFO"]
    for opt in RUN_OUTPUTS:
        c.append(Case("output fifo", "run %s to a FIFO without a reader" % opt,
                      SMALL_RUN + [opt, "fifo"], setup=mkfifo("fifo"), exits=(1,),
                      frags=frags, guards=["fifo"]))
    for opt in ("--oplog", "--json"):  # each FIFO case takes 2 s: a sample of replay and mesh outputs
        c.append(Case("output fifo", "replay %s to a FIFO without a reader" % opt,
                      ["replay", "s.stream", opt, "fifo"],
                      setup=chain(mkfifo("fifo"), writer("s.stream", SHORT_STREAM)), exits=(1,),
                      frags=frags, guards=["fifo", "s.stream"]))
    for opt in ("--oplog", "--trace", "--stats"):
        c.append(Case("output fifo", "mesh run %s to a FIFO without a reader" % opt,
                      MESH_SMALL + [opt, "fifo"], setup=mkfifo("fifo"), exits=(1,),
                      frags=frags, guards=["fifo"]))
    c.append(Case("output fifo", "sweep --csv to a FIFO without a reader",
                  SMALL_SWEEP + ["--csv", "fifo"], setup=mkfifo("fifo"), exits=(1,),
                  frags=frags, guards=["fifo"]))
    c.append(Case("output fifo", "sweep --collect --csv to a FIFO without a reader",
                  ["sweep", "--collect", "pts", "--csv", "fifo"],
                  setup=chain(mkfifo("fifo"), synthetic_points(2)), exits=(1,),
                  frags=frags, guards=["fifo", "pts"]))
    c.append(Case("output fifo", "FIFO --oplog refused before a long run",
                  ["run", "gqa-decode", "--param", "context=16777216", "--oplog", "fifo", "--timeout", "10"],
                  setup=mkfifo("fifo"), exits=(1,), frags=frags, guards=["fifo"],
                  note="opened before the run: refused after 2 s, not at the 10 s --timeout"))
    c.append(Case("output fifo", "--emit-jobs to a FIFO", SMALL_SWEEP + ["--emit-jobs", "fifo"],
                  setup=mkfifo("fifo"), exits=(1, 2), frags=["fifo"], guards=["fifo"],
                  outputs=["fifo.sbatch", "fifo.points"],
                  unsure="the jobs file is read back by line; a FIFO refused as bad input (2) or as a "
                         "failed output (1) both count, with nothing written beside it"))
    return c


def sweep_id(fields):
    """The sweep identity --emit-jobs computes (tb/cli/sweep_jobs.cpp): FNV-1a 64
    over each field prefixed by its length and ':'."""
    h = 14695981039346656037
    for f in fields:
        for b in (str(len(f.encode())) + ":").encode() + f.encode():
            h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def manifest(bench, axes, config="", timeout="", sets=()):
    """DIR/sweep.json as --emit-jobs writes it; axes: [(key, [values])]."""
    fields = ["kernbench-sweep-point-1", bench, config, timeout, str(len(sets))] + list(sets)
    points = 1
    for key, values in axes:
        fields += [key, str(len(values))] + list(values)
        points *= len(values)
    return {"format": "kernbench-sweep-1", "sweep_id": sweep_id(fields), "bench": bench, "config": config,
            "timeout": timeout, "sets": list(sets), "axes": [{"key": k, "values": list(v)} for k, v in axes],
            "points": points}


def synthetic_points(n, bench="softmax-merge", sweep=None, folder="pts", edit=None):
    """n consistent point files written by hand (axis tiles, values 1..n) and
    their sweep.json; edit(index, doc) may change a point before it is written."""
    grid = manifest(bench, [("tiles", [str(i + 1) for i in range(n)])])
    sweep = sweep or grid["sweep_id"]

    def run(d):
        os.makedirs(os.path.join(d, folder), exist_ok=True)
        write(os.path.join(d, folder, "sweep.json"), json.dumps(grid, indent=1))
        for i in range(n):
            doc = {"format": "kernbench-sweep-point-1", "sweep_id": sweep, "bench": bench,
                   "index": i, "points": n, "axes": ["tiles"], "values": [str(i + 1)],
                   "cells": [["softmax_merge_stream.latency_ns", str(1000 + i)]]}
            if edit:
                doc = edit(i, doc)
                if doc is None:
                    continue
            data = doc if isinstance(doc, (bytes, str)) else json.dumps(doc, indent=1)
            write(os.path.join(d, folder, "point-%d.json" % i), data)
    return run


_POINT_CACHE = {}


def real_points(binary, grid=("softmax-merge", "--param", "tiles=1,2"), folder="pts"):
    """Point files of a real emitted sweep: --emit-jobs, then each job line
    run with sh, as GNU parallel would. Made once per grid and folder name
    (a point file holds no path) and copied into each case's folder."""
    def run(d):
        key = (binary, tuple(grid), folder)
        src = _POINT_CACHE.get(key)
        if src is None or not os.path.isdir(src):
            gen = tempfile.mkdtemp(prefix="kb-hostile-points-")
            atexit.register(shutil.rmtree, gen, True)
            subprocess.run([binary, "sweep"] + list(grid) + ["--emit-jobs", "j.txt", "--jobs-dir", folder],
                           cwd=gen, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
                           check=True)
            with open(os.path.join(gen, "j.txt")) as f:
                for line in f:
                    subprocess.run(["sh", "-c", line], cwd=gen, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=60)
            src = _POINT_CACHE[key] = os.path.join(gen, folder)
        shutil.copytree(src, os.path.join(d, folder))
    return run


def edit_point(index, fn, folder="pts"):
    """Changes point INDEX's JSON with fn(doc) (returning the new doc, or
    bytes/str to write as they are)."""
    def run(d):
        p = os.path.join(d, folder, "point-%d.json" % index)
        with open(p, "rb") as f:
            raw = f.read()
        new = fn(json.loads(raw))
        write(p, new if isinstance(new, (bytes, str)) else json.dumps(new, indent=1))
    return run


def edit_raw(index, fn, folder="pts"):
    def run(d):
        p = os.path.join(d, folder, "point-%d.json" % index)
        with open(p, "rb") as f:
            raw = f.read()
        write(p, fn(raw))
    return run


def setf(**kw):
    def fn(doc):
        doc.update(kw)
        return doc
    return fn


def clash_cases():
    """Two outputs on one file, or an output on a file the command reads, in
    any spelling: exit 2 before anything runs, nothing written, the files
    unchanged (docs/cli.md, Outputs: compared by device and inode, a file not
    there yet by its resolved path)."""
    import itertools
    c = []
    for a, b in itertools.combinations(RUN_OUTPUTS, 2):
        c.append(Case("output clash", "run %s x %s x (new)" % (a, b), SMALL_RUN + [a, "x", b, "x"],
                      frags=[a, b, "'x'"], outputs=["x"]))
        c.append(Case("output clash", "run %s x %s x (existing x)" % (a, b), SMALL_RUN + [a, "x", b, "x"],
                      setup=writer("x", "precious\n"), guards=["x"], frags=[a, b, "'x'"]))
    for a, b in (("--oplog", "--stats"), ("--trace", "--vcd"), ("--json", "--trace")):
        c.append(Case("output clash", "replay %s x %s x" % (a, b), ["replay", "s.stream", a, "x", b, "x"],
                      setup=writer("s.stream", SHORT_STREAM), guards=["s.stream"],
                      frags=[a, b, "'x'"], outputs=["x"]))
        c.append(Case("output clash", "mesh run %s x %s x" % (a, b), MESH_SMALL + [a, "x", b, "x"],
                      frags=[a, b, "'x'"], outputs=["x"]))
    c.append(Case("output clash", "run --vcd x.vcd --trace x.vcd", SMALL_RUN + ["--vcd", "x.vcd", "--trace", "x.vcd"],
                  frags=["--vcd", "--trace", "x.vcd"], outputs=["x.vcd"]))
    c.append(Case("output clash", "run --vcd w --trace w.vcd (two files)", SMALL_RUN + ["--vcd", "w", "--trace", "w.vcd"],
                  expect="accept", check=all_checks(file_starts("w", b"$"), json_file("w.vcd")),
                  note="a --vcd name is written as given (README), so w.vcd is the trace's alone"))
    c.append(Case("output clash", "run --json and --stats both /dev/null", SMALL_RUN + ["--json", "/dev/null",
                                                                                   "--stats", "/dev/null"],
                  expect="accept", check=lambda ctx: (True, "character devices may take several outputs")))
    for opt in RUN_OUTPUTS:
        c.append(Case("output clash", "run %s given twice" % opt, SMALL_RUN + [opt, "a.out", opt, "b.out"],
                      frags=[opt], outputs=["a.out", "b.out"]))

    # spellings of one file
    spellings = [
        ("./x", ["x.f", "./x.f"], None, [], (2,), ""),
        (".//x", ["x.f", ".//x.f"], None, [], (2,), ""),
        ("sub/../x", ["x.f", "sub/../x.f"], mkdir("sub"), [], (2,), ""),
        ("sub/./../sub/../x", ["x.f", "sub/./../sub/../x.f"], mkdir("sub"), [], (2,), ""),
        ("dirlink/x and sub/x", ["sub/x.f", "dl/x.f"], chain(mkdir("sub"), symlink("dl", "sub")), ["sub", "dl"],
         (2,), ""),
        ("symlink to an existing file", ["x.f", "lnk"], chain(writer("x.f", "precious\n"), symlink("lnk", "x.f")),
         ["x.f", "lnk"], (2,), ""),
        ("chain of two symlinks", ["x.f", "l2"],
         chain(writer("x.f", "precious\n"), symlink("l1", "x.f"), symlink("l2", "l1")), ["x.f", "l1", "l2"],
         (2,), ""),
        ("symlink to the other output, not there yet", ["x.f", "lnk"], symlink("lnk", "x.f"), ["lnk"], (2,),
         "docs/cli.md: a file not there yet is compared by its resolved path, which for a symlink is its "
         "target; a dangling symlink is also refused on its own (exit 1)"),
        ("hard link", ["h1", "h2"], chain(writer("h1", "precious\n"), hardlink("h2", "h1")), ["h1", "h2"],
         (2,), ""),
        ("missing/../x", ["x.f", "nodir/../x.f"], None, [], (1, 2),
         "nodir does not exist, so the OS cannot open nodir/../x.f (1); compared lexically it is x.f (2)"),
    ]
    for label, (p1, p2), setup, guards, exits, unsure in spellings:
        for a, b in (("--json", "--stats"), ("--trace", "--oplog")):
            outs = [p for p in (p1, p2) if "/" not in p and p not in guards]
            c.append(Case("output clash", "%s / %s: %s" % (a, b, label), SMALL_RUN + [a, p1, b, p2],
                          setup=setup, guards=guards, exits=exits,
                          frags=[a, b] if exits == (2,) else [], outputs=outs or ["x.f"], unsure=unsure))

    # an output on an input
    for opt in RUN_OUTPUTS:
        c.append(Case("output on input", "run %s onto --config" % opt,
                      SMALL_RUN + ["--config", "c.yaml", opt, "c.yaml"], setup=default_config,
                      guards=["c.yaml"], frags=["--config", opt, "c.yaml"]))
    cfg_spell = [
        ("./c.yaml", "c.yaml", "./c.yaml", None, ["c.yaml"]),
        ("sub/../c.yaml", "c.yaml", "sub/../c.yaml", mkdir("sub"), ["c.yaml"]),
        ("a hard link", "c.yaml", "hl.yaml", hardlink("hl.yaml", "c.yaml"), ["c.yaml", "hl.yaml"]),
        ("a symlink as output", "c.yaml", "sl.yaml", symlink("sl.yaml", "c.yaml"), ["c.yaml", "sl.yaml"]),
        ("a symlink as --config", "sl.yaml", "c.yaml", symlink("sl.yaml", "c.yaml"), ["c.yaml", "sl.yaml"]),
    ]
    for label, cfg, out, setup, guards in cfg_spell:
        for opt in ("--json", "--oplog"):
            c.append(Case("output on input", "run %s onto --config via %s" % (opt, label),
                          SMALL_RUN + ["--config", cfg, opt, out], setup=chain(default_config, setup),
                          guards=guards, frags=["--config", opt]))
    c.append(Case("output on input", "mesh run --json onto --config",
                  MESH_SMALL + ["--config", "c.yaml", "--json", "c.yaml"], setup=default_config,
                  guards=["c.yaml"], frags=["--config", "--json"]))
    for opt in REPLAY_OUTPUTS:
        c.append(Case("output on input", "replay %s onto the stream" % opt, ["replay", "s.stream", opt, "s.stream"],
                      setup=writer("s.stream", SHORT_STREAM), guards=["s.stream"], frags=["s.stream", opt]))
    c.append(Case("output on input", "replay --json onto ./stream", ["replay", "s.stream", "--json", "./s.stream"],
                  setup=writer("s.stream", SHORT_STREAM), guards=["s.stream"], frags=["s.stream", "--json"]))
    c.append(Case("output on input", "replay --trace onto a hard link of the stream",
                  ["replay", "s.stream", "--trace", "h.stream"],
                  setup=chain(writer("s.stream", SHORT_STREAM), hardlink("h.stream", "s.stream")),
                  guards=["s.stream", "h.stream"], frags=["s.stream", "--trace"]))
    c.append(Case("output on input", "replay --stats onto --config",
                  ["replay", "s.stream", "--config", "c.yaml", "--stats", "c.yaml"],
                  setup=chain(writer("s.stream", SHORT_STREAM), default_config),
                  guards=["s.stream", "c.yaml"], frags=["--config", "--stats"]))
    c.append(Case("output on input", "sweep --csv onto --config", SMALL_SWEEP + ["--config", "c.yaml", "--csv", "c.yaml"],
                  setup=default_config, guards=["c.yaml"], frags=["--config", "--csv"]))
    c.append(Case("output on input", "sweep --csv onto ./--config",
                  SMALL_SWEEP + ["--config", "c.yaml", "--csv", "./c.yaml"],
                  setup=default_config, guards=["c.yaml"], frags=["--config", "--csv"]))
    c.append(Case("output on input", "--emit-jobs onto --config",
                  SMALL_SWEEP + ["--config", "c.yaml", "--emit-jobs", "c.yaml"], setup=default_config,
                  guards=["c.yaml"], frags=["--config", "--emit-jobs"],
                  outputs=["c.yaml.sbatch", "c.yaml.points"]))
    c.append(Case("output on input", "--emit-jobs's FILE.sbatch onto --config",
                  SMALL_SWEEP + ["--config", "j.txt.sbatch", "--emit-jobs", "j.txt"],
                  setup=writer("j.txt.sbatch", "pe:\n  attrs:\n    clock_freq_ghz: 1.0\n"),
                  guards=["j.txt.sbatch"], frags=["--config", "j.txt.sbatch"],
                  outputs=["j.txt", "j.txt.points"]))
    c.append(Case("output on input", "--emit-jobs with --csv onto the jobs file",
                  SMALL_SWEEP + ["--emit-jobs", "j.txt", "--csv", "j.txt"],
                  frags=["--csv"], outputs=["j.txt", "j.txt.sbatch", "j.txt.points"]))
    for label, jobs_dir in (("the jobs file", "j.txt"), ("FILE.sbatch", "j.txt.sbatch")):
        c.append(Case("output clash", "--jobs-dir on %s" % label,
                      SMALL_SWEEP + ["--emit-jobs", "j.txt", "--jobs-dir", jobs_dir],
                      frags=["j.txt"], outputs=["j.txt", "j.txt.sbatch", "j.txt.points"],
                      unsure="the point folder is made by --emit-jobs beside its two files; one path for "
                             "two of them is read as two outputs on one file (2, nothing written)"))
    c.append(Case("output on input", "--point-json onto --config",
                  ["sweep", "softmax-merge", "--param", "tiles=1", "--point-index", "0", "--point-count", "1",
                   "--sweep-id", "0123456789abcdef", "--config", "c.yaml", "--point-json", "c.yaml"],
                  setup=default_config, guards=["c.yaml"], frags=["--config", "--point-json"]))
    c.append(Case("output on input", "--point-json onto a symlink to --config",
                  ["sweep", "softmax-merge", "--param", "tiles=1", "--point-index", "0", "--point-count", "1",
                   "--sweep-id", "0123456789abcdef", "--config", "c.yaml", "--point-json", "sl.json"],
                  setup=chain(default_config, symlink("sl.json", "c.yaml")), guards=["c.yaml", "sl.json"],
                  frags=["--config", "--point-json"]))
    col = ["sweep", "--collect", "pts", "--csv"]
    c.append(Case("output on input", "--collect --csv onto a point file", col + ["pts/point-0.json"],
                  setup=synthetic_points(2), guards=["pts/point-0.json", "pts/point-1.json"],
                  frags=["point-0.json", "--csv"],
                  note="--collect reads every point file: a CSV onto one is an output on an input"))
    c.append(Case("output on input", "--collect --csv onto ./pts/../pts/point-1.json",
                  col + ["./pts/../pts/point-1.json"], setup=synthetic_points(2),
                  guards=["pts/point-0.json", "pts/point-1.json"], frags=["point-1.json", "--csv"]))
    c.append(Case("output on input", "--collect --csv onto a symlink to a point file", col + ["lnk"],
                  setup=chain(synthetic_points(2), symlink("lnk", "pts/point-0.json")),
                  guards=["pts/point-0.json", "lnk"], frags=["--csv"]))
    c.append(Case("output on input", "--collect --csv onto a hard link of a point file", col + ["h.json"],
                  setup=chain(synthetic_points(2), hardlink("h.json", "pts/point-1.json")),
                  guards=["pts/point-1.json", "h.json"], frags=["--csv"]))
    c.append(Case("output on input", "--collect --csv onto the point folder", col + ["pts"],
                  setup=synthetic_points(2), guards=["pts", "pts/point-0.json"], exits=(1, 2),
                  frags=["pts"], unsure="a directory output is refused (1); an output on the collected "
                                         "folder may also be bad input (2)"))
    return c


def list_param_cases(benches):
    """List parameters (docs/cli.md, Benches): at most 64 values, each once,
    else exit 2 before any run; every list parameter of every bench."""
    c = []
    for bench, params in sorted(benches.items()):
        for name, default, desc in params:
            if not is_list_param(default, desc):
                continue
            dv = [v for v in default.split(",") if v]
            numeric = all(v.isdigit() for v in dv)
            v0 = dv[0]
            v1 = dv[1] if len(dv) > 1 else v0
            if numeric:
                step = int(v0)
                many = [str(step * (i + 1)) for i in range(65)]
                at64 = [str(step * (i + 1)) for i in range(63)] + [v0]
                variants = [
                    ("65 distinct values", ",".join(many), [name, "64"]),
                    ("64 values, the last a repeat", ",".join(at64), [name, v0]),
                    ("%s,0%s (one value twice)" % (v0, v0), "%s,0%s" % (v0, v0), [name]),
                    ("%s,+%s" % (v0, v0), "%s,+%s" % (v0, v0), [name]),
                    ("%s,x" % v0, "%s,x" % v0, [name]),
                ]
            else:
                cyc = [dv[i % len(dv)] for i in range(65)]
                variants = [
                    ("65 values cycling over %d" % len(dv), ",".join(cyc), [name]),
                    ("65 unknown values", ",".join("v%d" % i for i in range(65)), [name]),
                    ("%s,%s (case differs)" % (v0, v0.upper()), "%s,%s" % (v0, v0.upper()), [name]),
                ]
            variants += [
                ("%s,%s" % (v0, v0), "%s,%s" % (v0, v0), [name, v0]),
                ("%s,%s,%s" % (v0, v1, v0), "%s,%s,%s" % (v0, v1, v0), [name, v0]),
                ("1000 x %s" % v0, ",".join([v0] * 1000), [name]),
                ("empty value in the middle", "%s,,%s" % (v0, v1), [name]),
                ("trailing comma", "%s," % v0, [name]),
                ("leading comma", ",%s" % v0, [name]),
                ("only a comma", ",", [name]),
            ]
            for label, value, frags in variants:
                c.append(Case("list param", "%s %s: %s" % (bench, name, label),
                              ["run", bench, "--param", "%s=%s" % (name, value), "--json", "out.json",
                               "--timeout", "5"],
                              frags=frags, outputs=["out.json"],
                              note="--timeout 5: a list not refused before the run ends as exit 1"))
    c.append(Case("list param", "sweep allreduce sizes=4096,4096 (a grid value twice)",
                  ["sweep", "allreduce", "--param", "sizes=4096,4096", "--param", "algos=lrab",
                   "--csv", "s.csv", "--timeout", "5"],
                  expect="either", exits=(2,), frags=["sizes"], check=csv_rows("s.csv", 2),
                  unsure="a sweep splits a list parameter into one-value points; a value given twice is "
                         "two equal points or bad input"))
    return c


def one_pe_cases():
    """A collective needs at least 2 PEs (docs/cli.md, Benches): exit 2,
    never a run with 0/0 figures."""
    c = []
    frags = ["allreduce", "2 PEs"]
    c.append(Case("mesh 1 PE", "run allreduce on 1 PE", ["run", "allreduce"] + ONE_PE + ["--json", "out.json"],
                  frags=frags, outputs=["out.json"]))
    c.append(Case("mesh 1 PE", "run allreduce ring 4 KiB on 1 PE",
                  ["run", "allreduce", "--param", "algos=ring", "--param", "sizes=4096"] + ONE_PE,
                  frags=frags))
    c.append(Case("mesh 1 PE", "run allreduce on 1 PE from a config file",
                  ["run", "allreduce", "--config", "c.yaml", "--json", "out.json"],
                  setup=writer("c.yaml", "topology:\n  mesh:\n    h: 1\n    w: 1\n  cube:\n    pes: 1\n"),
                  frags=frags, outputs=["out.json"]))
    c.append(Case("mesh 1 PE", "run allreduce on 1 PE with every output",
                  MESH_SMALL + ONE_PE + ["--oplog", "op.csv", "--trace", "trace.json",
                                                   "--vcd", "wave.vcd", "--stats", "stats.json"],
                  frags=frags, outputs=["op.csv", "trace.json", "wave.vcd", "stats.json"]))
    c.append(Case("mesh 1 PE", "sweep allreduce on 1 PE", ["sweep", "allreduce", "--param", "algos=lrab,ring"]
                  + ONE_PE + ["--csv", "s.csv"], frags=frags, outputs=["s.csv"]))
    c.append(Case("mesh 1 PE", "sweep axis topology.cube.pes=1,2 on a 1x1 mesh",
                  ["sweep", "allreduce", "--set", "topology.mesh.h=1", "--set", "topology.mesh.w=1",
                   "--param", "topology.cube.pes=1,2", "--param", "sizes=4096", "--csv", "s.csv"],
                  frags=frags, outputs=["s.csv"], note="checked for every point before the first runs"))
    c.append(Case("mesh 1 PE", "--emit-jobs allreduce on 1 PE",
                  ["sweep", "allreduce", "--param", "algos=lrab,ring"] + ONE_PE + ["--emit-jobs", "j.txt"],
                  frags=frags, outputs=["j.txt", "j.txt.sbatch", "j.txt.points"]))
    c.append(Case("mesh 1 PE", "allreduce on 2 PEs (one cube of 2)",
                  ["run", "allreduce", "--set", "topology.mesh.h=1", "--set", "topology.mesh.w=1",
                   "--set", "topology.cube.pes=2", "--param", "sizes=4096", "--json", "out.json"],
                  expect="accept", check=figures_finite("out.json")))
    c.append(Case("mesh 1 PE", "allreduce on 2 PEs (two cubes of 1)",
                  ["run", "allreduce", "--set", "topology.mesh.h=1", "--set", "topology.mesh.w=2",
                   "--set", "topology.cube.pes=1", "--param", "sizes=4096", "--json", "out.json"],
                  expect="accept", check=figures_finite("out.json")))
    c.append(Case("mesh 1 PE", "gqa-long-ctx on 1 PE", ["run", "gqa-long-ctx"] + ONE_PE
                  + ["--param", "contexts=4096", "--param", "cases=cube_sp_pe_sp", "--json", "out.json"],
                  expect="either", exits=(2,), frags=["PE"], check=figures_finite("out.json"),
                  unsure="only the collective is documented to need 2 PEs; a 1-PE decode with finite "
                         "figures or a clean refusal both count"))
    return c


def duplicate_key_cases(info):
    """A leaf key given twice in a config file, in any spelling: exit 2
    naming the file, the line and the dotted key."""
    c = []
    picks = ["pe.attrs.clock_freq_ghz", "pe.attrs.tile.m", "pe.attrs.pe_cost_model.byte_cycles_recip",
             "topology.mesh.h", "topology.link.gbps"]
    defaults = {k: d for k, _, _, _, d in info}

    def block(prefix, body):
        lines = ["  " * i + p + ":" for i, p in enumerate(prefix)]
        lines += ["  " * len(prefix) + b for b in body]
        return lines

    for key in picks:
        if key not in defaults:
            continue
        v = defaults[key]
        p = key.split(".")
        leaf = p[-1]
        n = len(p)
        spellings = [
            ("nested twice", block(p[:-1], ["%s: %s" % (leaf, v)] * 2), n + 1),
            ("nested then dotted", block(p[:-1], ["%s: %s" % (leaf, v)]) + ["%s: %s" % (key, v)], n + 1),
            ("dotted then nested", ["%s: %s" % (key, v)] + block(p[:-1], ["%s: %s" % (leaf, v)]), n + 1),
            ("two dotted", ["%s: %s" % (key, v)] * 2, 2),
            ("dotted then a shorter prefix", ["%s: %s" % (key, v)]
             + block([p[0]], ["%s: %s" % (".".join(p[1:]), v)]), 3),
            ("two dotted prefixes", block([".".join(p[:2])], ["%s: %s" % (".".join(p[2:]), v)])
             + block([p[0], ".".join(p[1:-1])], ["%s: %s" % (leaf, v)]), 5),
            ("flow map, dotted twice", ["{%s: %s, %s: %s}" % (key, v, key, v)], 1),
            ("nested flow map", ["%s: {%s: {%s: %s, %s: %s}}" % (p[0], ".".join(p[1:-1]), leaf, v, leaf, v)], 1),
        ]
        for label, lines, line in spellings:
            c.append(Case("config duplicate", "%s: %s" % (key, label), ["config", "--config", "c.yaml"],
                          setup=writer("c.yaml", "\n".join(lines) + "\n"),
                          frags=["c.yaml:%d" % line, key],
                          unsure="" if label in ("nested twice", "flow map, dotted twice", "two dotted",
                                                 "nested flow map")
                          else "dotted keys in a file are not documented; read as the same key, the "
                               "second is a duplicate"))
    dup = "topology:\n  mesh:\n    h: 2\ntopology.mesh.h: 2\n"
    c.append(Case("config duplicate", "mesh run with a duplicate key", ["run", "allreduce", "--config", "c.yaml",
                                                                       "--json", "out.json"],
                  setup=writer("c.yaml", dup), frags=["c.yaml:4", "topology.mesh.h"], outputs=["out.json"]))
    c.append(Case("config duplicate", "sweep with a duplicate key", SMALL_SWEEP + ["--config", "c.yaml",
                                                                                   "--csv", "s.csv"],
                  setup=writer("c.yaml", dup), frags=["c.yaml:4", "topology.mesh.h"], outputs=["s.csv"]))
    c.append(Case("config duplicate", "replay with a duplicate key", ["replay", "s.stream", "--config", "c.yaml",
                                                                      "--json", "out.json"],
                  setup=chain(writer("c.yaml", dup), writer("s.stream", SHORT_STREAM)),
                  frags=["c.yaml:4", "topology.mesh.h"], outputs=["out.json"]))
    c.append(Case("config duplicate", "a block twice in one spelling",
                  ["config", "--config", "c.yaml"],
                  setup=writer("c.yaml", "topology:\n  mesh:\n    h: 3\ntopology:\n  cube:\n    pes: 2\n"),
                  frags=["c.yaml:4", "topology"],
                  note="one YAML map holding a key twice is malformed YAML"))
    c.append(Case("config duplicate", "a block in two spellings merges",
                  ["config", "--config", "c.yaml"],
                  setup=writer("c.yaml", "topology.mesh:\n  h: 3\ntopology:\n  mesh:\n    w: 2\n"),
                  expect="either", frags=["c.yaml"],
                  check=all_checks(stdout_has("h: 3"), stdout_has("w: 2")),
                  unsure="dotted blocks in a file are not documented; merged (h: 3, w: 2) or refused"))
    c.append(Case("config duplicate", "two leaves of one block, two spellings",
                  ["config", "--config", "c.yaml"],
                  setup=writer("c.yaml", "pe.attrs:\n  tile.m: 32\npe.attrs.tile:\n  n: 16\n"),
                  expect="either", frags=["c.yaml"],
                  check=all_checks(stdout_has("m: 32"), stdout_has("n: 16")),
                  unsure="dotted blocks in a file are not documented; merged or refused"))
    c.append(Case("config duplicate", "a file key then --set of it",
                  ["config", "--config", "c.yaml", "--set", "pe.attrs.tile.m=16"],
                  setup=writer("c.yaml", "pe:\n  attrs:\n    tile:\n      m: 32\n"),
                  expect="accept", check=stdout_has("m: 16"),
                  note="--set overrides the file (applied after --config): no duplicate"))
    c.append(Case("config duplicate", "--set twice, the last wins",
                  ["config", "--set", "pe.attrs.tile.m=32", "--set", "pe.attrs.tile.m=16"],
                  expect="accept", check=stdout_has("m: 16"), note="--set is applied in order"))
    return c


def topology_cases(info, binary):
    """topology.* keys: bounds, types, unknown keys, in --set, files and
    mesh runs (kernbench run --help lists them with their bounds)."""
    keys = [(k, kind, lo, hi) for k, kind, lo, hi, _ in info if k.startswith("topology.")]
    c = key_cases(keys, fam_set="topology --set", fam_file="topology file", extra_uint=["-1", "+1", "1e0"],
                  extra_float=["-1", "0", "0x10"])
    unknown = [
        ("topology.mesh.d=2", ["topology.mesh.d"]),
        ("topology.bogus=1", ["topology.bogus"]),
        ("topology.cube.pe=8", ["topology.cube.pe"]),
        ("topology.mesh.h.x=1", ["topology.mesh.h"]),
        ("topology..mesh.h=1", ["topology..mesh"]),
        ("topology=1", ["topology"]),
        ("topology.mesh=1", ["topology.mesh"]),
        ("topology.link={gbps: 1}", ["topology.link"]),
        ("Topology.mesh.h=1", ["Topology.mesh.h"]),
    ]
    for kv, frags in unknown:
        c.append(Case("topology --set", kv, ["config", "--set", kv], frags=frags))
    files = [
        ("unknown key in mesh", "topology:\n  mesh:\n    d: 2\n", ["c.yaml:3", "topology.mesh.d"]),
        ("unknown block", "topology:\n  bogus: 1\n", ["c.yaml:2", "topology.bogus"]),
        ("topology a scalar", "topology: 3\n", ["c.yaml:1", "topology"]),
        ("mesh a sequence", "topology:\n  mesh: [1, 2]\n", ["c.yaml:2", "topology.mesh"]),
        ("h a float", "topology:\n  mesh:\n    h: 2.5\n", ["c.yaml:3", "topology.mesh.h"]),
        ("h negative", "topology:\n  mesh:\n    h: -2\n", ["c.yaml:3", "topology.mesh.h"]),
        ("pes 2^64", "topology:\n  cube:\n    pes: %d\n" % 2**64, ["c.yaml:3", "topology.cube.pes"]),
        ("gbps a string", "topology:\n  link:\n    gbps: fast\n", ["c.yaml:3", "topology.link.gbps"]),
        ("gbps .nan", "topology:\n  link:\n    gbps: .nan\n", ["c.yaml:3", "topology.link.gbps"]),
    ]
    for label, body, frags in files:
        c.append(Case("topology file", label, ["config", "--config", "c.yaml"], setup=writer("c.yaml", body),
                      frags=frags))
    runs = [
        ("run allreduce mesh.w=0", ["run", "allreduce", "--set", "topology.mesh.w=0", "--json", "out.json"],
         ["topology.mesh.w"]),
        ("run gqa-long-ctx cube.pes=65", ["run", "gqa-long-ctx", "--set", "topology.cube.pes=65",
                                          "--json", "out.json"], ["topology.cube.pes"]),
        ("run allreduce link.gbps=0", ["run", "allreduce", "--set", "topology.link.gbps=0", "--json", "out.json"],
         ["topology.link.gbps"]),
        ("sweep allreduce axis mesh.h=1,17", ["sweep", "allreduce", "--param", "topology.mesh.h=1,17",
                                              "--param", "sizes=4096", "--csv", "out.json"], ["topology.mesh.h"]),
        ("sweep allreduce axis cube.pes=1.5", ["sweep", "allreduce", "--param", "topology.cube.pes=1.5,2",
                                               "--csv", "out.json"], ["topology.cube.pes"]),
    ]
    for label, args, frags in runs:
        c.append(Case("topology run", label, args, frags=frags, outputs=["out.json"]))
    big = ["--set", "topology.mesh.h=16", "--set", "topology.mesh.w=16"]
    c.append(Case("topology run", "16 x 16 x 64 PEs", ["run", "allreduce"] + big
                  + ["--set", "topology.cube.pes=64", "--param", "sizes=4096", "--param", "algos=lrab",
                     "--timeout", "3", "--json", "out.json"],
                  exits=(2,), frags=["PEs"], outputs=["out.json"],
                  unsure="every key is in its bounds; no limit on their product is documented (the CLI "
                         "refuses more than 2048 PEs)"))
    for bench, par in (("allreduce", ["--param", "sizes=4096", "--param", "algos=lrab"]),
                       ("gqa-long-ctx", ["--param", "contexts=524288", "--param", "cases=cube_sp_pe_sp"])):
        args = ["run", bench] + big + ["--set", "topology.cube.pes=8"] + par + ["--timeout", "3"]
        if shutil.which("prlimit"):
            c.append(Case("topology run", "%s on 16 x 16 x 8 PEs under prlimit --as (memory)" % bench, args,
                          frags=[("MiB", "GiB")],
                          note="docs/cli.md, Memory limits: 512 PEs need about 5.3 GiB of address space, so "
                               "2048 PEs under the 4 GiB RLIMIT_AS are refused with the estimate (exit 2)"))
        else:
            c.append(Case("topology run", "%s on 16 x 16 x 8 PEs, --timeout 3 (memory)" % bench, args,
                          expect="either", exits=(1, 2), frags=[], check=peak_below(2048),
                          unsure="legal (2048 PEs): refused by the memory estimate (2), ended by its "
                                 "--timeout (1) or done under 2 GiB"))
    return c


def mesh_memory_cases():
    """A mesh whose memory estimate passes the limit (--max-memory, or the
    soft RLIMIT_AS the campaign runs under) is refused before it is built,
    exit 2 with the estimate in the message (docs/cli.md, Memory limits)."""
    c = []
    est = ("MiB", "GiB")
    for name, args in (
            ("run allreduce --max-memory 1048576B", ["run", "allreduce", "--max-memory", "1048576B"]),
            ("run gqa-long-ctx --max-memory 1048576B", ["run", "gqa-long-ctx", "--max-memory", "1048576B"]),
            ("one mesh run --max-memory 104857600B", MESH_SMALL + ["--max-memory", "104857600B"]),
            ("one mesh run, every output, --max-memory 104857600B",
             MESH_SMALL + ["--max-memory", "104857600B", "--oplog", "op.csv", "--trace", "trace.json",
                           "--vcd", "wave.vcd", "--stats", "stats.json"])):
        c.append(Case("mesh memory", name, args + ["--json", "out.json", "--timeout", "10"],
                      frags=["--max-memory", est],
                      outputs=["out.json", "op.csv", "trace.json", "wave.vcd", "stats.json"],
                      note="the default 2 x 4 x 8 mesh is about 441 MiB (docs/cli.md)"))
    c.append(Case("mesh memory", "sweep one point --max-memory 1048576B",
                  ["sweep", "allreduce", "--param", "algos=lrab", "--max-memory", "1048576B", "--csv", "s.csv",
                   "--timeout", "10"],
                  exits=(1,), frags=["--max-memory", est], allow_stray=["s.csv"],
                  note="in a sweep a point that does not fit fails on its own: the sweep exits 1"))
    if shutil.which("prlimit"):
        c.append(Case("mesh memory", "8 x 8 x 8 PEs under prlimit --as 4 GiB",
                      ["run", "allreduce", "--set", "topology.mesh.h=8", "--set", "topology.mesh.w=8",
                       "--param", "sizes=4096", "--param", "algos=lrab", "--timeout", "5", "--json", "out.json"],
                      frags=[est], outputs=["out.json"],
                      note="512 PEs need about 5.3 GiB of address space (docs/cli.md): refused under the "
                           "campaign's RLIMIT_AS"))
    for v in ("0", "1KiB", "1048575B", "x", "-1GiB", "", "4GiB4", "99999999999TiB", "1e9"):
        c.append(Case("mesh memory", "--max-memory '%s'" % v, MESH_SMALL + ["--max-memory", v, "--json", "out.json"],
                      frags=["--max-memory", ("MiB", "unit", "size")], outputs=["out.json"],
                      note="at least 1 MiB, units B, KiB, MiB, GiB, TiB"))
    c.append(Case("mesh memory", "data mode past the storage cap (2 PEs, 64 MiB each, --max-memory 24MiB)",
                  ["run", "allreduce", "--data", "--set", "topology.mesh.h=1", "--set", "topology.mesh.w=1",
                   "--set", "topology.cube.pes=2", "--param", "sizes=67108864", "--param", "algos=lrab",
                   "--max-memory", "24MiB", "--timeout", "15", "--json", "out.json"],
                  exits=(1,), frags=["data mode", "limit"], allow_stray=["out.json"], check=peak_below(512),
                  note="a 2-PE mesh is estimated at about 14 MiB; what is left of 24 MiB caps data mode's "
                       "storage, and a write past it fails the run (exit 1) instead of running out of memory"))
    c.append(Case("mesh memory", "one mesh run --max-memory 4GiB", MESH_SMALL + ["--max-memory", "4GiB",
                                                                               "--json", "out.json"],
                  expect="accept", check=figures_finite("out.json")))
    c.append(Case("mesh memory", "single-PE bench --max-memory 1048576B",
                  SMALL_RUN + ["--max-memory", "1048576B", "--json", "out.json"],
                  expect="either", frags=["--max-memory"], check=latency_vs_default("out.json", "finite"),
                  unsure="the estimate is of a mesh; a single-PE run is not estimated (a run) or the option "
                         "is refused for it (2)"))
    return c


def collect_tamper_cases(binary):
    """`sweep --collect` over point files of a real emitted sweep, changed
    after the fact (docs/cli.md, Sweeps on many machines): exit 2 naming the
    file and nothing written; a failed point's error reaches stderr on one
    line with its control bytes escaped."""
    c = []
    col = ["sweep", "--collect", "pts", "--csv", "s.csv"]
    real = real_points(binary)

    def p1(fn):
        return chain(real, edit_point(1, fn))

    def all_points(fn):
        return chain(real, edit_point(0, fn), edit_point(1, fn))

    def drop_cells(doc):
        doc["cells"] = doc["cells"][:3]
        return doc

    def rename_cell(doc):
        doc["cells"][0][0] = "other"
        return doc

    def cell(value):
        def fn(doc):
            doc["cells"][0][1] = value
            return doc
        return fn

    def to_error(text):
        def fn(doc):
            doc.pop("cells", None)
            doc["error"] = text
            return doc
        return fn

    bad = [
        ("wrong sweep_id", p1(setf(sweep_id="ffffffffffffffff")), ["point-1.json", "another sweep"]),
        ("sweep_id not hex", p1(setf(sweep_id="not-hex-at-all!!")), ["point-1.json", "sweep_id"]),
        ("wrong index field", p1(setf(index=0)), ["point-1.json", "point 0"]),
        ("index -1", p1(setf(index=-1)), ["point-1.json", "index"]),
        ("index 1.0", p1(setf(index=1.0)), ["point-1.json", "index"]),
        ("index \"1\"", p1(setf(index="1")), ["point-1.json", "index"]),
        ("index beyond points", p1(setf(index=7)), ["point-1.json", "index"]),
        ("points 3 in every file", all_points(setf(points=3)), ["point-0.json", "another sweep", "sweep.json"]),
        ("points 0", all_points(setf(points=0)), ["point-0.json", "points"]),
        ("points differ between files", p1(setf(points=3)), ["point-1.json", "another sweep"]),
        ("bench changed in one", p1(setf(bench="gqa-decode")), ["point-1.json", "another sweep"]),
        ("unknown bench in every file", all_points(setf(bench="nosuch")), ["pts", "nosuch"]),
        ("axes changed", p1(setf(axes=["heads"])), ["point-1.json", "another sweep"]),
        ("two axes, one value", p1(setf(axes=["tiles", "heads"])), ["point-1.json", "values"]),
        ("format changed", p1(setf(format="kernbench-sweep-point-2")), ["point-1.json", "format"]),
        ("unknown key", p1(setf(extra=1)), ["point-1.json", "extra"]),
        ("cells and error", p1(setf(error="x")), ["point-1.json", "error"]),
        ("empty error", p1(to_error("")), ["point-1.json", "error"]),
        ("cell with a comma", p1(cell("1,2")), ["point-1.json", "cell"]),
        ("cell with ESC", p1(cell("1\x1b[2J")), ["point-1.json", "\\x1b"]),
        ("value with ESC", p1(setf(values=["2\x1b[2J"])), ["point-1.json", "\\x1b"]),
        ("axis with a newline", all_points(setf(axes=["ti\nles"])), ["point-0.json", "\\x0a"]),
        ("missing point-1.json", chain(real, lambda d: os.unlink(os.path.join(d, "pts", "point-1.json"))),
         ["pts", "point-1.json", "missing"]),
        ("point-1.json renamed point-2.json",
         chain(real, lambda d: os.rename(os.path.join(d, "pts", "point-1.json"),
                                         os.path.join(d, "pts", "point-2.json"))), ["point-2.json"]),
        ("point-0.json copied over point-1.json",
         chain(real, lambda d: shutil.copy(os.path.join(d, "pts", "point-0.json"),
                                           os.path.join(d, "pts", "point-1.json"))), ["point-1.json", "point 0"]),
        ("point-1.json also as point-01.json",
         chain(real, lambda d: shutil.copy(os.path.join(d, "pts", "point-1.json"),
                                           os.path.join(d, "pts", "point-01.json"))), ["point-1"]),
        ("truncated to half", chain(real, edit_raw(1, lambda b: b[:len(b) // 2])), ["point-1.json", "JSON"]),
        ("truncated to 0 bytes", chain(real, edit_raw(1, lambda b: b"")), ["point-1.json", "JSON"]),
        ("garbage appended", chain(real, edit_raw(1, lambda b: b + b"garbage")), ["point-1.json", "JSON"]),
        ("binary garbage", chain(real, edit_raw(1, lambda b: bytes(range(256)))), ["point-1.json", "JSON"]),
        ("JSON array", chain(real, edit_raw(1, lambda b: b"[" + b + b"]")), ["point-1.json"]),
        ("UTF-8 BOM", chain(real, edit_raw(1, lambda b: b"\xef\xbb\xbf" + b)), ["point-1.json"]),
        ("ESC in the folder name", chain(real_points(binary, folder="p\x1bts")), ["p\\x1bts", "point"]),
    ]
    for name, setup, frags in bad:
        args = col
        if name == "ESC in the folder name":
            args = ["sweep", "--collect", "p\x1bts/", "--csv", "s.csv"]
            setup = chain(setup, edit_point(1, setf(index=0), folder="p\x1bts"))
        if name == "UTF-8 BOM":
            c.append(Case("collect tamper", name, args, setup=setup, expect="either", frags=frags,
                          check=csv_rows("s.csv", 2), plain_stderr=True,
                          unsure="RFC 8259 lets a parser ignore a leading BOM: collected as usual, or "
                                 "refused naming the file"))
            continue
        c.append(Case("collect tamper", name, args, setup=setup, frags=frags,
                      outputs=["s.csv"], plain_stderr=True))
    # not detectable from one file: the point's values against its sweep's grid
    c.append(Case("collect tamper", "values changed (not in the grid)", col, setup=p1(setf(values=["3"])),
                  frags=["point-1.json"], outputs=["s.csv"],
                  note="docs/cli.md: the files must be points 0 to N-1 of one sweep; point 1 of this sweep "
                       "has tiles=2"))
    # The grid file beside the points (docs/cli.md, Sweeps on many machines).
    def edit_manifest(fn):
        def run(d):
            path = os.path.join(d, "pts", "sweep.json")
            with open(path) as f:
                doc = json.load(f)
            new = fn(doc)
            write(path, new if isinstance(new, (bytes, str)) else json.dumps(new))
        return run

    def grid_values(values):
        def fn(doc):
            doc["axes"][0]["values"] = values
            return doc
        return fn

    manifest_bad = [
        ("sweep.json missing", chain(real, lambda d: os.unlink(os.path.join(d, "pts", "sweep.json"))),
         ["pts", "sweep.json"]),
        ("sweep.json values edited", chain(real, edit_manifest(grid_values(["1", "3"]))),
         ["sweep.json", "sweep_id", "edited"]),
        ("sweep.json points edited", chain(real, edit_manifest(setf(points=3))), ["sweep.json", "points"]),
        ("sweep.json truncated", chain(real, edit_manifest(lambda doc: json.dumps(doc)[:20])),
         ["sweep.json", "JSON"]),
        ("sweep.json unknown key", chain(real, edit_manifest(setf(extra=1))), ["sweep.json", "extra"]),
        ("sweep.json 1 M nested arrays", chain(real, edit_manifest(lambda doc: "[" * 1000000)),
         ["sweep.json", "nested deeper"]),
        ("sweep.json a FIFO", chain(real, lambda d: os.unlink(os.path.join(d, "pts", "sweep.json")),
                                    mkfifo("pts/sweep.json")), ["sweep.json", "not a regular file"]),
        ("sweep.json of another sweep", chain(real, edit_manifest(
            lambda doc: manifest("softmax-merge", [("tiles", ["1", "3"])]))), ["point-0.json", "another sweep"]),
    ]
    for name, setup, frags in manifest_bad:
        c.append(Case("collect tamper", name, col, setup=setup, frags=frags, outputs=["s.csv"]))
    c.append(Case("output on input", "--collect --csv onto sweep.json", ["sweep", "--collect", "pts", "--csv",
                                                                        "pts/sweep.json"],
                  setup=real, guards=["pts/sweep.json"], frags=["sweep.json", "--csv"]))

    # A job line edited by hand: run with another value, under the sweep's id and index.
    def edited_job(d):
        gen = os.path.join(d, "gen")
        os.mkdir(gen)
        subprocess.run([binary, "sweep", "softmax-merge", "--param", "tiles=1,2", "--emit-jobs", "j.txt",
                        "--jobs-dir", os.path.join(d, "pts")], cwd=gen, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60, check=True)
        with open(os.path.join(gen, "j.txt")) as f:
            jobs = f.read().splitlines()
        subprocess.run(["sh", "-c", jobs[0]], cwd=gen, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        subprocess.run(["sh", "-c", jobs[1].replace("tiles=2", "tiles=5")], cwd=gen, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)
    c.append(Case("collect tamper", "job line run with a value outside the grid", col, setup=edited_job,
                  frags=["point-1.json", "tiles=5", "tiles=2"], outputs=["s.csv"]))
    c.append(Case("collect tamper", "values swapped between points", col,
                  setup=chain(real, edit_point(0, setf(values=["2"])), edit_point(1, setf(values=["1"]))),
                  frags=["point-"], outputs=["s.csv"]))
    c.append(Case("collect tamper", "cells dropped from one point", col, setup=p1(drop_cells),
                  frags=["point-1.json"], outputs=["s.csv"],
                  expect="either", check=csv_rows("s.csv", 2),
                  unsure="docs/cli.md: --collect checks a cell's form, not which figures a point has (a "
                         "mesh bench's figure keys vary with its parameters): merged with empty cells, or refused"))
    c.append(Case("collect tamper", "cell key renamed in one point", col, setup=p1(rename_cell),
                  frags=["point-1.json"], outputs=["s.csv"],
                  expect="either", check=csv_rows("s.csv", 2),
                  unsure="docs/cli.md: --collect checks a cell's form, not which figures a point has: merged "
                         "with an extra column, or refused"))
    # failed points: exit 1, the error on one line, control bytes escaped
    fails = [
        ("error with ESC sequences", "boom \x1b[2J\x1b]0;title\x07 done", ["\\x1b[2J", "\\x07"]),
        ("error with CR LF", "line one\r\nline two", ["\\x0d", "\\x0a"]),
        ("error with DEL and a C1 control (U+009B, CSI)", "a\x7fb\u009b2Jc", ["\\x7f"]),
        ("error with a tab", "a\tb", ["\\x09"]),
    ]
    for name, text, frags in fails:
        c.append(Case("collect tamper", name, col, setup=p1(to_error(text)), exits=(1,),
                      frags=["point 2", "failed"] + frags, allow_stray=["s.csv"], plain_stderr=True,
                      note="failed points are reported and give exit 1, as locally; the CSV is written",
                      unsure="U+009B is a C1 control character (CSI on terminals that take 8-bit "
                             "controls); docs/cli.md escapes control characters in messages"
                      if "C1" in name else ""))
    c.append(Case("collect tamper", "error of 100 KB", col, setup=p1(to_error("E" * 100_000)), exits=(1,),
                  frags=["point 2", "failed"], allow_stray=["s.csv"], plain_stderr=True,
                  unsure="no bound on a point's error text is documented; messages are one short line, "
                         "user text cut (docs/cli.md), so a 100 KB line is taken as unclear"))
    return c


def cli_form_cases():
    """The remaining argument surfaces: sweep grid syntax, --param, --set,
    --trace-window and --timeout forms."""
    c = []
    sw = ["sweep", "softmax-merge", "-j", "2", "--csv", "s.csv"]
    grid_bad = [
        ("tiles=1,,2", ["--param", "tiles=1,,2"], ["tiles"]),
        ("tiles=,1", ["--param", "tiles=,1"], ["tiles"]),
        ("tiles=,", ["--param", "tiles=,"], ["tiles"]),
        ("=1,2", ["--param", "=1,2"], ["=1,2"]),
        ("tiles (no =)", ["--param", "tiles"], ["tiles"]),
        ("axis given twice", ["--param", "tiles=1,2", "--param", "tiles=3"], ["tiles"]),
        ("config axis given twice", ["--param", "pe.attrs.clock_freq_ghz=1,2", "--param",
                                     "pe.attrs.clock_freq_ghz=3"], ["pe.attrs.clock_freq_ghz"]),
        ("unknown config axis", ["--param", "pe.attrs.bogus=1,2"], ["pe.attrs.bogus"]),
        ("config block as axis", ["--param", "pe.attrs=1"], ["pe.attrs"]),
        ("unknown bench axis", ["--param", "bogus=1,2"], ["bogus"]),
        ("bad value late in the list", ["--param", "tiles=" + ",".join(str(i) for i in range(1, 100)) + ",0"],
         ["tiles"]),
        ("second axis bad", ["--param", "tiles=1,2", "--param", "heads=1,x"], ["heads"]),
        ("config axis out of range", ["--param", "pe.attrs.tile.m=64,65537"], ["pe.attrs.tile.m"]),
        ("100 x 101 points", ["--param", "tiles=" + ",".join(str(i) for i in range(1, 101)),
                              "--param", "heads=" + ",".join(str(i) for i in range(1, 102))],
         ["tiles", "100", "heads", "101", "10100"]),
        ("2000^3 points", ["--param", "tiles=" + ",".join(str(i) for i in range(1, 2001)),
                           "--param", "heads=" + ",".join(str(i) for i in range(1, 2001)),
                           "--param", "kv_tile=" + ",".join(str(i) for i in range(1, 2001))],
         ["tiles", "heads", "kv_tile", "10000"]),
    ]
    for name, args, frags in grid_bad:
        c.append(Case("sweep grid", name, sw + args, frags=frags, outputs=["s.csv"]))
    c.append(Case("sweep grid", "tiles=1, (trailing comma)", sw + ["--param", "tiles=1,"],
                  frags=["tiles"], outputs=["s.csv"],
                  unsure="'tiles=1,,2' and 'tiles=,1' are an empty value (exit 2); a trailing empty value "
                         "is read the same way"))
    c.append(Case("sweep grid", "tiles=1,1 (a value twice)", sw + ["--param", "tiles=1,1"],
                  expect="either", frags=["tiles"], check=csv_rows("s.csv", 2),
                  unsure="not documented: two equal points or bad input"))
    c.append(Case("sweep grid", "axis and --set on one key", sw + ["--param", "pe.attrs.tile.m=32,64",
                                                                   "--set", "pe.attrs.tile.m=16"],
                  expect="either", frags=["pe.attrs.tile.m"], check=csv_rows("s.csv", 2),
                  unsure="not documented which wins; either point values or bad input"))
    c.append(Case("sweep grid", "topology axis on a single-PE bench", sw + ["--param", "topology.mesh.h=1,2"],
                  expect="either", frags=["topology.mesh.h"], check=csv_rows("s.csv", 2),
                  unsure="docs/cli.md calls any key not starting with pe. a bench parameter (exit 2); "
                         "--help takes topology.* as configuration keys, which single-PE benches ignore"))
    c.append(Case("sweep grid", "--emit-jobs of 100 x 100 = 10000 points (the limit)",
                  ["sweep", "softmax-merge", "--param", "tiles=" + ",".join(str(i) for i in range(1, 101)),
                   "--param", "heads=" + ",".join(str(i) for i in range(1, 101)), "--emit-jobs", "j.txt"],
                  expect="accept", allow_stray=["j.txt.sbatch", "j.txt.points"],
                  check=all_checks(lines_at_least("j.txt", 10000), peak_below(512))))
    c.append(Case("sweep grid", "--emit-jobs of 10100 points", ["sweep", "softmax-merge", "--param",
                                                                "tiles=" + ",".join(str(i) for i in range(1, 101)),
                                                                "--param", "heads=" + ",".join(
                                                                    str(i) for i in range(1, 102)),
                                                                "--emit-jobs", "j.txt"],
                  frags=["10100"], outputs=["j.txt", "j.txt.sbatch", "j.txt.points"]))

    run = ["run", "softmax-merge", "--json", "out.json"]
    params_bad = [
        ("tiles=1=2", ["--param", "tiles=1=2"], ["tiles"]),
        ("=1", ["--param", "=1"], ["=1"]),
        ("=", ["--param", "="], ["="]),
        ("TILES=1", ["--param", "TILES=1"], ["TILES"]),
        ("' tiles=1' (leading space)", ["--param", " tiles=1"], ["tiles"]),
        ("tiles=1 2", ["--param", "tiles=1 2"], ["tiles"]),
        ("tiles=0x1", ["--param", "tiles=0x1"], ["tiles"]),
        ("tiles=1,2 (not a list)", ["--param", "tiles=1,2"], ["tiles"]),
        ("tiles=\\x1b", ["--param", "tiles=\x1b[2J"], ["tiles"]),
    ]
    for name, args, frags in params_bad:
        c.append(Case("--param form", name, run + args, frags=frags, outputs=["out.json"], plain_stderr=True))
    for bench, p in (("gqa-decode", "dtype=BF16"), ("gqa-decode", "dtype=bf16 "), ("gqa-decode", "dtype="),
                     ("gqa-decode", "input_range=0.5"), ("gemm-composite", "dtype=Int8"),
                     ("allreduce", "algos=lrab, ring")):
        c.append(Case("--param form", "%s %s" % (bench, p), ["run", bench, "--param", p, "--json", "out.json",
                                                             "--timeout", "5"],
                      frags=[p.split("=")[0]], outputs=["out.json"]))
    c.append(Case("--param form", "--param=tiles=1", ["run", "softmax-merge", "--param=tiles=1", "--json",
                                                      "out.json"],
                  expect="accept", check=latency_vs_default("out.json", "finite")))
    for p in ("tiles=01", "tiles=+1", "tiles= 1", "tiles=1 ", "tiles=\n1"):
        c.append(Case("--param form", p.replace("\n", "\\n"), run + ["--param", p], expect="either",
                      frags=["tiles"],
                      check=latency_vs_default("out.json", "finite"),
                      unsure="'positive integers' does not say whether a sign, a leading zero or spaces "
                             "are allowed; a run of tiles=1 or a clean error both count"))
    c.append(Case("--param form", "tiles=1 then tiles=2", run + ["--param", "tiles=1", "--param", "tiles=2"],
                  expect="either", frags=["tiles"], check=json_file("out.json"),
                  unsure="not documented: the last one winning silently or bad input (as a sweep axis "
                         "given twice is)"))

    c_ = "pe.attrs.clock_freq_ghz"
    set_bad = [
        (c_ + "=2=3", [c_]), (c_ + "=0x2", [c_]), (c_ + "=1_0", [c_]),
        (c_ + "=2GHz", [c_]), (c_ + "=1,5", [c_]),
        ("pe.attrs.data_mode=yes", ["pe.attrs.data_mode"]), ("pe.attrs.data_mode=True", ["pe.attrs.data_mode"]),
        ("pe.attrs.data_mode=1", ["pe.attrs.data_mode"]), ("pe.attrs.data_mode=on", ["pe.attrs.data_mode"]),
        ("pe.attrs.tile.m=+64", ["pe.attrs.tile.m"]), ("pe.attrs.tile.m=64.0", ["pe.attrs.tile.m"]),
        ("pe.attrs.tile.m=0b1", ["pe.attrs.tile.m"]), ("pe.attrs.tile.m==64", ["pe.attrs.tile.m"]),
        ("pe.attrs.tile.m=~", ["pe.attrs.tile.m"]), ("pe.attrs.tile.m=null", ["pe.attrs.tile.m"]),
        ("pe.attrs.tile.m=!!str 64", ["pe.attrs.tile.m"]), ("PE.attrs.tile.m=64", ["PE.attrs.tile.m"]),
        (" pe.attrs.tile.m=64", ["pe.attrs.tile.m"]), ("pe.attrs.tile.m =64", ["pe.attrs.tile.m"]),
        ("pe.attrs.tile.m=64\x1b[2J", ["pe.attrs.tile.m", "\\x1b"]),
    ]
    for kv, frags in set_bad:
        c.append(Case("--set form", kv.replace("\x1b", "\\x1b"), ["config", "--set", kv], frags=frags,
                      plain_stderr=True,
                      unsure="YAML's !!str tag makes the value a string: read as a wrong type" if "!!str" in kv
                      else ""))
    set_ok = [
        ("--set=" + c_ + "=2", ["--set=" + c_ + "=2"], "clock_freq_ghz: 2"),
        (c_ + "=2.", ["--set", c_ + "=2."], "clock_freq_ghz: 2"),
        (c_ + "=.5", ["--set", c_ + "=.5"], "clock_freq_ghz: 0.5"),
        (c_ + "=2e0", ["--set", c_ + "=2e0"], "clock_freq_ghz: 2"),
        (c_ + "='2'", ["--set", c_ + "='2'"], "clock_freq_ghz: 2"),
        (c_ + "=+2", ["--set", c_ + "=+2"], "clock_freq_ghz: 2"),
        (c_ + "=2 (trailing space)", ["--set", c_ + "=2 "], "clock_freq_ghz: 2"),
        (c_ + "= 2 (leading space)", ["--set", c_ + "= 2"], "clock_freq_ghz: 2"),
        ("pe.attrs.tile.m=064", ["--set", "pe.attrs.tile.m=064"], "m: 64"),
    ]
    for name, args, want in set_ok:
        c.append(Case("--set form", name, ["config"] + args, expect="either", frags=[c_.rsplit(".", 1)[0]],
                      check=stdout_has(want),
                      unsure="a YAML number form; read as the number (%s) or refused, both count" % want))

    tw_bad = ["1000:0", "5:5", "2us:1us", "0:18446744073709551616", "0:1.5ps", "0:19000000s", "0:1e3",
              "-1:5", "0:5m", "5", ":", "0:", ":5", "0:5:6", "0:1.0000000000001ns", "0:nan", "0:inf",
              "0us:1US", "1.5:2", "0:1.2e3ns", " 0:5", "0:5 ", "0x10:0x20", "", "0:5\n", "0:\x1b[2J"]
    for w in tw_bad:
        shown = w.replace("\n", "\\n").replace("\x1b", "\\x1b")
        c.append(Case("--trace-window", "run '%s'" % shown, SMALL_RUN + ["--trace", "t.json", "--trace-window", w],
                      frags=["--trace-window"], outputs=["t.json"], plain_stderr=True))
    for w in ("5:5", "abc"):
        c.append(Case("--trace-window", "replay '%s'" % w, ["replay", "s.stream", "--trace", "t.json",
                                                            "--trace-window", w],
                      setup=writer("s.stream", SHORT_STREAM), frags=["--trace-window"], outputs=["t.json"]))
        c.append(Case("--trace-window", "mesh run '%s'" % w, MESH_SMALL + ["--trace", "t.json", "--trace-window", w],
                      frags=["--trace-window"], outputs=["t.json"]))
    c.append(Case("--trace-window", "without --trace", SMALL_RUN + ["--trace-window", "0:5"], frags=["--trace"]))
    c.append(Case("--trace-window", "on sweep", SMALL_SWEEP + ["--trace-window", "0:5"],
                  frags=["--trace-window"]))
    c.append(Case("--trace-window", "given twice", SMALL_RUN + ["--trace", "t.json", "--trace-window", "0:5",
                                                                "--trace-window", "5:6"],
                  frags=["--trace-window"], outputs=["t.json"]))
    tw_ok = [("0:18446744073709551615", 0, U64_MAX), ("0:1.5ns", 0, 1500), ("1ms:2ms", 10**9, 2 * 10**9),
             ("00:01", 0, 1), ("0:1s", 0, 10**12), ("1us:2us", 10**6, 2 * 10**6)]
    for w, s0, e0 in tw_ok:
        c.append(Case("--trace-window", "run '%s' accepted" % w,
                      SMALL_RUN + ["--trace", "t.json", "--trace-window", w],
                      expect="accept", check=trace_window_is("t.json", s0, e0),
                      unsure="a window over all of time is the whole trace; docs/observability.md still has "
                             "otherData carry the window given" if e0 == U64_MAX and s0 == 0 else ""))
    c.append(Case("--trace-window", "mesh run 1us:2us accepted",
                  MESH_SMALL + ["--trace", "t.json", "--trace-window", "1us:2us"],
                  expect="accept", check=trace_window_is("t.json", 10**6, 2 * 10**6)))
    c.append(Case("--trace-window", "replay 0:5ns accepted",
                  ["replay", "s.stream", "--trace", "t.json", "--trace-window", "0:5ns"],
                  setup=writer("s.stream", SHORT_STREAM),
                  expect="accept", check=trace_window_is("t.json", 0, 5000)))

    for t in ("0x1", "1e0", " 1"):
        c.append(Case("cli", "run --timeout '%s'" % t, SMALL_RUN + ["--timeout", t, "--json", "out.json"],
                      expect="either", frags=["--timeout"], check=json_file("out.json"),
                      unsure="a number form the docs do not name; a run or a clean error both count"))
    return c


def more_cases(binary):
    info = parse_key_info(binary)
    benches = parse_benches(binary)
    if not benches:
        sys.exit("could not read the benches from `%s list`" % binary)
    return (mesh_timeout_cases() + fifo_output_cases() + clash_cases() + list_param_cases(benches)
            + one_pe_cases() + duplicate_key_cases(info) + topology_cases(info, binary)
            + mesh_memory_cases() + collect_tamper_cases(binary) + cli_form_cases())


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
        # C0 controls but the line break, DEL and the C1 controls (U+0080-U+009F)
        raw = sorted({"0x%02x" % ord(ch) for ch in stderr
                      if (ord(ch) < 0x20 and ch != "\n") or 0x7f <= ord(ch) <= 0x9f})
        if case.plain_stderr and raw:
            notes.append("raw control bytes on stderr: %s" % ", ".join(raw[:5]))
            return UNCLEAR
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
        if len(stderr) > 1100:  # docs/cli.md: a message is cut after about 1000 bytes
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


def visible(s):
    """Text safe to print on a terminal: control characters as \\xNN."""
    return "".join("\\x%02x" % ord(ch) if (ord(ch) < 0x20 and ch != "\n") or 0x7f <= ord(ch) <= 0x9f
                   else ch for ch in s)


def shell_quote(a):
    s = visible(a.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
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
            + collect_cases() + output_cases() + tile_cases() + signal_cases()
            + more_cases(binary))


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
                i, rec["verdict"], rec["family"][:16], visible(rec["case"].replace("\n", "\\n"))[:48],
                rec["signal"] or rec["exit"], rec["wall_s"],
                "-" if rec["peak_rss_mib"] is None else "%.0f" % rec["peak_rss_mib"],
                visible(rec["stderr_first_line"][:100])), flush=True)
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
                                             visible(r["case"].replace("\n", "\\n")),
                                             visible((r["notes"] or r["stderr_first_line"][:120])
                                                     .replace("\n", "\\n"))))
            if r["verdict"] != ACCEPTED:
                print("      $ %s" % r["command"][:200])
                if r["stderr_first_line"]:
                    print("      stderr: %s" % visible(r["stderr_first_line"][:200]))
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
