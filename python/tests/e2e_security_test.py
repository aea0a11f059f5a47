"""tune_client against a daemon with mutual TLS and client tokens (certificates from
deploy/tls/make-dev-certs.sh, tokens from `tune-daemon token create`)."""

import os
import subprocess
import tempfile
import unittest

import grpc

from daemon_fixture import Daemon, binary
from tune_client import Client, Timing, TuneError, tuner_pb2

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAKE_CERTS = os.path.join(REPO, "deploy", "tls", "make-dev-certs.sh")
CPU_TARGET = "llvm -mcpu=native -threads=1"
FAST = Timing(number=1, repeat=2, min_repeat_ms=1)
JOB_DEADLINE_S = 240

for _name in ("TUNE_DAEMON", "TUNE_TOKEN", "TUNE_TLS_CA", "TUNE_TLS_CERT", "TUNE_TLS_KEY"):
    os.environ.pop(_name, None)


def create_token(db: str, name: str, role: str) -> str:
    done = subprocess.run([binary("tune-daemon"), "token", "create", "--db", db, "--name", name,
                           "--role", role], capture_output=True, text=True, check=True)
    return done.stdout.strip()


class SecureDaemonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        directory = tempfile.TemporaryDirectory(prefix="tune-python-tls-")
        cls.certs = os.path.join(directory.name, "tls")
        subprocess.run(["bash", MAKE_CERTS, cls.certs], check=True, capture_output=True)
        db = os.path.join(directory.name, "tuning.db")
        cls.admin = create_token(db, "root", "admin")
        cls.submitter = create_token(db, "ci", "submit")
        cls.reader = create_token(db, "viewer", "read")
        cls.daemon = Daemon(local_workers=1, directory=directory, extra_args=(
            "--tls-cert", os.path.join(cls.certs, "daemon.pem"),
            "--tls-key", os.path.join(cls.certs, "daemon-key.pem"),
            "--tls-ca", os.path.join(cls.certs, "ca.pem")))

    @classmethod
    def tearDownClass(cls):
        code = cls.daemon.stop()
        if code != 0:
            raise AssertionError(f"tune-daemon exited with code {code} after SIGTERM")

    def client(self, token=None, with_certificate=True) -> Client:
        return Client(self.daemon.address, token=token,
                      root_certificates=os.path.join(self.certs, "ca.pem"),
                      certificate_chain=(os.path.join(self.certs, "client.pem")
                                         if with_certificate else None),
                      private_key=(os.path.join(self.certs, "client-key.pem")
                                   if with_certificate else None),
                      timeout=30)

    def test_a_submit_token_over_mutual_tls_runs_a_job_to_its_end(self):
        with self.client(self.submitter) as client:
            job = client.submit("gemm:M=16,N=16,K=16", target=CPU_TARGET, trials=2,
                                strategy="random", timing=FAST)
            events = list(client.watch(job.job_id, timeout=JOB_DEADLINE_S))
        self.assertEqual(events[-1].state, tuner_pb2.JOB_STATE_SUCCEEDED,
                         f"\n--- daemon log ---\n{self.daemon.log()}")

    def test_roles_are_enforced_and_a_denial_names_the_role_needed(self):
        with self.client() as anonymous, self.assertRaises(TuneError) as denied:
            anonymous.jobs()
        self.assertEqual(denied.exception.code, grpc.StatusCode.UNAUTHENTICATED)
        with self.client(self.reader) as reader:
            reader.jobs()
            with self.assertRaises(TuneError) as read_only:
                reader.submit("gemm:M=16,N=16,K=16", target=CPU_TARGET, trials=1)
        self.assertEqual(read_only.exception.code, grpc.StatusCode.PERMISSION_DENIED)
        self.assertIn("role submit", str(read_only.exception))

    def test_an_admin_creates_lists_and_revokes_tokens(self):
        with self.client(self.admin) as admin:
            created = admin.create_token("notebook", "read")
            self.assertTrue(created.text.startswith("tune_" + created.token.id + "_"))
            with self.client(created.text) as notebook:
                notebook.jobs()
                admin.revoke_token(created.token.id)
                with self.assertRaises(TuneError) as revoked:
                    notebook.jobs()
            self.assertIn("was revoked", str(revoked.exception))
            listed = {t.name: t for t in admin.tokens()}
            self.assertGreater(listed["notebook"].revoked_at_ms, 0)

    def test_without_a_client_certificate_the_daemon_is_not_reached(self):
        with self.client(self.admin, with_certificate=False) as client, \
                self.assertRaises(TuneError) as unreachable:
            client.jobs()
        self.assertEqual(unreachable.exception.code, grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main()
