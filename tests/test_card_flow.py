"""The answer-card flow that does not dead-end, and the private-context guard.

The asker learns why no card can be built and may ask an answer's author to share; the
author is told when a card uses their answer; a withdrawal hides the card, tells the asker
and the page says a new card is needed; sharing again offers to republish. An answer that
repeats the asker's private context is flagged to the asker in the preview and to an
author who was given that context, and to nobody else.
"""
from __future__ import annotations

import html as htmllib

import pytest
from conftest import Person, asked_with_private, count, good_result, joined_person
from helpers import actions, assert_web_error
from qa_helpers import answer, claim_ok, revise, submit_ok
from test_moderation import make_admin

from lobbytalks.repeats import MIN_RUN, repeated_runs

PRIVATE = "私密：生产库有 40 GB，每天晚上三点跑批量写入任务。"
LEAKY = "备份要避开每天晚上三点跑批量写入任务的时段 [S1]，并用在线备份 API 做一致副本。"
PLAIN = "用 SQLite 在线备份 API 可以在服务运行时得到一致副本 [S1]，不要直接复制文件。"
REPEATED = "每天晚上三点跑批量写入任务"


def page(person, topic, lang="zh"):
    r = person.http.get(f"/q/{topic}?lang={lang}")
    assert r.status_code == 200
    return htmllib.unescape(r.get_data(as_text=True))


def publish_offered(person, topic) -> bool:
    raw = person.http.get(f"/q/{topic}").get_data(as_text=True)
    return any(body.get("action") == "card_publish" for body in actions(raw))


def kinds(db, user=None):
    sql = "SELECT n.kind FROM notifications n JOIN users u ON u.id = n.user_id"
    params = {}
    if user is not None:
        sql += " WHERE u.username = :username"
        params = {"username": user.username}
    return [r[0] for r in db.all(sql + " ORDER BY n.id", params)]


def card_states(db, topic):
    return [tuple(r) for r in db.all(
        "SELECT state, hidden_reason FROM answer_cards WHERE topic_id = :topic_id ORDER BY created, id",
        {"topic_id": topic})]


def ok(response):
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.fixture
def world(app):
    asker, topic, author, agent = asked_with_private(app, "怎样备份运行中的 SQLite？", PRIVATE, "甲虾")
    return {"asker": asker, "topic": topic, "author": author, "agent": agent}


def published_world(world):
    message = answer(world["agent"], world["topic"], conclusion=PLAIN)
    ok(world["author"].web_post("share", message=message, sharePublic=True))
    ok(world["asker"].web_post("card_preview", topic=world["topic"]))
    ok(world["asker"].web_post("card_publish", topic=world["topic"]))
    return message


def test_a_public_cards_source_shows_where_it_leads_beside_its_title(app, world):
    """A source titled as one address and leading to another: the question page shows the
    address in its line; the public card showed only the title."""
    evidence = dict(good_result()["evidence"][0], title="https://docs.python.org/3/library/sqlite3.html",
                    url="https://evil-example.com/a")
    message = answer(world["agent"], world["topic"], conclusion=PLAIN, evidence=[evidence])
    ok(world["author"].web_post("share", message=message, sharePublic=True))
    ok(world["asker"].web_post("card_preview", topic=world["topic"]))
    ok(world["asker"].web_post("card_publish", topic=world["topic"]))
    body = page(Person(app), world["topic"], "en")
    card = body[body.index('class="answer-card"'):]
    card = card[:card.index("</article>")]
    link = card[card.index('class="source-link" href="https://evil-example.com/a"'):]
    assert "[S1] https://docs.python.org/3/library/sqlite3.html" in link
    assert '<span class="source-host">evil-example.com</span>' in link[:link.index("</p>")]


# --- why no card yet, and asking an author ---------------------------------------------------

def test_preview_button_says_why_without_answers(world):
    body = page(world["asker"], world["topic"], "en")
    assert "No answer to the current version yet" in body
    assert not any(a["action"] == "card_preview" for a in actions(body))
    assert '<button type="button" class="btn secondary" disabled aria-describedby="card-why">' in body


