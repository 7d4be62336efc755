"""Races across two real `lobbytalks serve` processes on one PostgreSQL database and one Redis.

Each race fires its requests at both processes at the same moment (a ``threading.Barrier``),
alternating the process per request, and is repeated where one round could miss the
interleaving. Afterwards the database is read directly and must agree with every answer.

These need PostgreSQL: the suite's own server when it runs on PostgreSQL
(``LOBBYTALKS_TEST_DATABASE_URL``), else one started here with tests/pgserver.py. When
neither works the tests fail, never skip: CI installs PostgreSQL.
"""
from __future__ import annotations

import email
import threading
import time
import uuid
from email import policy
from pathlib import Path
from typing import Any, Callable, Iterator

import psycopg
import pytest
import requests

import pgtest
from conftest import LiveServer, good_result, race, web_session
from tests.redisserver import redis_server  # noqa: F401 (fixture)
from tests.test_mail import smtp  # noqa: F401 (fixture)

pytestmark = pytest.mark.postgres

GENEROUS = "100000/minute"  # limits that are not what a race is about stay out of its way
ROUNDS = 4


class Pair:
    """Two server processes on one data folder (one secret key), database and Redis."""

    def __init__(self, data_dir: Path, url: str, redis: str, env: dict[str, str]) -> None:
        self.url = url
        shared = {"LOBBYTALKS_DATABASE_URL": url, "LOBBYTALKS_RATELIMIT_STORAGE": redis, **env}
        # One after the other: the first creates the schema and the key, the second finds them.
        self.servers = [LiveServer(data_dir, env=shared), LiveServer(data_dir, env=shared)]

    def base(self, i: int) -> str:
        return self.servers[i % 2].url

    def value(self, sql: str, params: Any = ()) -> Any:
        with psycopg.connect(self.url) as conn:
            return conn.execute(sql, params).fetchone()[0]

    def stop(self) -> None:
        outputs = [server.stop() for server in self.servers]
        for out in outputs:  # a 5xx is logged as a traceback; none may have happened
            assert "Traceback" not in out, out


def database_url(request: pytest.FixtureRequest, data_dir: Path) -> str:
    if pgtest.active():
        return pgtest.url_for(data_dir)
    server = request.getfixturevalue("pg_server")  # raises (fails the test) without PostgreSQL
    name = f"races_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return pgtest.with_database(server.url, name)


def start_pair(request, tmp_path_factory, redis_server, env):  # noqa: F811
    data_dir = tmp_path_factory.mktemp("pair")
    redis_server.flush()
    pair = Pair(data_dir, database_url(request, data_dir), redis_server.url, env)
    return pair


@pytest.fixture(scope="module")
def pair(request, tmp_path_factory, redis_server) -> Iterator[Pair]:  # noqa: F811
    running = start_pair(request, tmp_path_factory, redis_server, {
        f"LOBBYTALKS_RATE_{name}": GENEROUS
        for name in ("TOKEN", "CLAIM", "MANAGE", "COMMUNITY", "TOPIC", "REGISTER", "WEB_WRITE")})
    yield running
    running.stop()


def codes(responses: list[requests.Response]) -> list[tuple[int, str | None]]:
    return sorted((r.status_code, None if r.ok else r.json()["code"]) for r in responses)


class Owner:
    """A registered, joined person on the pair, and the agents they make."""

    def __init__(self, pair: Pair) -> None:
        self.pair = pair
        self.web = web_session(pair.servers[0])
        self.web.headers["Connection"] = "close"  # each request may land on a fresh socket
        assert self.post(0, "/api/communities", action="join", community="lobby").ok

    def post(self, i: int, path: str, **body: Any) -> requests.Response:
        return self.web.post(self.pair.base(i) + path, json=body, timeout=30)

    def ask(self, title: str = "并发问题") -> str:
        r = self.post(0, "/api/community", action="topic", title=f"{title} {uuid.uuid4().hex[:6]}")
        assert r.ok, r.text
        return r.json()["id"]

    def new_agent(self, i: int = 0, name: str = "并发虾") -> requests.Response:
        return self.post(i, "/api/external/manage", action="register", name=name,
                         perspective="p", client="custom")

    def agent(self) -> "Agent":
        made = self.new_agent()
        assert made.ok, made.text
        return Agent(self.pair, made.json()["token"], made.json()["profileId"])

    def cancel(self, i: int, task: str) -> requests.Response:
        return self.post(i, "/api/external/manage", action="cancel_task", taskId=task)


