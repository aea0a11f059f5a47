"""The generated wire code of tune.v1 (protoc --python_out and grpc_python_plugin).

It is generated at build time into the build tree (the CMake target ``tune_python`` writes
``build/python/tune/v1/*_pb2*.py``), so that folder must be on ``sys.path`` next to this
package's own folder.
"""

try:
    from tune.v1 import common_pb2, tuner_pb2, tuner_pb2_grpc, worker_pb2
except ImportError as error:  # grpc, protobuf or the generated code is missing
    raise ImportError(
        f"tune_client cannot import its wire code ({error}). It needs Debian's python3-grpcio and "
        "python3-protobuf, and the code generated from proto/tune/v1 by the CMake target "
        "tune_python: put <build>/python on PYTHONPATH (e.g. "
        "PYTHONPATH=python:build/python)") from error

__all__ = ["common_pb2", "tuner_pb2", "tuner_pb2_grpc", "worker_pb2"]
