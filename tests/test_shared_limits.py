"""Rate limits kept in Redis: shared by server processes, checked at start, failing closed."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest
import requests

from lobbytalks import create_app
from lobbytalks.limits import STORAGE_RETRY_AFTER_SECONDS, RateStorageUnavailable
from lobbytalks.settings import SettingsError
from tests.conftest import LiveServer, Person, count, free_port, live_usernames
from tests.test_mcp import McpClient, assert_rpc_error
from tests.redisserver import RedisServer, redis_server, redis_url  # noqa: F401 (fixtures)

PASSWORD = "redis-pw-not-for-logs"


@pytest.fixture
def own_redis(tmp_path):
    """A Redis of this test's own, with a password, that the test may stop and restart."""
    server = RedisServer(tmp_path / "own-redis")
    server.start(password=PASSWORD)
    yield server
    server.stop()


def register(url: str, username: str) -> requests.Response:
    return requests.post(url + "/api/community", timeout=10, json={
        "action": "register", "username": username, "password": "correct horse 1"})


def login(url: str, username: str, password: str) -> requests.Response:
    return requests.post(url + "/api/community", timeout=10, json={
        "action": "login", "username": username, "password": password})


@pytest.fixture
def two_servers(tmp_path, redis_url):
    """Two server processes (each with its own SQLite file) sharing one Redis."""
    env = {"LOBBYTALKS_RATELIMIT_STORAGE": redis_url, "LOBBYTALKS_RATE_REGISTER": "3/hour",
           "LOBBYTALKS_RATE_LOGIN_PAIR": "3/15minute"}
    servers = [LiveServer(tmp_path / "a", env=env), LiveServer(tmp_path / "b", env=env)]
    yield servers
    for server in servers:
        server.stop()


def test_registrations_per_address_are_counted_over_both_processes(two_servers):
    a, b = two_servers
    assert register(a.url, "amy").status_code == 200
    assert register(b.url, "ben").status_code == 200
    assert register(a.url, "ann").status_code == 200
    refused = register(b.url, "bob")
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert 3500 < int(refused.headers["Retry-After"]) <= 3600
    assert register(a.url, "abe").status_code == 429
    assert live_usernames(a) == {"amy", "ann"} and live_usernames(b) == {"ben"}


def test_failed_logins_for_one_name_are_counted_over_both_processes(two_servers, redis_server):
    a, b = two_servers
    assert register(a.url, "carol").status_code == 200
    assert register(b.url, "carol").status_code == 200
    for url in (a.url, b.url, a.url):
        assert login(url, "carol", "wrong guess").status_code == 401
    # The pair window (name + address) is full on both, even for the right password.
    for url in (b.url, a.url):
        refused = login(url, "carol", "correct horse 1")
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    assert any(":login-pair" in key for key in redis_server.keys())


def test_the_gate_counts_in_redis_through_the_app(settings, redis_url, redis_server):
    app = create_app(settings.with_overrides(ratelimit_storage=redis_url, rate_register="1/hour"))
    Person(app).register()
    refused = Person(app).web_post("register", username="second", password="correct horse 1")
    assert refused.status_code == 429 and refused.get_json()["code"] == "rate_limited"
    assert count(app.config["LOBBYTALKS"].db, "users") == 1
    assert [k for k in redis_server.keys() if "lobbytalks:register" in k]


def test_an_unreachable_redis_stops_the_start_in_one_line(tmp_path):
    url = f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"
    env = {**os.environ, "LOBBYTALKS_RATELIMIT_STORAGE": url}
    result = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "serve", "--port", str(free_port()),
         "--data-dir", str(tmp_path / "data")],
        env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("lobbytalks: rate-limit storage redis://:****@127.0.0.1:")
    assert "not reachable" in lines[0]
    assert PASSWORD not in result.stderr + result.stdout
    assert not (tmp_path / "data" / "lobbytalks.db").exists()  # refused before migrating


@pytest.mark.parametrize("scheme", ["nosuch", "memcached", "mongodb", "async+redis"])
def test_a_storage_other_than_memory_or_redis_is_a_bad_setting(settings, scheme):
    """Refused with the settings (``config`` says so too), its password masked. memcached://
    passed `config` and then stopped `serve` on a client library that is not installed."""
    with pytest.raises(SettingsError) as refused:
        settings.with_overrides(ratelimit_storage=f"{scheme}://:{PASSWORD}@x/0")
    assert ("LOBBYTALKS_RATELIMIT_STORAGE must be memory://, redis:// or rediss://"
            in str(refused.value))
    assert f"its scheme is '{scheme}'" in str(refused.value)
    assert PASSWORD not in str(refused.value)


