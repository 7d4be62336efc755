"""Answer cards: authors allow public use, the asker previews and publishes, anonymous
readers see only the published card, and withdrawing a permission hides it at once."""
from __future__ import annotations

import json

import pytest
from conftest import Person, ask_question, contributor, count, joined_person
from helpers import actions, assert_web_error
from qa_helpers import answer, revise

from lobbytalks import create_app

CARD_KEYS = {"id", "topic", "version", "intent", "state", "created", "published", "title",
             "sections", "messageIds"}
LINE_KEYS = {"text", "messageId", "agent", "conditions", "sources"}
EVIDENCE = [
    {"title": "来源甲", "url": "https://example.org/a", "excerpt": "甲的摘录",
     "retrievedAt": "2026-10-01T00:00:00Z", "kind": "page"},
    {"title": "来源乙", "url": "https://example.org/b", "excerpt": "乙的摘录",
     "retrievedAt": "2026-10-01T00:00:00Z", "kind": "page"},
]


def share(person, message, allowed=True):
    r = person.web_post("share", message=message, sharePublic=allowed)
    assert r.status_code == 200, r.get_json()
    assert r.get_json() == {"ok": True, "id": message, "sharePublic": allowed}


def card_rows(db, topic):
    return db.all("SELECT id, version, state, message_ids, published FROM answer_cards"
                      " WHERE topic_id = :topic_id ORDER BY created, id", {"topic_id": topic})


def public_card(app, topic):
    r = Person(app).web_get(action="card", topic=topic)
    assert r.status_code == 200, r.get_json()
    return r.get_json()["card"]


@pytest.fixture
def discussion(app):
    """A question with two answers from two authors; only the first is shared."""
    person, topic = ask_question(app, intent="decision", title="选 SQLite 还是 PostgreSQL？")
    first_author, first_agent = contributor(app, "甲虾")
    second_author, second_agent = contributor(app, "乙虾")
    shared = answer(first_agent, topic, conditions=["单机、写入不多"], evidence=EVIDENCE,
                    conclusion="单机且写入不多时选 SQLite [S1]，需要多机写入时再换 PostgreSQL [S2]。")
    private = answer(second_agent, topic,
                     conclusion="这条发言的作者没有许可公开使用，所以它不能进入答案卡的任何部分。")
    share(first_author, shared)
    return {"asker": person, "topic": topic, "shared": shared, "private": private,
            "first_author": first_author, "second_author": second_author}


# --- sharing -------------------------------------------------------------------------------

def test_only_the_author_may_allow_or_withdraw_public_use(app, db, discussion):
    message = discussion["private"]
    flag = lambda: db.value("SELECT share_public FROM messages WHERE id = :id",  # noqa: E731
                            {"id": message})
    assert flag() == 0  # off by default
    for someone, status in ((discussion["asker"], 403), (discussion["first_author"], 403),
                            (joined_person(app), 403), (Person(app), 401)):
        assert_web_error(someone.web_post("share", message=message, sharePublic=True), status)
    assert flag() == 0
    share(discussion["second_author"], message)
    assert flag() == 1
    share(discussion["second_author"], message, allowed=False)
    assert flag() == 0


@pytest.mark.parametrize("body, status", [
    ({"message": "msg_nothere", "sharePublic": True}, 404),
    ({"message": "bad id!", "sharePublic": True}, 400),
    ({"sharePublic": True}, 400),
    ({"message": "msg_x", "sharePublic": "yes"}, 400),
])
def test_share_input_errors(app, discussion, body, status):
    assert_web_error(discussion["second_author"].web_post("share", **body), status)


def test_the_shared_flag_shows_on_the_message(discussion):
    messages = discussion["asker"].web_get(topic=discussion["topic"]).get_json()["messages"]
    assert {m["id"]: m["sharePublic"] for m in messages} == \
        {discussion["shared"]: True, discussion["private"]: False}


# --- preview --------------------------------------------------------------------------------

def test_preview_builds_a_cited_draft_from_shared_messages_only(app, db, discussion):
    r = discussion["asker"].web_post("card_preview", topic=discussion["topic"])
    assert r.status_code == 200, r.get_json()
    card = r.get_json()["card"]
    assert set(card) == CARD_KEYS
    assert (card["topic"], card["version"], card["intent"], card["state"], card["published"]) == \
        (discussion["topic"], 1, "decision", "draft", None)
    assert card["title"] == "选 SQLite 还是 PostgreSQL？"
    assert card["messageIds"] == [discussion["shared"]]
    assert [s["key"] for s in card["sections"]] == ["choices", "support", "uncertainties"]
    choice = card["sections"][0]["lines"][0]
    assert set(choice) == LINE_KEYS
    assert choice["messageId"] == discussion["shared"] and choice["agent"] == "甲虾"
    assert choice["conditions"] == ["单机、写入不多"]
    assert choice["sources"] == [{"n": 1, "title": "来源甲", "url": "https://example.org/a"},
                                 {"n": 2, "title": "来源乙", "url": "https://example.org/b"}]
    assert "没有许可公开使用" not in json.dumps(card, ensure_ascii=False)

    rows = card_rows(db, discussion["topic"])
    assert [(r["id"], r["state"], json.loads(r["message_ids"])) for r in rows] == \
        [(card["id"], "draft", [discussion["shared"]])]


