"""ONNX models built here with onnx.helper, read by tune_client.onnx_model and by the built
tune-client (`tune-client --json onnx MODEL`): the same workloads, weights and skipped nodes."""

import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from daemon_fixture import binary
from tune_client import (Client, builtin_model_text, parse_onnx_model, parse_workloads,
                         read_onnx_model, tuner_pb2)

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:  # pragma: no cover - python3-onnx is in scripts/install-deps.sh
    onnx = None

TARGET = "llvm -mcpu=native -threads=1"


def weight(name, dims, elem=None):
    elem = TensorProto.FLOAT if elem is None else elem
    count = 1
    for d in dims:
        count *= d
    return helper.make_tensor(name, elem, dims, bytes(count * (4 if elem == TensorProto.FLOAT
                                                               else 2)), raw=True)


def model(nodes, inputs, initializers, outputs, name="test_graph"):
    graph = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info(o, 0, None)
                                                    for o in outputs], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def resnet_block(batch="batch"):
    """A ResNet bottleneck with a symbolic batch, a classifier exported as Flatten + Gemm
    (transB=1), a grouped and a depthwise convolution, and a transformer-style MatMul + Add."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 64, 56, 56])
    t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 128, 768])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="reduce"),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="spatial", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], name="expand"),
        helper.make_node("Conv", ["x", "w3b"], ["c3b"], name="shortcut"),
        helper.make_node("Add", ["c3", "c3b"], ["sum"]),
        helper.make_node("Conv", ["sum", "wg"], ["g"], name="grouped", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["sum", "wd"], ["d"], name="depthwise", group=256,
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["sum"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("MatMul", ["t", "wq"], ["q"], name="query"),
        helper.make_node("Add", ["q", "bq"], ["qb"]),
        helper.make_node("MatMul", ["t", "wq2"], ["q2"], name="key"),
        helper.make_node("Conv", ["x", "w1"], ["c1_again"], name="reduce_again"),
    ]
    inits = [weight("w1", [64, 64, 1, 1]), weight("b1", [64]), weight("w2", [64, 64, 3, 3]),
             weight("w3", [256, 64, 1, 1]), weight("w3b", [256, 64, 1, 1]),
             weight("wg", [256, 32, 3, 3]), weight("wd", [256, 1, 3, 3]),
             weight("fc_w", [1000, 256]), weight("fc_b", [1000]), weight("wq", [768, 768]),
             weight("bq", [768]), weight("wq2", [768, 768])]
    return model(nodes, [x, t], inits, ["logits", "g", "d", "qb", "q2", "c1_again"])


def sizes_only(name, dims):
    """An f32 initializer with its sizes and no data."""
    return TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)


def resnet50(batch=1):
    """ResNet-50 v1.5 as PyTorch exports it with batch norm folded: Conv with bias, Relu,
    MaxPool, bottlenecks whose last Conv feeds an Add, GlobalAveragePool, Flatten and a Gemm
    with transB=1. The initializers carry their sizes but no data (shape inference needs none)."""
    nodes, inits = [], []

    def conv(x, c_in, c_out, r, stride=1, relu=True):
        name = f"conv{len(nodes)}"
        inits.append(sizes_only(name + ".w", [c_out, c_in, r, r]))
        inits.append(sizes_only(name + ".b", [c_out]))
        nodes.append(helper.make_node("Conv", [x, name + ".w", name + ".b"], [name], name=name,
                                      strides=[stride, stride], pads=[r // 2] * 4))
        if not relu:
            return name
        nodes.append(helper.make_node("Relu", [name], [name + ".relu"]))
        return name + ".relu"

    y = conv("image", 3, 64, 7, stride=2)
    nodes.append(helper.make_node("MaxPool", [y], ["pool"], kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]))
    y, c_in = "pool", 64
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
        for block in range(blocks):
            stride = 2 if stage > 0 and block == 0 else 1
            h = conv(y, c_in, width, 1)
            h = conv(h, width, width, 3, stride=stride)
            h = conv(h, width, width * 4, 1, relu=False)
            shortcut = conv(y, c_in, width * 4, 1, stride=stride, relu=False) if block == 0 else y
            out = f"block{stage}.{block}"
            nodes.append(helper.make_node("Add", [h, shortcut], [out + ".sum"]))
            nodes.append(helper.make_node("Relu", [out + ".sum"], [out]))
            y, c_in = out, width * 4
    nodes.append(helper.make_node("GlobalAveragePool", [y], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    inits.append(sizes_only("fc.w", [1000, 2048]))
    inits.append(sizes_only("fc.b", [1000]))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc",
                                  transB=1))
    image = helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, 224, 224])
    return model(nodes, [image], inits, ["logits"], name="resnet50")


def without_epilogue(workloads):
    """The layers' shapes: epilogue and layout fields dropped, equal shapes merged."""
    merged = {}
    for workload, weight in workloads:
        fields = [f for f in workload.split(",") if not f.startswith(("epilogue=", "layout="))]
        key = ",".join(fields)
        merged[key] = merged.get(key, 0.0) + weight
    return merged


