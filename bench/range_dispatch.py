#!/usr/bin/env python3
"""Shape ranges: a range's one entry point against kernels tuned for each exact size.

A range job tunes gemm:M=LO..HI,N=..,K=.. (f32, one thread) on one local worker with
--trials-per-size trials per size it chooses; tune-compile builds the range's entry point from
the log. At --samples sizes the job never measured (drawn with a fixed seed), a job tunes the
exact size with the same trials, and tune-compile builds its kernel. bench/range_timing.c times
both in turn (median seconds per call); the report gives each ratio (exact / range: 1.0 means
the range's entry is as fast as the exact kernel) and their median.

With --explain, each sampled size's row also says how the entry ran it (RANGE_pieces: the
kernel sizes and piece lengths), the time of each of those kernels called alone at its own size,
and the config of the exact kernel and of each piece's kernel (from the generated headers), so
that a slow row shows whether a kernel, its config or the plan is at fault.

Usage: bench/range_dispatch.py [--range gemm:M=1..1024,N=256,K=256] [--trials-per-size 8]
       [--samples 10] [--keep DIR] [--explain] [--compare-runtime LIB]
       (uses build/bin and build/lib)
"""

import argparse
import ctypes
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

TARGET = "llvm -mcpu=native -threads=1"
FAST = ["--min-repeat-ms", "1", "--repeat", "3"]


