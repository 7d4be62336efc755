"""``lobbytalks agent`` against a real server: what it chooses when its owner is not in a
community, what a stop leaves to try again, what a harness's FIFO and a rejected token do.
The world and scene are test_connector's (one server for the module)."""
from __future__ import annotations

import signal
import sys
import textwrap

from test_connector import (EXIT_OK, EXIT_TASK_FAILED, EXIT_TOKEN, hold, names, release,
                            started, wait_for)
from test_connector import scene, world  # noqa: F401  (the module's server and a scene on it)


def leave(scene) -> None:
    r = scene.owner.post(scene.world.server.url + "/api/communities",
                         json={"action": "leave", "community": scene.community})
    assert r.status_code == 200, r.text


def test_questions_of_a_community_one_is_not_in_are_skipped_and_said_not_used_up(scene):
    """The listing is not refused (each item says joined: false): the connector claimed, was
    refused forbidden, and never tried the question again after its owner joined."""
    leave(scene)
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK, events
    [skipped] = [e for e in events if e["event"] == "skipped_not_joined"]
    assert skipped["topics"] == 1 and "claimed" not in names(events)
    assert scene.tasks() == []
    # asked for by name, the refused claim is "not now", and costs the question nothing
    code, events = scene.finish(scene.connector("answer", scene.topic))
    assert code == EXIT_TASK_FAILED and "deferred" in names(events), events
    assert "rejected" not in names(events)
    scene.world.join(scene.owner, scene.community)
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK and "submitted" in names(events), events
    assert len(scene.messages()) == 1


def test_a_stop_is_not_a_try_the_question_is_chosen_again_at_the_next_start(scene):
    """SIGTERM mid-research failed the task and the question was never tried again from
    this state folder: a routine restart dropped it."""
    hold(scene)
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community)
    wait_for(lambda: started(scene), what="research to start")
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc, timeout=20)
    assert code == EXIT_OK and "task_failed" in names(events), events
    release(scene)
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK and "submitted" in names(events), events
    assert sorted(t["state"] for t in scene.tasks()) == ["done", "failed"]


def test_a_closed_terminal_stops_it_as_sigterm_does(scene):
    """SIGHUP (the terminal closed) ended the process at once: the harness, in a session of
    its own, ran on and the lease stayed held, with no fail_task."""
    hold(scene)
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community)
    wait_for(lambda: started(scene), what="research to start")
    proc.send_signal(signal.SIGHUP)
    code, events = scene.finish(proc, timeout=20)
    assert code == EXIT_OK, events
    assert [e["signal"] for e in events if e["event"] == "stopping"] == ["SIGHUP"]
    [task] = scene.tasks()
    assert task["state"] == "failed" and "stopped" in task["error"]


def test_a_reader_gone_away_leaves_no_traceback_and_no_silent_lease(scene):
    """With `| head`, the first line after the reader left raised BrokenPipeError in a
    thread: tracebacks, exit 1, and the task left leased on the server."""
    hold(scene)
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community)
    proc.stdout.readline()  # something was read, as `head -1` does, and then
    proc.stdout.close()     # the reader went away
    wait_for(lambda: started(scene), what="research to start")
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=20)[1]
    assert proc.returncode == EXIT_OK, err
    assert "Traceback" not in err and "Broken pipe" not in err, err
    [task] = scene.tasks()
    assert task["state"] == "failed" and "stopped" in task["error"]


def test_a_fifo_the_harness_left_neither_hangs_the_connector_nor_its_stop(scene, tmp_path):
    """The token scrub opened the FIFO for reading and waited for a writer for good; SIGTERM
    never ended the process."""
    harness = tmp_path / "fifo.py"
    harness.write_text(textwrap.dedent(f"""\
        import os, pathlib, sys
        os.mkfifo("pipe")
        sys.stdout.write(pathlib.Path({str(scene.stub_dir / "result.json")!r}).read_text())
    """))
    code, events = scene.finish(scene.run_once(
        harness=["--harness", "command", "--harness-command", f"{sys.executable} {harness}"]),
        timeout=60)
    assert code == EXIT_OK and "submitted" in names(events), events


def test_an_archived_agents_token_is_said_as_the_server_says_it(scene):
    """It read "revoked, expired, or its owner suspended: create or rotate it", and doctor
    said to rotate a token that can never come back."""
    r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                         json={"action": "archive", "profile": scene.agent["profileId"]})
    assert r.status_code == 200, r.text
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_TOKEN
    [rejected] = [e for e in events if e["event"] == "token_rejected"]
    assert "已归档" in rejected["message"] and "connect a new agent" in rejected["message"]
    code, events = scene.finish(scene.connector("doctor"))
    [token] = [e for e in events if e.get("name") == "token"]
    assert token["ok"] is False and "已归档" in token["message"]
    assert "connect a new agent" in token["fix"]


