"""How a Client reaches tune-daemon: the address, TLS credentials and the bearer token."""

import os
from typing import List, Optional, Tuple, Union

import grpc

DEFAULT_ADDRESS = "127.0.0.1:7070"
# As tune-client: whole tuning logs travel in one export.
MAX_MESSAGE_BYTES = 256 << 20

# PEM text (bytes, or a str holding "-----BEGIN ...") or the path of a PEM file.
Pem = Union[bytes, str, os.PathLike]
Metadata = Tuple[Tuple[str, str], ...]


def resolve_address(address: Optional[str]) -> str:
    """The daemon's HOST:PORT: `address`, else $TUNE_DAEMON, else tune-client's default."""
    return address or os.environ.get("TUNE_DAEMON") or DEFAULT_ADDRESS


def auth_metadata(token: Optional[str]) -> Metadata:
    """The `authorization: Bearer <token>` metadata of every call: `token`, else $TUNE_TOKEN."""
    token = token if token is not None else os.environ.get("TUNE_TOKEN")
    if not token:
        return ()
    return (("authorization", f"Bearer {token.strip()}"),)


def read_pem(value: Optional[Pem], what: str) -> Optional[bytes]:
    """PEM bytes from bytes, PEM text or a file path; None stays None."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str) and value.lstrip().startswith("-----BEGIN"):
        return value.encode()
    try:
        with open(value, "rb") as f:
            return f.read()
    except OSError as error:
        raise ValueError(f"{what}: cannot read {os.fspath(value)!r}: {error.strerror}") from error


def _env_default(value: Optional[Pem], name: str) -> Optional[Pem]:
    return value if value is not None else (os.environ.get(name) or None)


def open_channel(address: str, root_certificates: Optional[Pem] = None,
                 certificate_chain: Optional[Pem] = None, private_key: Optional[Pem] = None,
                 server_name: Optional[str] = None) -> grpc.Channel:
    """A TLS channel when root certificates are given (else $TUNE_TLS_CA), else a plaintext one.

    `root_certificates` verifies the daemon's certificate; `certificate_chain` and
    `private_key` (else $TUNE_TLS_CERT and $TUNE_TLS_KEY; both or neither) are the client's own,
    for a daemon that asks for them (mutual TLS); `server_name` is the name the daemon's
    certificate must carry when it differs from the address's host
    (grpc.ssl_target_name_override). The environment variables are tune-client's.
    """
    root_certificates = _env_default(root_certificates, "TUNE_TLS_CA")
    certificate_chain = _env_default(certificate_chain, "TUNE_TLS_CERT")
    private_key = _env_default(private_key, "TUNE_TLS_KEY")
    options: List[Tuple[str, object]] = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    if (certificate_chain is None) != (private_key is None):
        raise ValueError("certificate_chain and private_key go together: give both or neither")
    if root_certificates is None:
        if certificate_chain is not None or server_name is not None:
            raise ValueError("certificate_chain, private_key and server_name apply to TLS, which "
                             "root_certificates (or $TUNE_TLS_CA) turns on: give it too")
        return grpc.insecure_channel(address, options=options)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=read_pem(root_certificates, "root_certificates"),
        private_key=read_pem(private_key, "private_key"),
        certificate_chain=read_pem(certificate_chain, "certificate_chain"))
    if server_name:
        options.append(("grpc.ssl_target_name_override", server_name))
    return grpc.secure_channel(address, credentials, options=options)
