"""The pytest plugin (entry point ``service_sandbox.plugin``; docs/clients.md#python).

One server for the whole run, xdist workers included: the first fixture that needs it, in whichever process,
finds SANDBOX_URL (when its health check answers) or starts ``service-sandbox`` under a file lock in the run's
folder, and every other process reads what it wrote. Nothing starts unless a test asks for a fixture. At the
end, the controller ends every session with the run's label (SANDBOX_LABEL, or one made up per run) and stops
the server if the run started it.

Fixtures:
  sandbox_server   (session) the Server: its url, create_session(), save_snapshot(), end_label()
  sandbox          (test) a fresh labelled Session, ended after the test
  sandbox_factory  (test) make(seed=None, snapshot=None, clock=None, fixtures=None) -> one more Session, each ended
  webhook_receiver (test) sandbox.listen(): a verifying, deduplicating receiver fed by `service-sandbox listen`
  sandbox_label    (session) the run's label
"""

import os
import shutil
import sys
import tempfile
import uuid

import pytest

from .client import Session
from .process import Listener, release_shared_server, shared_server
from .receiver import WebhookReceiver

_RUN_DIR = "service_sandbox_run_dir"
_LABEL = "service_sandbox_label"
_state = {}


def _is_worker(config):
    return hasattr(config, "workerinput")


def pytest_configure(config):
    if _is_worker(config):
        _state["run_dir"] = config.workerinput[_RUN_DIR]
        _state["label"] = config.workerinput[_LABEL]
        return
    # The controller (or the only process without xdist) names the run and its folder (made by the first
    # fixture that needs the server); nothing starts and nothing is written here.
    _state["run_dir"] = os.path.join(tempfile.gettempdir(), f"service-sandbox-pytest-{uuid.uuid4().hex}")
    _state["label"] = os.environ.get("SANDBOX_LABEL") or f"pytest-{uuid.uuid4().hex[:12]}"
    _state["owner"] = True


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist: every worker gets the run's folder and label."""
    node.workerinput[_RUN_DIR] = _state["run_dir"]
    node.workerinput[_LABEL] = _state["label"]


def pytest_unconfigure(config):
    if _is_worker(config) or not _state.get("owner"):
        return
    run_dir = _state.pop("run_dir", None)
    _state.pop("owner", None)
    if not run_dir:
        return
    try:
        left = release_shared_server(run_dir, _state.get("label"))
        if left:
            print(f"\nservice-sandbox: ended sessions the run left behind: {left}", file=sys.stderr)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def sandbox_label():
    """This run's label: every session of the run carries it (docs/sessions.md#labels)."""
    return _state["label"]


@pytest.fixture(scope="session")
def sandbox_server():
    """The run's one server (SANDBOX_URL, else started once for every worker)."""
    try:
        return shared_server(_state["run_dir"])
    except RuntimeError as error:
        pytest.exit(str(error), returncode=1)


class PytestSession(Session):
    """A Session with listen() and receiver() for tests; both are stopped when the session ends."""

    def listen(self):
        """Webhooks through the CLI's ``listen``: a verifying receiver on a free port and
        ``service-sandbox listen --forward-to <it> --session <id>``, ready when this returns; the emulator
        never connects to the test (docs/webhooks.md#listen)."""
        assert self.webhooks is None, "this session already has a receiver"
        receiver = self.attach_receiver(WebhookReceiver(), url=False)
        listener = Listener(receiver.url, self.server.url, self.id, admin_token=self.server.admin_token)
        self.listener = listener
        self.on_close(listener.stop)
        return receiver

    def receiver(self):
        """A verifying receiver the emulator posts to directly (the session's webhook endpoint)."""
        assert self.webhooks is None, "this session already has a receiver"
        return self.attach_receiver(WebhookReceiver(), url=True)


@pytest.fixture
def sandbox_factory(sandbox_server, sandbox_label):
    """make(seed=None, snapshot=None, clock=None, fixtures=None, webhook_url=False) -> a new labelled session;
    webhook_url=True gives it a receiver as its webhookUrl from the start. All end after the test."""
    made = []

    def make(seed=None, snapshot=None, clock=None, fixtures=None, webhook_url=False):
        receiver = WebhookReceiver() if webhook_url else None
        try:
            plain = sandbox_server.create_session(label=sandbox_label, seed=seed, snapshot=snapshot, clock=clock, fixtures=fixtures, webhook_url=receiver.url if receiver else None)
        except BaseException:
            if receiver:
                receiver.close()
            raise
        session = PytestSession(sandbox_server, plain.session)
        if receiver:
            session.attach_receiver(receiver, url=False)
        made.append(session)
        return session

    yield make
    errors = []
    for session in made:
        try:
            session.close()
        except Exception as error:  # end the others anyway
            errors.append(error)
    if errors:
        raise errors[0]


@pytest.fixture
def sandbox(sandbox_factory):
    """A fresh, isolated session for this test (frozen at START_CLOCK, the run's label)."""
    return sandbox_factory()


@pytest.fixture
def webhook_receiver(sandbox):
    """The sandbox's webhooks through ``service-sandbox listen``, verified and deduplicated."""
    return sandbox.listen()
