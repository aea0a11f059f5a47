#!/usr/bin/python3
"""A bounded soak on loopback: jobs run while workers and the daemon are killed at random.

    bench/soak.py [--build build] [--seconds 180] [--workers 3] [--jobs 6] [--trials 24]
                  [--daemon-kills 0.25] [--seed 1]

One tune-daemon (its own port, kept across restarts) and N tune-server workers on 127.0.0.1
tune small GEMMs. Every few seconds a random worker is SIGKILLed and restarted, and now and then
the daemon itself is SIGKILLed and restarted on the same log (that share of the kills:
--daemon-kills; 0 keeps one daemon for the whole soak, to watch its memory over time). After the soak the processes run
undisturbed until every job has ended. It then checks, from the log itself:

  - every job ended SUCCEEDED with exactly its budget of trials recorded (none lost),
  - no record uid twice and no config measured twice by one job (none duplicated),

and reports the resident memory and open file descriptors of the daemon (per life, first and
last sample) and of one worker that is never killed, sampled every second: flat means no leak.
Exit code 0 when the checks hold, 1 otherwise. Nothing leaves 127.0.0.1.
"""

import argparse
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

TARGET = "llvm -mcpu=native -threads=1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Soak:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.join(os.path.abspath(args.build), "bin")
        self.dir = tempfile.mkdtemp(prefix="tune-soak-")
        self.db = os.path.join(self.dir, "tuning.db")
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.daemon = None
        self.workers = {}
        self.daemon_lives = []  # per life: [(t, rss, fds), ...]
        self.steady = []  # the worker that is never killed
        self.kills = {"worker": 0, "daemon": 0}

    def log(self, name):
        return open(os.path.join(self.dir, f"{name}.log"), "ab")

    def start_daemon(self):
        port_file = os.path.join(self.dir, "port")
        if os.path.exists(port_file):
            os.remove(port_file)
        self.daemon = subprocess.Popen(
            [os.path.join(self.bin, "tune-daemon"), "--listen", self.address, "--db", self.db,
             "--port-file", port_file, "--heartbeat-ms", "200", "--worker-deadline-ms", "2000"],
            stdout=self.log("daemon"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not os.path.exists(port_file):
            if self.daemon.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"tune-daemon did not start; see {self.dir}/daemon.log")
            time.sleep(0.05)
        self.daemon_lives.append([])

    def start_worker(self, name):
        self.workers[name] = subprocess.Popen(
            [os.path.join(self.bin, "tune-server"), "--daemon", self.address, "--name", name,
             "--cache-dir", os.path.join(self.dir, f"{name}-cache")],
            stdout=self.log(name), stderr=subprocess.STDOUT)

    def client(self, *args):
        done = subprocess.run([os.path.join(self.bin, "tune-client"), "--daemon", self.address,
                               "--rpc-timeout-ms", "20000", *args],
                              capture_output=True, text=True)
        return done

    def sample(self, t0):
        t = time.monotonic() - t0
        try:
            self.daemon_lives[-1].append((t, rss_kib(self.daemon.pid), fd_count(self.daemon.pid)))
            steady = self.workers["steady"].pid
            self.steady.append((t, rss_kib(steady), fd_count(steady)))
        except (FileNotFoundError, ProcessLookupError):
            pass

    def run(self):
        rng = random.Random(self.args.seed)
        self.start_daemon()
        self.start_worker("steady")
        for i in range(self.args.workers - 1):
            self.start_worker(f"w{i}")
        job_ids = []
        for j in range(self.args.jobs):
            m = 16 + 8 * j
            r = self.client("submit", "--workload", f"gemm:M={m},N=32,K=24", "--target", TARGET,
                            "--trials", str(self.args.trials), "--strategy", "random",
                            "--min-repeat-ms", "1", "--repeat", "2", "--number", "1",
                            "--seed", str(j + 1))
            if r.returncode != 0:
                sys.exit(f"submit failed: {r.stderr}")
            job_ids.append(int(r.stdout.strip().split()[-1]))
        t0 = time.monotonic()
        next_kill = t0 + rng.uniform(1, 4)
        while time.monotonic() - t0 < self.args.seconds:
            time.sleep(1)
            self.sample(t0)
            if time.monotonic() < next_kill:
                continue
            next_kill = time.monotonic() + rng.uniform(1, 4)
            victims = [n for n in self.workers if n != "steady"]
            if rng.random() < self.args.daemon_kills:
                self.daemon.send_signal(signal.SIGKILL)
                self.daemon.wait()
                self.kills["daemon"] += 1
                self.start_daemon()
            elif victims:
                name = rng.choice(victims)
                self.workers[name].send_signal(signal.SIGKILL)
                self.workers[name].wait()
                self.kills["worker"] += 1
                self.start_worker(name)
        # Undisturbed until every job has ended.
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            r = self.client("jobs", "--json")
            if r.returncode == 0:
                jobs = json.loads(r.stdout)
                if all(j["state"] in ("SUCCEEDED", "FAILED", "CANCELLED") for j in jobs):
                    break
            time.sleep(1)
            self.sample(t0)
        return job_ids

    def stop(self):
        for p in [self.daemon, *self.workers.values()]:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in [self.daemon, *self.workers.values()]:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()

    def check(self, job_ids):
        problems = []
        db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        uids = db.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM records").fetchone()
        if uids[0] != uids[1]:
            problems.append(f"{uids[0] - uids[1]} record uid(s) twice")
        for job_id in job_ids:
            state, trials, done = db.execute(
                "SELECT state, trials, trials_done FROM jobs WHERE id = ?", (job_id,)).fetchone()
            recorded, configs = db.execute(
                "SELECT COUNT(*), COUNT(DISTINCT config_id) FROM records "
                "WHERE job_id = ? AND final = 0", (job_id,)).fetchone()
            if state != "DONE":
                problems.append(f"job {job_id} ended {state}")
            if recorded != trials or done != trials:
                problems.append(f"job {job_id}: budget {trials}, counted {done}, recorded "
                                f"{recorded}")
            if configs != recorded:
                problems.append(f"job {job_id}: {recorded - configs} config(s) measured twice")
        return problems, uids[0]


def describe(samples):
    if len(samples) < 2:
        return "too short to sample"
    first, last = samples[0], samples[-1]
    return (f"{last[0] - first[0]:.0f} s: RSS {first[1] / 1024:.1f} -> {last[1] / 1024:.1f} MiB, "
            f"fds {first[2]} -> {last[2]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--seconds", type=int, default=180)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=6)
    parser.add_argument("--trials", type=int, default=24)
    parser.add_argument("--daemon-kills", type=float, default=0.25,
                        help="share of the kills that hit the daemon (0 to 1)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    soak = Soak(args)
    try:
        job_ids = soak.run()
    finally:
        soak.stop()
    problems, records = soak.check(job_ids)
    print(f"soak: {args.seconds} s, {args.workers} workers, {args.jobs} jobs x {args.trials} "
          f"trials, seed {args.seed}; killed {soak.kills['worker']} worker(s) and the daemon "
          f"{soak.kills['daemon']} time(s); {records} records")
    for i, life in enumerate(soak.daemon_lives):
        print(f"  daemon life {i + 1}: {describe(life)}")
    print(f"  worker never killed: {describe(soak.steady)}")
    for p in problems:
        print(f"  PROBLEM: {p}")
    print("soak: " + ("no record lost or duplicated" if not problems else "FAILED") +
          f" (logs in {soak.dir})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
