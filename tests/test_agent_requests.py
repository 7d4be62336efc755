"""The web side of the connector loop: "Ask my agents", the live research count, the
list_topics extension fields and the connector's last use and outcome on /agents."""
from __future__ import annotations

import json
import re
from html import unescape

import pytest

from conftest import Person, advance, count, good_result, joined_person
from helpers import assert_external_error, assert_web_error


def requests_of(db, topic: str) -> list[int]:
    return [r[0] for r in db.all("SELECT user_id FROM agent_requests WHERE topic_id = :topic_id", {"topic_id": topic})]


def test_ask_my_agents_marks_and_withdraws_and_list_topics_says_so(app, asker, member, db,
                                                                    clock_file):
    topic = asker.ask()
    agent = member.new_agent()
    first = agent.get("list_topics").get_json()
    assert first["requested"] == []
    [item] = first["topics"]
    assert (item["requestedByMe"], item["askedByMe"], item["answeredByMyAgents"]) == (False, False, False)
    assert "requestedAt" not in item

    r = member.web_post("agent_request", topic=topic, requested=True)
    assert r.status_code == 200 and r.get_json() == {"ok": True, "topic": topic, "requested": True}
    assert member.web_post("agent_request", topic=topic, requested=True).status_code == 200  # replays
    assert count(db, "agent_requests", "topic_id = :topic_id", {"topic_id": topic}) == 1
    listing = agent.get("list_topics").get_json()
    assert [t["id"] for t in listing["requested"]] == [topic]
    assert listing["topics"][0]["requestedByMe"] is True
    asked = db.value("SELECT created FROM agent_requests WHERE topic_id = :t", {"t": topic})
    assert listing["topics"][0]["requestedAt"] == listing["requested"][0]["requestedAt"] == asked
    advance(clock_file, 5)  # asking again moves the time: a connector that tried tries again
    assert member.web_post("agent_request", topic=topic, requested=True).status_code == 200
    assert agent.get("list_topics").get_json()["requested"][0]["requestedAt"] >= asked + 5
    assert count(db, "agent_requests", "topic_id = :topic_id", {"topic_id": topic}) == 1
    page = member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    assert ">Withdraw the request<" in page
    assert ">Ask again<" not in page  # nothing tried since: asking again would change nothing
    # Only the requesting user's agents see the mark.
    assert asker.new_agent().get("list_topics").get_json()["requested"] == []

    r = member.web_post("agent_request", topic=topic, requested=False)
    assert r.get_json() == {"ok": True, "topic": topic, "requested": False}
    assert requests_of(db, topic) == []
    assert agent.get("list_topics").get_json()["requested"] == []


@pytest.mark.parametrize("ending", ["failed", "ran out"])
def test_ask_again_is_offered_once_an_agent_tried_since_and_gave_no_answer(asker, member,
                                                                          clock_file, ending):
    """"Ask again" stood beside "Withdraw" from the moment one asked, with nothing to do
    yet; it shows once one of the reader's agents has tried since and ended with no answer
    (a connector tries a question asked for after its last try once more)."""
    topic = asker.ask()
    agent = member.new_agent()
    earlier = agent.claim(topic).get_json()["task"]["id"]
    assert agent.post("fail_task", taskId=earlier, error="试过一次").status_code == 200
    advance(clock_file, 1)
    member.web_post("agent_request", topic=topic, requested=True)
    again = ">Ask again<"
    assert again not in member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    task = agent.claim(topic).get_json()["task"]["id"]
    assert again not in member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)  # running
    if ending == "failed":
        assert agent.post("fail_task", taskId=task, error="工具出错").status_code == 200
    else:
        advance(clock_file, 31 * 60)  # not renewed: the lease runs out, settled by no one yet
        asker.ask("另一个问题？")  # a write: a page is kept until the next one (or 5 s)
    assert again in member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    advance(clock_file, 1)
    assert member.web_post("agent_request", topic=topic, requested=True).status_code == 200
    page = member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    assert again not in page and ">Withdraw the request<" in page


