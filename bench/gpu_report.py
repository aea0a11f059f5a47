#!/usr/bin/env python3
"""GPU bench report: tune's best generated kernel vs the best vendor-library record per workload.

Reads a tuning-log export (tune-client export: JSON lines, db/record_json.cc) and writes a
Markdown table: per workload, the fastest successful generated kernel and the fastest record of a
library template (cuBLAS, cuDNN, rocBLAS, MIOpen: the library's own algorithms are among its
template's configs), their times, GFLOPS, % of the theoretical FP32 peak and the ratio
library time / tune time (> 1: tune is faster).

Like is compared with like: where a job's finalists were re-measured (records with `final`: tune's
fastest configs and the library's best, in the same interleaved passes, tuner/finalists.h), both
sides are those re-measurements, each config's rounds pooled over the passes after the screen
that every finalist completed (final_bests says why); the column "compared on" says so.
Otherwise (an export without them, or a job cut short before its finalists' first pass ended)
each side is its fastest single search record, tune's the fastest of many and the library's of a
few.

Usage: gpu_report.py EXPORT.jsonl [--workloads FILE] [--peak-gflops X] [--peak-note TEXT]
                     [--peak DTYPE=GFLOPS ...] [--peaks-note TEXT] [--trials N] [--title TEXT]
                     [--out REPORT.md]
--peak-gflops is the FP32 peak (dtype=f32 rows); --peak gives another dtype's (bf16=989000):
a row's "% peak" is of its dtype's peak, and "-" where none is given, never of another dtype's.
A record's time is the median of its round_secs (each round: the mean of `number` calls). GPU
records timed by graph replay (gpu_clock "graph": device time) are compared; a kind (tune or
library) of a workload falls back to records timed call by call (gpu_clock "events", and every
GPU line without gpu_clock) only when it has no graph-timed record, and its time is then marked
"(events)". Where a graph-timed best record's call-by-call reading (host_round_secs) differs from
its device time by more than both medians' 95% confidence intervals (common/stats.h), the report
lists both readings below the table.
"""
import argparse
import json
import math
import re
import statistics
import sys

LIBRARY_WORDS = ("cublas", "cudnn", "rocblas", "hipblaslt", "miopen")


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


def positive_rounds(record, key="round_secs"):
    return [r for r in record.get(key, []) if isinstance(r, (int, float)) and r > 0]


def record_secs(record):
    rounds = positive_rounds(record)
    return statistics.median(rounds) if rounds else None


def events_timed(record):
    """True for a GPU record timed call by call (a GPU line without gpu_clock is one)."""
    return record.get("gpu_clock", "events") == "events"


def median_relative_ci(values):
    """common/stats.h's MedianRelativeCi: the median's 95% confidence half-width relative to it
    (order statistics n/2 -+ 0.98 sqrt(n) from 6 values, else half the range); inf below 2."""
    values = sorted(values)
    n = len(values)
    median = statistics.median(values) if values else 0.0
    if n < 2 or median <= 0:
        return math.inf
    lo, hi = 0, n - 1
    if n >= 6:
        spread = 0.98 * math.sqrt(n)
        lo = int(max(0.0, math.floor((n - 1) / 2 - spread)))
        hi = int(min(n - 1, math.ceil((n - 1) / 2 + spread)))
    return (values[hi] - values[lo]) / 2 / median