def test_asker_asks_the_author_to_share(app, db, world):
    asker, author, topic = world["asker"], world["author"], world["topic"]
    message = answer(world["agent"], topic)
    body = page(asker, topic, "en")
    assert "No answer to the current version is allowed for public use yet." in body
    assert {"action": "share_request", "message": message} in actions(body)

    assert ok(asker.web_post("share_request", message=message)) == {
        "ok": True, "id": message, "requested": True}
    assert kinds(db, author) == ["share_request"]
    [item] = ok(author.web_get(action="notifications"))["notifications"]
    assert item["actor"] == asker.username and item["messageId"] == message
    # Asking again while unread adds nothing; the page now says it was asked.
    assert ok(asker.web_post("share_request", message=message))["replayed"] is True
    assert kinds(db, author) == ["share_request"]
    body = page(asker, topic, "en")
    assert "You asked the author" in body
    assert {"action": "share_request", "message": message} not in actions(body)
    # Once the author has read it, the asker may ask again.
    [item] = ok(author.web_get(action="notifications"))["notifications"]
    ok(author.web_post("notifications_read", notification=item["id"]))
    assert {"action": "share_request", "message": message} in actions(page(asker, topic))
    assert "replayed" not in ok(asker.web_post("share_request", message=message))
    assert kinds(db, author) == ["share_request", "share_request"]
    # The author sees the usual share button, and no request button on their own answer.
    own = page(author, topic)
    assert {"action": "share", "message": message, "sharePublic": True} in actions(own)
    assert not any(a["action"] == "share_request" for a in actions(own))


def test_no_share_request_for_an_answer_to_an_earlier_version(app, db, world):
    """A card uses answers to the current version only: asking for an older one's
    permission could not help, so the page does not offer it and the API refuses it."""
    asker, topic = world["asker"], world["topic"]
    old = answer(world["agent"], topic)
    revise(asker, topic, description="新条件")
    assert not any(a["action"] == "share_request" for a in actions(page(asker, topic)))
    assert_web_error(asker.web_post("share_request", message=old), 409)
    assert "share_request" not in kinds(db)
    current = answer(world["agent"], topic)
    assert {"action": "share_request", "message": current} in actions(page(asker, topic))
    ok(asker.web_post("share_request", message=current))


def test_why_no_card_tells_the_asker_to_allow_their_own_answers(app, world):
    """An asker whose own agent answered is not told to ask "the author": that is them."""
    asker, topic = world["asker"], world["topic"]
    own = answer(asker.new_agent("题主的虾"), topic, conclusion=PLAIN)
    body = page(asker, topic, "en")
    assert "They are your own: you can allow each below it." in body
    assert "ask an answer's author" not in body
    assert {"action": "share", "message": own, "sharePublic": True} in actions(body)
    assert "它们是你自己的回答" in page(asker, topic)
    answer(world["agent"], topic)  # and someone else's
    body = page(asker, topic, "en")
    assert "No answer to the current version is allowed" in body and "Allow your own below them, and ask the other" in body


def test_share_requests_are_the_askers_alone(app, db, world):
    asker, topic = world["asker"], world["topic"]
    message = answer(world["agent"], topic)
    own = answer(asker.new_agent("题主的虾"), topic)
    stranger = joined_person(app)
    assert_web_error(stranger.web_post("share_request", message=message), 403)
    assert_web_error(world["author"].web_post("share_request", message=message), 403)
    assert_web_error(Person(app).web_post("share_request", message=message), 401)
    assert_web_error(asker.web_post("share_request", message="msg_nope"), 404)
    assert_web_error(asker.web_post("share_request", message="bad id!"), 400)
    assert_web_error(asker.web_post("share_request", message=own), 409)
    ok(world["author"].web_post("share", message=message, sharePublic=True))
    assert_web_error(asker.web_post("share_request", message=message), 409)
    assert "share_request" not in kinds(db)


# --- published, withdrawn, republished --------------------------------------------------------

def test_publishing_tells_the_authors_but_not_the_asker(app, db, world):
    published_world(world)
    assert kinds(db, world["author"]) == ["card_published"]
    assert kinds(db, world["asker"]) == ["answer"]


