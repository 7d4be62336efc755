"""The Dockerfile's steps, run on the host: wheel, offline install, env-only config, health.

No Docker engine runs on the machines this project is tested on. The host test below takes
the same steps as the two build stages and the container's start (environment from the
Dockerfile's ENV lines, HEALTHCHECK's own command). Where podman and a local
``python:3.11-slim`` image exist, the second test builds and runs the real image too.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests

from conftest import FAST_ARGON2_KIB, free_port

pytestmark = [pytest.mark.slow, pytest.mark.once]
ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def dockerfile_env() -> dict[str, str]:
    env = {}
    for block in re.findall(r"^ENV (.+?)(?<!\\)$", DOCKERFILE, re.MULTILINE | re.DOTALL):
        for name, value in re.findall(r"(\w+)=(\S+)", block.replace("\\\n", " ")):
            env[name] = value
    return env


def healthcheck_command() -> str:
    (command,) = re.findall(r"^\s+CMD (.+)$", DOCKERFILE.split("HEALTHCHECK", 1)[1],
                            re.MULTILINE)[:1]
    return command


def wait_healthy(check, proc: subprocess.Popen, seconds: int = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stdout.read()}")
        if check():
            return
        time.sleep(0.2)
    raise AssertionError("server did not become healthy")


def test_the_dockerfile_declares_what_the_container_promises():
    env = dockerfile_env()
    assert env["LOBBYTALKS_DATA_DIR"] == "/data" and env["LOBBYTALKS_HOST"] == "0.0.0.0"
    assert env["LOBBYTALKS_PORT"] == "8000"
    assert "EXPOSE 8000" in DOCKERFILE and 'VOLUME ["/data"]' in DOCKERFILE
    assert re.search(r"^USER lobbytalks$", DOCKERFILE, re.MULTILINE)
    assert DOCKERFILE.count("FROM python:3.11-slim") == 2  # multi-stage
    assert healthcheck_command().startswith("lobbytalks healthcheck")


def test_wheel_install_serve_and_healthcheck_like_the_container(tmp_path):
    # stage 1: the wheel and its dependencies
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir",
                            str(wheels), str(ROOT)], capture_output=True, text=True,
                           timeout=600)
    assert built.returncode == 0, built.stderr
    assert list(wheels.glob("lobbytalks-*.whl"))
    # stage 2: a fresh virtualenv, installed offline from those wheels only
    venv = tmp_path / "opt"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = subprocess.run([str(venv / "bin/pip"), "install", "--quiet", "--no-index",
                                "--find-links", str(wheels), "lobbytalks"],
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr

    # the container's start: configuration only from the environment, cwd = the data folder
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LOBBYTALKS_", "PYTHON", "VIRTUAL_ENV"))}
    env.update({k: v for k, v in dockerfile_env().items() if k != "PATH"})
    env.update(PATH=f"{venv}/bin:{os.environ['PATH']}", LOBBYTALKS_DATA_DIR=str(data),
               LOBBYTALKS_PORT=str(port), LOBBYTALKS_ARGON2_MEMORY_KIB=str(FAST_ARGON2_KIB))
    health = healthcheck_command()

    def healthy() -> bool:
        return subprocess.run(["sh", "-c", health], env=env, cwd=data, capture_output=True,
                              timeout=30).returncode == 0

    assert not healthy()  # nothing listens yet: the check fails as it should
    env["LOBBYTALKS_TRUSTED_PROXIES"] = "1"  # as behind a proxy on the Docker network
    proc = subprocess.Popen(["lobbytalks", "serve"], env=env, cwd=data,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_healthy(healthy, proc)
        url = f"http://127.0.0.1:{port}"
        r = requests.post(url + "/api/community", timeout=10, json={
            "action": "register", "username": "container_user", "password": "correct horse 1"},
            headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"})
        assert r.status_code == 200, r.text
        assert "; Secure" in r.headers["Set-Cookie"]  # the proxy's https reached the app
        assert requests.get(url + "/", timeout=10).status_code == 200  # templates installed
        assert requests.get(url + "/static/app.css", timeout=10).status_code == 200
        assert {"lobbytalks.db", "secret.key"} <= {p.name for p in data.iterdir()}
        proc.send_signal(signal.SIGTERM)  # docker stop
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out
    assert f"serving {data}/lobbytalks.db at http://0.0.0.0:{port}" in out
    assert " 203.0.113.9 POST /api/community 200 " in out  # the access log is on by default
    assert "LobbyTalks stopped" in out
    # the installed package, not this source tree, was what ran
    where = subprocess.run(["python", "-c", "import lobbytalks; print(lobbytalks.__file__)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(venv)), where


def podman_ready() -> str | None:
    if not shutil.which("podman"):
        return "podman is not installed"
    found = subprocess.run(["podman", "image", "exists", "python:3.11-slim"],
                           capture_output=True, timeout=60)
    if found.returncode != 0:
        return "no local python:3.11-slim image (registries other than PyPI are unreachable)"
    return None


@pytest.mark.skipif(podman_ready() is not None, reason=str(podman_ready()))
def test_the_image_builds_runs_and_stops_cleanly_with_podman(tmp_path):
    tag = f"localhost/lobbytalks-test:{uuid.uuid4().hex[:8]}"
    name = f"lobbytalks-test-{uuid.uuid4().hex[:8]}"
    # This sandbox has no CAP_SYS_RESOURCE and hybrid cgroups: lower the limits, prefer runc.
    runtime = ["--runtime", "runc"] if shutil.which("runc") else []
    limits = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]
    mounts = [arg for path in ("/etc/pip.conf", "/etc/ssl/certs") if Path(path).exists()
              for arg in ("-v", f"{path}:{path}:ro")]  # reach PyPI as the host does
    build = subprocess.run(["podman", *runtime, "build", "--format", "docker", *limits,
                            "--network", "host", *mounts, "-t", tag, str(ROOT)],
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    port = free_port()
    try:
        run = subprocess.run(["podman", *runtime, "run", "-d", "--name", name, *limits,
                              "-p", f"127.0.0.1:{port}:8000",
                              "-e", f"LOBBYTALKS_ARGON2_MEMORY_KIB={FAST_ARGON2_KIB}", tag],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        url = f"http://127.0.0.1:{port}"

        def healthy() -> bool:
            try:
                return requests.get(url + "/healthz", timeout=2).status_code == 200
            except requests.RequestException:
                return False

        deadline = time.monotonic() + 60
        while not healthy() and time.monotonic() < deadline:
            time.sleep(0.3)
        r = requests.post(url + "/api/community", timeout=10, json={
            "action": "register", "username": "podman_user", "password": "correct horse 1"})
        assert r.status_code == 200, r.text
        check = subprocess.run(["podman", "healthcheck", "run", name], capture_output=True,
                               text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
        who = subprocess.run(["podman", "exec", name, "id", "-un"], capture_output=True,
                             text=True, timeout=60)
        assert who.stdout.strip() == "lobbytalks"
        subprocess.run(["podman", "stop", "-t", "20", name], capture_output=True, timeout=60)
        state = subprocess.run(["podman", "inspect", name, "--format", "{{.State.ExitCode}}"],
                               capture_output=True, text=True, timeout=60)
        assert state.stdout.strip() == "0"
        logs = subprocess.run(["podman", "logs", name], capture_output=True, text=True,
                              timeout=60)
        assert "LobbyTalks stopped" in logs.stdout + logs.stderr
    finally:
        subprocess.run(["podman", "rm", "-f", "-v", name], capture_output=True, timeout=60)
        subprocess.run(["podman", "rmi", "-f", tag], capture_output=True, timeout=120)
        # the untagged build stage would otherwise pile up, one per changed source tree
        subprocess.run(["podman", "image", "prune", "-f"], capture_output=True, timeout=300)
