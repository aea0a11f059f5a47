"""Client: the operations of tune-client over tune.v1.Tuner, returning the generated messages."""

import dataclasses
import os
from typing import Iterable, Iterator, List, Mapping, Optional, Sequence, Union

import grpc

from . import _channel
from ._wire import common_pb2, tuner_pb2, tuner_pb2_grpc
from .errors import TuneError
from .onnx_model import read_onnx_model
from .records import record_to_json_line
from .workloads import Workloads, builtin_model, normalize_workloads, read_workloads_file

# The states a job does not leave; WatchJob's stream ends after its event with one of them.
FINAL_STATES = frozenset({tuner_pb2.JOB_STATE_SUCCEEDED, tuner_pb2.JOB_STATE_FAILED,
                          tuner_pb2.JOB_STATE_CANCELLED})


def state_name(state: int) -> str:
    """"QUEUED", "RUNNING", "SUCCEEDED", "FAILED" or "CANCELLED" for a JobState value."""
    name = tuner_pb2.JobState.Name(state)
    return name[len("JOB_STATE_"):] if name.startswith("JOB_STATE_") else name


@dataclasses.dataclass(frozen=True)
class Timing:
    """How every trial of a job is timed (TVM's rule); a field left at 0 takes the daemon's
    default: number 1, repeat 3, max_repeat 10, target_ci 0.02, min_repeat_ms 10,
    timeout_ms 10000 (tune-client's --kernel-timeout-ms), seed 1."""

    number: int = 0
    repeat: int = 0
    max_repeat: int = 0
    target_ci: float = 0.0
    min_repeat_ms: int = 0
    timeout_ms: int = 0
    flush_cache: bool = False
    seed: int = 0

    def to_proto(self) -> common_pb2.TimingOptions:
        return common_pb2.TimingOptions(**dataclasses.asdict(self))


def _tasks_of(workloads, workloads_file, model, onnx=None, dims=None) -> list:
    """The WorkloadTasks of a model: `model`'s built-in layers, `onnx`'s nodes, a workloads file
    or `workloads` (submit's and reverify's forms; exactly one is given)."""
    if model is not None:
        tasks = builtin_model(model)
    elif onnx is not None:
        tasks = read_onnx_model(onnx, dims).workloads
    elif workloads_file is not None:
        tasks = read_workloads_file(workloads_file)
    else:
        tasks = normalize_workloads(workloads)
    return [tuner_pb2.WorkloadTask(workload=w, weight=weight) for w, weight in tasks]


