"""A real tune-daemon for the tests: port 0, a fresh tuning log, local workers; stopped by SIGTERM.

The binaries come from $TUNE_BIN_DIR (the build tree's bin/, which ctest passes).
"""

import os
import signal
import subprocess
import tempfile
import time

# Generous bounds for events that normally take a second: start-up and shutdown.
START_DEADLINE_S = 60
STOP_DEADLINE_S = 60


def binary(name: str) -> str:
    """The path of a built tune binary; a clear error when $TUNE_BIN_DIR does not hold it."""
    bin_dir = os.environ.get("TUNE_BIN_DIR")
    if not bin_dir:
        raise RuntimeError("TUNE_BIN_DIR is not set: it names the build tree's bin/ folder "
                           "(ctest sets it; by hand: TUNE_BIN_DIR=build/bin)")
    path = os.path.join(bin_dir, name)
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{path} is not an executable: build it first "
                           f"(cmake --build <build> --target {name})")
    return path


class Daemon:
    """tune-daemon --listen 127.0.0.1:0 with its log, port file and tuning log in a temp dir."""

    def __init__(self, local_workers: int = 1, extra_args: tuple = (),
                 directory: "tempfile.TemporaryDirectory | None" = None):
        """`extra_args` go to tune-daemon; `directory` (whose tuning.db may hold tokens already)
        is used instead of a fresh one, and removed by stop()."""
        daemon = binary("tune-daemon")
        self._dir = directory or tempfile.TemporaryDirectory(prefix="tune-python-")
        self.db = os.path.join(self._dir.name, "tuning.db")
        self._log_path = os.path.join(self._dir.name, "daemon.log")
        port_file = os.path.join(self._dir.name, "daemon.port")
        argv = [daemon, "--listen", "127.0.0.1:0", "--port-file", port_file, "--db", self.db,
                "--local-workers", str(local_workers), *extra_args]
        with open(self._log_path, "wb") as log:
            self._process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL)
        try:
            self.port = self._wait_for_port(port_file)
        except BaseException:
            self._process.kill()
            self._process.wait()
            self._dir.cleanup()
            raise
        self.address = f"127.0.0.1:{self.port}"

    def _wait_for_port(self, port_file: str) -> int:
        # The daemon writes the file (atomically) once it serves. Waiting on the process in
        # short steps also notices at once when it exits instead.
        deadline = time.monotonic() + START_DEADLINE_S
        while not os.path.exists(port_file):
            if time.monotonic() > deadline:
                raise RuntimeError(f"tune-daemon wrote no port file within {START_DEADLINE_S} s:"
                                   f"\n{self.log()}")
            try:
                code = self._process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            raise RuntimeError(f"tune-daemon exited with code {code} before serving:\n{self.log()}")
        with open(port_file, encoding="utf-8") as f:
            return int(f.read().strip())

    def log(self) -> str:
        """Everything the daemon (and its local workers) wrote so far."""
        with open(self._log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self) -> int:
        """SIGTERM, then its exit code; SIGKILL and an error if it outlives the deadline."""
        try:
            if self._process.poll() is None:
                self._process.send_signal(signal.SIGTERM)
            try:
                return self._process.wait(timeout=STOP_DEADLINE_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
                raise RuntimeError(f"tune-daemon did not exit within {STOP_DEADLINE_S} s of "
                                   f"SIGTERM:\n{self.log()}") from None
        finally:
            self._dir.cleanup()