def test_a_state_folder_made_by_hand_is_closed_to_others_and_a_missing_token_file_named(
        scene, tmp_path):
    """run worked on in a 0777 folder (only doctor said so); doctor told a person whose
    --token-file was missing to export a variable."""
    scene.state_dir.mkdir(mode=0o777)
    scene.state_dir.chmod(0o777)  # whatever the umask
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK, events
    assert oct(scene.state_dir.stat().st_mode & 0o777) == "0o700"
    missing = tmp_path / "agent-token"
    code, events = scene.finish(scene.connector("doctor", "--token-file", str(missing)))
    [token] = [e for e in events if e.get("name") == "token"]
    assert token["ok"] is False and str(missing) in token["fix"], token


def test_every_reason_a_result_is_refused_for_goes_back_to_the_harness_at_once():
    """Only the first went back: the one retry mended the conclusion and met the source."""
    from conftest import good_result
    from lobbytalks.connector.submission import submission
    evidence = good_result()["evidence"][0]
    local = {**evidence, "url": "http://localhost/notes", "retrievedAt": "yesterday"}
    second = {**evidence, "url": "https://example.org/ok"}
    too_long = good_result(conclusion="结论" * 150, evidence=[local, second])
    body, problems = submission("task_x", too_long, None, now=1_800_000_000)
    assert body is None and len(problems) == 3, problems
    assert problems[0].startswith("invalid_request: conclusion: ")
    assert problems[1].startswith("invalid_source: evidence[1]: ") and "https" in problems[1]
    assert problems[2].startswith("invalid_source: evidence[1]: retrievedAt"), problems
    # the schema passes: the sources' policy, the citations and the support, each said
    cited = good_result(conclusion="用在线备份 API 得到一致副本 [S3]，不要直接复制数据库文件。",
                        evidence=[local, second])
    body, problems = submission("task_x", cited, None, now=1_800_000_000)
    assert body is None and [p.split(":")[0] for p in problems] == [
        "invalid_source", "invalid_source", "invalid_citation"], problems
    # two fields of one evidence item, and the citations though the schema refused the rest
    bare = {**evidence, "title": "", "excerpt": " "}
    faulty = good_result(uncertainties=[""], conclusion="结论要有出处，并且要写到三十个字以上才算数，这里故意引用一个不存在的来源 [S3]。",
                         evidence=[bare])
    body, problems = submission("task_x", faulty, None, now=1_800_000_000)
    assert [p.split(": ")[1] for p in problems[:3]] == [
        "uncertainties[1]", "evidence[1].title", "evidence[1].excerpt"], problems
    assert problems[3].startswith("invalid_citation: [S3]") and len(problems) == 4, problems
    body, problems = submission("task_x", good_result(), None, now=1_800_000_000)
    assert body is not None and problems == []


def test_a_result_mended_by_exactly_the_reasons_given_passes():
    """An http URL hid a future retrievedAt, a malformed time hid a repeated URL, and the
    schema's refusal hid a key in the reasoning: the mended result met three new reasons."""
    from conftest import good_result
    from lobbytalks.connector.submission import submission
    now = 1_800_000_000
    item = good_result()["evidence"][0]
    future = {**item, "url": "http://example.org/a", "retrievedAt": "2099-01-01T00:00:00Z"}
    second = {**item, "url": "https://example.org/b"}
    again = {**item, "url": "https://example.org/b#part", "retrievedAt": "soon"}
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    faulty = good_result(conclusion="结论" * 150, evidence=[future, second, again],
                         reasoningSummary=f"用这个密钥 {key} 登录控制台核对了备份设置，结果一致。")
    body, problems = submission("task_x", faulty, None, now=now)
    said = [p.split(": ")[0] + ": " + p.split(": ")[1] for p in problems]
    assert said == ["invalid_request: conclusion", "invalid_source: evidence[1]",
                    "invalid_source: evidence[1]", "invalid_source: evidence[3]",
                    "invalid_source: evidence[3]", "sensitive_content: reasoningSummary"], problems
    assert len(set(problems)) == len(problems)
    mended = good_result(evidence=[{**future, "url": "https://example.org/a",
                                    "retrievedAt": "2026-10-01T00:00:00Z"}, second],
                         reasoningSummary="登录控制台核对了备份设置，备份文件与线上数据库的校验和一致。")
    body, problems = submission("task_x", mended, None, now=now)
    assert body is not None and problems == [], problems
