#!/usr/bin/env python3
"""GPU bench report: tune's best generated kernel vs the best vendor-library record per workload.

Reads a tuning-log export (tune-client export: JSON lines, db/record_json.cc) and writes a
Markdown table: per workload, the fastest successful generated kernel and the fastest record of a
library template (cuBLAS, cuDNN, rocBLAS, MIOpen: the library's own algorithms are among its
template's configs), their times, GFLOPS, % of the theoretical FP32 peak and the ratio
library time / tune time (> 1: tune is faster).

Like is compared with like: where a job's finalists were re-measured (records with `final`: tune's
fastest configs and the library's best, in the same interleaved passes, tuner/finalists.h), both
sides are those re-measurements, each config's every re-measured round pooled as the daemon
decides; the column "compared on" says so. Otherwise (an export without them) each side is its
fastest single search record, tune's the fastest of many and the library's of a few.

Usage: gpu_report.py EXPORT.jsonl [--workloads FILE] [--peak-gflops X] [--peak-note TEXT]
                     [--trials N] [--title TEXT] [--out REPORT.md]
A record's time is the median of its round_secs (each round: the mean of `number` calls).
"""
import argparse
import json
import re
import statistics
import sys

LIBRARY_WORDS = ("cublas", "cudnn", "rocblas", "miopen")


def parse_workload(text):
    """('gemm'|'conv2d', {field: int}) of a workload text."""
    op, _, rest = text.partition(":")
    fields = {}
    for item in rest.split(","):
        if "=" in item:
            key, value = item.split("=", 1)
            fields[key] = int(value) if re.fullmatch(r"-?\d+", value) else value
    return op, fields


def flops(text):
    """Floating-point operations of one run (multiply-add = 2), None for an unknown operator."""
    op, f = parse_workload(text)
    if op == "gemm":
        return 2.0 * f["M"] * f["N"] * f["K"]
    if op == "conv2d":
        stride, pad, dil = f.get("stride", 1), f.get("pad", 0), f.get("dilation", 1)
        p = (f["H"] + 2 * pad - dil * (f["R"] - 1) - 1) // stride + 1
        q = (f["W"] + 2 * pad - dil * (f["S"] - 1) - 1) // stride + 1
        return 2.0 * f["N"] * f["K"] * p * q * f["C"] * f["R"] * f["S"] / f.get("groups", 1)
    return None


def is_library(record):
    name = record.get("template", "").lower()
    return any(word in name for word in LIBRARY_WORDS)


def record_secs(record):
    rounds = [r for r in record.get("round_secs", []) if isinstance(r, (int, float)) and r > 0]
    return statistics.median(rounds) if rounds else None


def load(path):
    records = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                print(f"gpu_report: {path}:{number}: not JSON ({e}); skipped", file=sys.stderr)
    return records


def canonical(text):
    """The workload text as the log keys it (common/workload.h: conv2d always names stride and
    pad; dilation=1, groups=1 and dtype=f32 are omitted)."""
    op, f = parse_workload(text)
    defaults = {"dilation": 1, "groups": 1, "dtype": "f32"}
    items = [f"{k}={v}" for k, v in f.items() if defaults.get(k) != v]
    return f"{op}:{','.join(items)}"


def final_bests(records):
    """{workload: {'tune': (secs, record), 'library': (secs, record)}} from the finalists'
    re-measurements: per config, the median of every round of every pass; per kind, the fastest."""
    pooled = {}
    for r in records:
        if not r.get("final") or r.get("error", "NONE") != "NONE":
            continue
        key = (r.get("workload", "?"), r.get("template", ""),
               json.dumps(r.get("config", {}), sort_keys=True))
        rounds, _ = pooled.setdefault(key, ([], r))
        rounds += [x for x in r.get("round_secs", []) if isinstance(x, (int, float)) and x > 0]
    table = {}
    for (workload, _, _), (rounds, record) in pooled.items():
        if not rounds:
            continue
        secs = statistics.median(rounds)
        row = table.setdefault(workload, {"tune": None, "library": None})
        kind = "library" if is_library(record) else "tune"
        if row[kind] is None or secs < row[kind][0]:
            row[kind] = (secs, record)
    return table