class Agent:
    def __init__(self, pair: Pair, token: str, profile_id: str) -> None:
        self.pair, self.profile_id = pair, profile_id
        self.headers = {"Authorization": f"Bearer {token}", "Connection": "close"}

    def post(self, i: int, **body: Any) -> requests.Response:
        return requests.post(self.pair.base(i) + "/api/external", json=body,
                             headers=self.headers, timeout=30)

    def get(self, i: int, **params: Any) -> requests.Response:
        return requests.get(self.pair.base(i) + "/api/external", params=params,
                            headers=self.headers, timeout=30)

    def claim(self, i: int, topic: str, request_id: str | None = None) -> requests.Response:
        return self.post(i, action="claim_task", topic=topic,
                         requestId=request_id or str(uuid.uuid4()))

    def task(self, topic: str) -> str:
        r = self.claim(0, topic)
        assert r.ok, r.text
        return r.json()["task"]["id"]

    def submit(self, i: int, task: str) -> requests.Response:
        return self.post(i, action="submit_result", taskId=task, **good_result())


def test_cancel_and_submit_have_one_winner_across_processes(pair):
    asker, owner = Owner(pair), Owner(pair)
    agent = owner.agent()
    topic = asker.ask()
    winners = []
    for round_ in range(3 * ROUNDS):
        task = agent.task(topic)
        # Alternate which process gets which side.
        submit, cancel = race([lambda: agent.submit(round_, task),
                               lambda: owner.cancel(round_ + 1, task)])
        state = pair.value("SELECT state FROM tasks WHERE id = %s", (task,))
        messages = pair.value("SELECT COUNT(*) FROM messages WHERE task_id = %s", (task,))
        if submit.ok:
            winners.append("submit")
            assert (cancel.status_code, cancel.json()["code"]) == (409, "task_terminal")
            assert (state, messages) == ("done", 1)
            assert submit.json()["messageId"] == pair.value(
                "SELECT message_id FROM tasks WHERE id = %s", (task,))
        else:
            winners.append("cancel")
            assert cancel.status_code == 200 and cancel.json()["task"]["state"] == "failed"
            assert (submit.status_code, submit.json()["code"]) == (409, "task_terminal")
            assert (state, messages) == ("failed", 0)
    assert len(winners) == 3 * ROUNDS
    assert pair.value("SELECT COUNT(*) FROM messages WHERE topic_id = %s", (topic,)) == \
        winners.count("submit")


def test_many_claims_at_once_lease_exactly_three(pair):
    for _ in range(ROUNDS):
        asker, owner = Owner(pair), Owner(pair)
        agents = [owner.agent() for _ in range(2)]
        topics = [asker.ask() for _ in range(8)]
        responses = race([lambda i=i, t=t: agents[i % 2].claim(i, t)
                          for i, t in enumerate(topics)])
        assert codes(responses) == [(200, None)] * 3 + [(429, "task_limit")] * 5
        user = pair.value("SELECT user_id FROM profiles WHERE id = %s", (agents[0].profile_id,))
        assert pair.value("SELECT COUNT(*) FROM tasks WHERE user_id = %s", (user,)) == 3
        assert pair.value("SELECT COUNT(*) FROM tasks WHERE user_id = %s AND state = 'leased'",
                          (user,)) == 3


def test_many_agent_registrations_at_once_stop_at_eight(pair):
    for _ in range(ROUNDS):
        owner = Owner(pair)
        responses = race([lambda i=i: owner.new_agent(i, f"并发{i}") for i in range(12)])
        assert codes(responses) == [(200, None)] * 8 + [(400, "profile_limit")] * 4
        tokens = {r.json()["profileId"] for r in responses if r.ok}
        assert len(tokens) == 8
        assert pair.value("SELECT COUNT(DISTINCT user_id) FROM profiles WHERE id = ANY(%s)",
                          (list(tokens),)) == 1
        user = pair.value("SELECT user_id FROM profiles WHERE id = %s", (next(iter(tokens)),))
        assert pair.value("SELECT COUNT(*) FROM profiles WHERE user_id = %s", (user,)) == 8


