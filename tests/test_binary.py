"""The single-file executable built by packaging/build.sh behaves like the pip-installed CLI."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

import json

from conftest import LiveServer, good_result, web_session

pytestmark = [pytest.mark.slow, pytest.mark.once]
ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ("sql", "templates", "static", "docs")


@pytest.fixture(scope="module")
def binary(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pyinstaller")
    env = {**os.environ, "PYTHON": sys.executable, "DIST": str(out / "dist"),
           "WORK": str(out / "work")}
    started = time.monotonic()
    built = subprocess.run(["bash", "packaging/build.sh"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout + built.stderr
    path = out / "dist" / "lobbytalks"
    print(f"\nbuilt {path} in {time.monotonic() - started:.0f}s, "
          f"{path.stat().st_size / 2**20:.1f} MiB")
    return path


def bundled_files(binary: Path) -> set[str]:
    """What the executable carries, as paths relative to the package."""
    listing = subprocess.run([sys.executable, "-m", "PyInstaller.utils.cliutils.archive_viewer",
                              "--list", str(binary)], capture_output=True, text=True,
                             timeout=120)
    assert listing.returncode == 0, listing.stderr
    names = set()
    for line in listing.stdout.splitlines():
        name = line.strip().split(",")[-1].strip().strip("'\"")
        if name.startswith("lobbytalks/"):
            names.add(name.removeprefix("lobbytalks/"))
    return names


def test_it_carries_every_data_file_of_the_package(binary):
    expected = {str(p.relative_to(ROOT / "lobbytalks")) for kind in BUNDLED
                for p in (ROOT / "lobbytalks" / kind).rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}
    assert any(name.startswith("sql/migrations/") for name in expected)
    missing = expected - bundled_files(binary)
    assert not missing, sorted(missing)


def test_it_answers_like_the_cli(binary):
    from lobbytalks import __version__
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.returncode == 0 and version.stdout.strip() == f"lobbytalks {__version__}"
    helped = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60)
    for name in ("serve", "backup", "restore", "check", "healthcheck", "rotate-key", "agent"):
        assert name in helped.stdout


def test_it_serves_registers_backs_up_and_stops(binary, tmp_path):
    server = LiveServer(tmp_path / "data", command=[str(binary)])
    try:
        assert requests.get(server.url + "/healthz", timeout=5).json() == {"ok": True}
        session = web_session(server, "binary_user")
        me = session.get(server.url + "/api/community", params={"action": "me"}, timeout=5)
        assert me.json()["user"]["username"] == "binary_user"
        page = requests.get(server.url + "/", timeout=5)  # a template, found in the bundle
        assert page.status_code == 200 and "<html" in page.text.lower()
        # Markdown, its link finder and the sanitiser are in the bundle too.
        session.post(server.url + "/api/communities", json={"action": "join", "community": "lobby"})
        asked = session.post(server.url + "/api/community", json={
            "action": "topic", "community": "lobby", "title": "打包后还能渲染 Markdown 吗？",
            "description": "**粗体**，见 https://www.sqlite.org/wal.html"}).json()["id"]
        shown = requests.get(f"{server.url}/q/{asked}", timeout=5).text
        assert "<strong>粗体</strong>" in shown
        assert 'href="https://www.sqlite.org/wal.html" rel="nofollow ugc noopener"' in shown
        css = requests.get(server.url + "/static/app.css", timeout=5)
        assert css.status_code == 200 and css.text == \
            (ROOT / "lobbytalks/static/app.css").read_text()
        docs = requests.get(server.url + "/docs/external-agents-v1.md", timeout=5)
        source = (ROOT / "lobbytalks/docs/external-agents-v1.md").read_text()
        assert docs.status_code == 200 and source.splitlines()[0] in docs.text
        backup = tmp_path / "b.db"
        done = subprocess.run([str(binary), "backup", "--data-dir", str(server.data_dir),
                               str(backup)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        checked = subprocess.run([str(binary), "check", "--db", str(backup)],
                                 capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0 and "result: ok" in checked.stdout
        server.proc.send_signal(signal.SIGTERM)
        out, _ = server.proc.communicate(timeout=30)
        assert server.proc.returncode == 0, out
        assert "LobbyTalks stopped" in out
    finally:
        if server.proc.poll() is None:
            server.stop()


def test_killing_it_outright_stops_its_server_and_leaves_nothing_in_tmp(binary, tmp_path):
    """The single file runs as a launcher and its child: `kill -9` of the launcher (the pid
    one started) orphaned the child, which went on serving with the port and the lock (the
    next `serve` refused), and left the 80 MB the launcher had unpacked in /tmp."""
    from lobbytalks import serverlock

    unpacked = tmp_path / "tmp"
    unpacked.mkdir()
    server = LiveServer(tmp_path / "data", command=[str(binary)], env={"TMPDIR": str(unpacked)})
    try:
        assert requests.get(server.url + "/healthz", timeout=5).ok
        assert [p.name[:4] for p in unpacked.iterdir()] == ["_MEI"]
        server.proc.kill()  # SIGKILL to the launcher
        server.proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while (list(unpacked.iterdir()) or serverlock.in_use(server.data_dir / "lobbytalks.db")) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not serverlock.in_use(server.data_dir / "lobbytalks.db")
        assert list(unpacked.iterdir()) == []
        with pytest.raises(requests.ConnectionError):
            requests.get(server.url + "/healthz", timeout=5)
        out = server.proc.stdout.read()
        assert "LobbyTalks stopped" in out and "Traceback" not in out, out
    finally:
        if server.proc.poll() is None:
            server.stop()
        lock = server.data_dir / "lobbytalks.db.lock"
        if serverlock.in_use(server.data_dir / "lobbytalks.db"):  # an orphan: not left running
            os.kill(int(lock.read_text().split()[0]), signal.SIGKILL)


def test_its_connector_answers_a_question(binary, tmp_path, live_server):
    """`agent` loads its modules only when it runs: they must be in the bundle too."""
    base = live_server.url
    owner = web_session(live_server, "binary_owner")
    owner.post(base + "/api/communities", json={"action": "join", "community": "lobby"})
    topic = owner.post(base + "/api/community", json={
        "action": "topic", "title": "单文件程序里的连接器能回答问题吗？"}).json()["id"]
    token = owner.post(base + "/api/external/manage", json={
        "action": "register", "name": "单文件虾", "perspective": "先给结论。",
        "client": "custom"}).json()["token"]
    stub = tmp_path / "research.py"
    stub.write_text(f"print({json.dumps(json.dumps(good_result(), ensure_ascii=False))})\n")
    done = subprocess.run(
        [str(binary), "agent", "answer", topic, "--server", base, "--json", "--tick", "0.1",
         "--state-dir", str(tmp_path / "state"), "--harness", "command",
         "--harness-command", f"{sys.executable} {stub}"],
        env={**os.environ, "XIA_CHEDAN_AGENT_TOKEN": token}, capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line)["event"] for line in done.stdout.splitlines()]
    assert events[-1] == "submitted"
    read = owner.get(base + "/api/community", params={"topic": topic}).json()
    assert [m["text"] for m in read["messages"]] == [good_result()["conclusion"]]