@pytest.mark.parametrize("setting, uri", [
    ("ratelimit_storage", "redis://:Pa/ssw0rdTail@127.0.0.1:6379/0"),
    ("ratelimit_storage", "redis://:Pa#ssw0rdTail@127.0.0.1:6379/0"),
    ("database_url", "postgresql://app:Pa@ssw0rdTail@127.0.0.1:5432/lt"),
    ("database_url", "postgresql://app:Pa?ssw0rdTail@db/lt"),
])
def test_a_password_with_reserved_characters_unescaped_is_refused_before_a_driver_quotes_it(
        settings, setting, uri):
    """The driver split such a URL elsewhere and quoted the part it took for the host or
    the port ("failed to resolve host 'ssw0rdTail@127.0.0.1'", "... as 'Pa'")."""
    with pytest.raises(SettingsError) as refused:
        settings.with_overrides(**{setting: uri})
    said = str(refused.value)
    assert f"LOBBYTALKS_{setting.upper()}" in said and "percent-encoded" in said
    assert "Pa" not in said and "ssw0rd" not in said
    escaped = uri.replace("Pa/", "Pa%2F").replace("Pa#", "Pa%23").replace("Pa@", "Pa%40") \
        .replace("Pa?", "Pa%3F")
    assert getattr(settings.with_overrides(**{setting: escaped}), setting) == escaped


@pytest.mark.parametrize("uri", [f"redis://:{PASSWORD}@localhost:notaport/0"])
def test_an_unusable_storage_uri_is_refused_at_start(settings, uri):
    with pytest.raises(RateStorageUnavailable) as refused:
        create_app(settings.with_overrides(ratelimit_storage=uri))
    assert str(refused.value).startswith(
        f"LOBBYTALKS_RATELIMIT_STORAGE={uri.split(':')[0]}://:****@")
    assert PASSWORD not in str(refused.value)
    assert not settings.db_path.exists()


def test_a_missing_redis_client_is_named_with_how_to_install_it(settings, monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)  # as if the [scale] extra was not installed
    with pytest.raises(RateStorageUnavailable) as refused:
        create_app(settings.with_overrides(ratelimit_storage=f"redis://:{PASSWORD}@127.0.0.1:1/0"))
    assert "the Redis client is not installed: pip install redis" in str(refused.value)
    assert PASSWORD not in str(refused.value)


def test_redis_failing_mid_request_fails_closed_then_recovers(settings, own_redis, caplog):
    app = create_app(settings.with_overrides(ratelimit_storage=own_redis.url))
    asker = Person(app).register()
    asker.join()
    agent = asker.new_agent()
    own_redis.stop()
    caplog.set_level(logging.WARNING, logger="lobbytalks.limits")

    refused = Person(app).web_post("register", username="dan", password="correct horse 1")
    assert refused.status_code == 503
    assert refused.get_json()["code"] == "service_unavailable"
    assert refused.headers["Retry-After"] == str(STORAGE_RETRY_AFTER_SECONDS)
    external = agent.get("list_topics")
    assert external.status_code == 503
    assert external.get_json()["code"] == "service_unavailable"
    over_mcp = McpClient(app, agent.token).rpc("tools/list", id=4)
    assert_rpc_error(over_mcp, 503, -32000, id=4, data_code="service_unavailable")
    # the day's questions are counted in the database, where the questions are: no Redis
    question = asker.web_post("topic", title="Redis 挂了之后还能提问吗？")
    assert question.status_code == 200
    db = app.config["LOBBYTALKS"].db
    assert count(db, "users", "username = :name", {"name": "dan"}) == 0
    assert count(db, "topics") == 1
    logged = caplog.text
    assert "rate-limit storage redis://:****@127.0.0.1" in logged
    assert PASSWORD not in logged

    own_redis.start(port=own_redis.port, password=PASSWORD)
    assert Person(app, username="dan").web_post(
        "register", username="dan", password="correct horse 1").status_code == 200
    assert agent.get("list_topics").status_code == 200


def test_a_live_server_answers_503_while_redis_is_down(tmp_path, own_redis):
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_RATELIMIT_STORAGE": own_redis.url,
                                                "LOBBYTALKS_ACCESS_LOG": "true"})
    try:
        own_redis.stop()
        refused = register(server.url, "erin")
        assert refused.status_code == 503 and refused.json()["code"] == "service_unavailable"
        assert requests.get(server.url + "/healthz", timeout=5).status_code == 200
        assert live_usernames(server) == set()
        own_redis.start(port=own_redis.port, password=PASSWORD)
        assert register(server.url, "erin").status_code == 200
        assert live_usernames(server) == {"erin"}
    finally:
        output = server.stop()
    assert "rate-limit storage redis://:****@127.0.0.1" in output
    assert PASSWORD not in output


def test_config_reads_both_urls_from_files_and_masks_their_passwords(tmp_path):
    storage, database = tmp_path / "ratelimit-url", tmp_path / "database-url"
    storage.write_text(f"rediss://:{PASSWORD}@cache.example:6380/2\n")
    database.write_text("postgresql://lt:db-pw-not-for-logs@db.example/lt\n")
    env = {**os.environ, "LOBBYTALKS_RATELIMIT_STORAGE_FILE": str(storage),
           "LOBBYTALKS_DATABASE_URL_FILE": str(database)}
    result = subprocess.run([sys.executable, "-m", "lobbytalks", "config"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    shown = dict(line.split("    # ")[0].split("=", 1) for line in result.stdout.splitlines())
    assert shown["LOBBYTALKS_RATELIMIT_STORAGE"] == "rediss://:****@cache.example:6380/2"
    assert shown["LOBBYTALKS_DATABASE_URL"] == "postgresql://lt:****@db.example/lt"
    assert PASSWORD not in result.stdout and "db-pw-not-for-logs" not in result.stdout
