"""The question as composed by services/question_page, and the pure card rules under it."""
from __future__ import annotations

import json
import threading

import pytest

from conftest import contributor, count, good_result
from lobbytalks.services import cards, question_page, topics
from qa_helpers import answer
from test_leases import world  # noqa: F401  (the asker, a lobby member and its agent)


def _row(**fields):
    base = {"id": "msg_1", "name": "查证虾", "text": "结论 [S2]", "reasoning_summary": "",
            "uncertainties": "[]", "conditions": "[]",
            "sources": json.dumps([{"title": "一", "url": "https://a.example/1"},
                                   {"title": "二", "url": "https://a.example/2"}])}
    return {**base, **fields}


def test_build_groups_lines_by_the_questions_intent():
    sections = cards.build("how", [_row(reasoning_summary="因为 [S1]", uncertainties='["未测 Windows"]')])
    assert [s["key"] for s in sections] == ["methods", "support", "uncertainties"]
    main, support, unsure = (s["lines"] for s in sections)
    assert [src["n"] for src in main[0]["sources"]] == [2]        # only what it cites
    assert [src["n"] for src in support[0]["sources"]] == [1]
    assert unsure[0]["text"] == "未测 Windows" and unsure[0]["sources"] == []


def test_build_lists_every_source_for_an_uncited_main_line_and_files_unsourced_facts():
    assert [s["n"] for s in cards.build("decision", [_row(text="无引用的结论")])[0]["lines"][0]["sources"]] == [1, 2]
    sections = cards.build("fact", [_row(sources="[]", text="没有来源")])
    assert [s["key"] for s in sections] == ["unsourced"]


def test_build_reads_the_old_single_string_uncertainty():
    sections = cards.build("debate", [_row(uncertainties=json.dumps("旧格式的一段话"))])
    assert sections[-1]["key"] == "uncertainties"
    assert [line["text"] for line in sections[-1]["lines"]] == ["旧格式的一段话"]


def test_card_answers_counts_the_current_versions_shared_answers():
    messages = [{"questionVersion": 1, "sharePublic": True},
                {"questionVersion": 2, "sharePublic": True},
                {"questionVersion": 2, "sharePublic": False}]
    assert cards.card_answers(messages, 2) == (2, 1)
    assert cards.card_answers(messages, 3) == (0, 0)


@pytest.fixture
def answered(app, world):
    asker, helper, agent = world
    topic = asker.ask()
    task = agent.claim(topic).get_json()["task"]["id"]
    message = agent.post("submit_result", taskId=task, **good_result()).get_json()["messageId"]
    return app, asker, helper, topic, message


def _ids(app, *people):
    rt = app.config["LOBBYTALKS"]
    return rt, [rt.db.one("SELECT id FROM users WHERE username = ?", (p.username,))["id"]
                for p in people]


def test_page_knows_whose_answers_are_whose(answered, db):
    app, asker, helper, topic, message = answered
    rt, (asker_id, helper_id) = _ids(app, asker, helper)
    with app.app_context():
        for_helper = question_page.page(rt.db.conn, rt.keyring, helper_id, topic, now=2**40)
        for_asker = question_page.page(rt.db.conn, rt.keyring, asker_id, topic, now=2**40)
        anonymous = question_page.page(rt.db.conn, rt.keyring, None, topic, now=2**40)
    assert for_helper.mine == {message} and for_asker.mine == set() and anonymous.mine == set()
    assert for_asker.data["topic"]["isAsker"] and "cardDraft" in for_asker.data
    assert "cardDraft" not in for_helper.data and anonymous.data["messages"] == []
    assert for_asker.flow["current_answers"] == 1 and for_asker.flow["shareable"] == 0
    assert for_asker.flow["draft_spans"] is None and "draft_spans" not in for_helper.flow
    assert for_helper.community["id"] == "lobby" and for_helper.island_name
    assert count(db, "messages") == 1


def test_read_is_the_page_data_the_json_api_returns(answered):
    app, asker, _, topic, message = answered
    rt, (asker_id,) = _ids(app, asker)
    with app.app_context():
        data = question_page.read(rt.db.conn, rt.keyring, asker_id, topic)
    served = asker.web_get(topic=topic).get_json()
    assert served == json.loads(json.dumps(data))
    assert [m["id"] for m in data["messages"]] == [message]
    assert data["answerCard"] is None and data["cardDraft"] is None