def test_list_topics_flags_the_users_own_questions_and_answered_ones(app, asker, member):
    own = member.ask("我自己问的问题？")
    answered = asker.ask("已经被我的虾回答的问题？")
    agent = member.new_agent()
    task = agent.claim(answered).get_json()["task"]
    assert agent.post("submit_result", taskId=task["id"], **good_result()).status_code == 200
    other_agent = member.new_agent(name="第二只虾")
    flags = {t["id"]: t for t in other_agent.get("list_topics").get_json()["topics"]}
    assert flags[own]["askedByMe"] is True and flags[own]["answeredByMyAgents"] is False
    assert flags[answered]["askedByMe"] is False and flags[answered]["answeredByMyAgents"] is True
    # The spec fields are unchanged.
    assert flags[own]["joined"] is True and flags[own]["questionVersion"] == 1


@pytest.mark.parametrize("body, status", [
    ({"requested": "yes"}, 400),                       # not a boolean
    ({"requested": True, "extra": 1}, 400),            # unknown field
    ({}, 400),                                         # missing
])
def test_agent_request_rejects_bad_input(asker, member, db, body, status):
    topic = asker.ask()
    assert_web_error(member.web_post("agent_request", topic=topic, **body), status)
    assert requests_of(db, topic) == []


def test_agent_request_needs_a_member_an_open_question_and_a_login(app, asker, db, make_person):
    topic = asker.ask()
    outsider = make_person()
    assert_web_error(outsider.web_post("agent_request", topic=topic, requested=True), 403)
    assert_web_error(asker.web_post("agent_request", topic="t_nope", requested=True), 404)
    assert_web_error(Person(app).web_post("agent_request", topic=topic, requested=True), 401)
    asker.web_post("close", topic=topic)
    assert_web_error(asker.web_post("agent_request", topic=topic, requested=True), 409)
    assert requests_of(db, topic) == []


def test_activity_counts_live_leases_only_and_the_stored_answers(app, asker, member, clock_file):
    topic = asker.ask()
    agents = [member.new_agent(name=f"虾{i}") for i in range(2)]
    tasks = [a.claim(topic).get_json()["task"] for a in agents]
    anonymous = Person(app)
    view = anonymous.web_get(action="activity", topic=topic).get_json()
    assert view == {"topic": topic, "status": "open", "messageCount": 0, "researching": 2}
    assert agents[0].post("submit_result", taskId=tasks[0]["id"], **good_result()).status_code == 200
    assert anonymous.web_get(action="activity", topic=topic).get_json()["researching"] == 1
    assert anonymous.web_get(action="activity", topic=topic).get_json()["messageCount"] == 1
    advance(clock_file, 31 * 60)  # the other lease runs out unrenewed
    assert anonymous.web_get(action="activity", topic=topic).get_json()["researching"] == 0
    assert_web_error(anonymous.web_get(action="activity", topic="t_nope"), 404)
    assert_web_error(anonymous.web_get(action="activity"), 400)


def test_a_closed_question_counts_no_research(app, asker, member):
    """A lease still running on a closed question can end in no answer: not research."""
    topic = asker.ask()
    member.new_agent().claim(topic)
    anonymous = Person(app)
    assert anonymous.web_get(action="activity", topic=topic).get_json()["researching"] == 1
    assert asker.web_post("close", topic=topic).status_code == 200
    view = anonymous.web_get(action="activity", topic=topic).get_json()
    assert view["status"] == "closed" and view["researching"] == 0
    assert "1 个智能体在研究" not in anonymous.http.get(f"/q/{topic}").get_data(as_text=True)


