"""People: the public profile and "download my data"."""
from __future__ import annotations

import json

from conftest import Person, good_result


def answered(asker: Person, member: Person, **ask) -> tuple[str, str, object]:
    topic = asker.ask(**ask)
    agent = member.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    r = agent.post("submit_result", taskId=task, **good_result())
    assert r.status_code == 200, r.get_json()
    return topic, r.get_json()["messageId"], agent


def test_a_profile_shows_only_what_any_visitor_may_read(app, client, asker, member):
    open_topic, message, _ = answered(asker, member, title="公开的问题：备份",
                                      privateContext="私密：内部主机名 db-7")
    closed_topic = asker.ask("已经结束的问题")
    asker.web_post("close", topic=closed_topic)
    carded = asker.ask("有答案卡的问题")
    agent = asker.new_agent("题主的虾")
    task = agent.claim(carded).get_json()["task"]["id"]
    own = agent.post("submit_result", taskId=task, **good_result()).get_json()["messageId"]
    asker.web_post("share", message=own, sharePublic=True)
    asker.web_post("card_preview", topic=carded)
    asker.web_post("card_publish", topic=carded)

    r = client.get(f"/u/{asker.username}")
    body = r.get_data(as_text=True)
    assert r.status_code == 200
    assert "公开的问题：备份" in body and "已经结束的问题" in body
    open_part, closed_part = body.split('id="closed-title"')
    assert "已经结束的问题" in closed_part and "已经结束的问题" not in open_part
    assert f'href="/q/{carded}"' in body.split('id="cards-title"')[1]
    # nothing of a discussion, private context or answers
    assert "db-7" not in body and good_result()["conclusion"] not in body
    assert client.get(f"/u/{asker.username.upper()}").status_code == 200  # names ignore case


def test_a_long_profile_counts_every_question_and_still_lists_the_closed_ones(
        app, client, asker, monkeypatch):
    """The lists stop at the newest few of each state; the counts are of them all. (One
    list of both states, cut at 50, showed "closed 0" for a person with 50 newer questions
    open and gave the length of each half as its count.)"""
    from lobbytalks.services import people
    monkeypatch.setattr(people, "PROFILE_QUESTIONS", 3)
    closed = asker.ask("最早的问题，已经结束")
    asker.web_post("close", topic=closed)
    titles = [f"进行中的第 {n} 个问题" for n in range(4)]
    for title in titles:
        asker.ask(title)
    body = client.get(f"/u/{asker.username}").get_data(as_text=True)
    open_part, closed_part = body.split('id="closed-title"')
    assert '<span class="count">4</span>' in open_part
    assert all(title in open_part for title in titles[1:]) and titles[0] not in body
    assert "这里列出最新的 3 个，共 4 个。" in open_part
    assert '<span class="count">1</span>' in closed_part and "最早的问题，已经结束" in closed_part
    assert "这里列出最新的" not in closed_part



def test_the_rest_of_a_long_profile_is_on_its_next_pages(app, client, asker, monkeypatch):
    """The lists went no further than the newest few: the rest of a person's questions
    could only be found by guessing words to search for."""
    from lobbytalks.services import people
    monkeypatch.setattr(people, "PROFILE_QUESTIONS", 3)
    asker.web_post("close", topic=asker.ask("最早的问题，已经结束"))
    titles = [f"进行中的第 {n} 个问题" for n in range(7)]
    for title in titles:
        asker.ask(title)
    first = client.get(f"/u/{asker.username}").get_data(as_text=True)
    assert f'href="/u/{asker.username}?page=2"' in first and 'rel="prev"' not in first
    assert "最早的问题，已经结束" in first.split('id="closed-title"')[1]
    second = client.get(f"/u/{asker.username}?page=2").get_data(as_text=True)
    # the closed list ended on page 1: "no more", not "none" under its count of 1
    assert "这一页没有更多了。" in second.split('id="closed-title"')[1]
    assert [title in second for title in titles] == [False, True, True, True, False, False, False]
    assert "这里列出最新的" not in second  # true of the first page only
    assert f'href="/u/{asker.username}?page=3"' in second and 'rel="prev"' in second
    last = client.get(f"/u/{asker.username}?page=3").get_data(as_text=True)
    assert titles[0] in last and 'rel="next"' not in last
    past = client.get(f"/u/{asker.username}?page=9").get_data(as_text=True)
    assert not any(title in past for title in titles) and 'class="notice past-end"' in past
    assert 'rel="prev"' not in past  # to page 8, past the end too: the notice links page 1
    assert '<span class="count">7</span>' in past  # the counts are of every page
    assert client.get(f"/u/{asker.username}?page=0").status_code == 400


def test_the_published_cards_are_counted_and_a_cut_list_says_so(app, client, asker,
                                                                monkeypatch):
    from lobbytalks.services import people
    monkeypatch.setattr(people, "PROFILE_CARDS", 1)
    agent = asker.new_agent("题主的虾")
    for title in ("第一张卡的问题", "第二张卡的问题"):
        topic = asker.ask(title)
        task = agent.claim(topic).get_json()["task"]["id"]
        own = agent.post("submit_result", taskId=task, **good_result()).get_json()["messageId"]
        asker.web_post("share", message=own, sharePublic=True)
        assert asker.web_post("card_preview", topic=topic).status_code == 200
        assert asker.web_post("card_publish", topic=topic).status_code == 200
    cards = client.get(f"/u/{asker.username}").get_data(as_text=True).split('id="cards-title"')[1]
    assert '<span class="count">2</span>' in cards
    assert "这里列出最新的 1 个，共 2 个。" in cards


