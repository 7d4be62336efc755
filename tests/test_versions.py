"""Question intents and versions: a revision makes a new version, earlier ones stay, and
every surface and task says which version it is about."""
from __future__ import annotations

import uuid

import pytest
from conftest import Person, ask_question, contributor, count, joined_person
from helpers import assert_web_error
from qa_helpers import answer, claim_ok, revise, submit_ok

QUESTION_KEYS = {"originalTitle", "intent", "version", "publicContext", "privateContextIncluded"}


def topic_row(db, topic_id):
    return db.one("SELECT intent, original_title, title, description, version FROM topics"
                      " WHERE id = :id", {"id": topic_id})


def version_rows(db, topic_id):
    return db.all("SELECT version, title, public_context, note FROM question_versions"
                      " WHERE topic_id = :topic_id ORDER BY version", {"topic_id": topic_id})


def test_a_question_starts_at_version_one_with_its_intent(app, db):
    person, topic = ask_question(app, title="选 SQLite 还是 PostgreSQL？", description="小团队内部工具",
                          intent="decision", originalTitle="数据库怎么选")
    view = person.web_get(topic=topic).get_json()["topic"]
    assert (view["intent"], view["originalTitle"], view["questionVersion"]) == \
        ("decision", "数据库怎么选", 1)
    assert tuple(topic_row(db, topic)) == ("decision", "数据库怎么选", "选 SQLite 还是 PostgreSQL？",
                                           "小团队内部工具", 1)
    assert [tuple(r) for r in version_rows(db, topic)] == \
        [(1, "选 SQLite 还是 PostgreSQL？", "小团队内部工具", "")]


def test_intent_defaults_to_how_and_original_title_to_the_title(app, db):
    person, topic = ask_question(app, title="怎样备份 SQLite？")
    row = topic_row(db, topic)
    assert (row["intent"], row["original_title"]) == ("how", "怎样备份 SQLite？")


@pytest.mark.parametrize("fields", [{"intent": "poll"}, {"originalTitle": ""},
                                    {"originalTitle": "x" * 181}, {"privateContext": "p" * 2001}])
def test_invalid_question_fields_are_refused(app, db, fields):
    person = joined_person(app)
    assert_web_error(person.web_post("topic", title="一个问题", **fields), 400)
    assert count(db, "topics") == 0


def test_a_revision_makes_a_new_version_and_keeps_the_earlier_ones(app, db):
    person, topic = ask_question(app, title="怎样备份 SQLite？", description="单机部署", intent="how")
    assert revise(person, topic, title="怎样在线备份 SQLite？", description="单机部署，7x24 运行",
                  note="补充：不能停机") == 2
    assert revise(person, topic, privateContext="数据库 40 GB，在 NFS 上", note="补充私密条件") == 3

    assert [tuple(r) for r in version_rows(db, topic)] == [
        (1, "怎样备份 SQLite？", "单机部署", ""),
        (2, "怎样在线备份 SQLite？", "单机部署，7x24 运行", "补充：不能停机"),
        (3, "怎样在线备份 SQLite？", "单机部署，7x24 运行", "补充私密条件"),
    ]
    row = topic_row(db, topic)
    assert (row["title"], row["description"], row["version"], row["original_title"]) == \
        ("怎样在线备份 SQLite？", "单机部署，7x24 运行", 3, "怎样备份 SQLite？")

    anonymous = Person(app).web_get(topic=topic).get_json()
    assert anonymous["topic"]["questionVersion"] == 3
    assert [(v["version"], v["title"], v["publicContext"], v["hasPrivateContext"])
            for v in anonymous["versions"]] == [
        (1, "怎样备份 SQLite？", "单机部署", False),
        (2, "怎样在线备份 SQLite？", "单机部署，7x24 运行", False),
        (3, "怎样在线备份 SQLite？", "单机部署，7x24 运行", True),
    ]


@pytest.mark.parametrize("case, status", [
    ("anonymous", 401), ("someone else", 403), ("unknown topic", 404),
    ("nothing changes", 400), ("closed question", 409), ("title too long", 400)])
def test_revision_rules(app, db, case, status):
    person, topic = ask_question(app)
    fields = {"topic": topic, "description": "新的条件"}
    if case == "anonymous":
        person = Person(app)
    elif case == "someone else":
        person = joined_person(app)
    elif case == "unknown topic":
        fields["topic"] = "t_doesnotexist"
    elif case == "nothing changes":
        fields = {"topic": topic, "note": "只是备注"}
    elif case == "closed question":
        assert person.web_post("close", topic=topic).status_code == 200
    elif case == "title too long":
        fields["title"] = "长" * 181
    assert_web_error(person.web_post("revise", **fields), status)
    assert topic_row(db, topic)["version"] == 1
    assert count(db, "question_versions", "topic_id = :topic_id", {"topic_id": topic}) == 1


