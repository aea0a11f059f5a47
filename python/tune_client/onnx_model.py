"""An ONNX model's Conv, Gemm and MatMul nodes as a weighted workloads list, as `tune-client onnx
MODEL` and `submit --onnx` read them (model_import/onnx_model.h is the C++ side; a test holds the
two to the same list). Needs the ``onnx`` package (Debian's python3-onnx); only this module
imports it, on first use.

Shapes come from ONNX's shape inference with data propagation on. Each node adds 1 to its
workload's weight. Nodes tune cannot run are listed with their reason, never guessed: grouped and
depthwise Conv, batched MatMul, transposed A, a C that is not a bias, unequal strides or
dilations, asymmetric padding, element types other than FLOAT, FLOAT16 and BFLOAT16, symbolic or
unknown sizes (give symbolic ones values with ``dims={"batch": 1}``), and the quantized and
transposed convolution and matrix operators. Subgraphs (If, Loop, Scan bodies) are not read.
"""

import os
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple, Union

WeightedWorkload = Tuple[str, float]

_MAX_MODEL_WORKLOADS = 256  # common/workload_list.h, kMaxModelWorkloads
_REASONS_SHOWN = 3  # skipped nodes named when none can run (model_import/onnx_model.cc)
_UNMAPPED = {
    "ConvTranspose": "a transposed convolution; tune's conv2d is a forward convolution",
    "ConvInteger": "a quantized convolution with zero points; not mapped",
    "QLinearConv": "a quantized convolution with scales and zero points; not mapped",
    "MatMulInteger": "a quantized matrix product with zero points; not mapped",
    "QLinearMatMul": "a quantized matrix product with scales and zero points; not mapped",
}


@dataclass
class SkippedNode:
    node: str
    op_type: str
    reason: str


@dataclass
class OnnxWorkloads:
    graph: str
    opset: int
    workloads: List[WeightedWorkload] = field(default_factory=list)
    skipped: List[SkippedNode] = field(default_factory=list)


class _Skip(Exception):
    pass


def _dims_text(dims) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


class _Graph:
    def __init__(self, onnx, graph):
        self._onnx = onnx
        self.tensors: Dict[str, Tuple[int, Optional[list]]] = {}
        self.consumers: Dict[str, list] = {}
        self.outputs = {v.name for v in graph.output}
        for v in list(graph.input) + list(graph.value_info) + list(graph.output):
            if v.type.HasField("tensor_type"):
                t = v.type.tensor_type
                self.tensors[v.name] = (t.elem_type, list(t.shape.dim) if t.HasField("shape")
                                        else None)
        for init in graph.initializer:
            self.tensors[init.name] = (init.data_type, [int(d) for d in init.dims])
        for node in graph.node:
            for name in dict.fromkeys(i for i in node.input if i):
                self.consumers.setdefault(name, []).append(node)

    def dims(self, name: str, role: str) -> List[int]:
        _, shape = self.tensors.get(name, (0, None))
        if shape is None:
            raise _Skip(f"no shape inferred for {role} '{name}' (unknown sizes)")
        out = []
        for d in shape:
            if isinstance(d, int):
                out.append(d)
            elif d.HasField("dim_value") and d.dim_value >= 1:
                out.append(d.dim_value)
            elif d.HasField("dim_param") and d.dim_param:
                raise _Skip(f"symbolic size '{d.dim_param}' of {role} '{name}' (give it a value: "
                            f"--dim {d.dim_param}=N)")
            else:
                raise _Skip(f"a size of {role} '{name}' is unknown after shape inference")
        return out

    def known_dims(self, name: str) -> Optional[List[int]]:
        try:
            return self.dims(name, "")
        except _Skip:
            return None

    def dtype(self, name: str, role: str) -> str:
        tp = self._onnx.TensorProto
        elem, _ = self.tensors.get(name, (0, None))
        names = {tp.FLOAT: "f32", tp.FLOAT16: "f16", tp.BFLOAT16: "bf16"}
        if elem in names:
            return names[elem]
        onnx_name = tp.DataType.Name(elem) if elem in tp.DataType.values() else f"type {elem}"
        raise _Skip(f"{role} '{name}' holds {onnx_name}; tune maps FLOAT, FLOAT16 and BFLOAT16 "
                    "here")

    def only_consumer(self, value: str):
        users = self.consumers.get(value, [])
        return users[0] if len(users) == 1 and value not in self.outputs else None


def _attr(node, name: str, fallback):
    for a in node.attribute:
        if a.name == name:
            if isinstance(fallback, list):
                return list(a.ints) or fallback
            if isinstance(fallback, float):
                return a.f if a.HasField("f") else fallback
            if isinstance(fallback, str):
                return a.s.decode() if a.HasField("s") else fallback
            return a.i if a.HasField("i") else fallback
    return fallback