def test_withdrawal_hides_the_card_tells_the_asker_and_offers_republishing(app, db, world):
    asker, author, topic = world["asker"], world["author"], world["topic"]
    message = published_world(world)
    ok(author.web_post("share", message=message, sharePublic=False))
    assert card_states(db, topic) == [("hidden", "withdrawn")]
    assert kinds(db, asker) == ["answer", "card_hidden"]
    [hidden, _] = ok(asker.web_get(action="notifications"))["notifications"]
    assert hidden["actor"] == "甲虾" and hidden["link"] == f"/q/{topic}"

    # The page tells the asker a new card is needed; to anyone else the card is just gone
    # (the note is the asker's to act on, and says nothing to them).
    assert "a new card is needed" in page(asker, topic, "en")
    assert "has been revised" not in page(asker, topic, "en")  # the same version: no such reason
    for reader in (author, Person(app), joined_person(app)):
        body = page(reader, topic, "en")
        assert 'id="card-withdrawn"' not in body and "answer-card" not in body
    assert 'id="card-republish"' not in page(asker, topic)
    assert_web_error(asker.web_post("card_republish", topic=topic), 409)
    assert card_states(db, topic) == [("hidden", "withdrawn")]

    # Shared again: the asker is told and offered the same card back, and it returns unchanged.
    ok(author.web_post("share", message=message, sharePublic=True))
    assert kinds(db, asker) == ["answer", "card_hidden", "card_republishable"]
    offer = ok(asker.web_get(action="notifications"))["notifications"][0]
    assert offer["actor"] == "甲虾" and offer["link"] == f"/q/{topic}#card-republish"
    ok(author.web_post("share", message=message, sharePublic=True))  # already shared: no news
    assert kinds(db, asker) == ["answer", "card_hidden", "card_republishable"]
    body = page(asker, topic, "en")
    assert "you can republish it as it was" in body
    assert {"action": "card_republish", "topic": topic} in actions(body)
    assert 'id="card-republish"' not in page(author, topic)
    # The person allows or withdraws, not their agent: the Chinese inbox said the agent did
    inbox = asker.http.get("/inbox?lang=zh").get_data(as_text=True)
    assert "答案卡所用的一条回答（" in inbox and "的）被撤回了公开许可" in inbox
    assert "的）重新允许公开了" in inbox and "撤回了“" not in inbox and "重新许可了回答" not in inbox
    card = ok(asker.web_post("card_republish", topic=topic))["card"]
    assert card["state"] == "published" and card["messageIds"] == [message]
    assert card_states(db, topic) == [("published", None)]
    assert kinds(db, author) == ["card_published", "card_published"]
    assert "a new card is needed" not in page(Person(app), topic, "en")


def test_republishing_is_refused_once_the_question_moved_on(app, db, world):
    asker, author, topic = world["asker"], world["author"], world["topic"]
    message = published_world(world)
    ok(author.web_post("share", message=message, sharePublic=False))
    revise(asker, topic, description="新条件")
    ok(author.web_post("share", message=message, sharePublic=True))
    assert "card_republishable" not in kinds(db)  # nothing to republish on a newer version
    assert 'id="card-republish"' not in page(asker, topic)
    # and the page says why, rather than leaving the asker to wonder
    assert "It was made for version 1 of the question, which has been revised" in \
        page(asker, topic, "en")
    assert "第 1 版问题" in page(asker, topic, "zh")
    assert_web_error(asker.web_post("card_republish", topic=topic), 409)
    assert_web_error(author.web_post("card_republish", topic=topic), 403)
    assert card_states(db, topic) == [("hidden", "withdrawn")]