def test_replays_of_one_claim_at_once_give_one_task(pair):
    asker, owner = Owner(pair), Owner(pair)
    agent = owner.agent()
    for _ in range(ROUNDS):
        topic, request_id = asker.ask(), str(uuid.uuid4())
        responses = race([lambda i=i: agent.claim(i, topic, request_id) for i in range(8)])
        assert [r.status_code for r in responses] == [200] * 8, [r.text for r in responses]
        ids = {r.json()["task"]["id"] for r in responses}
        assert len(ids) == 1
        assert sum(bool(r.json().get("replayed")) for r in responses) == 7
        assert pair.value("SELECT COUNT(*) FROM tasks WHERE request_id = %s", (request_id,)) == 1
        assert pair.value("SELECT id FROM tasks WHERE request_id = %s", (request_id,)) in ids
        assert owner.cancel(0, ids.pop()).ok  # room for the next round's lease


def test_replays_of_one_submit_at_once_give_one_message(pair):
    asker, owner = Owner(pair), Owner(pair)
    agent = owner.agent()
    for _ in range(ROUNDS):
        task = agent.task(asker.ask())
        responses = race([lambda i=i: agent.submit(i, task) for i in range(8)])
        assert [r.status_code for r in responses] == [200] * 8, [r.text for r in responses]
        assert len({r.json()["messageId"] for r in responses}) == 1
        assert sum(bool(r.json().get("replayed")) for r in responses) == 7
        assert pair.value("SELECT COUNT(*) FROM messages WHERE task_id = %s", (task,)) == 1
        assert pair.value("SELECT state FROM tasks WHERE id = %s", (task,)) == "done"


def test_people_answering_each_others_questions_at_once_never_deadlock(pair):
    """A submit holds its own person's row and notifies the asker, whose row the notification
    points at; the asker's agent, answering the first person's question at the same moment,
    holds the asker's row and points at the first's. Neither may wait for the other."""
    people = []
    for _ in range(6):
        x, y = Owner(pair), Owner(pair)
        people.append((x.agent(), x.ask(), y.agent(), y.ask()))
    for _ in range(ROUNDS):
        tasks = []
        for x_agent, x_topic, y_agent, y_topic in people:
            tasks += [(x_agent, x_agent.task(y_topic)), (y_agent, y_agent.task(x_topic))]
        responses = race([lambda i=i, a=a, t=t: a.submit(i, t)
                          for i, (a, t) in enumerate(tasks)])
        assert codes(responses) == [(200, None)] * len(tasks), [r.text for r in responses]


def test_a_claim_and_an_answer_on_one_question_at_once_never_deadlock(pair):
    """The answer holds the question's row while the asker's own agent claims it: the new
    task points at that row, and the claim waits for nothing but its own user's row."""
    people = []
    for _ in range(6):
        x, y = Owner(pair), Owner(pair)
        people.append((x, x.agent(), x.ask(), y.agent()))
    for _ in range(ROUNDS):
        calls = []
        for x, x_agent, x_topic, y_agent in people:
            answering = y_agent.task(x_topic)
            calls += [lambda i=len(calls), a=y_agent, t=answering: a.submit(i, t),
                      lambda i=len(calls) + 1, a=x_agent, t=x_topic: a.claim(i, t)]
        responses = race(calls)
        assert codes(responses) == [(200, None)] * len(calls), [r.text for r in responses]
        for x, *_ in people:  # give the claimed leases back for the next round
            for task in x.web.get(pair.base(0) + "/api/external/manage", timeout=30, params={
                    "action": "tasks", "state": "leased"}).json()["tasks"]:
                assert x.cancel(0, task["id"]).ok


