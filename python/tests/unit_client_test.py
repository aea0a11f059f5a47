"""tune_client without a daemon: workloads lists, JSON lines, options checked before any call."""

import json
import os
import tempfile
import unittest
from unittest import mock

from tune_client import (Client, Timing, common_pb2, parse_workloads, rate_unit,
                         read_workloads_file, record_to_json_line, tuner_pb2, workload_dtype,
                         workload_out_type)
from tune_client.workloads import normalize_workloads


class WorkloadsTest(unittest.TestCase):
    def test_lines_weights_comments_and_repeats(self):
        text = "# a model\ngemm:M=1,N=2,K=3   2.5\n\n  gemm:M=4,N=4,K=4 # no weight\n" \
               "gemm:M=1,N=2,K=3\t0.5\n"
        self.assertEqual(parse_workloads(text, "m.txt"),
                         [("gemm:M=1,N=2,K=3", 3.0), ("gemm:M=4,N=4,K=4", 1.0)])

    def test_a_bad_line_is_named_by_file_and_number(self):
        for text, problem in [("gemm:M=1,N=1,K=1 x", 'weight "x" is not a positive number'),
                              ("gemm:M=1,N=1,K=1 0", 'weight "0" is not a positive number'),
                              ("gemm:M=1,N=1,K=1 -2", 'weight "-2"'),
                              ("gemm:M=1,N=1,K=1 nan", 'weight "nan"'),
                              ("gemm:M=1,N=1,K=1 2 3", "more than a workload and a weight")]:
            with self.assertRaises(ValueError) as raised:
                parse_workloads("# first\n" + text, "m.txt")
            self.assertIn("m.txt:2: ", str(raised.exception))
            self.assertIn(problem, str(raised.exception))

    def test_a_list_without_workloads_is_refused(self):
        with self.assertRaisesRegex(ValueError, "m.txt: no workload in it"):
            parse_workloads("# nothing\n\n", "m.txt")

    def test_a_file_is_read_with_its_path_in_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write("gemm:M=8,N=8,K=8 4\nconv2d:N=1 two\n")
            with self.assertRaisesRegex(ValueError, f"{path}:2: weight \"two\""):
                read_workloads_file(path)

    def test_lists_pairs_and_mappings(self):
        self.assertEqual(normalize_workloads(["a", ("b", 2), "a"]), [("a", 2.0), ("b", 2.0)])
        self.assertEqual(normalize_workloads({"a": 1, "b": 0.5}), [("a", 1.0), ("b", 0.5)])
        with self.assertRaises(TypeError):
            normalize_workloads("gemm:M=1,N=1,K=1")
        with self.assertRaisesRegex(ValueError, "empty"):
            normalize_workloads([])
        with self.assertRaisesRegex(ValueError, 'b: weight "-1"'):
            normalize_workloads({"b": -1})


class DtypeTest(unittest.TestCase):
    def test_dtype_defaults_to_f32_and_reads_fnuz_whole(self):
        self.assertEqual(workload_dtype("gemm:M=1,N=2,K=3"), "f32")
        self.assertEqual(workload_dtype("gemm:M=1,N=2,K=3,dtype=fp8e4m3fnuz"), "fp8e4m3fnuz")
        self.assertEqual(workload_dtype("gemm:M=1,N=2,K=3,layout=NT,dtype=bf16,epilogue=bias"),
                         "bf16")

    def test_output_types_and_rate_units_follow_the_dtype(self):
        self.assertEqual(workload_out_type("gemm:M=1,N=2,K=3,dtype=bf16"), "bf16")
        self.assertEqual(workload_out_type("gemm:M=1,N=2,K=3,dtype=bf16,out=f32"), "f32")
        self.assertEqual(workload_out_type("gemm:M=1,N=2,K=3,dtype=u8i8"), "i32")
        self.assertEqual(workload_out_type("gemm:M=1,N=2,K=3,dtype=u8i8,epilogue=requant"), "i8")
        self.assertEqual(workload_out_type("gemm:M=1,N=2,K=3,dtype=fp8e5m2"), "bf16")
        self.assertEqual(workload_out_type("gemm:M=1,N=2,K=3,dtype=tf32"), "f32")
        self.assertEqual(rate_unit("gemm:M=1,N=2,K=3,dtype=i8"), "GOPS")
        self.assertEqual(rate_unit("gemm:M=1,N=2,K=3,dtype=f16"), "GFLOPS")