def test_a_new_preview_replaces_the_draft(app, db, discussion):
    first = discussion["asker"].web_post("card_preview", topic=discussion["topic"]).get_json()
    share(discussion["second_author"], discussion["private"])
    second = discussion["asker"].web_post("card_preview", topic=discussion["topic"]).get_json()
    assert second["card"]["id"] != first["card"]["id"]
    assert second["card"]["messageIds"] == [discussion["shared"], discussion["private"]]
    assert [(r["id"], r["state"]) for r in card_rows(db, discussion["topic"])] == \
        [(second["card"]["id"], "draft")]


def test_preview_without_shared_messages_is_a_clear_409(app, db):
    person, topic = ask_question(app)
    _, agent = contributor(app)
    answer(agent, topic)
    body = assert_web_error(person.web_post("card_preview", topic=topic), 409)
    assert "许可公开" in body["error"]
    assert count(db, "answer_cards") == 0


def test_answers_to_an_earlier_version_are_left_out(app, db, discussion):
    revise(discussion["asker"], discussion["topic"], description="新条件：要支持多机")
    assert_web_error(discussion["asker"].web_post("card_preview", topic=discussion["topic"]), 409)
    author, agent = contributor(app, "丙虾")
    newer = answer(agent, discussion["topic"])
    share(author, newer)
    card = discussion["asker"].web_post("card_preview", topic=discussion["topic"]).get_json()["card"]
    assert (card["version"], card["messageIds"]) == (2, [newer])


@pytest.mark.parametrize("who, status", [("member", 403), ("author", 403), ("anonymous", 401)])
def test_only_the_asker_previews(app, db, discussion, who, status):
    someone = {"member": joined_person(app), "author": discussion["first_author"],
               "anonymous": Person(app)}[who]
    assert_web_error(someone.web_post("card_preview", topic=discussion["topic"]), status)
    assert count(db, "answer_cards") == 0


def test_unknown_topic(app, discussion):
    assert_web_error(discussion["asker"].web_post("card_preview", topic="t_nothere"), 404)
    assert_web_error(Person(app).web_get(action="card", topic="t_nothere"), 404)
    assert_web_error(Person(app).web_get(action="card"), 400)


# --- grouping by intent ------------------------------------------------------------------------

@pytest.mark.parametrize("intent, main", [("how", "methods"), ("decision", "choices"),
                                          ("fact", "facts"), ("forecast", "forecasts"),
                                          ("debate", "positions")])
def test_sections_follow_the_intent(app, intent, main):
    person, topic = ask_question(app, intent=intent)
    author, agent = contributor(app)
    sourced = answer(agent, topic, conditions=["如果利率不变"],
                     uncertainties="只观察了一个季度的数据，样本可能不足以代表全年",
                     reasoningSummary="两个来源的数据一致 [S1]，且与历史走势相符。")
    unsourced = answer(agent, topic, evidence=[], toolRuns=None, uncertainties=None,
                       reasoningSummary="这是基于常识的推理：两个前提都成立时结论成立，无需外部来源。",
                       conclusion="没有外部来源时，这条判断只靠推理成立，读者需要自己复核前提是否成立。")
    share(author, sourced)
    share(author, unsourced)
    card = person.web_post("card_preview", topic=topic).get_json()["card"]
    sections = {s["key"]: s for s in card["sections"]}
    if intent == "fact":  # a fact line always shows where it comes from
        assert list(sections) == ["facts", "unsourced", "support", "uncertainties"]
        assert [line["messageId"] for line in sections["facts"]["lines"]] == [sourced]
        assert [line["messageId"] for line in sections["unsourced"]["lines"]] == [unsourced]
    else:
        assert list(sections) == [main, "support", "uncertainties"]
        assert [line["messageId"] for line in sections[main]["lines"]] == [sourced, unsourced]
    first = sections[main]["lines"][0]
    assert first["conditions"] == ["如果利率不变"]
    assert first["sources"] == [{"n": 1, "title": "SQLite Online Backup API",
                                 "url": "https://www.sqlite.org/backup.html"}]
    support = sections["support"]["lines"]
    assert [(line["messageId"], bool(line["sources"])) for line in support] == \
        [(sourced, True), (unsourced, False)]
    assert [line["text"] for line in sections["uncertainties"]["lines"]] == \
        ["只观察了一个季度的数据，样本可能不足以代表全年"]
    assert all(line["agent"] == "查证虾" for s in card["sections"] for line in s["lines"])
    assert all(s["heading"] for s in card["sections"])


def test_the_same_messages_give_the_same_card(app, discussion):
    topic = discussion["topic"]
    first = discussion["asker"].web_post("card_preview", topic=topic).get_json()["card"]
    second = discussion["asker"].web_post("card_preview", topic=topic).get_json()["card"]
    assert first["sections"] == second["sections"]


# --- publishing -----------------------------------------------------------------------------------

def preview_and_publish(person, topic):
    preview = person.web_post("card_preview", topic=topic).get_json()["card"]
    r = person.web_post("card_publish", topic=topic)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["ok"] is True and body["card"]["id"] == preview["id"]
    return body["card"]


def test_publish_shows_the_card_to_everyone_and_the_draft_only_to_the_asker(app, db, discussion):
    person, topic = discussion["asker"], discussion["topic"]
    assert public_card(app, topic) is None
    draft = person.web_post("card_preview", topic=topic).get_json()["card"]
    assert person.web_get(topic=topic).get_json()["cardDraft"]["id"] == draft["id"]
    assert public_card(app, topic) is None
    assert "cardDraft" not in discussion["first_author"].web_get(topic=topic).get_json()

    card = person.web_post("card_publish", topic=topic).get_json()["card"]
    assert (card["state"], card["id"]) == ("published", draft["id"])
    assert isinstance(card["published"], int)
    assert public_card(app, topic) == card
    anonymous = Person(app).web_get(topic=topic).get_json()
    assert anonymous["answerCard"] == card
    assert anonymous["messages"] == [] and "cardDraft" not in anonymous
    assert person.web_get(topic=topic).get_json()["cardDraft"] is None
    row = card_rows(db, topic)[0]
    assert (row["state"], row["published"]) == ("published", card["published"])


def test_the_public_card_holds_only_shared_content(app, discussion):
    card = preview_and_publish(discussion["asker"], discussion["topic"])
    raw = Person(app).web_get(action="card", topic=discussion["topic"]).data.decode()
    assert "单机且写入不多时选 SQLite" in raw
    assert "没有许可公开使用" not in raw
    assert discussion["private"] not in raw
    assert card["messageIds"] == [discussion["shared"]]


def test_the_card_shows_an_answers_markdown_as_the_answer_does(app):
    """A reason given as a list is a list on the card too, not lines starting with "- "."""
    person, topic = ask_question(app, title="备份数据库的做法")
    author, agent = contributor(app, "列表虾")
    reasons = "两种做法都可行：\n\n- 在线备份 API 复制运行中的库\n- `VACUUM INTO` 写一份新文件"
    shared = answer(agent, topic, reasoningSummary=reasons)
    share(author, shared)
    preview_and_publish(person, topic)
    page = Person(app).http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    card = page[page.index('class="answer-card"'):].split("</article>")[0]
    assert "<li>在线备份 API 复制运行中的库</li>" in card
    assert "<li><code>VACUUM INTO</code> 写一份新文件</li>" in card
    assert "- 在线备份" not in card


def test_the_cards_conditions_are_labelled_as_conditions(app):
    """Under the conclusion they were an unlabelled grey list, which a visitor could not
    tell from a footnote; the discussion calls them conditions, and so does the card."""
    person, topic = ask_question(app, title="备份数据库的做法")
    author, agent = contributor(app, "条件虾")
    share(author, answer(agent, topic, conditions=["Applies to PostgreSQL 9.3 or newer"]))
    preview_and_publish(person, topic)
    page = Person(app).http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    card = page[page.index('class="answer-card"'):].split("</article>")[0]
    label_id = card.split('class="meta conditions-label" id="')[1].split('"')[0]
    assert card.split(f'id="{label_id}">')[1].startswith("Conditions</p>")
    listed = card.split(f'<ul class="conditions" aria-labelledby="{label_id}">')[1]
    assert listed.startswith("<li>Applies to PostgreSQL 9.3 or newer</li>")


def test_publishing_again_hides_the_earlier_card(app, db, discussion):
    person, topic = discussion["asker"], discussion["topic"]
    first = preview_and_publish(person, topic)
    share(discussion["second_author"], discussion["private"])
    second = preview_and_publish(person, topic)
    assert [(r["id"], r["state"]) for r in card_rows(db, topic)] == \
        [(first["id"], "hidden"), (second["id"], "published")]
    assert public_card(app, topic)["id"] == second["id"]


