"""The built-in models (tune-client --model) in tune_client, without a daemon: the same lists as
common/models/ (their only copy, which the build copies into tune.models) and as tune-client."""

import os
import subprocess
import unittest
from unittest import mock

from daemon_fixture import binary
from tune_client import (Client, TuneError, builtin_model, builtin_model_names, builtin_model_text,
                         parse_workloads, tuner_pb2)

NAMES = ["bert", "mobilenetv2", "resnet50"]
SOURCE_MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common",
                             "models")
UNKNOWN = 'unknown model "vgg16"; built-in models: bert, mobilenetv2, resnet50'
TARGET = "llvm -mcpu=native -threads=1"


def source_text(name: str) -> str:
    with open(os.path.join(SOURCE_MODELS, name + ".txt"), encoding="utf-8") as f:
        return f.read()


class BuiltinModelsTest(unittest.TestCase):
    def test_the_names_are_the_files_of_common_models(self):
        self.assertEqual(builtin_model_names(), NAMES)
        self.assertEqual(sorted(f[:-len(".txt")] for f in os.listdir(SOURCE_MODELS)
                                if f.endswith(".txt")), NAMES)

    def test_resnet50_is_its_file_24_layers_53_convolutions_and_the_classifier(self):
        layers = builtin_model("resnet50")
        self.assertEqual(layers, parse_workloads(source_text("resnet50"), "resnet50"))
        self.assertEqual(len(layers), 24)
        self.assertEqual(sum(weight for _, weight in layers), 54.0)
        self.assertEqual(layers[0], ("conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3", 1.0))
        self.assertIn(("conv2d:N=1,C=256,H=14,W=14,K=1024,R=1,S=1", 6.0), layers)
        self.assertEqual(layers[-1], ("gemm:M=1,N=1000,K=2048", 1.0))

    def test_every_model_is_its_source_file_byte_for_byte(self):
        for name in NAMES:
            with self.subTest(name):
                self.assertEqual(builtin_model_text(name), source_text(name))
                self.assertEqual(builtin_model(name), parse_workloads(source_text(name), name))

    def test_an_unknown_model_is_refused_naming_the_built_in_ones(self):
        for call in (builtin_model, builtin_model_text):
            with self.assertRaises(ValueError) as raised:
                call("vgg16")
            self.assertEqual(str(raised.exception), UNKNOWN)
        with self.assertRaises(ValueError):
            builtin_model("../models/resnet50")

    def test_without_the_builds_copy_the_error_says_where_it_comes_from(self):
        with mock.patch("tune_client.workloads._MODELS_PACKAGE", "tune.no_such_models"):
            with self.assertRaisesRegex(ImportError, "tune_python copies them from common/models/"):
                builtin_model("resnet50")


class SameAsTuneClientTest(unittest.TestCase):
    """What the C++ lists are, asked of the built tune-client (`tune-client models [NAME]`)."""

    def tune_client(self, *args: str) -> subprocess.CompletedProcess:
        if not os.environ.get("TUNE_BIN_DIR"):
            self.skipTest("TUNE_BIN_DIR is not set (ctest sets it; by hand: "
                          "TUNE_BIN_DIR=build/bin)")
        return subprocess.run([binary("tune-client"), *args], capture_output=True, text=True,
                              timeout=60, check=False)

    def test_the_same_names(self):
        run = self.tune_client("models")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.splitlines(), builtin_model_names())

    def test_the_same_lists_comments_included(self):
        for name in NAMES:
            with self.subTest(name):
                run = self.tune_client("models", name)
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertEqual(run.stdout, builtin_model_text(name))

    def test_the_same_error_for_an_unknown_model(self):
        run = self.tune_client("models", "vgg16")
        self.assertEqual(run.returncode, 2)
        self.assertEqual(run.stderr, f"tune-client: {UNKNOWN}\n")


class SubmitModelTest(unittest.TestCase):
    """submit(model=...) with the stub replaced: what would be sent, and that nothing is."""

    def setUp(self):
        self.client = Client("127.0.0.1:9")
        self.addCleanup(self.client.close)
        self.client._stub = mock.Mock()
        self.client._stub.SubmitJob.return_value = tuner_pb2.Job(job_id=7)

    def sent_spec(self) -> tuner_pb2.JobSpec:
        self.client._stub.SubmitJob.assert_called_once()
        return self.client._stub.SubmitJob.call_args.args[0].spec

    def test_a_model_job_carries_the_models_layers_and_its_name(self):
        job = self.client.submit(model="resnet50", target=TARGET, trials=48, strategy="random")
        self.assertEqual(job.job_id, 7)
        spec = self.sent_spec()
        self.assertEqual([(t.workload, t.weight) for t in spec.tasks], builtin_model("resnet50"))
        self.assertEqual(len(spec.tasks), 24)
        self.assertEqual(spec.workload, "")
        self.assertEqual(spec.name, "resnet50")  # as tune-client submit --model
        self.assertEqual((spec.target, spec.trials, spec.strategy), (TARGET, 48, "random"))

    def test_a_given_name_is_kept(self):
        self.client.submit(model="bert", target=TARGET, trials=7, name="bert nightly")
        spec = self.sent_spec()
        self.assertEqual(spec.name, "bert nightly")
        self.assertEqual([(t.workload, t.weight) for t in spec.tasks], builtin_model("bert"))

    def test_an_unknown_model_raises_before_anything_is_sent(self):
        with self.assertRaises(ValueError) as raised:
            self.client.submit(model="vgg16", target=TARGET, trials=8)
        self.assertEqual(str(raised.exception), UNKNOWN)
        self.client._stub.SubmitJob.assert_not_called()

    def test_a_model_excludes_the_other_forms(self):
        for other in ({"workload": "gemm:M=1,N=1,K=1"}, {"workloads": ["gemm:M=1,N=1,K=1"]},
                      {"workloads_file": "model.txt"}):
            with self.subTest(other):
                with self.assertRaisesRegex(ValueError, "exactly one of workload, workloads, "
                                                        "workloads_file, model and onnx"):
                    self.client.submit(model="resnet50", target=TARGET, trials=24, **other)
        self.client._stub.SubmitJob.assert_not_called()

    def test_with_no_daemon_there_an_unknown_model_is_still_a_value_error(self):
        # A real channel to a port nobody serves: a call would raise TuneError (UNAVAILABLE).
        with Client("127.0.0.1:9", timeout=5) as client:
            with self.assertRaisesRegex(ValueError, "built-in models: bert, mobilenetv2"):
                client.submit(model="resnet-50", target=TARGET, trials=24)
            with self.assertRaises(TuneError):
                client.submit(model="bert", target=TARGET, trials=7)


if __name__ == "__main__":
    unittest.main()