def test_the_question_page_renders_the_composition(answered):
    _, _, helper, topic, message = answered
    page = helper.http.get(f"/q/{topic}?lang=en")
    assert page.status_code == 200
    assert f'id="m-{message}"' in page.get_data(as_text=True)


@pytest.mark.parametrize("surface", ["api", "page"])
def test_an_answer_stored_while_a_question_is_read_is_counted_and_listed_alike(app, world,
                                                                               monkeypatch,
                                                                               surface):
    """Another request stores an answer after the reader's topic row was read and before
    its answers are: the count and the answers come from one snapshot, so they agree."""
    asker, _, agent = world
    topic = asker.ask()
    answer(agent, topic)
    _, late_agent = contributor(app, "迟到虾")
    real = topics.latest_messages
    stored = []

    def answered_meanwhile(conn, topic_id, limit):
        if not stored:  # in another thread, as a concurrent request would
            writer = threading.Thread(target=lambda: stored.append(answer(late_agent, topic)))
            writer.start()
            writer.join()
        return real(conn, topic_id, limit)

    monkeypatch.setattr(topics, "latest_messages", answered_meanwhile)
    if surface == "api":
        data = asker.web_get(topic=topic).get_json()
        assert data["messageCount"] == len(data["messages"]) == 1
    else:
        page = asker.http.get(f"/q/{topic}").get_data(as_text=True)
        assert '<span class="count">1</span>' in page
        assert page.count('<article class="answer"') == 1
    assert stored and count(app.config["LOBBYTALKS"].db, "messages") == 2


def test_an_answer_names_the_person_whose_agent_wrote_it(app, asker):
    """An agent's name is whatever its owner typed: one called "admin", or the asker's own
    name, is shown as someone's agent on the page and in the inbox."""
    impostor, agent = contributor(app, "admin")
    topic = asker.ask("谁在回答？")
    message = answer(agent, topic)
    page = asker.http.get(f"/q/{topic}").get_data(as_text=True)
    head = page[page.index(f'id="m-{message}-who"'):]
    head = head[:head.index("</h3>")]
    assert f'<a class="owner" href="/u/{impostor.username}">{impostor.username} 的智能体</a>' in head
    [item] = asker.web_get(action="notifications").get_json()["notifications"]
    assert (item["actor"], item["actorOwner"]) == ("admin", impostor.username)
    inbox = asker.http.get("/inbox?lang=en").get_data(as_text=True)
    assert f"{impostor.username}&#39;s agent admin answered your question" in inbox


def test_the_private_background_is_introduced_to_each_reader_as_theirs_or_the_askers(app):
    """To the asker it is their own text; to a contributor "only you" read as if it were
    theirs, or hidden from the asker."""
    from conftest import asked_with_private
    asker, topic, author, agent = asked_with_private(app, "私密背景给谁看？", "私密：内网地址", "读者虾")
    answer(agent, topic)
    own = asker.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    theirs = author.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    assert "Only you and people whose agent" in own and "The asker&#39;s private background" not in own
    assert "The asker&#39;s private background" in theirs and "Only you and" not in theirs


def test_a_published_card_can_be_linked_and_a_shared_link_previews_only_public_text(app, client):
    """Sharing the card was copying the address bar; a pasted link previewed the bare title.
    The preview carries the public background, never the private one."""
    from conftest import asked_with_private
    asker, topic, author, agent = asked_with_private(
        app, "答案卡怎么分享？", "私密：内网地址 10.0.0.8", "分享虾")
    message = answer(agent, topic)
    assert author.web_post("share", message=message, sharePublic=True).status_code == 200
    assert asker.web_post("card_preview", topic=topic).status_code == 200
    assert asker.web_post("card_publish", topic=topic).status_code == 200
    page = client.get(f"/q/{topic}").get_data(as_text=True)
    head = page[:page.index("</head>")]
    assert '<meta property="og:title" content="答案卡怎么分享？">' in head
    assert '<meta name="description" content="' in head and "10.0.0.8" not in head
    assert 'id="answer-card"' in page
    assert f'<input id="card-link" readonly data-absolute value="/q/{topic}#answer-card"' in page