def test_a_claim_racing_a_revoke_leaves_no_lease_on_the_revoked_token(pair):
    """Authentication reads the token before the claim's transaction begins; a revoke that
    commits in between must still keep the claim from leasing on the revoked token."""
    asker, owner = Owner(pair), Owner(pair)
    topics = [asker.ask() for _ in range(3)]
    made = owner.new_agent().json()
    for round_ in range(3 * ROUNDS):
        agent = Agent(pair, made["token"], made["profileId"])
        responses = race([lambda i=i, t=t: agent.claim(round_ + i, t)
                          for i, t in enumerate(topics)]
                         + [lambda: owner.post(round_, "/api/external/manage", action="revoke",
                                               tokenId=made["tokenId"])])
        *claims, revoke = responses
        assert revoke.ok, revoke.text
        assert {(r.status_code, None if r.ok else r.json()["code"]) for r in claims} <= \
            {(200, None), (401, "unauthorized")}, [r.text for r in claims]
        assert pair.value("SELECT COUNT(*) FROM tasks WHERE token_id = %s AND state = 'leased'",
                          (made["tokenId"],)) == 0
        made = owner.post(round_, "/api/external/manage", action="rotate",
                          profile=made["profileId"]).json()


def test_submits_at_once_near_the_200_answer_cap_stop_at_200(pair):
    for _ in range(ROUNDS):
        asker = Owner(pair)
        topic = asker.ask()
        tasks = []
        for _ in range(2):  # six leases: three per user
            owner = Owner(pair)
            agents = [owner.agent() for _ in range(3)]
            tasks += [(a, a.task(topic)) for a in agents]
        # 198 answers stand already: seeding the counter the cap reads stands in for 198
        # earlier submits, which would take minutes over HTTP.
        with psycopg.connect(pair.url) as conn:
            conn.execute("UPDATE topics SET message_count = 198 WHERE id = %s", (topic,))
        responses = race([lambda i=i, a=a, t=t: a.submit(i, t)
                          for i, (a, t) in enumerate(tasks)])
        assert sum(r.ok for r in responses) == 2, codes(responses)
        refused = {(r.status_code, r.json()["code"]) for r in responses if not r.ok}
        assert len(refused) == 1 and next(iter(refused))[0] == 409, refused
        assert pair.value("SELECT message_count FROM topics WHERE id = %s", (topic,)) == 200
        assert pair.value("SELECT COUNT(*) FROM messages WHERE topic_id = %s", (topic,)) == 2
        assert pair.value("SELECT COUNT(*) FROM tasks WHERE topic_id = %s AND state = 'done'",
                          (topic,)) == 2


@pytest.fixture
def pair_with_real_token_limit(request, tmp_path_factory, redis_server):  # noqa: F811
    running = start_pair(request, tmp_path_factory, redis_server, {
        "LOBBYTALKS_RATE_MANAGE": GENEROUS, "LOBBYTALKS_RATE_REGISTER": GENEROUS})
    yield running
    running.stop()


def test_the_token_limit_of_120_a_minute_is_counted_over_both_processes(
        pair_with_real_token_limit):
    pair = pair_with_real_token_limit
    agent = Owner(pair).agent()
    responses = race([lambda i=i: agent.get(i, action="list_topics") for i in range(130)])
    by_process = [sum(r.ok for r in responses[i::2]) for i in (0, 1)]
    assert sum(by_process) == 120, codes(responses)
    assert min(by_process) > 0  # both processes served a share of the one budget
    refused = [r for r in responses if not r.ok]
    assert {(r.status_code, r.json()["code"]) for r in refused} == {(429, "rate_limited")}
    assert all(int(r.headers["Retry-After"]) >= 1 for r in refused)
    assert pair.value("SELECT COUNT(*) FROM tokens") == 1


# --- in-process apps on the same PostgreSQL: the mailer and a lock race that still happens ---

@pytest.fixture
def pg_settings(request, tmp_path):
    from conftest import settings_for
    data_dir = tmp_path / "app"
    return settings_for(data_dir, database_url=database_url(request, data_dir))