def header_configs(header):
    """{size: "template vN {config} (origin)"} from a range header's kernel lines
    " *     M=37: ..."."""
    found = {}
    with open(header) as text:
        for line in text:
            line = line.strip()
            if line.startswith("*     M=") and ": " in line:
                size, what = line[len("*     M="):].split(": ", 1)
                found[int(size)] = what
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--range", default="gemm:M=1..1024,N=256,K=256")
    parser.add_argument("--trials-per-size", type=int, default=8)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timing-samples", type=int, default=9)
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    parser.add_argument("--keep", help="work in this folder and keep it")
    parser.add_argument("--explain", action="store_true",
                        help="say how each sampled size ran, and time its kernels alone")
    parser.add_argument("--compare-runtime", metavar="LIB",
                        help="also time the range's entry with this libtune_range.so preloaded "
                             "(another version of the dispatch), in turn with the others")
    parser.add_argument("--timing-binary",
                        help="bench/range_timing.c built already (default: built here with cc)")
    args = parser.parse_args()
    bin_dir = os.path.abspath(os.path.join(args.build, "bin"))
    work = args.keep or tempfile.mkdtemp(prefix="tune-range-")
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "tuning.db")
    timing = args.timing_binary or os.path.join(work, "range_timing")
    if not args.timing_binary:
        subprocess.run(["cc", "-O2", "-std=c11",
                        os.path.join(os.path.dirname(__file__), "range_timing.c"), "-ldl", "-o",
                        timing], check=True)
    port_file = os.path.join(work, "port")
    daemon = subprocess.Popen(
        [f"{bin_dir}/tune-daemon", "--listen", "127.0.0.1:0", "--port-file", port_file,
         "--db", db, "--local-workers", "1"],
        stdout=open(os.path.join(work, "daemon.log"), "w"), stderr=subprocess.STDOUT)
    try:
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if daemon.poll() is not None:
                raise SystemExit("tune-daemon exited; see daemon.log")
            time.sleep(0.1)
        address = f"127.0.0.1:{open(port_file).read().strip()}"

        def run(*argv, env=None):
            done = subprocess.run(list(argv), capture_output=True, text=True, check=False,
                                  env=env)
            if done.returncode != 0:
                raise SystemExit(f"{' '.join(argv)}: {done.stderr}")
            return done

        def client(*argv):
            return run(f"{bin_dir}/tune-client", "--daemon", address, *argv).stdout

        def compile_(workload, name, lib):
            return run(f"{bin_dir}/tune-compile", "--db", db, "--target", TARGET, "--workload",
                       workload, "--name", name, "--out", lib,
                       "--header", lib.replace(".so", ".h")).stderr

        # The range job: its tuned sizes and midpoints (ShapeRange::TunedSizes, Midpoints).
        lo, hi = (int(x) for x in args.range.split("M=")[1].split(",")[0].split(".."))
        tuned = [lo] + [1 << e for e in range(0, 63) if lo < (1 << e) < hi] + [hi]
        mids = [round(math.sqrt(a * b)) for a, b in zip(tuned, tuned[1:])
                if a < round(math.sqrt(a * b)) < b]
        started = time.monotonic()
        range_job = json.loads(client(
            "--json", "submit", "--workload", args.range, "--target", TARGET, "--trials",
            str(args.trials_per_size * (len(tuned) + len(mids))), "--wait", *FAST))
        range_s = time.monotonic() - started
        sizes = [t["workload"] for t in range_job["tasks"]]
        measured = {int(w.split("M=")[1].split(",")[0]) for w, t in
                    zip(sizes, range_job["tasks"]) if t["trials_done"] > 0}
        range_lib = os.path.join(work, "librange.so")
        built = compile_(args.range, "ranged", range_lib)
        rest = args.range.split(",", 1)[1]
        n = int(rest.split("N=")[1].split(",")[0])
        k = int(rest.split("K=")[1].split(",")[0])
        pieces_of = None
        if args.explain:
            configs = header_configs(range_lib.replace(".so", ".h"))
            ctypes.CDLL(os.path.join(args.build, "lib", "libtune_range.so"), ctypes.RTLD_GLOBAL)
            entry = ctypes.CDLL(range_lib)
            entry.ranged_pieces.restype = ctypes.c_int32
            entry.ranged_pieces.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
                                            ctypes.c_int32]

            def pieces_of(size):
                buf = (ctypes.c_int64 * 128)()
                count = entry.ranged_pieces(size, buf, 64)
                if count < 0:
                    raise SystemExit(f"ranged_pieces({size}) returned {count}")
                return [(buf[2 * i], buf[2 * i + 1]) for i in range(min(count, 64))]
        alone = {}  # kernel size -> its median seconds, called alone at its size

        def time_alone(kernel):
            if kernel not in alone:
                alone[kernel] = statistics.median(
                    float(run(timing, range_lib, f"ranged__M{kernel}", "fixed", str(kernel),
                              str(n), str(k), str(args.timing_samples)).stdout)
                    for _ in range(3))
            return alone[kernel]

        rng = random.Random(args.seed)
        candidates = [s for s in range(lo, hi + 1) if s not in measured]
        samples = sorted(rng.sample(candidates, args.samples))
        rows, compared = [], []
        for size in samples:
            workload = f"gemm:M={size},{rest}"
            client("submit", "--workload", workload, "--target", TARGET, "--trials",
                   str(args.trials_per_size), "--wait", *FAST)
            lib = os.path.join(work, f"libexact{size}.so")
            exact_built = compile_(workload, "exact", lib)
            exact, ranged, other = [], [], []
            for _ in range(3):  # in turn, so that drift hits both alike
                if args.compare_runtime:
                    other.append(float(run(
                        timing, range_lib, "ranged", "ranged", str(size), str(n), str(k),
                        str(args.timing_samples),
                        env={**os.environ, "LD_PRELOAD": args.compare_runtime}).stdout))
                exact.append(float(run(timing, lib, "exact", "fixed", str(size), str(n), str(k),
                                       str(args.timing_samples)).stdout))
                ranged.append(float(run(timing, range_lib, "ranged", "ranged", str(size), str(n),
                                        str(k), str(args.timing_samples)).stdout))
            e, r = statistics.median(exact), statistics.median(ranged)
            rows.append((size, e, r, e / r))
            print(f"M={size}: exact {e * 1e6:.1f} us, range {r * 1e6:.1f} us, "
                  f"exact/range {e / r:.3f}", flush=True)
            if other:
                o = statistics.median(other)
                compared.append(e / o)
                print(f"  with {args.compare_runtime}: range {o * 1e6:.1f} us, "
                      f"exact/range {e / o:.3f}", flush=True)
            if pieces_of:
                pieces = pieces_of(size)
                alone_sum = sum(time_alone(kernel) for kernel, _ in pieces)
                print(f"  ran as {' + '.join(f'{length} on M={kernel}' for kernel, length in pieces)}"
                      f"; those kernels alone {alone_sum * 1e6:.1f} us "
                      f"({' + '.join(f'{time_alone(kernel) * 1e6:.1f}' for kernel, _ in pieces)})")
                print("  exact kernel: " + " | ".join(
                    line.strip() for line in exact_built.splitlines() if "{" in line))
                for kernel in sorted({kernel for kernel, _ in pieces}):
                    print(f"  M={kernel}: {configs.get(kernel, '?')}")
                sys.stdout.flush()
        ratios = [row[3] for row in rows]
        print(f"\nrange {args.range}: {len(range_job['tasks'])} sizes, tuned "
              f"{sorted(measured)} ({range_job['trials_done']} trials, {range_s:.0f} s)")
        print(f"kernels: {built.splitlines()[0] if built else ''}")
        print("| M | exact-size kernel (us) | range entry (us) | exact / range |")
        print("|---|---|---|---|")
        for size, e, r, ratio in rows:
            print(f"| {size} | {e * 1e6:.1f} | {r * 1e6:.1f} | {ratio:.3f} |")
        print(f"\nmedian exact/range over {len(rows)} unmeasured sizes: "
              f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
        if compared:
            print(f"with {args.compare_runtime}: median exact/range "
                  f"{statistics.median(compared):.3f} (min {min(compared):.3f}, "
                  f"max {max(compared):.3f})")
        return 0
    finally:
        daemon.terminate()
        daemon.wait()


if __name__ == "__main__":
    sys.exit(main())
