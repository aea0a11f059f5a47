"""The workloads of a model job: a list, a mapping, a workloads file or a built-in model, as
tune-client reads them.

A workloads file holds one workload per line, optionally followed by whitespace and a weight
(how many times one inference runs the layer; a positive number, default 1). ``#`` starts a
comment; blank lines are skipped; a workload listed twice is one entry whose weight is the sum::

    # two layers
    conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1   3
    gemm:M=1,N=1000,K=2048

The workload text itself is checked by the daemon (INVALID_ARGUMENT naming the task).

The built-in models (tune-client's --model: bert, mobilenetv2, resnet50) are such files,
common/models/NAME.txt in the source tree: tune-client and tune-compile embed them, and the build
copies them into the package tune.models next to the generated wire code (build/python/tune/),
where builtin_model reads them.
"""

import importlib.resources
import math
import os
from typing import Iterable, List, Mapping, Tuple, Union

WeightedWorkload = Tuple[str, float]
# What Client.submit(workloads=...) takes: workload texts, (workload, weight) pairs, or a mapping
# of workload text to weight.
Workloads = Union[Mapping[str, float], Iterable[Union[str, WeightedWorkload]]]

_FORM = ('each line is a workload, optionally followed by a weight (how often the layer runs), '
         'e.g. "gemm:M=128,N=768,K=768 4"')
_MAX_WEIGHT = 1e9
# The package holding the built-in models' files, NAME.txt (python/CMakeLists.txt).
_MODELS_PACKAGE = "tune.models"
_MODEL_SUFFIX = ".txt"


# Workload fields of element types (common/element_type.h): dtype= names the inputs, out= the
# output; each is absent from the canonical text when it is the default.
_DEFAULT_OUT = {"f16": "f16", "bf16": "bf16", "i8": "i32", "u8i8": "i32", "fp8e4m3": "bf16",
                "fp8e5m2": "bf16", "fp8e4m3fnuz": "bf16", "fp8e5m2fnuz": "bf16"}
_INTEGER_DTYPES = ("i8", "u8i8")


def _field(workload: str, key: str) -> Union[str, None]:
    _, _, body = workload.partition(":")
    for field in body.split(","):
        name, _, value = field.partition("=")
        if name == key:
            return value
    return None


def workload_dtype(workload: str) -> str:
    """The element type a workload text names for its inputs (dtype=), "f32" when absent."""
    return _field(workload, "dtype") or "f32"


def workload_out_type(workload: str) -> str:
    """The element type of a workload's output (out=, else i8 for epilogue=requant, else its
    dtype's default)."""
    if _field(workload, "epilogue") == "requant":
        return _field(workload, "out") or "i8"
    return _field(workload, "out") or _DEFAULT_OUT.get(workload_dtype(workload), "f32")


def rate_unit(workload: str) -> str:
    """The unit of a workload's rates as tune reports them: "GOPS" (integer operations) for the
    integer dtypes, "GFLOPS" otherwise; 2 per multiply-add either way."""
    return "GOPS" if workload_dtype(workload) in _INTEGER_DTYPES else "GFLOPS"


def _weight_error(weight: object, where: str) -> ValueError:
    return ValueError(f'{where}weight "{weight}" is not a positive number (how many times the '
                      f'layer runs per inference, e.g. 3 or 0.5, at most 1e9)')


def _check_weight(weight: object, where: str) -> float:
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or \
            not math.isfinite(weight) or not 0 < weight <= _MAX_WEIGHT:
        raise _weight_error(weight, where)
    return float(weight)


def _merge(entries: Iterable[Tuple[str, float]]) -> List[WeightedWorkload]:
    merged: dict = {}  # insertion order: the order of first appearance
    for workload, weight in entries:
        merged[workload] = merged.get(workload, 0.0) + weight
    return list(merged.items())


def parse_workloads(text: str, source: str = "workloads") -> List[WeightedWorkload]:
    """Parses the workloads-file form; ValueError "SOURCE:LINE: ..." on a bad line or no line."""
    entries = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        where = f"{source}:{number}: "
        if len(fields) > 2:
            raise ValueError(f"{where}more than a workload and a weight on the line; {_FORM}")
        weight = 1.0
        if len(fields) == 2:
            try:
                weight = _check_weight(float(fields[1]), where)
            except ValueError:
                raise _weight_error(fields[1], where) from None
        entries.append((fields[0], weight))
    if not entries:
        raise ValueError(f"{source}: no workload in it; {_FORM}")
    return _merge(entries)


def read_workloads_file(path: Union[str, os.PathLike]) -> List[WeightedWorkload]:
    """Reads and parses a workloads file (OSError when it cannot be read)."""
    with open(path, encoding="utf-8") as f:
        return parse_workloads(f.read(), os.fspath(path))


def normalize_workloads(workloads: Workloads) -> List[WeightedWorkload]:
    """(workload, weight) pairs from what submit(workloads=...) accepts; ValueError if empty."""
    if isinstance(workloads, str):
        raise TypeError("workloads is a list of workloads (or a mapping to weights), not one "
                        "string: use submit(workload=...) for a single workload")
    items = workloads.items() if isinstance(workloads, Mapping) else workloads
    entries = []
    for item in items:
        workload, weight = (item, 1.0) if isinstance(item, str) else item
        entries.append((workload, _check_weight(weight, f"{workload}: ")))
    if not entries:
        raise ValueError("workloads is empty: a model job needs at least one workload")
    return _merge(entries)


def _model_files():
    try:
        return importlib.resources.files(_MODELS_PACKAGE)
    except ModuleNotFoundError as error:
        raise ImportError(
            f"tune_client cannot find the built-in models ({error}): the CMake target tune_python "
            "copies them from common/models/ into <build>/python/tune/models/; put <build>/python "
            "on PYTHONPATH (e.g. PYTHONPATH=python:build/python)") from error


def builtin_model_names() -> List[str]:
    """The built-in models' names, sorted: "bert", "mobilenetv2", "resnet50" (`tune-client
    models`). ImportError when the build's copy of them is not on sys.path."""
    return sorted(entry.name[:-len(_MODEL_SUFFIX)] for entry in _model_files().iterdir()
                  if entry.name.endswith(_MODEL_SUFFIX) and entry.is_file())


def builtin_model_text(name: str) -> str:
    """A built-in model's workloads file, comments included (what `tune-client models NAME`
    prints); ValueError naming the built-in models for any other name, as tune-client's."""
    names = builtin_model_names()
    if name not in names:
        raise ValueError(f'unknown model "{name}"; built-in models: {", ".join(names)}')
    return _model_files().joinpath(name + _MODEL_SUFFIX).read_text(encoding="utf-8")


def builtin_model(name: str) -> List[WeightedWorkload]:
    """The (workload, weight) pairs of a built-in model at batch 1, in the order of its file
    (`tune-client submit --model NAME`'s tasks); ValueError for an unknown name."""
    return parse_workloads(builtin_model_text(name), name)