def test_a_draft_card_is_not_on_the_profile(app, client, asker):
    topic = asker.ask("只有草稿的问题")
    agent = asker.new_agent("题主的虾")
    task = agent.claim(topic).get_json()["task"]["id"]
    own = agent.post("submit_result", taskId=task, **good_result()).get_json()["messageId"]
    asker.web_post("share", message=own, sharePublic=True)
    assert asker.web_post("card_preview", topic=topic).status_code == 200
    body = client.get(f"/u/{asker.username}").get_data(as_text=True)
    assert "还没有发布答案卡" in body


def test_unknown_people_are_404_pages(client):
    for path in ("/u/nobody_here", "/u/bad%20name", "/u/" + "x" * 40, "/u/%3Cscript%3E"):
        r = client.get(path)
        assert r.status_code == 404 and r.mimetype == "text/html", path


def test_author_names_link_to_their_profile(app, client, asker):
    topic = asker.ask("谁问的？")
    link = f'<a class="person" href="/u/{asker.username}">{asker.username}</a>'
    assert link in client.get("/c/lobby").get_data(as_text=True)
    assert link in client.get(f"/q/{topic}").get_data(as_text=True)
    assert link in client.get("/questions").get_data(as_text=True)


def test_my_data_holds_my_questions_answers_agents_and_memories_only(app, asker, member):
    mine, _, _ = answered(asker, member, title="我的问题", privateContext="我的私密背景")
    assert asker.web_post("revise", topic=mine, title="我的问题（第二版）").status_code == 200
    theirs = member.ask("别人的问题", privateContext="别人的秘密")
    agent = asker.new_agent("我的虾")
    task = agent.claim(theirs).get_json()["task"]["id"]
    r = agent.post("submit_result", taskId=task, **good_result())
    my_answer = r.get_json()["messageId"]

    r = asker.http.get("/settings/data.json")
    assert r.status_code == 200 and r.mimetype == "application/json"
    assert r.headers["Content-Disposition"] == f'attachment; filename="lobbytalks-{asker.username}.json"'
    data = json.loads(r.get_data())
    assert data["user"] == {"username": asker.username, "email": "", "emailNotify": False,
                            "emailConfirmed": False}
    assert data["communities"] == [{"id": "lobby", "name": "虾扯淡广场",
                                    "joined": data["communities"][0]["joined"], "created": False}]
    assert [q["id"] for q in data["questions"]] == [mine]
    versions = data["questions"][0]["versions"]
    assert [v["title"] for v in versions] == ["我的问题", "我的问题（第二版）"]
    assert versions[0]["privateContext"] == "我的私密背景"
    assert [a["id"] for a in data["answers"]] == [my_answer]
    assert data["answers"][0]["conclusion"] == good_result()["conclusion"]
    assert [a["name"] for a in data["agents"]] == ["我的虾"]
    raw = r.get_data(as_text=True)
    assert agent.token not in raw and agent.token[-4:] not in raw and "digest" not in raw
    assert "别人的秘密" not in raw  # another asker's private context never travels
    assert [m["state"] for m in data["memories"]] == ["pending"]  # from my valid answer


def test_my_data_holds_my_address_and_the_communities_i_joined_or_made(app, asker, member):
    asker.mail_to("asker@example.org")
    made = asker.communities_post("create", name="读书会").get_json()["id"]
    theirs = member.communities_post("create", name="围棋社").get_json()["id"]
    assert asker.communities_post("join", community=theirs).status_code == 200
    data = json.loads(asker.http.get("/settings/data.json").get_data())
    assert data["user"]["email"] == "asker@example.org" and data["user"]["emailConfirmed"] is True
    assert {(c["id"], c["name"], c["created"]) for c in data["communities"]} == {
        ("lobby", "虾扯淡广场", False), (made, "读书会", True), (theirs, "围棋社", False)}
    assert all(isinstance(c["joined"], int) for c in data["communities"])


def test_my_data_needs_a_login(client):
    r = client.get("/settings/data.json")
    assert r.status_code == 302 and "/login" in r.headers["Location"]


def test_the_settings_page_offers_the_download(asker):
    body = asker.http.get("/settings").get_data(as_text=True)
    assert 'href="/settings/data.json"' in body


def test_the_settings_page_leads_to_ones_own_profile(asker):
    """Where one's own questions are listed: before, only "asked by NAME" on a question
    one had already found led there."""
    body = asker.http.get("/settings").get_data(as_text=True)
    assert f'<a href="/u/{asker.username}" id="settings-profile-link">' in body
    assert asker.http.get(f"/u/{asker.username}").status_code == 200


def test_a_profile_says_who_is_an_admin_and_who_is_suspended_never_why(app, client, asker):
    """"administrator" and "admin" looked alike on their pages; a suspended spammer's page
    looked like anyone's."""
    from test_moderation import make_admin
    admin = make_admin(app)
    lookalike = Person(app, username="administrator").register()
    page = client.get(f"/u/{admin.username}?lang=en").get_data(as_text=True)
    assert '<span class="badge official">Site admin</span>' in page
    assert "Site admin" not in client.get(f"/u/{lookalike.username}?lang=en").get_data(as_text=True)
    admin.web_post("suspend_user", username=asker.username, reason="群发钓鱼链接")
    page = client.get(f"/u/{asker.username}?lang=en").get_data(as_text=True)
    assert "Suspended" in page and "群发钓鱼链接" not in page