def test_every_surface_carries_the_question_version(app):
    person, topic = ask_question(app, intent="forecast")
    revise(person, topic, description="加上 2027 年的条件")
    agent = person.new_agent()

    listed = agent.get("list_topics").get_json()["topics"]
    assert [(t["id"], t["questionVersion"], t["intent"]) for t in listed] == [(topic, 2, "forecast")]
    web_list = Person(app).web_get(community="lobby").get_json()["topics"]
    assert [(t["id"], t["questionVersion"], t["intent"]) for t in web_list] == \
        [(topic, 2, "forecast")]
    assert Person(app).web_get(topic=topic).get_json()["topic"]["questionVersion"] == 2

    context = agent.get("get_context", topic=topic).get_json()
    assert context["topic"]["questionVersion"] == 2
    assert context["topic"]["description"] == "加上 2027 年的条件"
    assert context["question"]["version"] == 2

    claimed = claim_ok(agent, topic)
    assert claimed["task"]["questionVersion"] == 2
    assert claimed["context"]["question"]["version"] == 2
    status = agent.get("get_task_status", taskId=claimed["task"]["id"]).get_json()["task"]
    assert status["questionVersion"] == 2


def test_get_context_returns_the_contract_question_object(app):
    person, topic = ask_question(app, title="明年会降息吗？", description="只看中国", intent="forecast",
                          originalTitle="降息", privateContext="我有一笔浮动利率贷款")
    _, outsider = contributor(app)
    question = outsider.get("get_context", topic=topic).get_json()["question"]
    assert question == {"originalTitle": "降息", "intent": "forecast", "version": 1,
                        "publicContext": "只看中国", "privateContextIncluded": False}

    own = person.new_agent().get("get_context", topic=topic).get_json()["question"]
    assert set(own) == QUESTION_KEYS | {"privateContext"}
    assert own["privateContextIncluded"] is True
    assert own["privateContext"] == "我有一笔浮动利率贷款"


def test_a_submission_belongs_to_the_version_it_was_claimed_on(app, db):
    person, topic = ask_question(app)
    _, agent = contributor(app)
    task = claim_ok(agent, topic)["task"]
    assert task["questionVersion"] == 1
    revise(person, topic, description="条件变了")

    message_id = submit_ok(agent, task["id"])["messageId"]
    assert db.value("SELECT question_version FROM messages WHERE id = :id",
                      {"id": message_id}) == 1
    assert db.value("SELECT question_version FROM tasks WHERE id = :id",
                      {"id": task["id"]}) == 1
    shown = person.web_get(topic=topic).get_json()["messages"]
    assert [(m["id"], m["questionVersion"]) for m in shown] == [(message_id, 1)]

    later = claim_ok(agent, topic)["task"]
    assert later["questionVersion"] == 2
    assert submit_ok(agent, later["id"])["task"]["questionVersion"] == 2


def test_a_replayed_claim_keeps_its_version_and_frozen_messages(app):
    person, topic = ask_question(app, title="第一版标题", description="第一版背景")
    _, first = contributor(app)
    early = answer(first, topic)
    own_agent = person.new_agent()
    request_id = str(uuid.uuid4())
    claimed = claim_ok(own_agent, topic, request_id=request_id)
    assert [m["id"] for m in claimed["context"]["messages"]] == [early]

    _, second = contributor(app)
    late = answer(second, topic)
    revise(person, topic, title="第二版标题", description="第二版背景")

    replay = claim_ok(own_agent, topic, request_id=request_id)
    assert replay["replayed"] is True
    assert replay["task"] == claimed["task"]
    assert replay["context"]["topic"]["title"] == "第一版标题"
    assert replay["context"]["topic"]["questionVersion"] == 1
    assert replay["context"]["question"]["publicContext"] == "第一版背景"
    assert [m["id"] for m in replay["context"]["messages"]] == [early]

    live = own_agent.get("get_context", topic=topic).get_json()
    assert live["topic"]["title"] == "第二版标题"
    assert live["question"]["version"] == 2
    assert [m["id"] for m in live["messages"]] == [early, late]


def test_the_version_history_shows_each_public_context_formatted(app):
    """The current background was rendered, the earlier ones showed their raw Markdown, and
    the list's own numbers ("1. Version 2") clashed with the versions'."""
    asker = joined_person(app)
    topic = asker.ask("版本的格式", description="用 **Synology** 加 `rsync`\n\n> 够不够？")
    assert asker.web_post("revise", topic=topic, description="换成 *restic*").status_code == 200
    page = asker.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    history = page[page.index('class="panel versions"'):].split("</details>")[0]
    assert "<strong>Synology</strong>" in history and "<code>rsync</code>" in history
    assert "<blockquote>" in history and "**Synology**" not in history
    assert "<ol" not in history and 'class="version-list"' in history