def _epilogue(graph: _Graph, node, has_bias: bool, take_add: bool, n: int) -> str:
    value = node.output[0]
    if take_add:
        add = graph.only_consumer(value)
        if add is not None and add.op_type == "Add" and len(add.input) == 2:
            other = add.input[1] if add.input[0] == value else add.input[0]
            dims = graph.known_dims(other)
            if other != value and dims in ([n], [1, n]):
                has_bias = True
                value = add.output[0]
    relu = graph.only_consumer(value)
    has_relu = relu is not None and relu.op_type == "Relu"
    if has_bias:
        return "bias_relu" if has_relu else "bias"
    return "relu" if has_relu else ""


def _finish(text: str, dtype: str, epilogue: str) -> str:
    if dtype != "f32":
        text += f",dtype={dtype}"
    if epilogue:
        text += f",epilogue={epilogue}"
    return text


def _conv(graph: _Graph, node) -> str:
    if len(node.input) < 2:
        raise _Skip("has no weight input")
    x = graph.dims(node.input[0], "input X")
    w = graph.dims(node.input[1], "weight W")
    if len(x) != 4 or len(w) != 4:
        raise _Skip(f"a {len(x) - 2}-D convolution (input {_dims_text(x)}); tune's conv2d is 2-D")
    dtype = graph.dtype(node.input[0], "input X")
    group = _attr(node, "group", 1)
    if group != 1:
        kind = "depthwise" if group == x[1] and w[1] == 1 else "grouped"
        raise _Skip(f"{kind} convolution (group={group}); tune's conv2d has groups=1")
    strides = _attr(node, "strides", [1, 1])
    dilations = _attr(node, "dilations", [1, 1])
    if len(strides) != 2 or strides[0] != strides[1]:
        raise _Skip(f"strides {_dims_text(strides)} differ; tune's conv2d has one stride")
    if len(dilations) != 2 or dilations[0] != dilations[1]:
        raise _Skip(f"dilations {_dims_text(dilations)} differ; tune's conv2d has one dilation")
    auto_pad = _attr(node, "auto_pad", "NOTSET")
    if auto_pad == "NOTSET":
        pads = _attr(node, "pads", [0, 0, 0, 0])
    elif auto_pad == "VALID":
        pads = [0, 0, 0, 0]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begins, ends = [], []
        for i in range(2):
            size, stride = x[2 + i], strides[i]
            out = (size + stride - 1) // stride
            total = max((out - 1) * stride + (w[2 + i] - 1) * dilations[i] + 1 - size, 0)
            begins.append(total // 2)
            ends.append(total - total // 2)
        pads = begins + ends
    else:
        raise _Skip(f"auto_pad={auto_pad} is not an ONNX padding mode")
    if len(pads) != 4 or len(set(pads)) != 1:
        raise _Skip(f"padding {_dims_text(pads)} (begins, then ends) is not the same on all four "
                    "sides; tune's conv2d pads symmetrically")
    if w[1] != x[1]:
        raise _Skip(f"weight {_dims_text(w)} does not match the input's {x[1]} channels")
    has_bias = len(node.input) >= 3 and node.input[2] != ""
    epilogue = _epilogue(graph, node, has_bias, False, w[0])
    text = (f"conv2d:N={x[0]},C={x[1]},H={x[2]},W={x[3]},K={w[0]},R={w[2]},S={w[3]},"
            f"stride={strides[0]},pad={pads[0]}")
    if dilations[0] != 1:
        text += f",dilation={dilations[0]}"
    return _finish(text, dtype, epilogue)


def _gemm(graph: _Graph, node) -> str:
    if len(node.input) < 2:
        raise _Skip("has fewer than two inputs")
    a = graph.dims(node.input[0], "input A")
    b = graph.dims(node.input[1], "input B")
    dtype = graph.dtype(node.input[0], "input A")
    if len(a) != 2 or len(b) != 2:
        raise _Skip(f"inputs of shapes {_dims_text(a)} and {_dims_text(b)} are not matrices")
    if _attr(node, "transA", 0) != 0:
        raise _Skip("transA=1 (A stored transposed); tune's GEMM takes A as [M][K]")
    alpha = _attr(node, "alpha", 1.0)
    if alpha != 1.0:
        raise _Skip(f"alpha={alpha:g}; tune's GEMM computes A x B unscaled")
    nt = _attr(node, "transB", 0) != 0
    m, k, n = a[0], a[1], b[0] if nt else b[1]
    if (b[1] if nt else b[0]) != k:
        raise _Skip(f"B {_dims_text(b)} does not match A {_dims_text(a)}")
    has_bias = False
    if len(node.input) >= 3 and node.input[2] != "":
        c = graph.dims(node.input[2], "input C")
        if c not in ([n], [1, n]):
            raise _Skip(f"C of shape {_dims_text(c)} is not a bias of N={n} elements; tune's GEMM "
                        "adds a bias only")
        beta = _attr(node, "beta", 1.0)
        if beta != 1.0:
            raise _Skip(f"beta={beta:g}; tune's GEMM adds its bias unscaled")
        has_bias = True
    epilogue = _epilogue(graph, node, has_bias, False, n)
    text = f"gemm:M={m},N={n},K={k}" + (",layout=NT" if nt else "")
    return _finish(text, dtype, epilogue)


def _matmul(graph: _Graph, node) -> str:
    if len(node.input) != 2:
        raise _Skip("does not have two inputs")
    a = graph.dims(node.input[0], "input A")
    b = graph.dims(node.input[1], "input B")
    dtype = graph.dtype(node.input[0], "input A")
    if len(a) < 2 or len(b) < 2:
        raise _Skip(f"a vector operand (A {_dims_text(a)}, B {_dims_text(b)}); tune's GEMM takes "
                    "matrices")
    if len(b) > 2:
        raise _Skip(f"batched MatMul (A {_dims_text(a)}, B {_dims_text(b)}); tune's GEMM takes "
                    "one B of rank 2")
    m = 1
    for d in a[:-1]:
        m *= d
    k, n = a[-1], b[1]
    if b[0] != k:
        raise _Skip(f"B {_dims_text(b)} does not match A {_dims_text(a)}")
    return _finish(f"gemm:M={m},N={n},K={k}", dtype, _epilogue(graph, node, False, True, n))


def _set_dims(model, dims: Mapping[str, int], source: str) -> None:
    seen, used = set(), set()
    for value in model.graph.input:
        if not value.type.HasField("tensor_type"):
            continue
        for d in value.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param:
                param = d.dim_param
                seen.add(param)
                if param in dims:
                    d.dim_value = dims[param]
                    used.add(param)
    for name, size in dims.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"--dim '{name}={size}': expected NAME=VALUE, a symbolic dimension of "
                             "the model's inputs and its size (>= 1), e.g. batch=1")
        if name not in used:
            raise ValueError(f"{source}: --dim {name}={size}: no input of the model has a symbolic "
                             f"dimension '{name}'; its symbolic dimensions: "
                             f"{', '.join(sorted(seen)) or 'none'}")


def read_onnx_model(path: Union[str, os.PathLike],
                    dims: Optional[Mapping[str, int]] = None) -> OnnxWorkloads:
    """Maps the model at `path` (OSError when it cannot be read; ValueError naming the path when it
    is not an ONNX model, a dim is bad, or no node can be run)."""
    with open(path, "rb") as f:
        data = f.read()
    return parse_onnx_model(data, os.fspath(path), dims)


def parse_onnx_model(data: bytes, source: str = "model",
                     dims: Optional[Mapping[str, int]] = None) -> OnnxWorkloads:
    """The same for a model's bytes; `source` names them in errors."""
    import onnx  # pylint: disable=import-outside-toplevel
    from google.protobuf.message import DecodeError  # pylint: disable=import-outside-toplevel
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except DecodeError:
        model = None
    if model is None or not model.HasField("graph"):
        raise ValueError(f"{source}: not an ONNX model (a serialized onnx.ModelProto with a graph)")
    _set_dims(model, dict(dims or {}), source)
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as error:  # onnx raises its own inference and checker errors
        raise ValueError(f"{source}: ONNX shape inference failed: {error}") from error
    graph = _Graph(onnx, model.graph)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    out = OnnxWorkloads(graph=model.graph.name, opset=opset)
    weights: Dict[str, float] = {}
    for index, node in enumerate(model.graph.node):
        if node.domain not in ("", "ai.onnx"):
            continue
        name = node.name or f"{node.op_type} #{index}"
        mapper = {"Conv": _conv, "Gemm": _gemm, "MatMul": _matmul}.get(node.op_type)
        try:
            if mapper is None:
                if node.op_type not in _UNMAPPED:
                    continue
                raise _Skip(_UNMAPPED[node.op_type])
            workload = mapper(graph, node)
        except _Skip as skip:
            out.skipped.append(SkippedNode(name, node.op_type, str(skip)))
            continue
        weights[workload] = weights.get(workload, 0.0) + 1.0
    out.workloads = list(weights.items())
    if not out.workloads:
        # The first few reasons: a model whose every node is skipped usually has one cause (a
        # symbolic batch), repeated node after node.
        shown = [f"{s.node} ({s.op_type}): {s.reason}" for s in out.skipped[:_REASONS_SHOWN]]
        if len(out.skipped) > _REASONS_SHOWN:
            shown.append(f"and {len(out.skipped) - _REASONS_SHOWN} more")
        reasons = "; ".join(shown)
        raise ValueError(f"{source}: no Conv, Gemm or MatMul node that tune can run" +
                         (f"; skipped: {reasons}" if reasons else ""))
    if len(out.workloads) > _MAX_MODEL_WORKLOADS:
        raise ValueError(f"{source}: {len(out.workloads)} distinct workloads; a model job holds at "
                         f"most {_MAX_MODEL_WORKLOADS}")
    return out