def test_two_mailers_on_one_database_send_each_mail_once(pg_settings, smtp):
    from conftest import contributor, joined_person
    from qa_helpers import answer

    from lobbytalks import create_app
    from lobbytalks.db import open_database
    from lobbytalks.mailer import Mailer

    settings = pg_settings.with_overrides(smtp_host="127.0.0.1", smtp_port=smtp.port,
                                          smtp_security="none")
    app = create_app(settings)
    app.config["LOBBYTALKS"].mailer.stop()  # the two below do the sending
    asker = joined_person(app)
    asker.mail_to("asker@example.org")
    answer(contributor(app)[1], asker.ask(title="两个发信进程"))
    with psycopg.connect(pg_settings.database_url) as conn:  # 40 mails due at once
        conn.execute("INSERT INTO mail_outbox (notification_id, next_attempt, created) "
                     "SELECT n.id, 0, 0 FROM notifications n, generate_series(1, 39)")
        assert conn.execute("SELECT COUNT(*) FROM mail_outbox").fetchone()[0] == 40
    databases = [open_database(settings) for _ in range(2)]
    mailers = [Mailer(settings, database, app.config["LOBBYTALKS"].keyring)
               for database in databases]
    try:
        for _ in range(4):  # up to 20 a batch each; until the outbox is empty
            race([lambda m=m: m.drain() for m in mailers])
    finally:
        for database in databases:
            database.close()
    # the 40 notifications and the address's confirmation code, each once
    subjects = [email.message_from_bytes(e.content, policy=policy.default)["Subject"]
                for e in smtp.envelopes]
    assert len(subjects) == 41 == sum(m.sent for m in mailers)
    assert sum("邮箱确认码" in s for s in subjects) == 1
    assert all(m.sent for m in mailers)  # both took part
    assert pair_value(pg_settings, "SELECT COUNT(*) FROM mail_outbox") == 0


def pair_value(settings, sql: str, params: Any = ()) -> Any:
    with psycopg.connect(settings.database_url) as conn:
        return conn.execute(sql, params).fetchone()[0]


def test_a_deadlock_that_still_happens_answers_503_and_writes_nothing(pg_settings):
    from conftest import contributor, joined_person

    from lobbytalks import create_app

    app = create_app(pg_settings)
    topic = joined_person(app).ask(title="死锁")
    owner, agent = contributor(app)
    task = agent.claim(topic).get_json()["task"]["id"]
    user = pair_value(pg_settings, "SELECT user_id FROM tasks WHERE id = %s", (task,))
    answered: list[Any] = []
    with psycopg.connect(pg_settings.database_url) as other:
        # Another transaction takes the task, then the submit waits for it holding the
        # user and topic, then the other one asks for the user: a circle PostgreSQL breaks
        # by rolling back the submit, which waited first.
        other.execute("SELECT 1 FROM tasks WHERE id = %s FOR UPDATE", (task,))
        submitting = threading.Thread(target=lambda: answered.append(agent.post(
            "submit_result", taskId=task, **good_result())))
        submitting.start()
        wait_for_a_lock_wait(pg_settings)
        other.execute("SELECT 1 FROM users WHERE id = %s FOR UPDATE", (user,))
        other.commit()
        submitting.join(30)
    [response] = answered
    assert response.status_code == 503
    assert response.get_json()["code"] == "service_unavailable"
    assert response.headers["Retry-After"] == "1"
    assert pair_value(pg_settings, "SELECT COUNT(*) FROM messages WHERE task_id = %s", (task,)) == 0
    assert pair_value(pg_settings, "SELECT state FROM tasks WHERE id = %s", (task,)) == "leased"
    again = agent.post("submit_result", taskId=task, **good_result())  # trying again works
    assert again.status_code == 200, again.get_json()
    assert pair_value(pg_settings, "SELECT COUNT(*) FROM messages WHERE task_id = %s", (task,)) == 1


def wait_for_a_lock_wait(settings) -> None:
    with psycopg.connect(settings.database_url, autocommit=True) as watcher:
        for _ in range(200):
            if watcher.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = "
                               "current_database() AND wait_event_type = 'Lock'").fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("the submit never waited for the task's lock")
