"""tune_client: a small Python client of tune-daemon (gRPC service tune.v1.Tuner).

    from tune_client import Client, Timing, state_name

    with Client("127.0.0.1:7070") as tune:
        job = tune.submit("gemm:M=512,N=512,K=512", target="llvm -mcpu=native -threads=1",
                          trials=32)
        for event in tune.watch(job.job_id):
            print(state_name(event.state), event.trials_done, event.best_gflops)
        print(tune.best("gemm:M=512,N=512,K=512", target="llvm -mcpu=native -threads=1"))

Methods return the generated protobuf messages of proto/tune/v1/tuner.proto (tuner_pb2) and
raise TuneError, which carries the gRPC status code and the daemon's message.
"""

from ._wire import common_pb2, tuner_pb2
from .client import FINAL_STATES, Client, Timing, state_name
from .errors import TuneError
from .onnx_model import OnnxWorkloads, SkippedNode, parse_onnx_model, read_onnx_model
from .records import record_to_dict, record_to_json_line
from .workloads import (builtin_model, builtin_model_names, builtin_model_text, parse_workloads,
                        rate_unit, read_workloads_file, workload_dtype, workload_out_type)

__all__ = [
    "Client", "FINAL_STATES", "OnnxWorkloads", "SkippedNode", "Timing", "TuneError",
    "builtin_model", "builtin_model_names", "builtin_model_text", "common_pb2",
    "parse_onnx_model", "parse_workloads", "read_onnx_model", "read_workloads_file",
    "rate_unit", "record_to_dict", "record_to_json_line", "state_name", "tuner_pb2",
    "workload_dtype", "workload_out_type",
]
