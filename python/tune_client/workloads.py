"""The workloads of a model job: a list, a mapping or a workloads file, as tune-client reads them.

A workloads file holds one workload per line, optionally followed by whitespace and a weight
(how many times one inference runs the layer; a positive number, default 1). ``#`` starts a
comment; blank lines are skipped; a workload listed twice is one entry whose weight is the sum::

    # two layers
    conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1   3
    gemm:M=1,N=1000,K=2048

The workload text itself is checked by the daemon (INVALID_ARGUMENT naming the task).
"""

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