@pytest.mark.parametrize("case", ["no draft", "message withdrawn", "question revised"])
def test_publish_refuses_a_draft_that_no_longer_holds(app, db, discussion, case):
    person, topic = discussion["asker"], discussion["topic"]
    if case != "no draft":
        person.web_post("card_preview", topic=topic)
    if case == "message withdrawn":
        share(discussion["first_author"], discussion["shared"], allowed=False)
    if case == "question revised":
        revise(person, topic, description="新条件")
    assert_web_error(person.web_post("card_publish", topic=topic), 409)
    assert count(db, "answer_cards", "state = 'published'") == 0
    assert public_card(app, topic) is None


def test_a_page_publishes_only_the_draft_it_showed(app, db, discussion):
    """A second tab rebuilt the preview (an answer repeating the private context was shared
    meanwhile, and warned about there): the first tab's Publish would have published the
    new draft, unseen, with no warning."""
    person, topic = discussion["asker"], discussion["topic"]
    shown = person.web_post("card_preview", topic=topic).get_json()["card"]
    share(discussion["second_author"], discussion["private"])
    rebuilt = person.web_post("card_preview", topic=topic).get_json()["card"]
    assert rebuilt["id"] != shown["id"]
    assert_web_error(person.web_post("card_publish", topic=topic, card=shown["id"]), 409)
    assert public_card(app, topic) is None
    r = person.web_post("card_publish", topic=topic, card=rebuilt["id"])
    assert r.status_code == 200 and r.get_json()["card"]["id"] == rebuilt["id"]
    # the same page's Publish again, from a tab not reloaded: the same card, not "no preview"
    again = person.web_post("card_publish", topic=topic, card=rebuilt["id"])
    assert again.status_code == 200 and again.get_json()["card"] == public_card(app, topic)
    assert count(db, "answer_cards", "state = 'published'") == 1


def test_the_question_page_publishes_the_draft_it_shows(app, discussion):
    person, topic = discussion["asker"], discussion["topic"]
    draft = person.web_post("card_preview", topic=topic).get_json()["card"]
    page = person.http.get(f"/q/{topic}").get_data(as_text=True)
    bodies = [b for b in actions(page) if b.get("action") == "card_publish"]
    assert bodies == [{"action": "card_publish", "topic": topic, "card": draft["id"]}]


@pytest.mark.parametrize("action", ["card_publish", "card_unpublish"])
def test_only_the_asker_publishes_or_unpublishes(app, db, discussion, action):
    person, topic = discussion["asker"], discussion["topic"]
    person.web_post("card_preview", topic=topic)
    if action == "card_unpublish":
        person.web_post("card_publish", topic=topic)
    state = card_rows(db, topic)[0]["state"]
    assert_web_error(discussion["first_author"].web_post(action, topic=topic), 403)
    assert_web_error(Person(app).web_post(action, topic=topic), 401)
    assert card_rows(db, topic)[0]["state"] == state


def test_unpublish_hides_the_card_and_replays(app, db, discussion):
    person, topic = discussion["asker"], discussion["topic"]
    card = preview_and_publish(person, topic)
    r = person.web_post("card_unpublish", topic=topic)
    assert r.status_code == 200
    assert r.get_json()["card"]["id"] == card["id"]
    assert r.get_json()["card"]["state"] == "hidden"
    assert public_card(app, topic) is None
    assert Person(app).web_get(topic=topic).get_json()["answerCard"] is None
    assert [r["state"] for r in card_rows(db, topic)] == ["hidden"]
    assert person.web_post("card_unpublish", topic=topic).get_json() == {"ok": True, "card": None}


def test_withdrawing_a_permission_hides_every_card_that_depends_on_it(app, db, discussion):
    person, topic = discussion["asker"], discussion["topic"]
    preview_and_publish(person, topic)
    # a second question whose published card does not use the message stays visible
    other_person, other_topic = ask_question(app)
    author, agent = contributor(app)
    other_message = answer(agent, other_topic)
    share(author, other_message)
    preview_and_publish(other_person, other_topic)

    share(discussion["first_author"], discussion["shared"], allowed=False)
    assert [r["state"] for r in card_rows(db, topic)] == ["hidden"]
    assert public_card(app, topic) is None
    assert Person(app).web_get(topic=topic).get_json()["answerCard"] is None
    assert public_card(app, other_topic) is not None
    # allowing it again does not bring the card back on its own
    share(discussion["first_author"], discussion["shared"])
    assert public_card(app, topic) is None


def test_card_writes_are_rate_limited(settings):
    app = create_app(settings.with_overrides(rate_web_write="3/hour"))
    person, topic = ask_question(app)
    for _ in range(3):
        assert person.web_post("card_preview", topic=topic).status_code == 409
    r = person.web_post("card_preview", topic=topic)
    assert_web_error(r, 429)
    assert r.headers["Retry-After"]
    assert_web_error(person.web_post("share", message="msg_x", sharePublic=True), 429)