@pytest.mark.parametrize("outdated_by", ["admin_hide", "withdrawal", "revision"])
def test_a_preview_that_can_no_longer_be_published_is_not_shown_and_the_page_says_why(
        app, world, outdated_by):
    """A preview kept showing an answer an admin hid since (shown to no one, says the
    admin page), and a Publish button that failed every time, reload or not."""
    asker, author, topic = world["asker"], world["author"], world["topic"]
    message = answer(world["agent"], topic, conclusion=PLAIN)
    ok(author.web_post("share", message=message, sharePublic=True))
    ok(asker.web_post("card_preview", topic=topic))
    assert publish_offered(asker, topic) and "在线备份 API" in page(asker, topic)
    if outdated_by == "admin_hide":
        ok(make_admin(app).web_post("hide_answer", message=message, reason="离题"))
    elif outdated_by == "withdrawal":
        ok(author.web_post("share", message=message, sharePublic=False))
    else:
        revise(asker, topic, description="新条件")
    body = page(asker, topic, "en")
    assert not publish_offered(asker, topic)
    expected = "has been revised since" if outdated_by == "revision" else "may no longer be shown"
    assert 'id="card-outdated"' in body and expected in body
    read = ok(asker.web_get(topic=topic))
    assert read["cardDraft"] is None
    assert read["cardDraftOutdated"] == ("revised" if outdated_by == "revision" else "unshared")
    if outdated_by == "admin_hide":  # nowhere on the page, in the preview least of all
        assert "在线备份 API" not in page(asker, topic)
    refused = assert_web_error(asker.web_post("card_publish", topic=topic), 409)
    assert "重新生成预览" in refused["error"]


def test_a_publishable_preview_says_nothing_of_being_outdated(world):
    asker, topic = world["asker"], world["topic"]
    ok(world["author"].web_post("share", message=answer(world["agent"], topic, conclusion=PLAIN),
                                sharePublic=True))
    ok(asker.web_post("card_preview", topic=topic))
    body = page(asker, topic, "en")
    assert 'id="card-outdated"' not in body and publish_offered(asker, topic)
    read = ok(asker.web_get(topic=topic))
    assert read["cardDraft"]["messageIds"] and "cardDraftOutdated" not in read


def test_unpublishing_is_not_a_withdrawal(app, db, world):
    published_world(world)
    ok(world["asker"].web_post("card_unpublish", topic=world["topic"]))
    assert card_states(db, world["topic"]) == [("hidden", "unpublished")]
    assert "card_hidden" not in kinds(db)
    assert "a new card is needed" not in page(world["asker"], world["topic"], "en")


def test_withdrawing_ones_own_answer_as_asker_tells_nobody(app, db):
    asker = joined_person(app)
    topic = asker.ask(privateContext=PRIVATE)
    message = answer(asker.new_agent("题主的虾"), topic, conclusion=PLAIN)
    ok(asker.web_post("share", message=message, sharePublic=True))
    ok(asker.web_post("card_preview", topic=topic))
    ok(asker.web_post("card_publish", topic=topic))
    ok(asker.web_post("share", message=message, sharePublic=False))
    assert count(db, "notifications") == 0
    assert card_states(db, topic) == [("hidden", "withdrawn")]


# --- the private-context guard -----------------------------------------------------------------

@pytest.mark.parametrize("text, private, expected", [
    (LEAKY, PRIVATE, [REPEATED]),
    ("每天晚上\n  三点跑批量写入\t任务", PRIVATE, ["每天晚上\n  三点跑批量写入\t任务"]),  # spaces hide nothing
    # nor do characters no reader sees: a zero-width space or a soft hyphen between letters
    ("\u200b".join("每天晚上三点跑批量写入任务"), PRIVATE, ["\u200b".join("每天晚上三点跑批量写入任务")]),
    ("\u00ad".join("每天晚上三点跑批量写入任务"), PRIVATE, ["\u00ad".join("每天晚上三点跑批量写入任务")]),
    ("每天晚上三点跑批量写入", PRIVATE, []),                          # 11 characters: too short
    ("abcdefghijkl and abcdefghijkl", "xx abcdefghijkl yy", ["abcdefghijkl", "abcdefghijkl"]),
    ("abcdefghijk", "abcdefghijk", []),                               # MIN_RUN - 1
    ("anything at all here", "", []),
    ("", PRIVATE, []),
])
def test_repeated_runs(text, private, expected):
    assert [text[a:b] for a, b in repeated_runs(text, private)] == expected


def test_min_run_is_twelve():
    assert MIN_RUN == 12


