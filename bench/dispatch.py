#!/usr/bin/python3
"""Dispatch at scale: trials per second through one tune-daemon on loopback, and what each
trial costs the daemon itself.

    bench/dispatch.py [--build build] [--workers N[,N...]] [--workloads 16] [--nk 64]
                      [--trials 200] [--runs 3] [--keep]

The kernels are tiny (GEMMs of M x NK x NK, M = 8, 16, ... 8 x --workloads, NK = --nk, timed
with one round of at least 1 ms) and prebuilt: a first, untimed run tunes every job's whole grid once, which fills an
artifact store (tune-daemon --artifact-store). Each timed run then starts a fresh daemon on a
fresh log with that store and --workers local tune-server processes, submits the same jobs
(grid search, so the same configs), and samples the daemon's /metrics and its CPU time
(/proc/PID/stat) every 100 ms until every job has ended. Nothing is built in a timed run (the
script checks that the daemon's build counter stays at 0).

Reported per run, over the steady part of the run (between 10% and 90% of its trials):
  - trials/s: trials recorded in the log per second (each a record with its job's counters and
    search state, committed before it counts);
  - measured/s: trials a worker measured per second (a trial whose artifact, device and timing
    equal those of a trial in flight takes that measurement instead: the difference);
  - daemon CPU per trial: the daemon's user + system CPU time over the trials of the window, in
    microseconds; 1e6 over it is what one daemon core could sustain if workers were free.
Medians over the runs follow. With several worker counts (--workers 4,8,15) the prebuilt store
serves --runs timed runs for each, and a last table sets the medians side by side. Every process and file lives in a scratch directory; nothing leaves
127.0.0.1.
"""

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

TARGET = "llvm -mcpu=native -threads=1"
TIMING = ["--number", "1", "--repeat", "1", "--max-repeat", "1", "--min-repeat-ms", "1"]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_secs(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def metric_sum(text: str, name: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and (line[len(name)] in " {"):
            total += float(line.rsplit(" ", 1)[1])
    return total


class Daemon:
    def __init__(self, bin_dir, scratch, name, store, workers):
        self.bin = bin_dir
        self.dir = os.path.join(scratch, name)
        os.makedirs(self.dir)
        self.db = os.path.join(self.dir, "tuning.db")
        port_file = os.path.join(self.dir, "port")
        http_file = os.path.join(self.dir, "http-port")
        self.log = open(os.path.join(self.dir, "daemon.log"), "wb")
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "tune-daemon"), "--listen", "127.0.0.1:0", "--db", self.db,
             "--port-file", port_file, "--http", "127.0.0.1:0", "--http-port-file", http_file,
             "--artifact-store", store, "--local-workers", str(workers), "--log-level", "warn"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and os.path.exists(http_file)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"tune-daemon did not start; see {self.dir}/daemon.log")
            time.sleep(0.05)
        self.address = f"127.0.0.1:{open(port_file).read().strip()}"
        self.metrics_url = f"http://127.0.0.1:{open(http_file).read().strip()}/metrics"
        self.wait_for_workers(workers)

    def client(self, *args) -> str:
        return subprocess.run([os.path.join(self.bin, "tune-client"), "--daemon", self.address,
                               *args], check=True, capture_output=True, text=True).stdout

    def metrics(self) -> str:
        with urllib.request.urlopen(self.metrics_url, timeout=10) as reply:
            return reply.read().decode()

    def wait_for_workers(self, n):
        deadline = time.monotonic() + 120
        while metric_sum(self.metrics(), "tune_workers") < n:
            if time.monotonic() > deadline:
                sys.exit(f"{n} local workers did not register; see {self.dir}")
            time.sleep(0.1)

    def submit_all(self, workloads, trials):
        for w in workloads:
            self.client("submit", "--workload", w, "--target", TARGET, "--trials", str(trials),
                        "--strategy", "grid", "--no-transfer", *TIMING)

    def active_jobs(self) -> float:
        text = self.metrics()
        return metric_sum(text, 'tune_jobs{state="queued"}') + metric_sum(
            text, 'tune_jobs{state="running"}')

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()


def steady_window(samples, total):
    """The samples where recorded trials first reach 10% and 90% of the run's total."""
    lo = next(s for s in samples if s["trials"] >= 0.1 * total)
    hi = next(s for s in samples if s["trials"] >= 0.9 * total)
    return lo, hi