def test_a_lease_left_behind_by_one_who_left_counts_no_research(app, asker, member):
    """Leaving the community ends what a lease can do (no heartbeat, no submit): the page
    stops counting it, while another member's lease on the question still counts."""
    topic = asker.ask()
    leaver, stayer = member.new_agent(name="走虾"), joined_person(app).new_agent(name="留虾")
    task = leaver.claim(topic).get_json()["task"]["id"]
    assert stayer.claim(topic).status_code == 200
    anonymous = Person(app)
    assert anonymous.web_get(action="activity", topic=topic).get_json()["researching"] == 2
    assert member.communities_post("leave", community="lobby").status_code == 200
    assert leaver.post("heartbeat", taskId=task).status_code == 403
    assert anonymous.web_get(action="activity", topic=topic).get_json()["researching"] == 1
    assert member.communities_post("join", community="lobby").status_code == 200
    assert anonymous.web_get(action="activity", topic=topic).get_json()["researching"] == 1


def test_question_page_offers_ask_my_agents_and_shows_the_live_count(app, asker, member):
    topic = asker.ask()
    member.new_agent().claim(topic)
    page = member.http.get(f"/q/{topic}").get_data(as_text=True)
    bodies = [json.loads(unescape(b)) for b in re.findall(r"data-body='([^']*)'", page)]
    assert {"action": "agent_request", "topic": topic, "requested": True} in bodies
    assert 'id="live-research"' in page and f"action=activity&amp;topic={topic}" in page
    assert "1 个智能体在研究" in page
    member.web_post("agent_request", topic=topic, requested=True)
    page = member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    assert "Withdraw the request" in page and "1 agent is researching this question right now." in page
    # Anonymous readers see the count but get no button.
    anonymous = Person(app).http.get(f"/q/{topic}").get_data(as_text=True)
    assert "1 个智能体在研究" in anonymous and "agent_request" not in anonymous


def test_the_first_answer_by_ones_agents_fulfils_the_request(app, asker, member, db):
    """Asked, then answered: the mark goes with the answer, list_topics no longer lists the
    question as requested, and the page says the agent answered instead of offering to ask."""
    topic = asker.ask()
    member.web_post("agent_request", topic=topic, requested=True)
    agent = member.new_agent()
    task = agent.claim(topic).get_json()["task"]
    assert len(requests_of(db, topic)) == 1  # a claim alone fulfils nothing
    assert agent.post("submit_result", taskId=task["id"], **good_result()).status_code == 200
    assert requests_of(db, topic) == []
    assert agent.get("list_topics").get_json()["requested"] == []
    page = unescape(member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True))
    assert "Your agent answered this version" in page
    assert '"agent_request"' not in page and "Your agents will take this first" not in page
    # the asker, whose agents have not answered, is still offered it
    asker.new_agent()
    assert '"agent_request"' in unescape(asker.http.get(f"/q/{topic}").get_data(as_text=True))


def test_a_member_without_agents_is_pointed_to_agents_instead_of_asking_none(app, asker, member):
    """Nothing would take the question: no button that says something will."""
    topic = asker.ask()
    page = member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    assert '"agent_request"' not in unescape(page)
    assert ("Other members&#39; agents can answer here without anything from you. "
            '<a href="/agents">You have no agent of your own ready' in page)
    assert "Takes effect only where" not in page  # the connector hint, with nothing to connect
    agent = member.new_agent()
    page = member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    assert '"agent_request"' in unescape(page) and "You have no agent of your own ready" not in page
    assert member.manage_post("archive", profile=agent.profile_id).status_code == 200
    page = member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    assert "You have no agent of your own ready" in page  # an archived agent answers nothing
    member.new_agent()
    assert member.manage_post("revoke_all").status_code == 200
    page = member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True)
    assert '"agent_request"' not in unescape(page)  # nor does one whose tokens were revoked
    assert "You have no agent of your own ready" in page


def test_agents_page_shows_the_connectors_last_use_and_last_outcome(app, asker, member):
    agent = member.new_agent()
    page = member.http.get("/agents?lang=en").get_data(as_text=True)
    assert "The token has not been used yet" in page and "No tasks yet" in page
    topic = asker.ask()
    task = agent.claim(topic).get_json()["task"]
    agent.post("fail_task", taskId=task["id"], error="没有找到可靠来源")
    page = member.http.get("/agents?lang=en").get_data(as_text=True)
    assert "Token last used" in page
    # the outcome leads to the task (the question may be gone for them: taken down)
    assert "Last task: Failed" in page and "没有找到可靠来源" in page
    assert f'href="/tasks?topic={topic}"' in page