def test_the_asker_sees_repeats_highlighted_in_the_preview(app, world):
    asker, author, topic = world["asker"], world["author"], world["topic"]
    message = answer(world["agent"], topic, conclusion=LEAKY)
    ok(author.web_post("share", message=message, sharePublic=True))
    assert ok(asker.web_post("card_preview", topic=topic))["privateRepeats"] == [REPEATED]
    body = page(asker, topic, "en")
    assert "this preview repeats text from your private context" in body
    assert f'<mark class="private-repeat">{REPEATED}</mark>' in body
    assert "Publish it to everyone anyway?" in body
    # Nobody else sees the draft or the warning.
    for reader in (author, Person(app), joined_person(app)):
        other = page(reader, topic, "en")
        assert "private-repeat" not in other and "repeats text" not in other


def test_republishing_a_card_that_repeats_the_private_context_warns_as_publishing_did(world):
    """Withdrawn and shared again, the card is offered back with the plain confirmation:
    the warning its first publishing gave was not given again."""
    asker, author, topic = world["asker"], world["author"], world["topic"]
    message = answer(world["agent"], topic, conclusion=LEAKY)
    ok(author.web_post("share", message=message, sharePublic=True))
    ok(asker.web_post("card_preview", topic=topic))
    ok(asker.web_post("card_publish", topic=topic))
    ok(author.web_post("share", message=message, sharePublic=False))
    ok(author.web_post("share", message=message, sharePublic=True))
    body = page(asker, topic, "en")
    offer = body[body.index('id="card-republish"'):].split("</div>")[0]
    assert "Publish it to everyone anyway?" in htmllib.unescape(offer)


def test_a_clean_preview_has_no_warning(app, world):
    published = world["asker"]
    message = answer(world["agent"], world["topic"], conclusion=PLAIN)
    ok(world["author"].web_post("share", message=message, sharePublic=True))
    assert ok(published.web_post("card_preview", topic=world["topic"]))["privateRepeats"] == []
    body = page(published, world["topic"], "en")
    assert "private-repeat" not in body and 'id="draft-guard"' not in body


def test_an_author_given_the_private_context_is_warned_before_sharing(app, db, world):
    author, agent, topic = world["author"], world["agent"], world["topic"]
    answer(agent, topic, conclusion=PLAIN)  # the first answer gives the full-text right
    task = claim_ok(agent, topic)
    assert task["task"]["privateContextIncluded"] is True
    message = submit_ok(agent, task["task"]["id"], conclusion=LEAKY)["messageId"]
    body = page(author, topic, "en")
    assert "this answer repeats text from the asker's private context" in body
    assert f'<li><mark class="private-repeat">{REPEATED}</mark></li>' in body
    share = next(a for a in actions(body) if a.get("message") == message)
    assert share == {"action": "share", "message": message, "sharePublic": True}
    assert 'data-confirm="This answer repeats the asker&#39;s private context.' in \
        world["author"].http.get(f"/q/{topic}?lang=en").get_data(as_text=True)


def test_an_author_never_given_the_private_context_learns_nothing(app, db, world):
    author, agent, topic = world["author"], world["agent"], world["topic"]
    task = claim_ok(agent, topic)
    assert task["task"]["privateContextIncluded"] is False
    submit_ok(agent, task["task"]["id"], conclusion=LEAKY)
    body = page(author, topic, "en")
    # A warning would confirm a guess at the private context: there is none.
    assert "private-repeat" not in body and "private-guard" not in body
    assert "repeats the asker" not in body


def test_no_offer_to_republish_on_a_question_taken_down(app, db, world):
    """Withdrawn and shared again after an admin took the question down, the answer offered
    the asker a card that card_republish then refused."""
    from lobbytalks.services import accounts
    asker, author, topic = world["asker"], world["author"], world["topic"]
    message = published_world(world)
    admin = Person(app).register()
    assert accounts.set_admin(app.config["LOBBYTALKS"].db, admin.username, True)
    ok(admin.web_post("hide_question", topic=topic, reason="钓鱼"))
    ok(author.web_post("share", message=message, sharePublic=False))
    ok(author.web_post("share", message=message, sharePublic=True))
    assert "card_republishable" not in kinds(db, asker)
    assert_web_error(asker.web_post("card_republish", topic=topic), 409, "topic_unavailable")
