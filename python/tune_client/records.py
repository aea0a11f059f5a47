"""Records of the tuning log as JSON lines, the form of ``tune-client export`` and ``import``.

One object per line, keys in tune's fixed order (db/record_json.h), the config as a nested
object, times printed so that they parse back to the same doubles (Python's shortest form, which
may differ from tune-client's in the last digit, never in value), and the record's timing with
tune's defaults in place of the wire's zeros. GPU records add how they were timed
(``gpu_clock``: ``graph`` replay, or ``events`` call by call) and the call-by-call reading
(``host_round_secs``); records of built code name it (``artifact_hash``).
"""

import json

from ._wire import common_pb2, tuner_pb2

# common/measurement.h's TimingOptions defaults, which a zero field of the wire stands for.
_TIMING_DEFAULTS = {"number": 1, "repeat": 3, "min_repeat_ms": 10, "timeout_ms": 10000,
                    "seed": 1, "max_repeat": 10, "target_ci": 0.02}
_ERROR_PREFIX = "ERROR_KIND_"
# common/measurement.h's GpuClockName; GPU_CLOCK_UNSPECIFIED (CPU records) has no key.
_GPU_CLOCK_NAMES = {common_pb2.GPU_CLOCK_EVENTS: "events", common_pb2.GPU_CLOCK_GRAPH: "graph"}


def _or_default(value, key: str):
    return value if value > 0 else _TIMING_DEFAULTS[key]


def timing_json(timing: common_pb2.TimingOptions) -> dict:
    """A record's timing as tune writes it: defaults applied, keys in tune's order."""
    return {
        "number": _or_default(timing.number, "number"),
        "repeat": _or_default(timing.repeat, "repeat"),
        "min_repeat_ms": _or_default(timing.min_repeat_ms, "min_repeat_ms"),
        "timeout_ms": _or_default(timing.timeout_ms, "timeout_ms"),
        "flush_cache": timing.flush_cache,
        "seed": _or_default(timing.seed, "seed"),
        "max_repeat": _or_default(timing.max_repeat, "max_repeat"),
        "target_ci": _or_default(timing.target_ci, "target_ci"),
    }


def error_kind_name(kind: int) -> str:
    """"NONE", "BUILD_ERROR", ... for a common_pb2.ErrorKind value."""
    name = common_pb2.ErrorKind.Name(kind)
    return name[len(_ERROR_PREFIX):] if name.startswith(_ERROR_PREFIX) else name


def record_to_dict(record: tuner_pb2.Record) -> dict:
    """The JSON object of one record (what record_to_json_line prints)."""
    m = record.measurement
    try:
        config = json.loads(record.config)
    except ValueError:
        config = record.config  # as tune does: a config that is not JSON stays a string
    out = {
        "uid": record.uid,
        "workload": record.workload,
        "target": record.target,
        "device_key": record.device_key,
        "template": record.template_name,
        "template_version": record.template_version,
        "config": config,
        "error": error_kind_name(m.error_kind),
        "message": m.message,
        "round_secs": list(m.round_secs),
        "number": m.number,
        "device_fingerprint": m.device_fingerprint,
        "tune_version": record.tune_version,
        "llvm_version": record.llvm_version,
        "worker": record.worker,
        "created_at_ms": record.created_at_ms,
    }
    if record.HasField("timing"):
        out["timing"] = timing_json(record.timing)
    if m.library_info:
        out["library_info"] = m.library_info
    if record.final:
        out["final"] = True
    if m.gpu_clock in _GPU_CLOCK_NAMES:
        out["gpu_clock"] = _GPU_CLOCK_NAMES[m.gpu_clock]
    if m.host_round_secs:
        out["host_round_secs"] = list(m.host_round_secs)
    if record.artifact_hash:
        out["artifact_hash"] = record.artifact_hash
    return out


def record_to_json_line(record: tuner_pb2.Record) -> str:
    """One line of ``tune-client export`` (no trailing newline)."""
    return json.dumps(record_to_dict(record), separators=(",", ":"), ensure_ascii=False)
