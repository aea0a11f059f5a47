#!/usr/bin/env python3
"""What reverify costs after a library upgrade, against tuning the model again.

A 20-workload model (GEMMs of a transformer block's shapes at small sizes, so that a run takes
minutes) is tuned with --trials-per-workload trials per workload on one local worker. The worker
then comes back offering one more library (--libs openblas): a new device fingerprint of the same
device key, which is what a driver or library upgrade looks like to the log. `tune-client
reverify --workloads-file ... --wait` then re-measures each workload's winner and runners-up on
it. The report gives both trial counts, their ratio, and how many winners were confirmed or
changed.

Usage: bench/reverify_cost.py [--trials-per-workload 32] [--keep DIR]   (uses build/bin)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TARGET = "llvm -mcpu=native -threads=1"
FAST = ["--min-repeat-ms", "1", "--repeat", "2", "--number", "1"]
# 20 workloads: M x N x K of attention and MLP projections at small sizes.
WORKLOADS = [f"gemm:M={m},N={n},K={k}" for m in (16, 32, 48, 64)
             for n, k in ((32, 32), (64, 32), (32, 64), (96, 32), (64, 64))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials-per-workload", type=int, default=32)
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    parser.add_argument("--keep", help="work in this folder and keep it")
    args = parser.parse_args()
    bin_dir = os.path.abspath(os.path.join(args.build, "bin"))
    work = args.keep or tempfile.mkdtemp(prefix="tune-reverify-")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "model.txt")
    with open(model, "w") as f:
        f.write("\n".join(WORKLOADS) + "\n")
    port_file = os.path.join(work, "port")
    daemon = subprocess.Popen(
        [f"{bin_dir}/tune-daemon", "--listen", "127.0.0.1:0", "--port-file", port_file,
         "--db", os.path.join(work, "tuning.db")],
        stdout=open(os.path.join(work, "daemon.log"), "w"), stderr=subprocess.STDOUT)
    workers = []
    try:
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if daemon.poll() is not None:
                raise SystemExit("tune-daemon exited; see daemon.log")
            time.sleep(0.1)
        address = f"127.0.0.1:{open(port_file).read().strip()}"

        def worker(name, extra):
            return subprocess.Popen(
                [f"{bin_dir}/tune-server", "--daemon", address, "--threads", "1", "--name", name,
                 "--cache-dir", os.path.join(work, name)] + extra,
                stdout=open(os.path.join(work, f"{name}.log"), "w"), stderr=subprocess.STDOUT)

        def client(*argv):
            done = subprocess.run([f"{bin_dir}/tune-client", "--daemon", address, *argv],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"tune-client {' '.join(argv)}: {done.stderr}")
            return done.stdout

        workers.append(worker("before", []))
        trials = args.trials_per_workload * len(WORKLOADS)
        started = time.monotonic()
        tuned = json.loads(client("--json", "submit", "--workloads-file", model, "--target",
                                  TARGET, "--trials", str(trials), "--wait", *FAST))
        tuning_s = time.monotonic() - started
        tuning_trials = sum(t["trials_done"] for t in tuned["tasks"])

        workers.pop().terminate()
        workers.append(worker("after", ["--libs", "openblas"]))
        while not any(w["name"] == "after" for w in json.loads(client("--json", "workers"))):
            if workers[-1].poll() is not None:
                raise SystemExit("the second tune-server exited; see after.log")
            time.sleep(0.2)
        started = time.monotonic()
        report = json.loads(client("--json", "reverify", "--workloads-file", model, "--target",
                                   TARGET, "--wait"))
        reverify_s = time.monotonic() - started
        reverify_trials = sum(t["trials_done"] for t in report["job"]["tasks"])
        verdicts = [w["verdict"] for w in report["workloads"]]
        print(f"| workloads | tuning trials | reverify trials | ratio | confirmed | changed |"
              f" tuning s | reverify s |")
        print("|---|---|---|---|---|---|---|---|")
        print(f"| {len(WORKLOADS)} | {tuning_trials} | {reverify_trials} |"
              f" {reverify_trials / tuning_trials:.3f} | {verdicts.count('confirmed')} |"
              f" {verdicts.count('changed')} | {tuning_s:.0f} | {reverify_s:.0f} |")
        return 0
    finally:
        for w in workers:
            w.terminate()
        daemon.terminate()
        daemon.wait()
        print(f"(work folder: {work})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