def with_conv_defaults(workload):
    """A conv2d text with stride and pad spelled out, as the canonical form has them."""
    if not workload.startswith("conv2d:"):
        return workload
    fields = dict(f.split("=") for f in workload[len("conv2d:"):].split(","))
    fields.setdefault("stride", "1")
    fields.setdefault("pad", "0")
    return "conv2d:" + ",".join(f"{k}={fields[k]}" for k in
                                ("N", "C", "H", "W", "K", "R", "S", "stride", "pad"))


def symbolic_conv():
    """One convolution whose batch is symbolic: nothing to run until it has a value."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16, 8, 8])
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="proj")], [x],
                 [weight("w", [16, 16, 1, 1])], ["y"])


@unittest.skipIf(onnx is None, "python3-onnx is not installed (scripts/install-deps.sh)")
class OnnxModelTest(unittest.TestCase):
    def test_a_resnet_block_maps_its_convolutions_gemm_and_matmuls(self):
        mapped = parse_onnx_model(resnet_block(), "block.onnx", {"batch": 1})
        self.assertEqual(mapped.graph, "test_graph")
        self.assertEqual(mapped.opset, 13)
        self.assertEqual(mapped.workloads, [
            ("conv2d:N=1,C=64,H=56,W=56,K=64,R=1,S=1,stride=1,pad=0,epilogue=bias_relu", 1.0),
            ("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,epilogue=relu", 1.0),
            ("conv2d:N=1,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0", 2.0),
            ("gemm:M=1,N=1000,K=256,layout=NT,epilogue=bias", 1.0),
            ("gemm:M=256,N=768,K=768,epilogue=bias", 1.0),
            ("gemm:M=256,N=768,K=768", 1.0),
            ("conv2d:N=1,C=64,H=56,W=56,K=64,R=1,S=1,stride=1,pad=0", 1.0),
        ])
        self.assertEqual([(s.node, s.reason.split(" (")[0]) for s in mapped.skipped],
                         [("grouped", "grouped convolution"),
                          ("depthwise", "depthwise convolution")])

    def test_resnet50_as_exported_has_the_built_in_lists_layers_and_weights(self):
        mapped = parse_onnx_model(resnet50(), "resnet50.onnx")
        self.assertEqual(mapped.skipped, [])
        self.assertEqual(sum(weight for _, weight in mapped.workloads), 54.0)
        self.assertIn(("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,"
                       "epilogue=bias_relu", 3.0), mapped.workloads)
        self.assertIn(("gemm:M=1,N=1000,K=2048,layout=NT,epilogue=bias", 1.0), mapped.workloads)
        builtin = {with_conv_defaults(workload): weight for workload, weight in
                   parse_workloads(builtin_model_text("resnet50"), "resnet50")}
        # The built-in list keeps the classifier's weights as [K][N] (layout dropped here).
        self.assertEqual(without_epilogue(mapped.workloads), builtin)

    def test_a_symbolic_batch_is_skipped_until_given_a_value(self):
        symbolic = parse_onnx_model(resnet_block(), "block.onnx")
        self.assertEqual([w for w, _ in symbolic.workloads],
                         ["gemm:M=256,N=768,K=768,epilogue=bias", "gemm:M=256,N=768,K=768"])
        self.assertIn("symbolic size 'batch' of input X 'x' (give it a value: --dim batch=N)",
                      symbolic.skipped[0].reason)
        with self.assertRaises(ValueError) as raised:
            parse_onnx_model(symbolic_conv(), "conv.onnx")
        self.assertEqual(str(raised.exception),
                         "conv.onnx: no Conv, Gemm or MatMul node that tune can run; skipped: proj "
                         "(Conv): symbolic size 'batch' of input X 'x' (give it a value: --dim "
                         "batch=N)")
        with self.assertRaisesRegex(ValueError, "no input of the model has a symbolic dimension "
                                                "'seq'; its symbolic dimensions: batch"):
            parse_onnx_model(resnet_block(), "block.onnx", {"seq": 4})

    def test_a_file_that_is_no_model_is_a_value_error_naming_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "notes.onnx")
            with open(path, "w", encoding="utf-8") as f:
                f.write("not a model\n")
            with self.assertRaisesRegex(ValueError, "notes.onnx: not an ONNX model"):
                read_onnx_model(path)
            with self.assertRaises(OSError):
                read_onnx_model(os.path.join(tmp, "absent.onnx"))


@unittest.skipIf(onnx is None, "python3-onnx is not installed (scripts/install-deps.sh)")
class SameAsTuneClientTest(unittest.TestCase):
    """The C++ reader (model_import/onnx_model.h) through the built tune-client."""

    def tune_client_onnx(self, data: bytes, *args: str):
        if not os.environ.get("TUNE_BIN_DIR"):
            self.skipTest("TUNE_BIN_DIR is not set (ctest sets it; by hand: "
                          "TUNE_BIN_DIR=build/bin)")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(data)
            run = subprocess.run([binary("tune-client"), "--json", "onnx", path, *args],
                                 capture_output=True, text=True, timeout=60, check=False)
            return run, path

    def test_the_same_workloads_weights_and_skipped_nodes(self):
        data = resnet_block(batch=4)
        run, _ = self.tune_client_onnx(data)
        self.assertEqual(run.returncode, 0, run.stderr)
        cpp = json.loads(run.stdout)
        mapped = parse_onnx_model(data, "model.onnx")
        self.assertEqual([(w["workload"], w["weight"]) for w in cpp["workloads"]],
                         mapped.workloads)
        self.assertEqual([(s["node"], s["op_type"], s["reason"]) for s in cpp["skipped"]],
                         [(s.node, s.op_type, s.reason) for s in mapped.skipped])
        self.assertEqual((cpp["graph"], cpp["opset"]), (mapped.graph, mapped.opset))

    def test_the_same_list_for_resnet50(self):
        run, _ = self.tune_client_onnx(resnet50())
        self.assertEqual(run.returncode, 0, run.stderr)
        cpp = json.loads(run.stdout)
        self.assertEqual([(w["workload"], w["weight"]) for w in cpp["workloads"]],
                         parse_onnx_model(resnet50(), "resnet50.onnx").workloads)
        self.assertEqual(cpp["skipped"], [])

    def test_the_same_refusal_of_a_model_whose_every_node_has_a_symbolic_batch(self):
        run, path = self.tune_client_onnx(resnet50(batch="batch"))
        self.assertEqual(run.returncode, 2)
        with self.assertRaises(ValueError) as raised:
            parse_onnx_model(resnet50(batch="batch"), path)
        self.assertEqual(run.stderr, f"tune-client: {raised.exception}\n")
        self.assertIn("conv5 (Conv): symbolic size 'batch' of input X 'conv3.relu'; and 51 more",
                      run.stderr.replace(" (give it a value: --dim batch=N)", ""))

    def test_the_same_dims(self):
        run, _ = self.tune_client_onnx(resnet_block(), "--dim", "batch=2")
        self.assertEqual(run.returncode, 0, run.stderr)
        cpp = [(w["workload"], w["weight"]) for w in json.loads(run.stdout)["workloads"]]
        self.assertEqual(cpp, parse_onnx_model(resnet_block(), "m", {"batch": 2}).workloads)

    def test_the_same_refusal_of_a_model_with_nothing_to_run(self):
        run, path = self.tune_client_onnx(symbolic_conv())
        self.assertEqual(run.returncode, 2)
        with self.assertRaises(ValueError) as raised:
            parse_onnx_model(symbolic_conv(), path)
        self.assertEqual(run.stderr, f"tune-client: {raised.exception}\n")


@unittest.skipIf(onnx is None, "python3-onnx is not installed (scripts/install-deps.sh)")
class SubmitOnnxTest(unittest.TestCase):
    """submit(onnx=...) with the stub replaced: what would be sent."""

    def setUp(self):
        self.client = Client("127.0.0.1:9")
        self.addCleanup(self.client.close)
        self.client._stub = mock.Mock()
        self.client._stub.SubmitJob.return_value = tuner_pb2.Job(job_id=3)

    def test_a_model_job_over_the_mapped_nodes_named_by_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "block.onnx")
            with open(path, "wb") as f:
                f.write(resnet_block())
            self.client.submit(onnx=path, dims={"batch": 1}, target=TARGET, trials=16)
            spec = self.client._stub.SubmitJob.call_args.args[0].spec
            self.assertEqual([(t.workload, t.weight) for t in spec.tasks],
                             read_onnx_model(path, {"batch": 1}).workloads)
            self.assertEqual(spec.name, path)

    def test_dims_without_onnx_are_refused_before_anything_is_sent(self):
        with self.assertRaisesRegex(ValueError, "dims go with onnx"):
            self.client.submit(model="bert", dims={"batch": 1}, target=TARGET, trials=8)
        self.client._stub.SubmitJob.assert_not_called()


if __name__ == "__main__":
    unittest.main()
