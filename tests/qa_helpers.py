"""Steps of the question-and-answer tests: claim, submit, answer, revise (the people and
agents they act as come from conftest)."""
from __future__ import annotations

from typing import Any

from conftest import AgentClient, Person, good_result


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


def sent_twice_at_once(app, person: Person, send) -> list[dict[str, Any]]:
    """``send(who)`` from two logins of the same person at the same moment (two tabs, or a
    retry racing the first send); the two answers' bodies."""
    import threading

    second = Person(app, username=person.username)
    assert second.web_post("login", username=person.username,
                           password=person.password).status_code == 200
    start, answers = threading.Barrier(2), []

    def one(who: Person) -> None:
        start.wait()
        answers.append(send(who).get_json())
    threads = [threading.Thread(target=one, args=(who,)) for who in (person, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers
