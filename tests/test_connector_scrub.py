"""What a harness left in its work folder, with the token taken out (``connector.scrub``):
every way the result check knows it by, in files it can read without waiting for good."""
from __future__ import annotations

import base64
import codecs
import os
import shutil
import threading
from pathlib import Path

import pytest

from lobbytalks.connector.scrub import DISGUISED, SCRUB_LIMIT, TOO_LARGE
from lobbytalks.connector.state import StateStore
from lobbytalks.security import holds_disguised, new_agent_token

TOKEN = new_agent_token()


@pytest.fixture
def work(tmp_path) -> tuple[StateStore, dict, Path]:
    store = StateStore(tmp_path / "state").open()
    attempt = {"requestId": "8b0c4a4e-3f5a-4c1e-9a57-0d0c0f1e2a3b"}
    folder = store.work / attempt["requestId"]
    folder.mkdir(mode=0o700)
    return store, attempt, folder


@pytest.mark.parametrize("written", [
    TOKEN, TOKEN[::-1], codecs.encode(TOKEN, "rot13"), codecs.encode(TOKEN, "rot13")[::-1],
    TOKEN.encode().hex(), TOKEN.encode().hex().upper(), base64.b64encode(TOKEN.encode()).decode(),
    base64.b64encode(b"x" + TOKEN.encode()).decode(),  # starting mid-group
    TOKEN[4:].encode().hex(), base64.b64encode(TOKEN[4:].encode()).decode(),  # no "lbt_"
], ids=["plain", "backwards", "rot13", "rot13-backwards", "hex", "HEX", "base64", "base64-shifted",
        "body-hex", "body-base64"])
def test_the_token_is_taken_out_in_every_form_the_result_check_refuses(work, written):
    """Only the token as written was replaced: backwards it stayed in stdout-1.txt."""
    store, attempt, folder = work
    (folder / "stdout-1.txt").write_text(f"tool run: {written} done\n")
    store.scrub_work(attempt, (TOKEN,))
    kept = (folder / "stdout-1.txt").read_bytes()
    # (base64's first and last few letters depend on what is around the token: a crumb of
    # it may stay, too little to read it by)
    assert kept.startswith(b"tool run: ") and b"[redacted]" in kept, kept
    assert written.encode() not in kept and not holds_disguised(kept.decode(), TOKEN)


def test_a_token_spelt_out_leaves_a_notice_in_place_of_the_file(work):
    store, attempt, folder = work
    spaced = " ".join(TOKEN)
    (folder / "notes.md").write_text(f"# notes\nthe token: {spaced}\n")
    (folder / "plain.txt").write_text("nothing secret here\n")
    store.scrub_work(attempt, (TOKEN,))
    assert (folder / "notes.md").read_bytes() == DISGUISED
    assert (folder / "plain.txt").read_text() == "nothing secret here\n"  # left as it was


def test_binary_data_is_searched_for_the_written_forms_only(work, monkeypatch):
    """Disguises are for a reader to undo: looking for them in an image or a database took
    about 1.4 s a MiB, which a stop waited for. The token written plainly is still taken
    out of it, and a text file is still searched for every disguise."""
    from lobbytalks.connector import scrub as scrubbing
    store, attempt, folder = work
    noise = bytes(range(128, 256)) * 64
    (folder / "image.bin").write_bytes(noise + TOKEN.encode() + noise + TOKEN.encode("utf-16-le"))
    (folder / "notes.txt").write_text("the token: " + " ".join(TOKEN))
    searched = []
    monkeypatch.setattr(scrubbing, "holds_disguised",
                        lambda text, secret: searched.append(text) or holds_disguised(text, secret))
    store.scrub_work(attempt, (TOKEN,))
    assert (folder / "image.bin").read_bytes() == (noise + b"[redacted]") * 2
    assert (folder / "notes.txt").read_bytes() == DISGUISED
    assert searched and all("\ufffd" not in text for text in searched), searched


def test_a_fifo_is_passed_over_and_the_scrub_ends(work):
    """Opening a FIFO the harness made waited for a writer for good: the connector hung after
    submitting and no signal stopped it."""
    store, attempt, folder = work
    os.mkfifo(folder / "pipe")
    (folder / "after.txt").write_text(TOKEN)
    done = threading.Event()
    scrubbing = threading.Thread(target=lambda: (store.scrub_work(attempt, (TOKEN,)), done.set()),
                                 daemon=True)
    scrubbing.start()
    scrubbing.join(timeout=10)
    assert done.is_set(), "the scrub waited on the FIFO"
    assert (folder / "after.txt").read_text() == "[redacted]"
    assert (folder / "pipe").exists()


