#!/usr/bin/python3
"""Plots of kernbench results (PNG, matplotlib, headless).

Runs build/kernbench and writes five figures to docs/plots/ (or --out):

  gqa_timeline.png      the first KV tiles of gqa-decode, opt2 above opt3: one
                        row per component (pe_cpu dispatch and stalls, the
                        pe_scheduler queue occupancy, pe_dma, pe_gemm, pe_math,
                        pe_tcm), from `kernbench run gqa-decode --trace`
  gemm_tflops_vs_k.png  TFLOPS against K for the composite, async_full and
                        async_tiled GEMM (`kernbench run gemm-async-vs-composite`)
  dispatch_ratio_vs_r.png
                        opt3/opt2 per-tile dispatch ratio, and each variant's
                        per-tile dispatch, across R = byte_cycles_recip
                        (`kernbench sweep gqa-decode`)
  allreduce.png         all-reduce time (simulated and the alpha-beta model) and
                        bus bandwidth against size, LRAB vs ring
                        (`kernbench run allreduce`)
  gqa-long-ctx.png      long-context GQA decode latency against context for the
                        four partitioning cases, with each case's roofline
                        (`kernbench run gqa-long-ctx`, the default contexts)

Usage: scripts/setup.sh && scripts/plots.py [--out DIR] [--tiles N] [--only NAME ...]
Needs python3-matplotlib (Debian; scripts/setup.sh installs it).
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = ["pe_cpu", "pe_scheduler", "pe_dma", "pe_gemm", "pe_math", "pe_tcm"]
VARIANT_COLOURS = {"composite": "tab:blue", "async_full": "tab:orange", "async_tiled": "tab:green"}
GEMM_KS = [128, 256, 512, 768, 1024, 1536, 2048, 3072]  # async_full holds all of A and B in TCM
R_VALUES = [0.0078125, 0.015625, 0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0]
DEFAULT_R = 0.0625


def kernbench(binary, *args):
    """Runs kernbench; its report goes to our stderr so stdout stays for us."""
    cmd = [binary, *args]
    print("+ " + " ".join(cmd), file=sys.stderr)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"plots: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


_CONFIG = {}


def config_value(binary, key):
    """A number from `kernbench config` (the effective default configuration)."""
    if binary not in _CONFIG:
        _CONFIG[binary] = kernbench(binary, "config")
    text = _CONFIG[binary]
    m = re.search(r"^\s*" + re.escape(key) + r":\s*([0-9.eE+-]+)", text, re.M)
    if not m:
        sys.exit(f"plots: no '{key}' in `kernbench config`")
    return float(m.group(1))


# ---- gqa-decode timeline -------------------------------------------------------


def first_tiles_window(slices, tile_commands, tiles):
    """Command ids of the prologue and of each of the first `tiles` KV tiles.

    A head group starts with its prologue (the Q load and the fills of m, l,
    O: kernels/attention/gqa_decode.cpp), then `tile_commands` commands per
    KV tile."""
    dispatches = sorted((s for s in slices if s["args"]["kind"] == "DISPATCH"),
                        key=lambda s: s["args"]["cmd_id"])
    prologue = []
    for s in dispatches:
        a = s["args"]
        if (not prologue and a["cmd_type"] == "DmaReadCmd") or a.get("op") == "fill":
            prologue.append(a["cmd_id"])
        else:
            break
    first = dispatches[len(prologue)]["args"]["cmd_id"]
    tile_of = {cid: -1 for cid in prologue}
    for t in range(tiles + 1):
        for cid in range(first + t * tile_commands, first + (t + 1) * tile_commands):
            tile_of[cid] = t
    return tile_of, first + tiles * tile_commands  # ids below the limit: the window


def plot_timeline(binary, tmp, out, tiles):
    trace_path = os.path.join(tmp, "gqa.json")
    fig_path = os.path.join(tmp, "gqa_figures.json")
    kernbench(binary, "run", "gqa-decode", "--trace", trace_path, "--json", fig_path)
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    with open(fig_path) as f:
        figures = json.load(f)["figures"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    launches = {e["name"]: e["args"] for e in events if e["ph"] == "X" and e["cat"] == "launch"}
    occupancy = [(e["ts"] * 1e6, e["args"]["queue_occupancy"]) for e in events if e["ph"] == "C"]
    depth = config_value(binary, "queue_depth")

    variants = ["opt2", "opt3"]
    panels = {}
    for v in variants:
        start, end = launches[v]["start_ps"], launches[v]["end_ps"]
        mine = [e for e in events if e["ph"] == "X" and e["cat"] != "launch"
                and start <= e["args"]["start_ps"] and e["args"]["end_ps"] <= end]
        tile_commands = round(figures[v]["tile_commands"])
        tile_of, limit = first_tiles_window(mine, tile_commands, tiles)
        window_end = max(e["args"]["end_ps"] for e in mine if e["args"]["cmd_id"] < limit)
        panels[v] = (start, window_end, mine, tile_of, tile_commands)
    span_ns = max((w - s) for s, w, *_ in panels.values()) / 1000.0

    colours = plt.get_cmap("tab10").colors
    fig, axes = plt.subplots(2, 1, figsize=(13, 7.5), sharex=True)
    for ax, v in zip(axes, variants):
        start, window_end, mine, tile_of, tile_commands = panels[v]
        for e in mine:
            a = e["args"]
            x0 = (a["start_ps"] - start) / 1000.0
            width = (a["end_ps"] - a["start_ps"]) / 1000.0
            if x0 > span_ns:
                continue
            row = ROWS.index(names[e["tid"]])
            t = tile_of.get(a["cmd_id"], tiles)  # -1 prologue, >= tiles: later tiles
            if a["kind"] == "STALL":
                face, hatch, edge = "#fbe3e3", "////", "#d62728"
            elif t < 0:
                face, hatch, edge = "#8c8c8c", None, "white"
            elif t >= tiles:
                face, hatch, edge = "#d9d9d9", None, "white"
            else:
                face, hatch, edge = colours[t % len(colours)], None, "white"
            ax.broken_barh([(x0, width)], (row - 0.4, 0.8), facecolors=face, edgecolors=edge,
                           hatch=hatch, linewidth=0.3)
            label = a["kind"] if a["kind"] not in ("DISPATCH", "STALL") else ""
            if a.get("op") and a["kind"] == "MATH":
                label = a["op"]
            fits = width > span_ns * 0.0056 * (len(label) + 1) and x0 + width <= span_ns
            if label and fits:
                ax.text(x0 + width / 2, row, label, ha="center", va="center", fontsize=6.5,
                        color="white" if 0 <= t < tiles else "black", clip_on=True)
        # pe_scheduler: queue occupancy as a step curve inside its row.
        row = ROWS.index("pe_scheduler")
        xs, ys = [], []
        for ps, n in occupancy:
            if ps < start or ps > start + span_ns * 1000.0:
                continue
            xs.append((ps - start) / 1000.0)
            ys.append(row + 0.4 - 0.8 * n / depth)  # rows grow downwards: full is up
        if xs:
            xs.append(span_ns)
            ys.append(ys[-1])
            ax.step(xs, ys, where="post", color="black", linewidth=1.0)
            ax.fill_between(xs, row + 0.4, ys, step="post", color="#9ecae1")
        ax.set_yticks(range(len(ROWS)))
        ax.set_yticklabels([r if r != "pe_scheduler" else f"pe_scheduler\nqueue 0..{depth:.0f}"
                            for r in ROWS])
        ax.set_ylim(len(ROWS) - 0.5, -0.5)
        ax.set_xlim(0, span_ns)
        ax.grid(axis="x", color="#e0e0e0", linewidth=0.5)
        ax.set_axisbelow(True)
        ax.set_title(f"{v}: {tile_commands} command{'s' if tile_commands != 1 else ''} per KV tile, "
                     f"first {tiles} tiles end at {(window_end - start) / 1000.0:.0f} ns",
                     fontsize=10, loc="left")
    axes[-1].set_xlabel("time since the launch started (ns)")
    handles = [Patch(facecolor="#8c8c8c", label="prologue (Q load, fills)")]
    handles += [Patch(facecolor=colours[t], label=f"KV tile {t}") for t in range(tiles)]
    handles += [Patch(facecolor="#d9d9d9", label="later tiles"),
                Patch(facecolor="#fbe3e3", edgecolor="#d62728", hatch="////",
                      label="PE_CPU stalled (queue full)"),
                Patch(facecolor="#9ecae1", edgecolor="black", label="queue occupancy")]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle("gqa-decode (default shape, head group 0): the first KV tiles, opt2 vs opt3", fontsize=12)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path = os.path.join(out, "gqa_timeline.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- GEMM TFLOPS against K ---------------------------------------------------


def plot_gemm(binary, tmp, out):
    fig_path = os.path.join(tmp, "gemm.json")
    ks = ",".join(str(k) for k in GEMM_KS)
    kernbench(binary, "run", "gemm-async-vs-composite", "--param", "ks=" + ks, "--json", fig_path)
    with open(fig_path) as f:
        figures = json.load(f)["figures"]
    peak = (2 * config_value(binary, "array_rows") * config_value(binary, "array_cols")
            * config_value(binary, "clock_freq_ghz") / 1000.0)
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for v, colour in VARIANT_COLOURS.items():
        ys = [figures[f"k{k}"][v]["tflops"] for k in GEMM_KS]
        ax.plot(GEMM_KS, ys, marker="o", color=colour, label=v)
    ax.axhline(peak, color="grey", linestyle="--", linewidth=1)
    ax.text(GEMM_KS[0], peak, f" array peak {peak:.2f} TFLOPS", va="bottom", fontsize=8, color="grey")
    ax.set_xscale("log", base=2)
    ax.set_xticks(GEMM_KS)
    ax.set_xticklabels([str(k) for k in GEMM_KS])
    ax.set_ylim(0, peak * 1.1)
    ax.set_xlabel("K")
    ax.set_ylabel("TFLOPS")
    ax.set_title("GEMM C[256, 256] = A @ B (bf16, bench defaults): composite vs async_full vs async_tiled",
                 fontsize=10)
    ax.grid(color="#e0e0e0", linewidth=0.5)
    ax.legend()
    fig.tight_layout()
    path = os.path.join(out, "gemm_tflops_vs_k.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- opt3 / opt2 dispatch ratio across R ------------------------------------------


def plot_dispatch_ratio(binary, tmp, out, jobs):
    csv_path = os.path.join(tmp, "sweep.csv")
    rs = ",".join(repr(r) for r in R_VALUES)
    args = ["sweep", "gqa-decode", "--param", "pe.attrs.pe_cost_model.byte_cycles_recip=" + rs,
            "--csv", csv_path]
    if jobs:
        args += ["-j", str(jobs)]
    kernbench(binary, *args)
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    r = [float(row["pe.attrs.pe_cost_model.byte_cycles_recip"]) for row in rows]
    # An empty cell: the ratio does not apply (free dispatch, docs/observability.md); not plotted.
    ratio = [float(row["tile_dispatch_ratio_opt3_over_opt2"] or "nan") for row in rows]
    opt2 = [float(row["opt2.tile_dispatch_ns"]) for row in rows]
    opt3 = [float(row["opt3.tile_dispatch_ns"]) for row in rows]
    per_tile = {v: round(float(rows[0][v + ".tile_commands"])) for v in ("opt2", "opt3")}
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    left.plot(r, ratio, marker="o", color="tab:purple")
    for x, y in zip(r, ratio):
        left.annotate(f"{y:.2f}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    left.set_ylabel("opt3 / opt2 per-tile dispatch")
    left.set_title("opt3 / opt2 per-tile PE_CPU dispatch")
    right.plot(r, opt2, marker="o", label=f"opt2 ({per_tile['opt2']} composites per tile)")
    right.plot(r, opt3, marker="s", label=f"opt3 ({per_tile['opt3']} single-op commands per tile)")
    right.set_ylabel("per-tile dispatch (ns)")
    right.set_title("per-tile PE_CPU dispatch")
    right.legend()
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(R_VALUES)
        ax.set_xticklabels([f"{x:g}" for x in R_VALUES], rotation=30)
        ax.axvline(DEFAULT_R, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel("R = byte_cycles_recip (dispatch cycles per logical byte)")
        ax.grid(color="#e0e0e0", linewidth=0.5)
    left.text(DEFAULT_R, min(ratio), " default R", color="grey", fontsize=8, va="bottom")
    fixed = config_value(binary, "fixed_per_cmd_cycles")
    fixed_single = config_value(binary, "fixed_per_single_op_cmd_cycles")
    fig.suptitle(f"gqa-decode: PE_CPU dispatch across R (FIXED {fixed:g} cycles per composite, "
                 f"{fixed_single:g} per single-op command)")
    fig.tight_layout()
    path = os.path.join(out, "dispatch_ratio_vs_r.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- all-reduce: LRAB vs ring ---------------------------------------------------


def plot_allreduce(binary, tmp, out):
    fig_path = os.path.join(tmp, "allreduce.json")
    kernbench(binary, "run", "allreduce", "--json", fig_path)
    with open(fig_path) as f:
        figures = json.load(f)["figures"]
    mesh = figures["mesh"]
    fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(11, 4.4))
    for algo, colour in (("lrab", "tab:red"), ("ring", "tab:blue")):
        rows = sorted(figures[algo].values(), key=lambda r: r["bytes"])
        xs = [r["bytes"] for r in rows]
        ax_t.plot(xs, [r["time_us"] for r in rows], marker="o", color=colour, label=f"{algo} (simulated)")
        ax_t.plot(xs, [r["model_us"] for r in rows], linestyle="--", color=colour, label=f"{algo} (alpha-beta model)")
        ax_b.plot(xs, [r["busbw_GBps"] for r in rows], marker="o", color=colour, label=algo)
    for ax in (ax_t, ax_b):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes per PE")
        ax.grid(color="#e0e0e0", linewidth=0.5)
        ax.legend(fontsize=8)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("time (us)")
    ax_b.set_ylabel("bus bandwidth (GB/s)")
    fig.suptitle(f"all-reduce (sum, fp32) on a {mesh['h']} x {mesh['w']} mesh of {mesh['pes_per_cube']}-PE cubes "
                 f"({mesh['pes']} PEs)", fontsize=10)
    fig.tight_layout()
    path = os.path.join(out, "allreduce.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- long-context GQA decode: the four partitioning cases ----------------------------

LONG_CTX_CASES = {"cube_sp_pe_tp": "tab:red", "cube_tp_pe_sp": "tab:blue",
                  "cube_repl_pe_sp": "tab:green", "cube_sp_pe_sp": "tab:purple"}


def plot_long_ctx(binary, tmp, out):
    fig_path = os.path.join(tmp, "long_ctx.json")
    kernbench(binary, "run", "gqa-long-ctx", "--json", fig_path)
    with open(fig_path) as f:
        figures = json.load(f)["figures"]
    mesh = figures["mesh"]
    fig, (ax_l, ax_t) = plt.subplots(1, 2, figsize=(12, 4.6))
    for case, colour in LONG_CTX_CASES.items():
        if case not in figures:
            continue
        rows = sorted(figures[case].values(), key=lambda r: r["context"])
        xs = [r["context"] for r in rows]
        ax_l.plot(xs, [r["latency_us"] for r in rows], marker="o", color=colour, label=f"{case} (simulated)")
        ax_l.plot(xs, [r["bound_us"] for r in rows], linestyle="--", color=colour, linewidth=1,
                  label=f"{case} (roofline)")
        ax_t.plot(xs, [r["tokens_per_s"] for r in rows], marker="o", color=colour, label=case)
    for ax in (ax_l, ax_t):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("context (tokens)")
        ax.grid(color="#e0e0e0", linewidth=0.5, which="both")
    ax_l.set_ylabel("latency of one decode step (us)")
    ax_l.legend(fontsize=7, ncol=2)
    ax_t.set_ylabel("tokens/s (requests / latency)")
    ax_t.legend(fontsize=8)
    fig.suptitle(f"gqa-long-ctx (32 query heads, 8 KV heads, d = 128, bf16) on a {mesh['h']} x {mesh['w']} mesh of "
                 f"{mesh['pes_per_cube']}-PE cubes ({mesh['pes']} PEs), LRAB root cube {mesh['root_cube']}",
                 fontsize=10)
    fig.tight_layout()
    path = os.path.join(out, "gqa-long-ctx.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


PLOTS = ["gqa_timeline", "gemm_tflops_vs_k", "dispatch_ratio_vs_r", "allreduce", "gqa-long-ctx"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernbench", default=os.path.join(TOP, "build", "kernbench"),
                   help="the kernbench binary (default: build/kernbench)")
    p.add_argument("--out", default=os.path.join(TOP, "docs", "plots"),
                   help="output folder (default: docs/plots)")
    p.add_argument("--tiles", type=int, default=3, help="KV tiles in the timeline (default 3)")
    p.add_argument("-j", "--jobs", type=int, default=0, help="parallel runs of the sweep (default: cores)")
    p.add_argument("--only", nargs="+", choices=PLOTS, help="write only these figures (default: all)")
    args = p.parse_args()
    if not os.access(args.kernbench, os.X_OK):
        sys.exit(f"plots: {args.kernbench} not found; build it first (scripts/setup.sh)")
    if args.tiles < 1:
        sys.exit("plots: --tiles must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kernbench_plots_") as tmp:
        makers = {
            "gqa_timeline": lambda: plot_timeline(args.kernbench, tmp, args.out, args.tiles),
            "gemm_tflops_vs_k": lambda: plot_gemm(args.kernbench, tmp, args.out),
            "dispatch_ratio_vs_r": lambda: plot_dispatch_ratio(args.kernbench, tmp, args.out, args.jobs),
            "allreduce": lambda: plot_allreduce(args.kernbench, tmp, args.out),
            "gqa-long-ctx": lambda: plot_long_ctx(args.kernbench, tmp, args.out),
        }
        for name in args.only or PLOTS:
            print(f"wrote {os.path.relpath(makers[name]())}")


if __name__ == "__main__":
    main()