def timed_run(bin_dir, scratch, store, workloads, trials, workers, index):
    daemon = Daemon(bin_dir, scratch, f"run-{workers}-{index}", store, workers)
    samples = []

    def sample():
        text = daemon.metrics()
        samples.append({
            "t": time.monotonic(),
            "cpu": cpu_secs(daemon.proc.pid),
            "trials": metric_sum(text, "tune_trials_total"),
            "measured": metric_sum(text, "tune_measurement_duration_seconds_count"),
            "built": metric_sum(text, "tune_build_duration_seconds_count"),
            "active": metric_sum(text, 'tune_jobs{state="queued"}') +
                      metric_sum(text, 'tune_jobs{state="running"}'),
        })

    sample()
    daemon.submit_all(workloads, trials)
    while True:
        time.sleep(0.1)
        sample()
        if samples[-1]["active"] == 0:
            break
    daemon.stop()
    total = samples[-1]["trials"]
    lo, hi = steady_window(samples, total)
    if hi["t"] <= lo["t"] or hi["trials"] <= lo["trials"]:
        lo, hi = samples[0], samples[-1]  # a run too short for a window: all of it
    secs = hi["t"] - lo["t"]
    done = hi["trials"] - lo["trials"]
    result = {
        "trials": total,
        "measured_total": samples[-1]["measured"],
        "built": samples[-1]["built"],
        "trials_per_s": done / secs,
        "measured_per_s": (hi["measured"] - lo["measured"]) / secs,
        "cpu_us_per_trial": (hi["cpu"] - lo["cpu"]) / done * 1e6,
        "wall_s": samples[-1]["t"] - samples[0]["t"],
    }
    with sqlite3.connect(daemon.db) as db:
        result["records"] = db.execute("SELECT COUNT(*) FROM records WHERE final = 0").fetchone()[0]
    return result


def measure(args, bin_dir, scratch, store, workloads, workers):
    """--runs timed runs with this many workers: prints their table, returns the medians."""
    print(f"workers {workers}, {len(workloads)} jobs (gemm M=8..{8 * len(workloads)} "
          f"step 8, N=K={args.nk}, grid, {args.trials} trials at most), "
          f"{os.cpu_count()} CPUs")
    print()
    print("| run | trials | measured | wall s | trials/s | measured/s | daemon CPU µs/trial |")
    print("|---|---|---|---|---|---|---|")
    results = []
    for i in range(1, args.runs + 1):
        r = timed_run(bin_dir, scratch, store, workloads, args.trials, workers, i)
        if r["built"] != 0:
            sys.exit(f"run {i} built {r['built']:.0f} artifacts: the store did not hold them")
        if r["records"] != r["trials"]:
            sys.exit(f"run {i}: {r['records']} records for {r['trials']:.0f} trials counted")
        results.append(r)
        print(f"| {i} | {r['trials']:.0f} | {r['measured_total']:.0f} | {r['wall_s']:.1f} | "
              f"{r['trials_per_s']:.0f} | {r['measured_per_s']:.0f} | "
              f"{r['cpu_us_per_trial']:.0f} |", flush=True)
    med = {k: statistics.median(r[k] for r in results)
           for k in ("trials_per_s", "measured_per_s", "cpu_us_per_trial")}
    print(f"| median | | | | {med['trials_per_s']:.0f} | {med['measured_per_s']:.0f} | "
          f"{med['cpu_us_per_trial']:.0f} |")
    print()
    if med["cpu_us_per_trial"] > 0:  # a run shorter than the clock's tick reads 0
        print(f"one daemon core at that cost: {1e6 / med['cpu_us_per_trial']:.0f} trials/s")
    print(flush=True)
    return med


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--workers", default=str(max(1, (os.cpu_count() or 2) - 1)),
                        help="local workers, or a comma-separated list of counts to compare")
    parser.add_argument("--workloads", type=int, default=16)
    parser.add_argument("--trials", type=int, default=200, help="budget of each job (its grid "
                        "ends it sooner when smaller)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nk", type=int, default=64, help="N and K of every GEMM")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args()
    for name in ("workloads", "trials", "runs", "nk"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    try:
        worker_counts = [int(w) for w in args.workers.split(",")]
    except ValueError:
        parser.error(f"--workers {args.workers!r}: expected a count or counts like 4,8,15")
    if any(w < 1 for w in worker_counts):
        parser.error(f"--workers {args.workers!r}: every count must be >= 1")
    bin_dir = os.path.join(os.path.abspath(args.build), "bin")
    if not os.access(os.path.join(bin_dir, "tune-daemon"), os.X_OK):
        parser.error(f"no tune-daemon in {bin_dir}; build first (scripts/build.sh)")
    scratch = tempfile.mkdtemp(prefix="tune-dispatch-")
    store = os.path.join(scratch, "artifacts")
    workloads = [f"gemm:M={8 * m},N={args.nk},K={args.nk}" for m in range(1, args.workloads + 1)]
    try:
        print(f"# prebuilding {len(workloads)} jobs' grids into {store} ...", file=sys.stderr)
        started = time.monotonic()
        prebuild = Daemon(bin_dir, scratch, "prebuild", store, max(worker_counts))
        prebuild.submit_all(workloads, args.trials)
        while prebuild.active_jobs() > 0:
            time.sleep(0.5)
        built = metric_sum(prebuild.metrics(), "tune_build_duration_seconds_count")
        prebuild.stop()
        print(f"# prebuilt {built:.0f} artifacts in {time.monotonic() - started:.0f} s",
              file=sys.stderr)

        medians = []
        for workers in worker_counts:
            medians.append((workers, measure(args, bin_dir, scratch, store, workloads, workers)))
        if len(medians) > 1:
            print("| workers | trials/s | measured/s | daemon CPU µs/trial |")
            print("|---|---|---|---|")
            for workers, med in medians:
                print(f"| {workers} | {med['trials_per_s']:.0f} | {med['measured_per_s']:.0f} | "
                      f"{med['cpu_us_per_trial']:.0f} |")
    finally:
        if args.keep:
            print(f"# kept {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
