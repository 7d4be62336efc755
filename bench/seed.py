"""Seed a fresh LobbyTalks database for the benchmark: 10,000 questions, 100,000 messages.

Rows are written directly with ``executemany`` in one transaction on the real schema
(migrated by ``lobbytalks.db.migrate``), because going through the API would take hours.
That makes this module responsible for the invariants the app keeps itself:

* ``topics.message_count`` equals the number of messages of the topic, and no open topic
  is at the 200-message cap;
* every topic has its ``question_versions`` row for version 1 (title and public context
  mirrored on the topic); some carry private context sealed with the data folder's key;
* every message comes from a ``done`` task of the same user, agent profile and token,
  written by a member of the topic's community, on question version 1;
* every message told its question's asker: an ``answer`` notification, read unless recent;
* ids come from ``lobbytalks.security.new_id``; token digests are ``sha256_hex(token)``.

The bench users (``bench1`` … ``benchN``, one agent and one live token each) are what
``bench/run.py`` authenticates as. Their tokens and the topics the run needs are written
to ``bench.json`` in the data folder: a benchmark database is throwaway and holds nothing
worth protecting.

Usage: ``python -m bench.seed DATA_DIR [--questions N] [--messages N] [--bench-users N]``
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/seed.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lobbytalks import crypto, keystore  # noqa: E402
from lobbytalks.db import connect, migrate  # noqa: E402
from lobbytalks.passwords import hash_password  # noqa: E402
from lobbytalks.services import search  # noqa: E402
from lobbytalks.security import new_agent_token, new_id, sha256_hex  # noqa: E402

MANIFEST = "bench.json"
BENCH_PASSWORD = "bench password 1"  # every seeded account's; the bench logs its users in
DAY = 86400
ISLANDS = ("commons", "tech", "science", "life", "society")
INTENTS = ("how", "decision", "fact", "forecast", "debate")
CLIENTS = ("codex", "claude-code", "deepseek-harness", "custom")
MESSAGE_CAP = 200                # the app refuses claims and submissions at 200 messages
HOT_MESSAGES = 150               # the two topics get_context is measured on
ACTIVE_MEMORIES = 20             # get_context returns at most 20 confirmed memories
PENDING_MEMORIES = 5
BENCH_QUESTIONS = 10             # asked by each bench user, so their inbox has answers to show
BENCH_QUESTION_ANSWERS = 8
UNREAD_SECONDS = 2 * DAY         # notifications of answers newer than this are still unread

# Phrases recombined into question and answer text, so rows have realistic sizes and mixed
# Chinese/ASCII content without shipping a corpus.
PHRASES = (
    "在两核的小服务器上部署", "SQLite 的 WAL 模式", "读多写少的社区站点", "用 waitress 跑 Flask",
    "每天大约一千个请求", "备份要能在线完成", "预算有限但希望稳定", "需要考虑升级路径",
    "团队只有两个人维护", "数据量预计一年十万条", "对延迟不太敏感", "希望避免引入 Redis",
    "how to keep p99 latency low", "with a single writer", "under a reverse proxy",
    "when the disk is slow", "for a self-hosted install", "without a background worker",
    "索引覆盖了最常见的查询", "先测量再优化", "按时间倒序分页", "租约三十分钟可续期",
    "官方文档建议", "社区经验表明", "实际测试中", "如果只看吞吐量", "考虑到安全性",
)
SOURCES = (
    ("SQLite Write-Ahead Logging", "https://www.sqlite.org/wal.html"),
    ("Query Planning", "https://www.sqlite.org/queryplanner.html"),
    ("Waitress documentation", "https://docs.pylonsproject.org/projects/waitress/en/stable/"),
    ("Flask deployment options", "https://flask.palletsprojects.com/en/stable/deploying/"),
    ("SQLite", "https://en.wikipedia.org/wiki/SQLite"),
    ("Little's law", "https://en.wikipedia.org/wiki/Little%27s_law"),
)


@dataclass
class BenchAgent:
    username: str
    user_id: int
    profile_id: str
    token_id: str
    token: str


@dataclass
class Manifest:
    """What the benchmark needs to know about a seeded database."""
    questions: int
    messages: int
    agents: list[BenchAgent] = field(default_factory=list)
    hot_read: str = ""     # HOT_MESSAGES messages, one from each bench user: allowed=true
    hot_noread: str = ""   # HOT_MESSAGES messages, none from bench users: allowed=false

    def save(self, data_dir: Path) -> None:
        (data_dir / MANIFEST).write_text(json.dumps(asdict(self), indent=1), "utf-8")

    @classmethod
    def load(cls, data_dir: Path) -> "Manifest":
        raw = json.loads((data_dir / MANIFEST).read_text("utf-8"))
        raw["agents"] = [BenchAgent(**a) for a in raw["agents"]]
        return cls(**raw)


class Seeder:
    """Generates the rows and writes them in batches, so memory stays small."""

    BATCH = 5_000

    def __init__(self, conn, rng: random.Random, now: int, keyring: crypto.Keyring) -> None:
        self.conn = conn
        self.rng = rng
        self.now = now
        self.keyring = keyring
        # Slicing one long string is ~50x faster than joining phrases for each of ~600k texts.
        self.corpus = "，".join(rng.choice(PHRASES) for _ in range(20_000))
        self.rows: dict[str, list[tuple]] = {name: [] for name in INSERTS}
        # user -> [(profile id, token id, agent name, client)]
        self.profiles_of: dict[int, list[tuple[str, str, str, str]]] = {}
        self.members_of: dict[str, list[int]] = {}
        self.asker_of: dict[str, int] = {}  # topic -> its author, told of every answer

    def add(self, table: str, *rows: tuple) -> None:
        self.rows[table].extend(rows)
        if len(self.rows[table]) >= self.BATCH:
            self.flush(table)

    def flush(self, *tables: str) -> None:
        for table in tables or tuple(self.rows):
            self.conn.executemany(INSERTS[table], self.rows[table])
            self.rows[table].clear()

    # --- text -----------------------------------------------------------------------------

    def text(self, low: int, high: int) -> str:
        """A random stretch of the phrase corpus, between low and high characters long."""
        length = self.rng.randint(low, high)
        start = self.rng.randrange(len(self.corpus) - high)
        return self.corpus[start:start + length]

    def iso(self, when: int) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))

    # --- people ---------------------------------------------------------------------------

    def users(self, count: int, password_hash: str) -> list[int]:
        ids = list(range(1, count + 1))
        for user_id in ids:
            self.add("users", (user_id, f"user{user_id}", password_hash, 0,
                                       self.now - self.rng.randint(30, 400) * DAY))
        return ids

    def agents(self, user_id: int, count: int, *, prefix: str = "") -> None:
        for index in range(count):
            created = self.now - self.rng.randint(1, 29) * DAY
            profile_id = new_id("agt")
            name = f"{prefix or 'shrimp'}{user_id}-{index}"[:24]
            client = self.rng.choice(CLIENTS)
            self.add("profiles", (profile_id, user_id, "external", name,
                                          self.text(20, 120), client, self.rng.randint(0, 3),
                                          1, created))
            if self.rng.random() < 0.05:  # an older, revoked token, as after a rotation
                self.token(profile_id, user_id, created - DAY, revoked=1)
            token_id, _ = self.token(profile_id, user_id, created)
            self.profiles_of.setdefault(user_id, []).append((profile_id, token_id, name, client))

    def token(self, profile_id: str, user_id: int, created: int, *, revoked: int = 0,
              token: str | None = None) -> tuple[str, str]:
        token = token or new_agent_token()
        token_id = new_id("tok")
        self.add("tokens", (token_id, profile_id, user_id, sha256_hex(token), token[-4:],
                                    created, created + 30 * DAY, revoked, None))
        return token_id, token

    def communities(self, user_ids: list[int], count: int) -> list[str]:
        self.members_of["lobby"] = list(user_ids)  # everyone is in the default community
        self.add("memberships", *[("lobby", u, self.now - 30 * DAY) for u in user_ids])
        ids = []
        for owner in self.rng.sample(user_ids, count):
            community_id = new_id("c")
            created = self.now - self.rng.randint(30, 300) * DAY
            self.add("communities", (community_id, self.text(4, 20), self.text(20, 200),
                                             owner, created))
            members = {owner, *self.rng.sample(user_ids, self.rng.randint(20, 400))}
            self.members_of[community_id] = sorted(members)
            self.add("memberships", *[(community_id, u, created) for u in sorted(members)])
            ids.append(community_id)
        return ids

    # --- questions and answers -----------------------------------------------------------

    def topic(self, community: str, message_count: int, *, open_: bool = True,
              private: bool = False, author: int | None = None) -> tuple[str, int]:
        topic_id = new_id("t")
        created = self.now - self.rng.randint(3600, 60 * DAY)
        author = author or self.rng.choice(self.members_of[community])
        self.asker_of[topic_id] = author
        title = self.text(8, 60)
        description = self.text(40, 600)
        closed = None if open_ else created + self.rng.randint(DAY, 5 * DAY)
        self.add("topics", (
            topic_id, community, self.rng.choice(ISLANDS), author, "discussion",
            self.rng.choice(INTENTS), title, title, description, "open" if open_ else "closed",
            1, message_count, created, closed or created, closed, author if closed else None))
        key_id, sealed = None, None
        if private:
            key_id, sealed = self.keyring.encrypt(self.text(40, 400), topic_id=topic_id, version=1)
        self.add("question_versions", (topic_id, 1, title, description, key_id, sealed,
                                               "", created))
        return topic_id, created

    def message(self, topic_id: str, topic_created: int, user_id: int) -> None:
        profile_id, token_id, name, client = self.rng.choice(self.profiles_of[user_id])
        created = min(self.now - 1, topic_created + self.rng.randint(60, 3 * DAY))
        claimed = created - self.rng.randint(30, 1500)
        task_id, message_id = new_id("task"), new_id("msg")
        evidence = [{
            "title": title, "url": url, "excerpt": self.text(40, 200),
            "retrievedAt": self.iso(claimed + 10), "kind": "snippet",
        } for title, url in self.rng.sample(SOURCES, self.rng.randint(0, 2))]
        cite = "[S1] " if evidence else ""
        conclusion = (cite + self.text(30, 190))[:200]
        reasoning = self.text(30, 300)
        conditions = [self.text(10, 120) for _ in range(self.rng.randint(0, 2))]
        uncertainties = [self.text(10, 120) for _ in range(self.rng.randint(0, 2))]
        result_hash = hashlib.sha256(f"{task_id}{conclusion}".encode()).hexdigest()
        request_id = str(uuid.UUID(int=self.rng.getrandbits(128)))
        self.add("tasks", (
            task_id, user_id, profile_id, token_id, topic_id, request_id, None, "done", claimed,
            created, claimed + 1800, message_id, None, 1, 0, "[]", result_hash))
        self.add("messages", (
            message_id, topic_id, user_id, profile_id, task_id, None, name, client, conclusion,
            reasoning, json.dumps(uncertainties, ensure_ascii=False),
            json.dumps(conditions, ensure_ascii=False), json.dumps(evidence, ensure_ascii=False),
            "[]", "external-self-reported", 1, int(self.rng.random() < 0.3), created))
        read_at = None if created > self.now - UNREAD_SECONDS else created + self.rng.randint(60, DAY)
        self.add("notifications", (self.asker_of[topic_id], "answer", topic_id, message_id,
                                   task_id, created, read_at))

    def memory(self, user_id: int, profile_id: str, state: str) -> None:
        created = self.now - self.rng.randint(60, 20 * DAY)
        self.add("memories", (new_id("mem"), user_id, profile_id, None,
                                      f"《{self.text(8, 40)}》：{self.text(30, 180)}", state,
                                      created, created))


def message_counts(rng: random.Random, topics: int, messages: int) -> list[int]:
    """A skewed split of ``messages`` over ``topics``: most questions get a handful of
    answers, a few get well over a hundred; none reaches the cap."""
    weights = [rng.paretovariate(1.3) for _ in range(topics)]
    scale = messages / sum(weights)
    counts = [min(MESSAGE_CAP - 20, int(w * scale)) for w in weights]
    missing, index = messages - sum(counts), 0
    while missing > 0:  # hand out the rounding remainder, respecting the cap
        if counts[index % topics] < MESSAGE_CAP - 20:
            counts[index % topics] += 1
            missing -= 1
        index += 1
    return counts


INSERTS = {
    "users": "INSERT INTO users (id, username, password_hash, is_admin, created)"
             " VALUES (?,?,?,?,?)",
    "communities": "INSERT INTO communities (id, name, description, owner_id, created)"
                   " VALUES (?,?,?,?,?)",
    "memberships": "INSERT INTO memberships (community_id, user_id, created) VALUES (?,?,?)",
    "profiles": "INSERT INTO profiles (id, user_id, kind, name, perspective, client, role,"
                " memory_enabled, created) VALUES (?,?,?,?,?,?,?,?,?)",
    "tokens": "INSERT INTO tokens (id, profile_id, user_id, digest, last4, created, expires,"
              " revoked, last_used) VALUES (?,?,?,?,?,?,?,?,?)",
    "topics": "INSERT INTO topics (id, community_id, island_id, author_id, kind, intent,"
              " original_title, title, description, status, version, message_count, created,"
              " updated, closed_at, closed_by) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "question_versions": "INSERT INTO question_versions (topic_id, version, title,"
                         " public_context, private_key_id, private_context, note, created)"
                         " VALUES (?,?,?,?,?,?,?,?)",
    "tasks": "INSERT INTO tasks (id, user_id, profile_id, token_id, topic_id, request_id, reply_to,"
             " state, created, updated, expires, message_id, error, question_version,"
             " private_included, frozen_messages, result_hash)"
             " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "messages": "INSERT INTO messages (id, topic_id, user_id, profile_id, task_id, reply_to, name,"
                " model, text, reasoning_summary, uncertainties, conditions, sources, tool_runs,"
                " provenance, question_version, share_public, created)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "notifications": "INSERT INTO notifications (user_id, kind, topic_id, message_id, task_id,"
                     " created, read_at) VALUES (?,?,?,?,?,?,?)",
    "memories": "INSERT INTO memories (id, user_id, profile_id, message_id, text, state, created,"
                " updated) VALUES (?,?,?,?,?,?,?,?)",
}


def seed(data_dir: Path, *, questions: int = 10_000, messages: int = 100_000,
         users: int = 3_000, communities: int = 40, bench_users: int = 8,
         rng_seed: int = 1) -> Manifest:
    """Create ``data_dir/lobbytalks.db`` (must not exist) and its key, and fill them."""
    data_dir.mkdir(parents=True, exist_ok=True)
    db_path = data_dir / "lobbytalks.db"
    if db_path.exists():
        raise FileExistsError(f"{db_path} exists; seed a fresh folder")
    now = int(time.time())
    keyring = keystore.load_keyring(env_value="", key_path=data_dir / "secret.key", create=True)
    conn = connect(db_path)
    try:
        migrate(conn, now)
        # A throwaway database, rebuilt from scratch on any failure: no journal, no fsync and
        # a big page cache make the bulk insert several times faster. WAL comes back after.
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -262144")
        conn.execute("PRAGMA foreign_keys = OFF")  # checked in one pass by check() instead
        conn.execute("BEGIN IMMEDIATE")
        seeder = Seeder(conn, random.Random(rng_seed), now, keyring)
        manifest = fill(seeder, questions, messages, users, communities, bench_users)
        seeder.flush()
        # What the app keeps with every message, question and membership: the newest
        # answer's time, each community's counts, and the search index.
        conn.execute("UPDATE topics SET last_answer_at = COALESCE((SELECT MAX(m.created) "
                     "FROM messages m WHERE m.topic_id = topics.id), 0)")
        conn.execute(COMMUNITY_COUNTS)
        search.index_missing(conn)
        conn.execute("COMMIT")
        check(conn, questions, messages)
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
    manifest.save(data_dir)
    return manifest


def fill(s: Seeder, questions: int, messages: int, users: int, communities: int,
         bench_users: int) -> Manifest:
    rng, now = s.rng, s.now
    # One real password hash shared by every account; the bench users log in for the pages.
    password = hash_password(BENCH_PASSWORD)
    user_ids = s.users(users, password)
    for user_id in user_ids:
        s.agents(user_id, rng.choice((1, 1, 2, 2, 3)))
    community_ids = s.communities(user_ids, communities)

    # Bench users: ordinary members of the default community, one agent and token each.
    manifest = Manifest(questions=questions, messages=messages)
    for index in range(1, bench_users + 1):
        user_id = users + index
        s.add("users", (user_id, f"bench{index}", password, 0, now - 60 * DAY))
        # A member, but never picked as an author below: the bench users' reading rights
        # must be exactly the ones chosen here.
        s.add("memberships", ("lobby", user_id, now - 60 * DAY))
        profile_id = new_id("agt")
        s.add("profiles", (profile_id, user_id, "external", f"bench{index}", "benchmark agent",
                           "custom", 0, 1, now - 2 * DAY))
        token_id, token = s.token(profile_id, user_id, now - DAY)
        s.profiles_of[user_id] = [(profile_id, token_id, f"bench{index}", "custom")]
        manifest.agents.append(BenchAgent(f"bench{index}", user_id, profile_id, token_id, token))
        for _ in range(ACTIVE_MEMORIES):
            s.memory(user_id, profile_id, "active")
        for _ in range(PENDING_MEMORIES):
            s.memory(user_id, profile_id, "pending")

    # Two hot topics in the default community with private context: one where every
    # bench user has an answer (full-text right), one where none has.
    bench_ids = [a.user_id for a in manifest.agents]
    manifest.hot_read, hot_read_created = s.topic("lobby", HOT_MESSAGES, private=True)
    manifest.hot_noread, hot_noread_created = s.topic("lobby", HOT_MESSAGES, private=True)
    for index in range(HOT_MESSAGES):
        s.message(manifest.hot_read, hot_read_created,
                  bench_ids[index] if index < len(bench_ids) else rng.choice(user_ids))
        s.message(manifest.hot_noread, hot_noread_created, rng.choice(user_ids))

    # The bench users' own questions in the default community, answered by others: what
    # their inbox shows. (No bench user claims them: see bench/run.py claimable_topics.)
    for user_id in bench_ids:
        for _ in range(BENCH_QUESTIONS):
            topic_id, created = s.topic("lobby", BENCH_QUESTION_ANSWERS, author=user_id)
            for _ in range(BENCH_QUESTION_ANSWERS):
                s.message(topic_id, created, rng.choice(user_ids))
    bench_questions = len(bench_ids) * BENCH_QUESTIONS

    # The rest: 60% in the default community, 90% open, 15% with private context.
    for count in message_counts(rng, questions - 2 - bench_questions,
                                messages - 2 * HOT_MESSAGES
                                - bench_questions * BENCH_QUESTION_ANSWERS):
        community = "lobby" if rng.random() < 0.6 else rng.choice(community_ids)
        topic_id, created = s.topic(community, count, open_=rng.random() < 0.9,
                                    private=rng.random() < 0.15)
        members = s.members_of[community]
        for _ in range(count):
            s.message(topic_id, created, rng.choice(members))
    for user_id in rng.sample(user_ids, users // 3):
        for profile_id, *_ in s.profiles_of[user_id]:
            for _ in range(rng.randint(0, 6)):
                s.memory(user_id, profile_id, rng.choice(("active", "pending")))
    return manifest


# The invariants the app relies on, each as a query counting what breaks it.
COMMUNITY_COUNTS = ("UPDATE communities SET member_count = (SELECT COUNT(*) FROM memberships m"
                    " WHERE m.community_id = communities.id), topic_count = (SELECT COUNT(*)"
                    " FROM topics t WHERE t.community_id = communities.id)")
INVARIANTS = {
    "community counts": "SELECT COUNT(*) FROM communities c WHERE member_count != (SELECT"
                        " COUNT(*) FROM memberships m WHERE m.community_id = c.id) OR topic_count"
                        " != (SELECT COUNT(*) FROM topics t WHERE t.community_id = c.id)",
    "topic count": "SELECT (SELECT COUNT(*) FROM topics) != :questions",
    "message count": "SELECT (SELECT COUNT(*) FROM messages) != :messages",
    "message_count column": "SELECT COUNT(*) FROM topics t WHERE message_count !="
                            " (SELECT COUNT(*) FROM messages m WHERE m.topic_id = t.id)",
    "topic at cap": "SELECT COUNT(*) FROM topics WHERE message_count >= 200",
    "version rows": "SELECT COUNT(*) FROM topics t LEFT JOIN question_versions v"
                    " ON v.topic_id = t.id AND v.version = t.version WHERE v.topic_id IS NULL",
    "message author": "SELECT COUNT(*) FROM messages m JOIN profiles p ON p.id = m.profile_id"
                      " JOIN tasks k ON k.id = m.task_id JOIN tokens o ON o.id = k.token_id"
                      " WHERE p.user_id != m.user_id OR k.user_id != m.user_id"
                      " OR k.profile_id != m.profile_id OR k.message_id != m.id"
                      " OR o.profile_id != m.profile_id",
    "author membership": "SELECT COUNT(*) FROM messages m JOIN topics t ON t.id = m.topic_id"
                         " WHERE NOT EXISTS (SELECT 1 FROM memberships b"
                         " WHERE b.community_id = t.community_id AND b.user_id = m.user_id)",
    "answer notifications": "SELECT COUNT(*) FROM messages m JOIN topics t ON t.id = m.topic_id"
                            " WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE"
                            " n.message_id = m.id AND n.kind = 'answer' AND n.user_id = t.author_id)",
    "agents per user": "SELECT COUNT(*) FROM (SELECT user_id FROM profiles GROUP BY user_id"
                       " HAVING COUNT(*) > 8)",
    "foreign keys": "SELECT COUNT(*) FROM pragma_foreign_key_check",
}


def check(conn, questions: int, messages: int) -> None:
    """:raise AssertionError: naming each broken invariant (this seeder is wrong)."""
    counts = {"questions": questions, "messages": messages}
    broken = [name for name, sql in INVARIANTS.items() if conn.execute(sql, counts).fetchone()[0]]
    if broken:
        raise AssertionError(f"seeded database breaks invariants: {', '.join(broken)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.seed",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("data_dir", type=Path, help="new data folder (lobbytalks.db, secret.key)")
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--bench-users", type=int, default=8,
                        help="users the benchmark drives, one per concurrent worker (default 8)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    manifest = seed(args.data_dir, questions=args.questions, messages=args.messages,
                    bench_users=args.bench_users)
    print(f"seeded {manifest.questions} questions, {manifest.messages} messages in "
          f"{time.perf_counter() - started:.1f} s into {args.data_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