def best_per_workload(records):
    """{workload: {'tune': (secs, record), 'library': (secs, record), 'trials': n, 'failed': n,
    'basis': text}}: the final re-measurements where both kinds have them, else the search's."""
    table = {}
    for r in records:
        row = table.setdefault(r.get("workload", "?"),
                               {"tune": None, "library": None, "trials": 0, "failed": 0,
                                "basis": "search records"})
        row["trials"] += 1
        if r.get("error", "NONE") != "NONE":
            row["failed"] += 1
            continue
        secs = record_secs(r)
        if secs is None:
            continue
        kind = "library" if is_library(r) else "tune"
        if row[kind] is None or secs < row[kind][0]:
            row[kind] = (secs, r)
    for workload, finals in final_bests(records).items():
        if finals["tune"] and finals["library"]:
            table[workload].update(finals, basis="final re-measurements")
    return table


def cell(best, work, peak):
    if best is None:
        return ["-", "-", "-", "-"]
    secs, record = best
    gflops = work / secs / 1e9 if work else None
    pct = f"{100.0 * gflops / peak:.1f}%" if gflops and peak else "-"
    return [f"{secs * 1e6:.1f}", f"{gflops:.0f}" if gflops else "-", pct,
            f"{record.get('template', '?')} `{json.dumps(record.get('config', {}), sort_keys=True)}`"]


def report(records, workloads, peak, peak_note, trials, title):
    table = best_per_workload(records)
    order = [canonical(w) for w in workloads] if workloads else []
    order += sorted(w for w in table if w not in order)
    lines = [f"# {title}", ""]
    if trials:
        lines.append(f"Trial budget: {trials} measurements per workload (all templates together).")
    if peak:
        lines.append(f"FP32 peak: {peak:.0f} GFLOPS ({peak_note}); % columns are of this "
                     "theoretical peak.")
    lines += ["Times are the median round of each record, in microseconds; ratio = library time /"
              " tune time (> 1: tune's kernel is faster). Compared on final re-measurements: both"
              " sides re-measured in the same interleaved passes at the job's end (every round of"
              " every pass); on search records: each side's fastest single record.", "",
              "| workload | tune us | tune GFLOPS | tune % peak | library us | library GFLOPS | "
              "library % peak | ratio | records (failed) | tune best | library best | compared on |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for workload in order:
        row = table.get(workload)
        if row is None:
            lines.append(f"| {workload} | - | - | - | - | - | - | - | 0 | not measured | | |")
            continue
        work = flops(workload)
        t, lib = cell(row["tune"], work, peak), cell(row["library"], work, peak)
        ratio = (f"{row['library'][0] / row['tune'][0]:.2f}"
                 if row["tune"] and row["library"] else "-")
        lines.append(f"| {workload} | {t[0]} | {t[1]} | {t[2]} | {lib[0]} | {lib[1]} | {lib[2]} | "
                     f"{ratio} | {row['trials']} ({row['failed']}) | {t[3]} | {lib[3]} | {row['basis']} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("export")
    parser.add_argument("--workloads", help="file of workloads, one per line (# comments)")
    parser.add_argument("--peak-gflops", type=float, default=0.0)
    parser.add_argument("--peak-note", default="theoretical")
    parser.add_argument("--trials", type=int, default=0)
    parser.add_argument("--title", default="tune on GPU: generated kernels vs vendor libraries")
    parser.add_argument("--out")
    args = parser.parse_args()
    workloads = []
    if args.workloads:
        with open(args.workloads) as f:
            workloads = [l.split("#", 1)[0].strip() for l in f]
        workloads = [w for w in workloads if w]
    text = report(load(args.export), workloads, args.peak_gflops, args.peak_note, args.trials,
                  args.title)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