def test_a_file_too_large_to_search_is_replaced_and_a_link_is_not_followed(work, tmp_path):
    store, attempt, folder = work
    huge = folder / "dump.bin"
    with huge.open("wb") as file:  # sparse: nothing this large is written to the disk
        file.write(TOKEN.encode())
        file.truncate(SCRUB_LIMIT + 1)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text(TOKEN)
    (folder / "link.txt").symlink_to(outside)
    store.scrub_work(attempt, (TOKEN,))
    assert huge.read_bytes() == TOO_LARGE
    assert outside.read_text() == TOKEN  # not the harness's to have rewritten
    assert oct(huge.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-16"])
def test_the_token_written_in_utf16_is_taken_out(work, encoding):
    """A NUL between its letters hid it from every form: both copies stayed whole."""
    store, attempt, folder = work
    (folder / "log.txt").write_bytes(f"log: token is {TOKEN}\n".encode(encoding))
    store.scrub_work(attempt, (TOKEN,))
    kept = (folder / "log.txt").read_bytes()
    assert TOKEN.encode(encoding)[2:] not in kept and TOKEN.encode() not in kept
    assert not holds_disguised(kept.replace(b"\0", b"").decode("utf-8", "replace"), TOKEN)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_the_token_in_fullwidth_letters_in_utf16_leaves_a_notice(work, encoding):
    store, attempt, folder = work
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in TOKEN)
    (folder / "fw.bin").write_bytes(f"token: {fullwidth}".encode(encoding))
    store.scrub_work(attempt, (TOKEN,))
    assert (folder / "fw.bin").read_bytes() == DISGUISED


def test_names_holding_the_token_are_renamed_and_what_is_in_them_kept(work):
    store, attempt, folder = work
    (folder / f"dir_{TOKEN}").mkdir()
    (folder / f"dir_{TOKEN}" / f"tok_{TOKEN[4:]}.log").write_text("kept as it was\n")
    (folder / "dir_[redacted]").mkdir()  # a name the renaming must not take over
    store.scrub_work(attempt, (TOKEN,))
    names = [p.name for p in folder.rglob("*")]
    assert not any(TOKEN[4:] in name for name in names), names
    [log] = [p for p in folder.rglob("*") if p.is_file()]  # (a name holding the token in
    assert log.read_text() == "kept as it was\n"           # part is replaced whole)
    assert (folder / "dir_[redacted]").is_dir() and (folder / "dir_[redacted]-1").is_dir()


def test_a_work_folder_swapped_for_a_link_is_neither_scrubbed_through_nor_written_into(
        work, tmp_path):
    """os.walk follows a link given as its top: files outside the state folder were
    rewritten, and the next run's output was written there."""
    store, attempt, folder = work
    outside = tmp_path / "victim"
    outside.mkdir()
    (outside / "notes.txt").write_text(f"token {TOKEN}")
    (outside / "data.csv").write_bytes(b"x" * 64)
    folder.rmdir()
    folder.symlink_to(outside)
    store.scrub_work(attempt, (TOKEN,))
    assert (outside / "notes.txt").read_text() == f"token {TOKEN}"  # not ours to rewrite
    assert store.work_dir(attempt).is_dir() and not folder.is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == ["data.csv", "notes.txt"]


def test_the_connector_writes_no_output_through_a_link_the_harness_planted(tmp_path):
    from lobbytalks.connector.harness import owner_only
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious")
    (tmp_path / "stdout-2.txt").symlink_to(target)
    with pytest.raises(OSError):
        open(tmp_path / "stdout-2.txt", "wb", opener=owner_only)
    assert target.read_text() == "precious"


def test_a_link_planted_under_the_scrubs_temporary_name_is_never_written_through(work, tmp_path):
    """The temporary file was named after the connector's pid, which a harness learns from
    os.getppid(): a link planted under that name had the scrub write the harness's text over
    any file of the owner's (~/.bashrc)."""
    store, attempt, folder = work
    victim = tmp_path / "bashrc"
    victim.write_text("ORIGINAL")
    (folder / "leak.txt").write_text(f"{TOKEN}\nHARNESS-CHOSEN CONTENT")
    (folder / f".leak.txt.{os.getpid()}.tmp").symlink_to(victim)
    store.scrub_work(attempt, (TOKEN,))
    assert victim.read_text() == "ORIGINAL"
    assert not (folder / "leak.txt").is_symlink()
    assert (folder / "leak.txt").read_text() == "[redacted]\nHARNESS-CHOSEN CONTENT"


def test_a_work_folder_one_level_up_swapped_for_a_link_is_not_walked_written_or_pruned(
        work, tmp_path):
    store, attempt, folder = work
    victim = tmp_path / "victim"
    (victim / attempt["requestId"]).mkdir(parents=True)
    (victim / attempt["requestId"] / "victim.txt").write_text(f"victim data {TOKEN}")
    shutil.rmtree(store.work)
    store.work.symlink_to(victim)
    store.scrub_work(attempt, (TOKEN,))
    assert (victim / attempt["requestId"] / "victim.txt").read_text() == f"victim data {TOKEN}"
    made = store.work_dir(attempt)
    assert not store.work.is_symlink() and made.is_dir()
    assert (victim / attempt["requestId"] / "victim.txt").exists()  # left where it was
