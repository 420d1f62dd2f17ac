"""The pytest plugin (entry point ``service_sandbox.plugin``; docs/clients.md#python).

One server for the whole run, xdist workers included: the first fixture that needs it, in whichever process,
finds the configured URL (when its health check answers) or starts ``service-sandbox`` under a file lock in the
run's folder, and every other process reads what it wrote. Nothing starts unless a test asks for a fixture. Every
process notes the id of each session its ``sandbox_server`` creates in the run's folder; at the end, the controller
ends those still live (what a crashed test or worker left) and stops the server if the run started it. Another run's
sessions are never ended, even when both runs share a label (docs/clients.md#python).

Settings (the first given wins): the command line (``--sandbox-url``, ``--sandbox-cli``, ``--sandbox-admin-token``,
``--sandbox-label``), the environment (SANDBOX_URL, SANDBOX_CLI, SANDBOX_ADMIN_TOKEN, SANDBOX_LABEL), the ini file
(``sandbox_url``, ``sandbox_cli``, ``sandbox_admin_token``, ``sandbox_label``), the defaults.

Fixtures:
  sandbox_server   (session) the Server: its url, create_session(), forward_webhooks(), end_label()
  sandbox          (test) a fresh labelled Session, ended after the test
  sandbox_factory  (test) make(seed=None, snapshot=None, clock=None, fixtures=None, webhook_url=False) -> one more
                   Session, each ended after the test
  webhook_receiver (test) sandbox.listen(): a verifying, deduplicating receiver fed through forward_webhooks
  sandbox_label    (session) the run's label
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, TypeVar, cast

import pytest

from .client import DEFAULT_URL, Server, Session
from .forwarding import WebhookForwarder
from .process import note_session, release_shared_server, shared_server
from .receiver import WebhookReceiver

_RUN_DIR = "service_sandbox_run_dir"
_LABEL = "service_sandbox_label"
_SETTINGS = {
    # name: (command-line option, environment variable, help)
    "url": ("--sandbox-url", "SANDBOX_URL", f"the emulator's URL (default {DEFAULT_URL}); when nothing answers there, the run starts one"),
    "cli": ("--sandbox-cli", "SANDBOX_CLI", "how to start the emulator: a path to service-sandbox.mjs (run with node) or a command"),
    "admin_token": ("--sandbox-admin-token", "SANDBOX_ADMIN_TOKEN", "the server's admin token (sent as Authorization: Bearer)"),
    "label": ("--sandbox-label", "SANDBOX_LABEL", "the run's session label (default: one made up per run)"),
}


@dataclass
class RunState:
    """The plugin's state for one pytest process, in ``config.stash``."""

    run_dir: str
    label: str
    url: Optional[str]
    cli: Optional[str]
    admin_token: Optional[str]
    owner: bool = False
    #: Root-sandbox forwarders that were running when the current test began (the others stop after it).
    forwarders_before: List[WebhookForwarder] = field(default_factory=list)
    server: Optional[Server] = None


STATE = pytest.StashKey[RunState]()
F = TypeVar("F", bound=Callable[..., Any])
#: pytest.hookimpl, typed for mypy --strict (pluggy's marker is untyped in some releases).
_hookimpl = cast(Callable[..., Callable[[F], F]], pytest.hookimpl)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("service-sandbox", "service-sandbox emulator (docs/clients.md#python)")
    for name, (option, variable, help_text) in _SETTINGS.items():
        group.addoption(option, dest=f"sandbox_{name}", default=None, help=f"{help_text} [env {variable}, ini sandbox_{name}]")
        parser.addini(f"sandbox_{name}", f"{help_text} (after {option} and {variable})", default=None)


def _setting(config: pytest.Config, name: str) -> Optional[str]:
    option, variable, _ = _SETTINGS[name]
    value: Any = config.getoption(f"sandbox_{name}") or os.environ.get(variable) or config.getini(f"sandbox_{name}")
    return str(value).strip() or None if value else None


def _state(config: pytest.Config) -> RunState:
    return config.stash[STATE]


