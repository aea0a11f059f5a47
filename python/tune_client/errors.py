"""TuneError: a failed call to tune-daemon, with its gRPC status code and the daemon's message."""

import grpc


class TuneError(Exception):
    """A call to tune-daemon that failed.

    ``code`` is the ``grpc.StatusCode`` (INVALID_ARGUMENT for a malformed request, NOT_FOUND for
    an unknown job or no result, FAILED_PRECONDITION for cancelling a finished job, UNAVAILABLE
    when the daemon cannot be reached, UNAUTHENTICATED / PERMISSION_DENIED for tokens) and
    ``message`` the daemon's text, which names the field and the accepted form.
    """

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "TuneError":
        # Every RpcError that grpc raises for a call is also a grpc.Call with code() and details().
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        details = error.details() if hasattr(error, "details") else str(error)
        return cls(code or grpc.StatusCode.UNKNOWN, details or "")