class JsonLineTest(unittest.TestCase):
    def record(self) -> tuner_pb2.Record:
        return tuner_pb2.Record(
            uid="u-1", workload="gemm:M=64,N=64,K=64", target="llvm -mcpu=znver4 -threads=1",
            device_key="cpu/x86_64/znver4", template_name="gemm.cpu.blocked", template_version=2,
            config='{"kc":64,"mc":32}', tune_version="0.1.0", llvm_version="19.1.7",
            worker="host-1", created_at_ms=1763766000000, job_id=7,
            measurement=common_pb2.Measurement(error_kind=common_pb2.ERROR_KIND_NONE,
                                               round_secs=[1.5e-05, 2.0], number=100,
                                               device_fingerprint="cpu/x86_64/znver4 cores=2"),
            timing=common_pb2.TimingOptions(repeat=2, min_repeat_ms=1))

    def test_keys_in_tunes_order_with_the_timings_defaults(self):
        self.assertEqual(
            record_to_json_line(self.record()),
            '{"uid":"u-1","workload":"gemm:M=64,N=64,K=64","target":"llvm -mcpu=znver4 '
            '-threads=1","device_key":"cpu/x86_64/znver4","template":"gemm.cpu.blocked",'
            '"template_version":2,"config":{"kc":64,"mc":32},"error":"NONE","message":"",'
            '"round_secs":[1.5e-05,2.0],"number":100,"device_fingerprint":"cpu/x86_64/znver4 '
            'cores=2","tune_version":"0.1.0","llvm_version":"19.1.7","worker":"host-1",'
            '"created_at_ms":1763766000000,"timing":{"number":1,"repeat":2,"min_repeat_ms":1,'
            '"timeout_ms":10000,"flush_cache":false,"seed":1,"max_repeat":10,"target_ci":0.02}}')

    def test_optional_keys(self):
        record = self.record()
        record.ClearField("timing")
        record.final = True
        record.measurement.library_info = "openblas: 0.3.21"
        record.measurement.error_kind = common_pb2.ERROR_KIND_WRONG_ANSWER
        line = json.loads(record_to_json_line(record))
        self.assertNotIn("timing", line)
        self.assertEqual(line["error"], "WRONG_ANSWER")
        self.assertEqual(list(line)[-2:], ["library_info", "final"])
        self.assertIs(line["final"], True)

    def test_gpu_records_say_their_clock_and_keep_the_host_reading_last(self):
        record = self.record()
        record.measurement.gpu_clock = common_pb2.GPU_CLOCK_GRAPH
        record.measurement.host_round_secs.extend([2.5e-05, 2.0e-05])
        line = json.loads(record_to_json_line(record))
        self.assertEqual(list(line)[-2:], ["gpu_clock", "host_round_secs"])
        self.assertEqual(line["gpu_clock"], "graph")
        self.assertEqual(line["host_round_secs"], [2.5e-05, 2.0e-05])
        record.measurement.gpu_clock = common_pb2.GPU_CLOCK_EVENTS
        record.measurement.ClearField("host_round_secs")
        line = json.loads(record_to_json_line(record))
        self.assertEqual(line["gpu_clock"], "events")
        self.assertNotIn("host_round_secs", line)

    def test_cpu_records_have_no_gpu_clock(self):
        line = json.loads(record_to_json_line(self.record()))
        self.assertNotIn("gpu_clock", line)
        self.assertNotIn("host_round_secs", line)


class OptionsTest(unittest.TestCase):
    def test_timing_zeros_are_the_daemons_defaults(self):
        self.assertEqual(Timing().to_proto(), common_pb2.TimingOptions())
        self.assertEqual(Timing(repeat=5, flush_cache=True).to_proto(),
                         common_pb2.TimingOptions(repeat=5, flush_cache=True))

    def test_the_address_comes_from_tune_daemon_else_the_default(self):
        with mock.patch.dict(os.environ, {"TUNE_DAEMON": "10.0.0.1:7171"}):
            with Client() as client:
                self.assertEqual(client.address, "10.0.0.1:7171")
            with Client("127.0.0.1:9") as client:
                self.assertEqual(client.address, "127.0.0.1:9")
        with mock.patch.dict(os.environ, {}, clear=True):
            with Client() as client:
                self.assertEqual(client.address, "127.0.0.1:7070")

    def test_submit_and_best_need_exactly_one_subject(self):
        with Client("127.0.0.1:9") as client:
            with self.assertRaisesRegex(ValueError, "exactly one of workload"):
                client.submit(target="llvm", trials=1)
            with self.assertRaisesRegex(ValueError, "exactly one of workload"):
                client.submit("gemm:M=1,N=1,K=1", workloads=["x"], target="llvm", trials=1)
            with self.assertRaisesRegex(ValueError, "exactly one of target and device_key"):
                client.best("gemm:M=1,N=1,K=1")


if __name__ == "__main__":
    unittest.main()
