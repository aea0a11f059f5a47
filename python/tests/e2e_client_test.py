"""tune_client against a real tune-daemon with one local worker and a fresh tuning log."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import grpc

from daemon_fixture import Daemon, binary
from tune_client import (FINAL_STATES, Client, Timing, TuneError, builtin_model, common_pb2,
                         state_name, tuner_pb2)

CPU_TARGET = "llvm -mcpu=native -threads=1"
# No worker of this test measures CUDA: a job for it stays queued until cancelled.
GPU_TARGET = "cuda -arch=sm_90"
WORKLOAD = "gemm:M=32,N=32,K=32"
TRIALS = 3
# Like the C++ e2e tests' FastSpec: short rounds, so that a trial takes milliseconds.
FAST = Timing(number=1, repeat=2, min_repeat_ms=1)
# Bounds on a job that normally ends within seconds (a deadline, not an assertion on time).
JOB_DEADLINE_S = 240

# The test's daemon is plaintext and has no tokens: settings for another daemon in the
# environment of whoever runs the tests must not reach the clients (nor the example's).
for _name in ("TUNE_DAEMON", "TUNE_TOKEN", "TUNE_TLS_CA", "TUNE_TLS_CERT", "TUNE_TLS_KEY"):
    os.environ.pop(_name, None)


def as_pairs(lines: list) -> list:
    """Each JSON line as its (key, value) pairs, in order."""
    return [list(json.loads(line).items()) for line in lines]


class ClientTest(unittest.TestCase):
    daemon: Daemon
    client: Client

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(local_workers=1)
        cls.client = Client(cls.daemon.address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        code = cls.daemon.stop()
        if code != 0:
            raise AssertionError(f"tune-daemon exited with code {code} after SIGTERM")

    def context(self) -> str:
        return f"\n--- daemon log ---\n{self.daemon.log()}"

    def test_a_job_runs_to_its_end_through_watch_and_its_records_come_back(self):
        job = self.client.submit(WORKLOAD, target=CPU_TARGET, trials=TRIALS, strategy="random",
                                 timing=FAST, name="python e2e")
        self.assertGreater(job.job_id, 0)
        self.assertEqual(job.spec.workload, WORKLOAD)
        self.assertEqual(job.spec.name, "python e2e")
        self.assertEqual(job.spec.timing.min_repeat_ms, 1)

        try:
            events = list(self.client.watch(job.job_id, timeout=JOB_DEADLINE_S))
        except TuneError as error:
            self.fail(f"watch failed: {error}{self.context()}")
        self.assertTrue(events)
        last = events[-1]
        self.assertEqual(state_name(last.state), "SUCCEEDED", f"{last}{self.context()}")
        self.assertTrue(all(e.state not in FINAL_STATES for e in events[:-1]),
                        "the stream ends right after the first final event")
        self.assertTrue(all(e.job_id == job.job_id for e in events))
        done = [e.trials_done for e in events]
        self.assertEqual(done, sorted(done), "trials done never go back")
        self.assertEqual(last.trials_done, TRIALS)
        self.assertEqual(last.trials_total, TRIALS)
        self.assertGreater(last.best_gflops, 0)

        finished = self.client.get_job(job.job_id)
        self.assertEqual(finished.state, tuner_pb2.JOB_STATE_SUCCEEDED)
        self.assertTrue(finished.HasField("best"))
        self.assertIn(job.job_id, [j.job_id for j in self.client.jobs()])
        self.assertIn(job.job_id, [j.job_id for j in
                                   self.client.jobs(states=[tuner_pb2.JOB_STATE_SUCCEEDED])])

        best = self.client.best(WORKLOAD, target=CPU_TARGET, top_k=2)
        self.assertEqual(best.match, tuner_pb2.BEST_MATCH_EXACT, best.note)
        self.assertTrue(best.records)
        top = best.records[0]
        self.assertEqual(top.workload, WORKLOAD)
        self.assertEqual(top.measurement.error_kind, common_pb2.ERROR_KIND_NONE)
        # The decided best comes first: the re-measurement of the job's winning finalist.
        self.assertTrue(top.final, top)
        self.assertEqual((top.template_name, top.config),
                         (finished.best.template_name, finished.best.config))

        records = list(self.client.export(workload=WORKLOAD))
        self.assertGreaterEqual(len(records), 1)
        self.assertTrue(all(r.workload == WORKLOAD for r in records))
        self.assertIn(top.uid, [r.uid for r in records])
        with_failures = list(self.client.export(workload=WORKLOAD, include_failures=True))
        self.assertGreaterEqual(len(with_failures), len(records))

        lines = list(self.client.export_json_lines(workload=WORKLOAD))
        self.assertEqual([json.loads(line)["uid"] for line in lines], [r.uid for r in records])
        # The same lines as tune-client export, key order included; a double may be printed
        # with other digits (Python's shortest repr, nlohmann's Grisu2) that parse to the same.
        self.assertEqual(as_pairs(lines), as_pairs(self.tune_client_export(WORKLOAD)))

        again = self.client.import_records(records)
        self.assertEqual((again.imported, again.duplicates, again.rejected),
                         (0, len(records), 0), "importing the log's own records adds nothing")

        workers = self.client.workers()
        self.assertEqual(len(workers), 1, workers)
        self.assertTrue(workers[0].device_key.startswith("cpu/"), workers[0])
        self.assertEqual(workers[0].state, tuner_pb2.WORKER_STATE_IDLE)
        self.assertGreaterEqual(workers[0].trials_done, TRIALS)

    def tune_client_export(self, workload: str) -> list:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "records.jsonl")
            run = subprocess.run([binary("tune-client"), "--daemon", self.daemon.address,
                                  "export", "--out", out, "--workload", workload],
                                 capture_output=True, text=True, timeout=120, check=False)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(out, encoding="utf-8") as f:
                return f.read().splitlines()

    def test_cancelling_a_queued_job_ends_its_watch_and_a_second_cancel_is_refused(self):
        job = self.client.submit("gemm:M=64,N=64,K=64", target=GPU_TARGET, trials=2)
        self.assertEqual(job.state, tuner_pb2.JOB_STATE_QUEUED)
        self.assertEqual(self.client.get_job(job.job_id).state, tuner_pb2.JOB_STATE_QUEUED)

        cancelled = self.client.cancel(job.job_id)
        self.assertEqual(cancelled.state, tuner_pb2.JOB_STATE_CANCELLED)
        self.assertEqual(cancelled.trials_done, 0)
        events = list(self.client.watch(job.job_id, timeout=JOB_DEADLINE_S))
        self.assertEqual([state_name(e.state) for e in events], ["CANCELLED"])

        with self.assertRaises(TuneError) as raised:
            self.client.cancel(job.job_id)
        self.assertEqual(raised.exception.code, grpc.StatusCode.FAILED_PRECONDITION)

    def test_a_model_job_carries_its_workloads_and_weights(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "two-layers.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write("# two layers\ngemm:M=64,N=64,K=32  3\n\ngemm:M=16,N=16,K=16\n")
            from_file = self.client.submit(workloads_file=path, target=GPU_TARGET, trials=4)
        from_list = self.client.submit(workloads={"gemm:M=64,N=64,K=32": 3,
                                                  "gemm:M=16,N=16,K=16": 1},
                                       target=GPU_TARGET, trials=4, name="from a mapping")
        for job in (from_file, from_list):
            self.assertEqual([(t.workload, t.weight) for t in job.spec.tasks],
                             [("gemm:M=64,N=64,K=32", 3.0), ("gemm:M=16,N=16,K=16", 1.0)])
            self.assertEqual(job.spec.workload, "")
            self.assertEqual(self.client.cancel(job.job_id).state, tuner_pb2.JOB_STATE_CANCELLED)
        self.assertEqual(from_file.spec.name, path)
        self.assertEqual(from_list.spec.name, "from a mapping")

    def test_a_built_in_model_job_has_the_tasks_of_tune_client_submit_model(self):
        # ResNet-50's 24 layers would take minutes to tune: queued (no CUDA worker), then cancelled.
        job = self.client.submit(model="resnet50", target=GPU_TARGET, trials=48)
        self.addCleanup(self.client.cancel, job.job_id)
        self.assertEqual(job.state, tuner_pb2.JOB_STATE_QUEUED)
        self.assertEqual(job.spec.name, "resnet50")
        self.assertEqual(job.spec.workload, "")
        pairs = [(t.workload, t.weight) for t in job.spec.tasks]
        # The list's layers and weights, in its order; the daemon writes each workload in its
        # canonical form (a conv2d's default stride=1 and pad=0 are spelled out).
        layers = builtin_model("resnet50")
        self.assertEqual(len(pairs), 24)
        self.assertEqual([weight for _, weight in pairs], [weight for _, weight in layers])
        self.assertEqual(pairs[0], layers[0])  # the stem, written canonically in the file
        for (sent, _), (kept, _) in zip(layers, pairs):
            op, fields = sent.split(":")
            self.assertTrue(kept.startswith(op + ":"), f"{sent} became {kept}")
            self.assertLessEqual(set(fields.split(",")), set(kept.split(":")[1].split(",")),
                                 f"{sent} became {kept}")
        # The daemon made a task job per layer.
        tasks = self.client.get_job(job.job_id).tasks
        self.assertEqual([(t.workload, t.weight) for t in tasks], pairs)
        self.assertEqual(len({t.job_id for t in tasks}), 24)

        # The job tune-client submits for --model resnet50 (its list is compiled into it).
        run = subprocess.run([binary("tune-client"), "--daemon", self.daemon.address, "submit",
                              "--model", "resnet50", "--target", GPU_TARGET, "--trials", "48"],
                             capture_output=True, text=True, timeout=60, check=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        cli_job = self.client.get_job(int(run.stdout.strip()))
        self.addCleanup(self.client.cancel, cli_job.job_id)
        self.assertEqual([(t.workload, t.weight) for t in cli_job.spec.tasks], pairs)
        self.assertEqual(cli_job.spec.name, job.spec.name)

    def test_a_range_job_tunes_its_sizes_and_best_answers_each(self):
        job = self.client.submit("gemm:M=1..8,N=16,K=16", target=CPU_TARGET, trials=5,
                                 strategy="random")
        self.assertEqual(job.spec.range, "gemm:M=1..8,N=16,K=16")
        self.assertEqual([t.workload for t in job.spec.tasks],
                         [f"gemm:M={m},N=16,K=16" for m in (1, 2, 3, 4, 6, 8)])
        events = list(self.client.watch(job.job_id))
        self.assertEqual(state_name(events[-1].state), "SUCCEEDED", events[-1].message)
        best = self.client.best("gemm:M=1..8,N=16,K=16", target=CPU_TARGET)
        self.assertGreaterEqual(len(best.range_sizes), 4)  # 1, 2, 4, 8 and the midpoints tuned
        self.assertEqual(list(best.range_sizes), sorted(best.range_sizes))
        for size, record in zip(best.range_sizes, best.records):
            self.assertEqual(record.workload, f"gemm:M={size},N=16,K=16")
        with self.assertRaises(TuneError) as raised:
            self.client.submit("gemm:M=8..1,N=16,K=16", target=CPU_TARGET, trials=5)
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("min 8 is above its max 1", raised.exception.message)

    def test_an_unknown_strategy_is_invalid_argument_with_the_daemons_message(self):
        with self.assertRaises(TuneError) as raised:
            self.client.submit(WORKLOAD, target=CPU_TARGET, trials=1, strategy="annealing")
        error = raised.exception
        self.assertEqual(error.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("spec.strategy", error.message)
        self.assertIn("'annealing' is not known; accepted: ", error.message)
        self.assertIn("INVALID_ARGUMENT", str(error))

    def test_crashes_of_one_code_on_two_workers_are_quarantined_and_lifting_needs_an_admin(self):
        job = self.client.submit("gemm:M=24,N=24,K=24", target=CPU_TARGET, trials=1,
                                 strategy="grid", timing=FAST)
        for _ in self.client.watch(job.job_id, timeout=JOB_DEADLINE_S):
            pass
        [measured] = list(self.client.export(workload="gemm:M=24,N=24,K=24"))
        self.assertEqual(len(measured.artifact_hash), 64)
        crashes = []
        for worker in ("py-left", "py-right"):
            crash = tuner_pb2.Record()
            crash.CopyFrom(measured)
            crash.uid = f"{worker}-{measured.uid}"
            crash.worker = worker
            crash.measurement.error_kind = common_pb2.ERROR_KIND_RUNTIME_CRASH
            crash.measurement.message = "SIGSEGV"
            del crash.measurement.round_secs[:]
            crashes.append(crash)
        self.assertEqual(self.client.import_records(crashes).imported, 2)
        [entry] = [e for e in self.client.quarantine()
                   if e.artifact_hash == measured.artifact_hash]
        self.assertEqual(list(entry.workers), ["py-left", "py-right"])
        self.assertEqual(entry.error_kind, common_pb2.ERROR_KIND_RUNTIME_CRASH)
        self.assertEqual(entry.workload, "gemm:M=24,N=24,K=24")
        with self.assertRaises(TuneError) as raised:
            self.client.lift_quarantine(entry.id)
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAUTHENTICATED)
        self.assertIn("tune-daemon token create", str(raised.exception))
        self.assertIn(entry.id, [e.id for e in self.client.quarantine(include_lifted=True)])

    def test_reverify_confirms_a_winner_its_workers_measured_and_refuses_a_bad_request(self):
        workload = "gemm:M=40,N=24,K=24"
        job = self.client.submit(workload, target=CPU_TARGET, trials=2, strategy="grid",
                                 templates=["gemm.cpu.blocked"], timing=FAST)
        for _ in self.client.watch(job.job_id, timeout=JOB_DEADLINE_S):
            pass
        # The one worker measured them under the newest fingerprint: already verified.
        [verdict] = self.client.reverify(workload, target=CPU_TARGET, wait=True,
                                         timeout=JOB_DEADLINE_S)
        self.assertEqual(verdict["workload"], workload)
        self.assertEqual(verdict["verdict"], "confirmed", verdict)
        self.assertIn("already measured under the newest fingerprint", verdict["message"])
        with self.assertRaises(ValueError):
            self.client.reverify(workload, target=CPU_TARGET, all=True)
        with self.assertRaises(TuneError) as raised:
            self.client.reverify("gemm:M=8,N=8,K=7", target=CPU_TARGET)
        self.assertEqual(raised.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("nothing to reverify", raised.exception.message)

    def test_an_unknown_job_is_not_found(self):
        for call in (self.client.get_job, self.client.cancel,
                     lambda job_id: list(self.client.watch(job_id))):
            with self.assertRaises(TuneError) as raised:
                call(987654321)
            self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_best_of_a_workload_never_tuned_is_not_found(self):
        with self.assertRaises(TuneError) as raised:
            self.client.best("gemm:M=8,N=8,K=8", target=CPU_TARGET)
        self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("no successful record", raised.exception.message)


    def test_the_example_tunes_one_workload(self):
        example = os.path.join(os.path.dirname(__file__), "..", "examples", "tune_one.py")
        run = subprocess.run([sys.executable, example, "--daemon", self.daemon.address,
                              "--workload", "gemm:M=16,N=16,K=16", "--trials", "2",
                              "--strategy", "random"],
                             capture_output=True, text=True, timeout=JOB_DEADLINE_S, check=False)
        self.assertEqual(run.returncode, 0, f"{run.stdout}{run.stderr}{self.context()}")
        self.assertIn("SUCCEEDED 2/2 trials", run.stdout)
        self.assertIn("best: ", run.stdout)


class UnreachableDaemonTest(unittest.TestCase):
    def test_a_daemon_that_is_not_there_is_unavailable(self):
        # Port 1 on loopback: nothing listens there (it would need root and a reason).
        with Client("127.0.0.1:1", timeout=10) as client:
            with self.assertRaises(TuneError) as raised:
                client.jobs()
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main()
