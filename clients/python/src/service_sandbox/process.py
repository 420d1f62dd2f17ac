"""The emulator process for a test run (docs/clients.md#python). Starting, stopping and sharing one server
between pytest-xdist workers use POSIX process groups and file locks (``os.killpg``, ``fcntl``): on another
system, run the server yourself and give its URL (SANDBOX_URL, ``--sandbox-url``)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .client import Server
from .errors import SandboxError

START_TIMEOUT_MS = 60_000


def _require_posix(what: str) -> None:
    if os.name != "posix":
        raise SandboxError(
            f"{what} needs a POSIX system (process groups, fcntl locks); on {sys.platform}, start the server yourself "
            "and give its URL with SANDBOX_URL or --sandbox-url (docs/clients.md#python)"
        )


def _checkout_cli(start: str) -> Optional[str]:
    """dist/service-sandbox.mjs of a service-sandbox checkout at or above ``start``, or None."""
    folder = os.path.abspath(start)
    while True:
        built = os.path.join(folder, "dist", "service-sandbox.mjs")
        if os.path.isfile(built) and os.path.isfile(os.path.join(folder, "package.json")):
            return built
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def sandbox_cli(configured: Optional[str] = None) -> List[str]:
    """The argv that runs the CLI: ``configured`` or SANDBOX_CLI (a .mjs/.js path runs with node, anything else
    is a command), else the built dist/service-sandbox.mjs of the checkout this package or the current directory
    is in, else ``service-sandbox`` on PATH. Never ``npx``: outside the checkout it would ask the npm registry."""
    configured = (configured if configured is not None else os.environ.get("SANDBOX_CLI", "")).strip()
    if configured:
        return ["node", configured] if configured.endswith((".mjs", ".js")) else shlex.split(configured)
    for start in (os.path.dirname(__file__), os.getcwd()):
        built = _checkout_cli(start)
        if built:
            return ["node", built]
    return [shutil.which("service-sandbox") or "service-sandbox"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(args: Sequence[str] = (), log_path: Optional[str] = None, cli: Optional[str] = None) -> Tuple[Server, "subprocess.Popen[bytes]"]:
    """Starts ``service-sandbox --port <free>`` in a process group of its own (a wrapper script may run node as
    a child) and waits for its health check. Returns (Server, Popen). Stop it with stop_process. POSIX only."""
    _require_posix("starting the server")
    port = free_port()
    command = sandbox_cli(cli) + ["--port", str(port), *args]
    if not log_path:
        handle, log_path = tempfile.mkstemp(prefix="service-sandbox-", suffix=".log")
        os.close(handle)
    with open(log_path, "wb") as log:
        try:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise SandboxError(f"`{' '.join(command)}` cannot start (set SANDBOX_CLI or --sandbox-cli): {error}") from None
    server = Server(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + START_TIMEOUT_MS / 1000
    while not server.healthy():
        if process.poll() is not None or time.monotonic() > deadline:
            stop_process(process.pid)
            with open(log_path, "rb") as log:
                output = log.read().decode(errors="replace")
            raise SandboxError(f"`{' '.join(command)}` did not answer on {server.url}/_emulator/health:\n{output}")
        time.sleep(0.1)
    return server, process


def stop_process(pid: int, sig: int = signal.SIGTERM, timeout_ms: int = 10_000) -> None:
    """Signals a process group started by start_server; SIGKILL when it outlives timeout_ms. POSIX only."""
    _require_posix("stopping the server")
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        try:  # our own child: reap it
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass
        time.sleep(0.05)
    try:
        os.killpg(pid, getattr(signal, "SIGKILL", sig))
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def shared_server(run_dir: str, url: Optional[str] = None, cli: Optional[str] = None, admin_token: Optional[str] = None) -> Server:
    """The one server of a test run, shared by every process that passes the same run_dir (pytest-xdist
    workers): under an exclusive lock on run_dir/server.lock, the first caller finds ``url`` (when
    /_emulator/health answers) or starts one with ``cli``, and writes run_dir/server.json ``{url, pids}``; later
    callers read it. ``pids`` are the servers started for the run: release_shared_server stops them."""
    _require_posix("sharing one server between pytest-xdist workers")
    import fcntl

    os.makedirs(run_dir, exist_ok=True)
    state_path = os.path.join(run_dir, "server.json")
    with open(os.path.join(run_dir, "server.lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state: Dict[str, Any] = {"url": None, "pids": []}
            if os.path.exists(state_path):
                with open(state_path) as saved:
                    state = json.load(saved)
                server = Server(state["url"], admin_token)
                # A server this run started is waited for while it lives (a busy machine can make one health
                # check slow); starting a second one would leave the first behind.
                deadline = time.monotonic() + START_TIMEOUT_MS / 1000
                while True:
                    if server.healthy(timeout_ms=10_000):
                        return server
                    if not any(_alive(pid) for pid in state["pids"]) or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
            else:
                server = Server(url, admin_token)
                if server.healthy(timeout_ms=10_000):
                    state["url"] = server.url
                    _write_state(state_path, state)
                    return server
            started, process = start_server(log_path=os.path.join(run_dir, f"server-{len(state['pids'])}.log"), cli=cli)
            state = {"url": started.url, "pids": state["pids"] + [process.pid]}
            _write_state(state_path, state)
            return Server(started.url, admin_token)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write_state(path: str, state: Dict[str, Any]) -> None:
    with open(path + ".tmp", "w") as out:
        json.dump(state, out)
    os.replace(path + ".tmp", path)


#: Each process of a run notes the id of every session it creates in a file of its own in the run's folder
#: (``sessions-{pid}.txt``), so the end of the run can end exactly those, a crashed worker's included.
SESSIONS_FILE_PREFIX = "sessions-"


def note_session(run_dir: str, session_id: str) -> None:
    """Notes that this run created ``session_id`` (appended to this process's file in run_dir)."""
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, f"{SESSIONS_FILE_PREFIX}{os.getpid()}.txt"), "a") as out:
        out.write(session_id + "\n")


def noted_sessions(run_dir: str) -> List[str]:
    """Every session id any process of the run noted, in the order each process noted them."""
    noted: List[str] = []
    if not os.path.isdir(run_dir):
        return noted
    for name in sorted(os.listdir(run_dir)):
        if name.startswith(SESSIONS_FILE_PREFIX) and name.endswith(".txt"):
            with open(os.path.join(run_dir, name)) as notes:
                noted.extend(line.strip() for line in notes if line.strip())
    return noted


def release_shared_server(run_dir: str, admin_token: Optional[str] = None) -> List[str]:
    """At the end of the run: ends the sessions the run created that are still live (what a crashed test or worker
    left; another run's sessions are left alone, even under the same label) and stops the server if it was started
    for the run. The ids ended, or [] when no server was used."""
    state_path = os.path.join(run_dir, "server.json")
    if not os.path.exists(state_path):
        return []
    with open(state_path) as state:
        known = json.load(state)
    ended: List[str] = []
    server = Server(known["url"], admin_token)
    try:
        noted = set(noted_sessions(run_dir))
        if noted and server.healthy(timeout_ms=10_000):
            for session in server.sessions():
                if session["id"] in noted and server.end_session(session["id"]):
                    ended.append(session["id"])
    finally:
        for pid in known.get("pids", []):
            stop_process(pid)
    return ended
