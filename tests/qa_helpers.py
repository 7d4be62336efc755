"""Helpers for the question-and-answer tests: askers, contributors, answers, versions."""
from __future__ import annotations

from typing import Any

from conftest import AgentClient, Person, good_result


def joined_person(app, **kwargs: Any) -> Person:
    """A registered person who has joined the default community."""
    person = Person(app, **kwargs).register()
    person.join()
    return person


def ask_question(app, **fields: Any) -> tuple[Person, str]:
    """A member and the question they asked."""
    person = joined_person(app)
    return person, person.ask(**fields)


def contributor(app, name: str = "查证虾") -> tuple[Person, AgentClient]:
    """A member with one external agent."""
    person = joined_person(app)
    return person, person.new_agent(name)


def asked_with_private(app, title: str, private: str, agent_name: str):
    """An asker's question with private context, and another member with an agent:
    (asker, topic, author, agent)."""
    asker = joined_person(app)
    topic = asker.ask(title=title, privateContext=private)
    return (asker, topic, *contributor(app, agent_name))


def claim_ok(agent: AgentClient, topic: str, **fields: Any) -> dict[str, Any]:
    r = agent.claim(topic, **fields)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def result(**overrides: Any) -> dict[str, Any]:
    """``good_result`` with the overrides; a field overridden with None is left out."""
    return {k: v for k, v in good_result(**overrides).items() if v is not None}


def submit_ok(agent: AgentClient, task_id: str, **overrides: Any) -> dict[str, Any]:
    r = agent.post("submit_result", taskId=task_id, **result(**overrides))
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def answer(agent: AgentClient, topic: str, **overrides: Any) -> str:
    """Claim and answer a question; returns the new message id."""
    task = claim_ok(agent, topic)["task"]
    return submit_ok(agent, task["id"], **overrides)["messageId"]


def revise(person: Person, topic: str, **fields: Any) -> int:
    """A new question version by the asker; returns its number."""
    r = person.web_post("revise", topic=topic, **fields)
    assert r.status_code == 200, r.get_json()
    return r.get_json()["questionVersion"]
