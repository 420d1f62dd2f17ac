"""The emulator process and the CLI's ``listen`` forwarder, as child processes (docs/clients.md#python)."""

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from .client import Server

START_TIMEOUT_S = 60.0
LISTEN_READY_TIMEOUT_S = 30.0


def _checkout_cli(start):
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


def sandbox_cli():
    """The argv that runs the CLI: SANDBOX_CLI (a .mjs/.js path runs with node, anything else is a command),
    else the built dist/service-sandbox.mjs of the checkout this package or the current directory is in,
    else ``service-sandbox`` on PATH. Never ``npx``: outside the checkout it would ask the npm registry."""
    configured = os.environ.get("SANDBOX_CLI", "").strip()
    if configured:
        return ["node", configured] if configured.endswith((".mjs", ".js")) else shlex.split(configured)
    for start in (os.path.dirname(__file__), os.getcwd()):
        built = _checkout_cli(start)
        if built:
            return ["node", built]
    return [shutil.which("service-sandbox") or "service-sandbox"]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(args=(), log_path=None):
    """Starts ``service-sandbox --port <free>`` in a process group of its own (a wrapper script may run node as
    a child) and waits for its health check. Returns (Server, Popen). Stop it with stop_process."""
    port = free_port()
    command = sandbox_cli() + ["--port", str(port), *args]
    if not log_path:
        handle, log_path = tempfile.mkstemp(prefix="service-sandbox-", suffix=".log")
        os.close(handle)
    with open(log_path, "wb") as log:
        try:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise RuntimeError(f"`{' '.join(command)}` cannot start (set SANDBOX_CLI): {error}") from None
    server = Server(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.healthy():
        if process.poll() is not None or time.monotonic() > deadline:
            stop_process(process.pid)
            with open(log_path, "rb") as log:
                output = log.read().decode(errors="replace")
            raise RuntimeError(f"`{' '.join(command)}` did not answer on {server.url}/_emulator/health:\n{output}")
        time.sleep(0.1)
    return server, process


def stop_process(pid, sig=signal.SIGTERM, timeout_s=10.0):
    """Signals a process group started by start_server or Listener; SIGKILL when it outlives timeout_s."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
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
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Listener:
    """``service-sandbox listen --forward-to URL --url SERVER --session ID`` as a child process: connects out to
    the emulator and posts each of the session's deliveries to forward_to (docs/webhooks.md#listen). Ready
    (its ``Ready:`` line seen) when the constructor returns."""

    def __init__(self, forward_to, server_url, session_id=None, admin_token=None):
        command = sandbox_cli() + ["listen", "--forward-to", forward_to, "--url", server_url]
        if session_id:
            command += ["--session", session_id]
        if admin_token:
            command += ["--admin-token", admin_token]
        self.command = command
        self.lines = []
        self.ready = False
        self._ready = threading.Event()
        try:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise RuntimeError(f"`{' '.join(command)}` cannot start (set SANDBOX_CLI): {error}") from None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._ready.wait(LISTEN_READY_TIMEOUT_S)
        if not self.ready:
            self.stop()
            raise RuntimeError(f"`{' '.join(command)}` said no Ready: within {LISTEN_READY_TIMEOUT_S} s:\n" + "".join(self.lines))

    def _read(self):
        for raw in self.process.stdout:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            if line.startswith("Ready:"):
                self.ready = True
                self._ready.set()
        self._ready.set()

    def stop(self):
        """Ctrl+C, as a user would; SIGKILL if it has not gone within 10 s."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(5)
        if self.process.stdout:
            self.process.stdout.close()


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def shared_server(run_dir):
    """The one server of a test run, shared by every process that passes the same run_dir (pytest-xdist
    workers): under an exclusive lock on run_dir/server.lock, the first caller finds SANDBOX_URL (when
    /_emulator/health answers) or starts one, and writes run_dir/server.json ``{url, pids}``; later callers read
    it. ``pids`` are the servers started for the run: release_shared_server stops them."""
    import fcntl

    os.makedirs(run_dir, exist_ok=True)
    state_path = os.path.join(run_dir, "server.json")
    with open(os.path.join(run_dir, "server.lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state = {"url": None, "pids": []}
            if os.path.exists(state_path):
                with open(state_path) as saved:
                    state = json.load(saved)
                server = Server(state["url"])
                # A server this run started is waited for while it lives (a busy machine can make one health
                # check slow); starting a second one would leave the first behind.
                deadline = time.monotonic() + START_TIMEOUT_S
                while True:
                    if server.healthy(timeout=10.0):
                        return server
                    if not any(_alive(pid) for pid in state["pids"]) or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
            else:
                server = Server()
                if server.healthy(timeout=10.0):
                    state["url"] = server.url
                    _write_state(state_path, state)
                    return server
            server, process = start_server(log_path=os.path.join(run_dir, f"server-{len(state['pids'])}.log"))
            state = {"url": server.url, "pids": state["pids"] + [process.pid]}
            _write_state(state_path, state)
            return server
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write_state(path, state):
    with open(path + ".tmp", "w") as out:
        json.dump(state, out)
    os.replace(path + ".tmp", path)


def release_shared_server(run_dir, label=None):
    """At the end of the run: ends the label's sessions (what a crashed test left) and stops the server if it
    was started for the run. The ids ended, or [] when no server was used."""
    state_path = os.path.join(run_dir, "server.json")
    if not os.path.exists(state_path):
        return []
    with open(state_path) as state:
        known = json.load(state)
    ended = []
    server = Server(known["url"])
    try:
        if label and server.healthy(timeout=10.0):
            ended = server.end_label(label)
    finally:
        for pid in known.get("pids", []):
            stop_process(pid)
    return ended