class Client:
    """A connection to one tune-daemon. Use it as a context manager, or call close().

    address: HOST:PORT; None takes $TUNE_DAEMON, else 127.0.0.1:7070 (as tune-client).
    token: sent as `authorization: Bearer <token>` with every call; None takes $TUNE_TOKEN.
    root_certificates: PEM bytes, PEM text or a file path (None: $TUNE_TLS_CA); makes the
      channel TLS, the daemon's certificate having to be signed by it.
    certificate_chain, private_key: the client's own certificate and key for mutual TLS, both
      or neither, in the same forms (None: $TUNE_TLS_CERT, $TUNE_TLS_KEY).
    server_name: the name the daemon's certificate must carry, when it is not the address's host.
    timeout: seconds each unary call may take (tune-client's --rpc-timeout-ms).

    Every method raises TuneError (gRPC status code + the daemon's message) when a call fails.
    """

    def __init__(self, address: Optional[str] = None, token: Optional[str] = None,
                 root_certificates: Optional[_channel.Pem] = None,
                 certificate_chain: Optional[_channel.Pem] = None,
                 private_key: Optional[_channel.Pem] = None, server_name: Optional[str] = None,
                 *, timeout: float = 10.0):
        self.address = _channel.resolve_address(address)
        self.timeout = timeout
        self._metadata = _channel.auth_metadata(token)
        self._channel = _channel.open_channel(self.address, root_certificates, certificate_chain,
                                              private_key, server_name)
        self._stub = tuner_pb2_grpc.TunerStub(self._channel)

    def close(self) -> None:
        """Closes the channel; calls in progress (a watch, an export) end with CANCELLED."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.address!r})"

    # --- jobs ------------------------------------------------------------------------------

    def submit(self, workload: Optional[str] = None, *, target: str, trials: int,
               workloads: Optional[Workloads] = None,
               workloads_file: Optional[Union[str, os.PathLike]] = None,
               model: Optional[str] = None, onnx: Optional[Union[str, os.PathLike]] = None,
               dims: Optional[Mapping[str, int]] = None, strategy: str = "", priority: int = 0,
               seed: int = 0, templates: Sequence[str] = (), early_stopping: int = 0,
               name: str = "", no_transfer: bool = False,
               timing: Optional[Timing] = None) -> tuner_pb2.Job:
        """Queues a job and returns it (state QUEUED), as `tune-client submit`.

        Exactly one of `workload` (one workload, e.g. "gemm:M=512,N=512,K=512"), `workloads`
        (a model job: workload texts, (workload, weight) pairs or a mapping to weights),
        `workloads_file` (a model job from a workloads file, read here; ValueError naming
        FILE:LINE for a bad line, before anything is sent) and `model` (a model job over a
        built-in model's layers, as `tune-client submit --model`: "bert", "mobilenetv2" or
        "resnet50", see builtin_model_names(); ValueError naming them for any other name, before
        anything is sent) and `onnx` (a model job over an ONNX model's Conv, Gemm and MatMul
        nodes, as `tune-client submit --onnx`, with `dims` giving symbolic sizes values, e.g.
        {"batch": 1}: tune_client.onnx_model, which needs python3-onnx; the nodes tune cannot run
        are left out, and read_onnx_model lists them). A model job's `trials` is its whole
        budget, at least one per workload; its name defaults to the file's path or the model's
        name. `strategy`: grid,
        random, ga, xgb, auto or seeds ("" is the daemon's default, auto).
        """
        given = [x for x in (workload, workloads, workloads_file, model, onnx) if x is not None]
        if len(given) != 1:
            raise ValueError(
                "submit needs exactly one of workload, workloads, workloads_file, model and onnx")
        if dims is not None and onnx is None:
            raise ValueError("submit's dims go with onnx (sizes of the model's symbolic "
                             "dimensions)")
        spec = tuner_pb2.JobSpec(
            target=target, trials=trials, strategy=strategy, priority=priority, seed=seed,
            templates=list(templates), early_stopping=early_stopping, name=name,
            no_transfer=no_transfer, timing=(timing or Timing()).to_proto())
        if workload is not None:
            spec.workload = workload
        else:
            spec.tasks.extend(_tasks_of(workloads, workloads_file, model, onnx, dims))
            if not name and workloads_file is not None:
                spec.name = os.fspath(workloads_file)
            elif not name and onnx is not None:
                spec.name = os.fspath(onnx)
            elif not name and model is not None:
                spec.name = model
        return self._unary(self._stub.SubmitJob, tuner_pb2.SubmitJobRequest(spec=spec))

    def get_job(self, job_id: int) -> tuner_pb2.Job:
        """A job's state, progress and best (`tune-client status`); NOT_FOUND if unknown."""
        return self._unary(self._stub.GetJob, tuner_pb2.GetJobRequest(job_id=job_id))

    def jobs(self, limit: int = 0, states: Iterable[int] = ()) -> List[tuner_pb2.Job]:
        """Jobs, newest first (`tune-client jobs`): at most `limit` (0: the daemon's 100), only
        in `states` when given (JobState values)."""
        request = tuner_pb2.ListJobsRequest(limit=limit, states=list(states))
        return list(self._unary(self._stub.ListJobs, request).jobs)

    def cancel(self, job_id: int) -> tuner_pb2.Job:
        """Cancels a queued or running job and returns it (state CANCELLED);
        FAILED_PRECONDITION when it had already finished."""
        return self._unary(self._stub.CancelJob, tuner_pb2.CancelJobRequest(job_id=job_id))

    def watch(self, job_id: int, timeout: Optional[float] = None) -> Iterator[tuner_pb2.JobEvent]:
        """The job's JobEvents: its current state at once, then one per finished trial or state
        change; the iteration ends after the event with a final state (see FINAL_STATES).
        `timeout` bounds the whole watch in seconds (None: none). Leaving the loop early
        cancels the call."""
        call = self._stub.WatchJob(tuner_pb2.WatchJobRequest(job_id=job_id), timeout=timeout,
                                   metadata=self._metadata)
        return self._stream(call)

    # --- results and workers ---------------------------------------------------------------

    def best(self, workload: str, *, target: Optional[str] = None,
             device_key: Optional[str] = None, top_k: int = 1, flush_cache: bool = False,
             template_version: int = 0, tune_version: str = "") -> tuner_pb2.QueryBestResponse:
        """The fastest successful records of a workload (`tune-client best`): with `target`,
        the decided best first, falling back to the target's device key (response.match is then
        BEST_MATCH_SAME_DEVICE and response.note says why); or those of a whole `device_key`.
        Exactly one of them. For GPU targets records timed by graph replay (device time) are
        compared; only when there are none, records timed call by call (response.events_fallback
        is then True and response.note says so). NOT_FOUND when nothing successful is
        recorded."""
        if (target is None) == (device_key is None):
            raise ValueError("best needs exactly one of target and device_key")
        request = tuner_pb2.QueryBestRequest(
            workload=workload, target=target or "", device_key=device_key or "", top_k=top_k,
            flush_cache=flush_cache, template_version=template_version,
            tune_version=tune_version)
        return self._unary(self._stub.QueryBest, request)

    def workers(self, include_lost: bool = False) -> List[tuner_pb2.WorkerInfo]:
        """The connected workers, by name (`tune-client workers [--all]`)."""
        request = tuner_pb2.ListWorkersRequest(include_lost=include_lost)
        return list(self._unary(self._stub.ListWorkers, request).workers)

    # --- the tuning log --------------------------------------------------------------------

    def export(self, workload: str = "", device_key: str = "", include_failures: bool = False,
               timeout: Optional[float] = None) -> Iterator[tuner_pb2.Record]:
        """The log's records, oldest first: only `workload` / `device_key` when given, failed
        trials too with `include_failures`."""
        request = tuner_pb2.ExportRecordsRequest(workload=workload, device_key=device_key,
                                                 include_failures=include_failures)
        call = self._stub.ExportRecords(request, timeout=timeout, metadata=self._metadata)
        return self._stream(call)

    def export_json_lines(self, workload: str = "", device_key: str = "",
                          include_failures: bool = False,
                          timeout: Optional[float] = None) -> Iterator[str]:
        """export() as the lines of `tune-client export` (no trailing newlines), which
        `tune-client import` reads."""
        for record in self.export(workload, device_key, include_failures, timeout):
            yield record_to_json_line(record)

    def import_records(self, records: Iterable[tuner_pb2.Record],
                       timeout: Optional[float] = None) -> tuner_pb2.ImportRecordsResponse:
        """Adds records (e.g. another log's export()) in one transaction, all or nothing;
        those whose uid is present already are counted as duplicates."""
        try:
            return self._stub.ImportRecords(iter(records), timeout=timeout,
                                            metadata=self._metadata)
        except grpc.RpcError as error:
            raise TuneError.from_rpc_error(error) from None

    # --- client tokens (admin role) ---------------------------------------------------------

    def create_token(self, name: str, role: str) -> tuner_pb2.CreateTokenResponse:
        """A new token (`tune-client token create`): its info and its text, shown only now.
        `role` is read, submit, admin or worker."""
        request = tuner_pb2.CreateTokenRequest(name=name, role=role)
        return self._unary(self._stub.CreateToken, request)

    def revoke_token(self, token_id: str) -> tuner_pb2.TokenInfo:
        """Revokes a token by id; it stays listed, as revoked."""
        return self._unary(self._stub.RevokeToken, tuner_pb2.RevokeTokenRequest(id=token_id))

    def tokens(self) -> List[tuner_pb2.TokenInfo]:
        """Every token, revoked ones included, never their secrets."""
        return list(self._unary(self._stub.ListTokens, tuner_pb2.ListTokensRequest()).tokens)

    def quarantine(self, device_key: str = "",
                   include_lifted: bool = False) -> List[tuner_pb2.QuarantineEntry]:
        """Code quarantined for crashing or computing wrong on two workers of a device key and
        fingerprint (`tune-client quarantine`): the entries that hold, or every entry with
        `include_lifted`, oldest first."""
        request = tuner_pb2.ListQuarantineRequest(device_key=device_key,
                                                  include_lifted=include_lifted)
        return list(self._unary(self._stub.ListQuarantine, request).entries)

    def lift_quarantine(self, entry_id: int) -> tuner_pb2.QuarantineEntry:
        """Lifts one entry (an admin token): workers of its device key and fingerprint measure
        the code again (`tune-client quarantine lift ID`). NOT_FOUND when no entry of that id
        holds."""
        return self._unary(self._stub.LiftQuarantine,
                           tuner_pb2.LiftQuarantineRequest(id=entry_id))

    def reverify(self, workload: Optional[str] = None, *, target: str,
                 workloads: Optional[Workloads] = None,
                 workloads_file: Optional[Union[str, os.PathLike]] = None,
                 model: Optional[str] = None, all: bool = False,  # noqa: A002 (as the CLI's --all)
                 trials: int = 0, priority: int = 0, name: str = "",
                 wait: bool = False, timeout: Optional[float] = None) -> List[dict]:
        """Re-measures the log's best configs on workers of the device's newest fingerprint,
        after a driver or library upgrade (`tune-client reverify`): each workload's winner and
        runners-up, `trials` of them (0: 3), nothing else. Exactly one of `workload`,
        `workloads`, `workloads_file`, `model` (as submit's) and `all` (every workload the log
        has successful records of on `target`). FAILED_PRECONDITION when the log has nothing to
        re-measure or no worker of the target's device key is connected. Needs a submit token.

        Returns one dict per workload: {"workload", "job_id", "verdict", "message"}; the verdict
        is "confirmed" or "changed" once the job ended (with `wait`, which follows it for at most
        `timeout` seconds), else "queued"."""
        given = [x for x in (workload, workloads, workloads_file, model) if x is not None]
        if len(given) + (1 if all else 0) != 1:
            raise ValueError("reverify needs exactly one of workload, workloads, workloads_file, "
                             "model and all")
        request = tuner_pb2.ReverifyRequest(target=target, trials=trials, priority=priority,
                                            name=name, all=all)
        if workload is not None:
            request.workload = workload
        elif not all:
            request.tasks.extend(_tasks_of(workloads, workloads_file, model))
        job = self._unary(self._stub.Reverify, request)
        if wait:
            for _ in self.watch(job.job_id, timeout=timeout):
                pass
            job = self.get_job(job.job_id)
        ended = [job] if not job.tasks else [self.get_job(t.job_id) for t in job.tasks]
        out = []
        for j in ended:
            verdict = next((v for v in ("confirmed", "changed")
                            if f"reverify: {v}" in j.message), "queued" if not wait else "none")
            out.append({"workload": j.spec.workload, "job_id": j.job_id, "verdict": verdict,
                        "message": j.message})
        return out

    # --- plumbing --------------------------------------------------------------------------

    def _unary(self, method, request):
        try:
            return method(request, timeout=self.timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise TuneError.from_rpc_error(error) from None

    @staticmethod
    def _stream(call) -> Iterator:
        try:
            yield from call
        except grpc.RpcError as error:
            raise TuneError.from_rpc_error(error) from None
        finally:
            call.cancel()  # a no-op once the stream has ended; stops it when the caller left

