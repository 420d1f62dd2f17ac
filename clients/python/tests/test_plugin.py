"""The pytest plugin's end of a run (docs/clients.md#python, docs/sessions.md#labels): it ends the sessions the run
itself created and left (a crashed xdist worker's too), never another run's live sessions under the same label.
Runs a pytest of its own, with two xdist workers, against this run's server."""

import os
import re
import subprocess
import sys
import uuid

import service_sandbox
from service_sandbox import Server

INNER_TESTS = '''
import os

def note(session):
    with open(os.environ["NOTES"], "a") as out:
        out.write(session.id + "\\n")

def test_leaves_a_session_behind(sandbox_server, sandbox_label):
    note(sandbox_server.create_session(label=sandbox_label))  # never closed, as a test that crashed midway

def test_its_worker_dies(sandbox_server, sandbox_label):
    note(sandbox_server.create_session(label=sandbox_label))
    os._exit(3)  # the worker process dies with its session live

def test_an_ordinary_test(sandbox):
    assert sandbox.now()
'''


def test_a_run_ends_only_its_own_sessions_under_a_shared_label(sandbox_server, tmp_path):
    label = f"shared-{uuid.uuid4().hex[:8]}"
    other_run = Server(sandbox_server.url, sandbox_server.admin_token).create_session(label=label)  # another run's, live
    try:
        (tmp_path / "test_inner.py").write_text(INNER_TESTS)
        notes = tmp_path / "notes.txt"
        env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTEST_", "SANDBOX_"))}
        # the kit this run imports, installed or from a source folder
        kit = os.path.dirname(os.path.dirname(os.path.abspath(service_sandbox.__file__)))
        env.update(NOTES=str(notes), PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=os.pathsep.join(filter(None, [kit, env.get("PYTHONPATH")])))
        if sandbox_server.admin_token:
            env["SANDBOX_ADMIN_TOKEN"] = sandbox_server.admin_token
        inner = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "service_sandbox.plugin", "-p", "no:cacheprovider", "-n", "2", "-q", "--sandbox-url", sandbox_server.url, "--sandbox-label", label, str(tmp_path / "test_inner.py")],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        output = inner.stdout + inner.stderr
        assert inner.returncode != 0 and re.search(r"\b2 passed\b", output), output  # the dead worker's test fails
        made = notes.read_text().split()
        assert len(made) == 2, output
        ended = re.search(r"service-sandbox: ended sessions the run left behind: \[(.*)\]", output)
        assert ended is not None, output
        assert sorted(re.findall(r"ses_\w+", ended.group(1))) == sorted(made)
        assert other_run.id not in output
        live = [session["id"] for session in sandbox_server.sessions() if session.get("label") == label]
        assert live == [other_run.id], f"the other run's session is still live and nothing of this run is: {live}"
    finally:
        other_run.close()