def test_list_topics_extension_is_in_the_served_openapi_document(client):
    doc = client.get("/docs/external-agents-openapi.json").get_json()
    item = doc["components"]["schemas"]["PublicTopic"]["properties"]
    assert {"askedByMe", "requestedByMe", "answeredByMyAgents"} <= set(item)
    assert "requested" in doc["components"]["schemas"]["TopicList"]["properties"]
    assert "扩展" in item["answeredByMyAgents"]["description"]


def test_asking_ones_agents_is_a_web_action_only(member, asker):
    # Agents cannot mark questions for themselves: the external API has no such action.
    agent = member.new_agent()
    assert_external_error(agent.post("agent_request", topic=asker.ask(), requested=True),
                          400, "unknown_action")


def test_developers_page_explains_the_connector_with_this_servers_address(open_client):
    page = open_client.get("/developers", base_url="https://qa.example.org").get_data(as_text=True)
    assert page.count("LOBBYTALKS_AGENT_SERVER=https://qa.example.org") == 3  # env, unit and cron
    for command in ("lobbytalks agent doctor", "lobbytalks agent run --harness codex",
                    "lobbytalks agent run --harness claude", "agent run --once",
                    "RestartPreventExitStatus=2 3 5"):
        assert command in page
    assert 'id="agent"' in page
    # Each snippet works on a fresh account: the token's folder is made first, and the unit
    # and the cron line give the PATH the harness is found on (cron's is /usr/bin:/bin).
    shown = unescape(page)
    assert "mkdir -p ~/.config/lobbytalks && install -m 600" in shown
    assert "Environment=PATH=%h/.local/bin:" in shown
    assert "*/20 * * * * PATH=$HOME/.local/bin:" in shown
    assert "a wheel or the single executable" not in shown  # pip installs no executable
    # Installed as Debian 12 lets a user (no pip into the system's Python), at the path the
    # unit starts (%h/.local/bin/lobbytalks).
    assert "python3 -m venv ~/.local/lobbytalks" in shown
    assert "ln -s ~/.local/lobbytalks/bin/lobbytalks ~/.local/bin/lobbytalks" in shown
    assert "ExecStart=%h/.local/bin/lobbytalks agent run" in shown
    assert "\npip install" not in shown
    # The token is read from the terminal, not echoed into the shell's history, and the
    # Chinese page's code carries no English comments (what they said is in its hint).
    assert 'read -rs T && printf %s "$T" > ~/.config/lobbytalks/agent-token && unset T' in shown
    snippets = re.findall(r'<code id="agent-[a-z]+">(.*?)</code>', page, re.S)
    assert len(snippets) == 5 and not [s for s in snippets if "   # " in unescape(s)]


def test_a_new_version_may_be_asked_of_ones_agents_again(app, asker, member):
    """An answer to version 1 does not answer version 2: list_topics no longer flags the
    question as answered by the user's agents, and the page offers "Ask my agents" again."""
    from qa_helpers import answer, revise
    topic = asker.ask()
    agent = member.new_agent()
    answer(agent, topic)
    flags = {t["id"]: t for t in agent.get("list_topics").get_json()["topics"]}
    assert flags[topic]["answeredByMyAgents"] is True
    assert revise(asker, topic, description="条件变了：现在是 80 GB。") == 2
    flags = {t["id"]: t for t in agent.get("list_topics").get_json()["topics"]}
    assert flags[topic]["answeredByMyAgents"] is False and flags[topic]["questionVersion"] == 2
    page = unescape(member.http.get(f"/q/{topic}?lang=en").get_data(as_text=True))
    assert "Your agent has answered" not in page and '"agent_request"' in page
    answer(agent, topic)
    assert agent.get("list_topics").get_json()["topics"][0]["answeredByMyAgents"] is True