def pytest_configure(config: pytest.Config) -> None:
    workerinput: Optional[Dict[str, Any]] = getattr(config, "workerinput", None)
    url, cli, admin_token = _setting(config, "url"), _setting(config, "cli"), _setting(config, "admin_token")
    if workerinput is not None:
        config.stash[STATE] = RunState(run_dir=workerinput[_RUN_DIR], label=workerinput[_LABEL], url=url, cli=cli, admin_token=admin_token)
        return
    # The controller (or the only process without xdist) names the run and its folder (made by the first
    # fixture that needs the server); nothing starts and nothing is written here.
    config.stash[STATE] = RunState(
        run_dir=os.path.join(tempfile.gettempdir(), f"service-sandbox-pytest-{uuid.uuid4().hex}"),
        label=_setting(config, "label") or f"pytest-{uuid.uuid4().hex[:12]}",
        url=url,
        cli=cli,
        admin_token=admin_token,
        owner=True,
    )


@_hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: every worker gets the run's folder and label."""
    state = _state(node.config)
    node.workerinput[_RUN_DIR] = state.run_dir
    node.workerinput[_LABEL] = state.label


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if state.server is not None:
        for forwarder in state.server.forwarders:
            forwarder.stop()
    if not state.owner:
        return
    state.owner = False
    try:
        left = release_shared_server(state.run_dir, state.admin_token)
        if left:
            print(f"\nservice-sandbox: ended sessions the run left behind: {left}", file=sys.stderr)
    finally:
        shutil.rmtree(state.run_dir, ignore_errors=True)


@_hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    state = item.config.stash.get(STATE, None)
    if state is not None and state.server is not None:
        state.forwarders_before = [f for f in state.server.forwarders if f.running]


@_hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Root-sandbox forwarders a test started (sandbox_server.forward_webhooks) stop at its end."""
    state = item.config.stash.get(STATE, None)
    if state is None or state.server is None:
        return
    for forwarder in list(state.server.forwarders):
        if forwarder not in state.forwarders_before:
            forwarder.stop()
            state.server.forwarders.remove(forwarder)


@pytest.fixture(scope="session")
def sandbox_label(pytestconfig: pytest.Config) -> str:
    """This run's label: every session of the run carries it (docs/sessions.md#labels)."""
    return _state(pytestconfig).label


class RunServer(Server):
    """The run's Server: the id of every session it creates is noted in the run's folder as soon as the emulator
    answers, so the end of the run ends exactly the sessions this run made (a worker that crashed included), never
    another run's under the same label."""

    def __init__(self, url: str, admin_token: Optional[str], run_dir: str) -> None:
        super().__init__(url, admin_token)
        self.run_dir = run_dir

    def create_session(self, *args: Any, **kwargs: Any) -> Session:
        session = super().create_session(*args, **kwargs)
        note_session(self.run_dir, session.id)
        return session


@pytest.fixture(scope="session")
def sandbox_server(pytestconfig: pytest.Config) -> Server:
    """The run's one server (the configured URL, else started once for every worker)."""
    state = _state(pytestconfig)
    if state.server is None:
        try:
            shared = shared_server(state.run_dir, state.url, state.cli, state.admin_token)
        except Exception as error:
            pytest.exit(f"service-sandbox: {error}", returncode=1)
        state.server = RunServer(shared.url, shared.admin_token, state.run_dir)
    return state.server


class PytestSession(Session):
    """A Session made by the plugin's fixtures (listen(), receiver() and forward_webhooks() all stop when the
    test's session ends)."""


@pytest.fixture
def sandbox_factory(sandbox_server: Server, sandbox_label: str) -> Iterator[Callable[..., Session]]:
    """make(seed=None, snapshot=None, clock=None, fixtures=None, webhook_url=False) -> a new labelled session;
    webhook_url=True gives it a receiver as its webhookUrl from the start. All end after the test."""
    made: List[Session] = []

    def make(seed: Optional[str] = None, snapshot: Optional[str] = None, clock: Optional[str] = None, fixtures: Optional[Dict[str, Any]] = None, webhook_url: bool = False) -> Session:
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
    errors: List[Exception] = []
    for session in made:
        try:
            session.close()
        except Exception as error:  # end the others anyway
            errors.append(error)
    if errors:
        raise errors[0]


@pytest.fixture
def sandbox(sandbox_factory: Callable[..., Session]) -> Session:
    """A fresh, isolated session for this test (frozen at START_CLOCK, the run's label)."""
    return sandbox_factory()


@pytest.fixture
def webhook_receiver(sandbox: Session) -> WebhookReceiver:
    """The sandbox's webhooks through the kit's forwarding, verified and deduplicated."""
    return sandbox.listen()