def readings_differ(record):
    """common/stats.h's MediansDiffer of a graph-timed record's two readings."""
    device, host = positive_rounds(record), positive_rounds(record, "host_round_secs")
    if record.get("gpu_clock") != "graph" or not device or not host:
        return False
    ci_d, ci_h = median_relative_ci(device), median_relative_ci(host)
    if math.isinf(ci_d) or math.isinf(ci_h):
        return False
    md, mh = statistics.median(device), statistics.median(host)
    return abs(md - mh) > ci_d * md + ci_h * mh


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
    passes: per config, the median of every round of the passes that every finalist of the
    workload completed; per kind, the fastest.

    A config's first re-measurement is the screen (tuner/finalists.h); it is left out, because
    the screen measures many configs one after another and a GPU that slows as it heats reads
    the last of them slower. The finalists' passes alternate their order, so a drift within a
    pass touches each alike over two; a pass some finalist lacks (a job cut short) would break
    that, so only the passes every finalist completed count. Records are in the log's order
    (the export's)."""
    passes = {}  # (workload, template, config) -> [(record, rounds)], screen first
    for r in records:
        if not r.get("final"):
            continue
        key = (r.get("workload", "?"), r.get("template", ""),
               json.dumps(r.get("config", {}), sort_keys=True))
        ok = r.get("error", "NONE") == "NONE"
        rounds = [x for x in r.get("round_secs", []) if isinstance(x, (int, float)) and x > 0]
        passes.setdefault(key, []).append((r, rounds if ok else []))
    completed = {}  # workload -> passes after the screen that every finalist has
    for (workload, _, _), done in passes.items():
        if len(done) > 1:
            completed[workload] = min(completed.get(workload, len(done) - 1), len(done) - 1)
    table = {}
    for (workload, _, _), done in passes.items():
        n = completed.get(workload, 0)
        rounds = [x for _, pass_rounds in done[1:1 + n] for x in pass_rounds]
        if not rounds:
            continue
        secs = statistics.median(rounds)
        record = done[0][0]
        row = table.setdefault(workload, {"tune": None, "library": None})
        kind = "library" if is_library(record) else "tune"
        if row[kind] is None or secs < row[kind][0]:
            row[kind] = (secs, record)
    return table


def best_per_workload(records):
    """{workload: {'tune': (secs, record), 'library': (secs, record), 'trials': n, 'failed': n,
    'basis': text}}: the final re-measurements where both kinds have them, else per kind the
    fastest graph-timed search record, or the fastest events-timed one when none is."""
    table = {}
    for r in records:
        row = table.setdefault(r.get("workload", "?"),
                               {"tune": None, "library": None, "trials": 0, "failed": 0,
                                "basis": "search records",
                                "events": {"tune": None, "library": None}})
        row["trials"] += 1
        if r.get("error", "NONE") != "NONE":
            row["failed"] += 1
            continue
        secs = record_secs(r)
        if secs is None or r.get("final"):
            continue  # a re-measurement counts only as one of its passes (final_bests)
        kind = "library" if is_library(r) else "tune"
        best = row["events"] if events_timed(r) else row
        if best[kind] is None or secs < best[kind][0]:
            best[kind] = (secs, r)
    for row in table.values():
        for kind in ("tune", "library"):
            if row[kind] is None:
                row[kind] = row["events"][kind]
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
    clock = " (events)" if events_timed(record) else ""
    return [f"{secs * 1e6:.1f}{clock}", f"{gflops:.0f}" if gflops else "-", pct,
            f"{record.get('template', '?')} `{json.dumps(record.get('config', {}), sort_keys=True)}`"]


def dtype_of(workload):
    """The workload's dtype= field ("f32" when absent)."""
    _, fields = parse_workload(workload)
    return fields.get("dtype", "f32")


def report(records, workloads, peak, peak_note, trials, title, peaks=None,
           peaks_note="given with --peak"):
    peaks = dict(peaks or {})
    if peak:
        peaks.setdefault("f32", peak)
    table = best_per_workload(records)
    order = [canonical(w) for w in workloads] if workloads else []
    order += sorted(w for w in table if w not in order)
    lines = [f"# {title}", ""]
    if trials:
        lines.append(f"Trial budget: {trials} measurements per workload (all templates together).")
    for dtype, value in sorted(peaks.items()):
        note = peak_note if dtype == "f32" and peak else peaks_note
        lines.append(f"{dtype} peak: {value:.0f} GFLOPS ({note}); % columns of {dtype} rows "
                     "are of this peak.")
    lines += ["Times are the median round of each record, in microseconds, device time by graph "
              "replay unless marked (events): timed call by call, where no record of that kind was "
              "timed by graph; ratio = library time / tune time (> 1: tune's kernel is faster). "
              "Compared on final re-measurements: both sides re-measured in the same interleaved "
              "passes at the job's end (every round of the passes after the screen that every "
              "finalist completed); on search records: each "
              "side's fastest single record.", "",
              "| workload | tune us | tune GFLOPS | tune % peak | library us | library GFLOPS | "
              "library % peak | ratio | records (failed) | tune best | library best | compared on |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for workload in order:
        row = table.get(workload)
        if row is None:
            lines.append(f"| {workload} | - | - | - | - | - | - | - | 0 | not measured | | |")
            continue
        work = flops(workload)
        row_peak = peaks.get(dtype_of(workload), 0.0)
        t, lib = cell(row["tune"], work, row_peak), cell(row["library"], work, row_peak)
        ratio = (f"{row['library'][0] / row['tune'][0]:.2f}"
                 if row["tune"] and row["library"] else "-")
        lines.append(f"| {workload} | {t[0]} | {t[1]} | {t[2]} | {lib[0]} | {lib[1]} | {lib[2]} | "
                     f"{ratio} | {row['trials']} ({row['failed']}) | {t[3]} | {lib[3]} | {row['basis']} |")
    differing = []
    for workload in order:
        row = table.get(workload)
        for kind in ("tune", "library"):
            if row is None or row[kind] is None or not readings_differ(row[kind][1]):
                continue
            secs, record = row[kind]
            host = statistics.median(positive_rounds(record, "host_round_secs"))
            differing.append(f"- {workload}, {kind} ({record.get('template', '?')}): device time "
                             f"{secs * 1e6:.1f} us, call by call {host * 1e6:.1f} us "
                             f"({host / secs:.2f}x)")
    if differing:
        lines += ["", "Best records whose call-by-call reading (events) differs from their device "
                  "time (graph replay) by more than both medians' 95% confidence intervals:", ""]
        lines += differing
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("export")
    parser.add_argument("--workloads", help="file of workloads, one per line (# comments)")
    parser.add_argument("--peak-gflops", type=float, default=0.0)
    parser.add_argument("--peak-note", default="theoretical")
    parser.add_argument("--peak", action="append", default=[],
                        help="DTYPE=GFLOPS: the peak of another dtype's rows (repeatable)")
    parser.add_argument("--peaks-note", default="given with --peak",
                        help="where the --peak figures come from")
    parser.add_argument("--trials", type=int, default=0)
    parser.add_argument("--title", default="tune on GPU: generated kernels vs vendor libraries")
    parser.add_argument("--out")
    args = parser.parse_args()
    workloads = []
    if args.workloads:
        with open(args.workloads) as f:
            workloads = [l.split("#", 1)[0].strip() for l in f]
        workloads = [w for w in workloads if w]
    peaks = {}
    for item in args.peak:
        dtype, _, value = item.partition("=")
        try:
            peaks[dtype] = float(value)
        except ValueError:
            parser.error(f"--peak {item}: expected DTYPE=GFLOPS, e.g. bf16=989000")
    text = report(load(args.export), workloads, args.peak_gflops, args.peak_note, args.trials,
                  args.title, peaks, args.peaks_note)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
