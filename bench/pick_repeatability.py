#!/usr/bin/env python3
"""How often repeated jobs pick the same best config, on two workers of one device key.

Each run is a fresh tuning log and a tune-daemon with two local workers (the same host: one
device key and fingerprint). The job (fixed workload, random strategy with a fixed seed, so every
run measures the same configs) ends with its fastest configs screened in a first pass and the
finalists that screen chose re-measured pass by pass across both workers, then decided by the
deterministic rule (tuner/scheduler/finalists.h). Each run's decision
is classed from its own re-measured rounds: "clear" when the winner's median is faster than every
other finalist's beyond the noise (95% confidence intervals apart), "within noise" otherwise,
where the stable order decided. The table gives, per workload and class, how many runs picked the
class's most common config, with a Wilson 95% interval on that rate.

Usage: bench/pick_repeatability.py [--runs N] [--trials T] [WORKLOAD...]   (uses build/bin)
"""

import argparse
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

TARGET = "llvm -mcpu=native -threads=1"
DEFAULT_WORKLOADS = ["gemm:M=64,N=64,K=64", "gemm:M=128,N=128,K=128"]


def median_ci(rounds, pass_medians):
    """The median and its relative 95% half-width, as the finalists' rule has it
    (tuner/scheduler/finalists.cc, FinalistRelativeCi): the wider of the rounds' interval
    (common/stats.cc's MedianRelativeCi: the order statistics around the median; the whole range
    below six rounds) and half the spread of the passes' medians."""
    med, ci = rounds_ci(rounds)
    if len(pass_medians) >= 2 and med > 0:
        ci = max(ci, (max(pass_medians) - min(pass_medians)) / 2 / med)
    return med, ci


def rounds_ci(rounds):
    xs = sorted(rounds)
    n = len(xs)
    med = statistics.median(xs)
    if n < 2 or med <= 0:
        return med, math.inf
    lo, hi = 0, n - 1
    if n >= 6:
        spread = 0.98 * math.sqrt(n)
        lo = int(max(0.0, math.floor((n - 1) / 2 - spread)))
        hi = int(min(n - 1, math.ceil((n - 1) / 2 + spread)))
    return med, (xs[hi] - xs[lo]) / 2 / med


def wilson(k, n):
    if n == 0:
        return (0.0, 0.0)
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def one_run(bin_dir, workload, trials, scratch):
    db = os.path.join(scratch, "tuning.db")
    port_file = os.path.join(scratch, "port")
    daemon = subprocess.Popen(
        [os.path.join(bin_dir, "tune-daemon"), "--listen", "127.0.0.1:0", "--port-file", port_file,
         "--db", db, "--local-workers", "2", "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        address = "127.0.0.1:" + open(port_file).read().strip()
        subprocess.run(
            [os.path.join(bin_dir, "tune-client"), "--daemon", address, "submit", "--workload",
             workload, "--target", TARGET, "--trials", str(trials), "--strategy", "random",
             "--seed", "7", "--no-transfer", "--wait"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        daemon.terminate()
        daemon.wait()
    con = sqlite3.connect(db)
    (winner,) = con.execute(
        "SELECT c.template || ' ' || c.text FROM best_configs b JOIN records r ON r.id = b.record_id "
        "JOIN configs c ON c.id = r.config_id").fetchone()
    finals = {}
    passes = {}
    workers = {}
    for config, rounds, worker in con.execute(
            "SELECT c.template || ' ' || c.text, r.round_secs, r.worker FROM records r "
            "JOIN configs c ON c.id = r.config_id WHERE r.final = 1 AND r.error_kind = 'NONE'"):
        finals.setdefault(config, []).extend(json.loads(rounds))
        passes.setdefault(config, []).append(statistics.median(json.loads(rounds)))
        workers.setdefault(config, set()).add(worker)
    con.close()
    # The finalists: configs measured again after the screen (the first pass).
    figures = {c: median_ci(r, passes[c]) for c, r in finals.items() if len(passes[c]) >= 2}
    w_med, w_ci = figures[winner]
    clear = all(w_med * (1 + w_ci) < m * (1 - ci) for c, (m, ci) in figures.items() if c != winner)
    both_workers = all(len(workers[c]) >= 2 for c in figures)
    return winner, clear, both_workers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("workloads", nargs="*", default=DEFAULT_WORKLOADS)
    args = parser.parse_args()
    bin_dir = os.environ.get("TUNE_BIN_DIR", "build/bin")
    os.environ.pop("OPENBLAS_CORETYPE", None)
    print("| workload | class | runs | same pick as the class's most common | rate (95% CI) |"
          " finalists measured on both workers |")
    print("|---|---|---|---|---|---|")
    for workload in args.workloads:
        results = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as scratch:
                results.append(one_run(bin_dir, workload, args.trials, scratch))
        for label, want in (("clear (beyond noise)", True), ("within noise", False)):
            picks = [w for w, clear, _ in results if clear == want]
            if not picks:
                print(f"| {workload} | {label} | 0 | - | - | - |")
                continue
            top, same = Counter(picks).most_common(1)[0]
            lo, hi = wilson(same, len(picks))
            spread = sum(1 for w, clear, both in results if clear == want and both)
            print(f"| {workload} | {label} | {len(picks)} | {same} | {same / len(picks):.2f} "
                  f"({lo:.2f}-{hi:.2f}) | {spread}/{len(picks)} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
