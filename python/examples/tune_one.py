#!/usr/bin/env python3
"""Tunes one workload on a running tune-daemon, following its progress, then prints the best.

    PYTHONPATH=python:build/python python3 python/examples/tune_one.py \
        --daemon 127.0.0.1:7070 --workload gemm:M=256,N=256,K=256 --trials 16

Exit codes as tune-client's: 0 the job succeeded, 1 it did not, 3 the daemon is unreachable,
4 the request was refused, 6 any other error.
"""

import argparse
import sys

import grpc

from tune_client import Client, TuneError, state_name, tuner_pb2

EXIT_CODES = {grpc.StatusCode.UNAVAILABLE: 3, grpc.StatusCode.DEADLINE_EXCEEDED: 3,
              grpc.StatusCode.INVALID_ARGUMENT: 4, grpc.StatusCode.FAILED_PRECONDITION: 4}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--daemon", help="HOST:PORT (default: $TUNE_DAEMON, else 127.0.0.1:7070)")
    parser.add_argument("--workload", default="gemm:M=256,N=256,K=256")
    parser.add_argument("--target", default="llvm -mcpu=native -threads=1")
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--strategy", default="", help="grid, random, ga, xgb, auto or seeds")
    args = parser.parse_args()

    try:
        with Client(args.daemon) as tune:
            job = tune.submit(args.workload, target=args.target, trials=args.trials,
                              strategy=args.strategy, name="tune_one.py")
            print(f"job {job.job_id}: {job.spec.workload} on {job.device_key or args.target}")
            state = tuner_pb2.JOB_STATE_UNSPECIFIED
            for event in tune.watch(job.job_id):
                state = event.state
                print(f"  {state_name(event.state):9} {event.trials_done}/{event.trials_total} "
                      f"trials, best {event.best_gflops:.2f} GFLOPS"
                      + (f" ({event.message})" if event.message else "")
                      + (f"; last error: {event.last_error}" if event.last_error else ""),
                      flush=True)
            if state != tuner_pb2.JOB_STATE_SUCCEEDED:
                print(f"job {job.job_id} {state_name(state)}: {tune.get_job(job.job_id).message}",
                      file=sys.stderr)
                return 1
            best = tune.get_job(job.job_id).best
            print(f"best: {best.gflops:.2f} GFLOPS ({best.secs:.4g} s) {best.template_name} "
                  f"{best.config}")
            # The log's records of the workload, the decided best first (what tune-compile uses).
            for record in tune.best(args.workload, target=args.target, top_k=3).records:
                print(f"  record {record.uid}: {record.template_name} {record.config}")
            return 0
    except TuneError as error:
        print(f"tune_one.py: {error}", file=sys.stderr)
        return EXIT_CODES.get(error.code, 6)


if __name__ == "__main__":
    sys.exit(main())
