"""Private-context sealing: keyring format, key file handling, startup check and rotation."""
from __future__ import annotations

import base64
import logging
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from lobbytalks import key_rotation, keystore
from lobbytalks.crypto import DecryptionFailed, Keyring, SecretKeyProblem

SCHEMA = Path(__file__).resolve().parents[1] / "lobbytalks/sql/migrations/0001_initial.sql"
SECRET = "only the asker knows: budget is 4711 EUR, vendor is Zyxwvut GmbH"
posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")


def b64(raw: bytes, urlsafe: bool = False) -> str:
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "test.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(SCHEMA.read_text("utf-8"))
    conn.execute(
        "INSERT INTO users (id, username, password_hash, created) VALUES (1, 'alice', 'x', 0)")
    for topic in ("t1", "t2", "t3"):
        conn.execute(
            "INSERT INTO topics (id, community_id, island_id, author_id, original_title, title,"
            " created, updated) VALUES (?, 'lobby', 'commons', 1, 'q', 'q', 0, 0)", (topic,))
    yield conn
    conn.close()


def store(conn, keyring, topic_id, version, plaintext, public=""):
    key_id, blob = keyring.encrypt(plaintext, topic_id=topic_id, version=version)
    conn.execute(
        "INSERT INTO question_versions (topic_id, version, title, public_context, private_key_id,"
        " private_context, created) VALUES (?, ?, 'q', ?, ?, ?, 0)",
        (topic_id, version, public, key_id, blob))


def rows(conn):
    return conn.execute(
        "SELECT topic_id, version, private_key_id, private_context FROM question_versions"
        " ORDER BY topic_id, version").fetchall()


# --- encrypt / decrypt ---------------------------------------------------------------------------

def test_round_trip():
    kr = Keyring.generate()
    key_id, blob = kr.encrypt(SECRET, topic_id="t1", version=2)
    assert key_id == "k1"
    assert kr.decrypt(key_id, blob, topic_id="t1", version=2) == SECRET
    assert kr.decrypt(*kr.encrypt("", topic_id="t1", version=1), topic_id="t1", version=1) == ""


def test_random_nonce_makes_each_ciphertext_different():
    kr = Keyring.generate()
    blobs = {kr.encrypt(SECRET, topic_id="t1", version=1)[1] for _ in range(5)}
    assert len(blobs) == 5
    assert len({b[:12] for b in blobs}) == 5
    assert all(SECRET.encode() not in b for b in blobs)


@pytest.mark.sqlite_only
def test_plaintext_absent_from_database_file(db, tmp_path):
    kr = Keyring.generate()
    marker = "PUBLIC-MARKER-visible-in-file"
    store(db, kr, "t1", 1, SECRET, public=marker)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("test.db*"))
    assert marker.encode() in raw  # control: the row really reached the file
    assert SECRET.encode() not in raw
    assert b"Zyxwvut" not in raw
    (key_id, blob), = db.execute("SELECT private_key_id, private_context FROM question_versions")
    assert kr.decrypt(key_id, blob, topic_id="t1", version=1) == SECRET


@pytest.mark.parametrize("index", [0, 11, 12, 40, -1])
def test_tampered_byte_fails(index):
    kr = Keyring.generate()
    key_id, blob = kr.encrypt(SECRET, topic_id="t1", version=1)
    bad = bytearray(blob)
    bad[index] ^= 0x01
    with pytest.raises(DecryptionFailed) as err:
        kr.decrypt(key_id, bytes(bad), topic_id="t1", version=1)
    assert SECRET not in str(err.value)


def test_truncated_or_non_blob_fails():
    kr = Keyring.generate()
    key_id, blob = kr.encrypt(SECRET, topic_id="t1", version=1)
    for bad in (blob[:27], b"", "text", None):
        with pytest.raises(DecryptionFailed):
            kr.decrypt(key_id, bad, topic_id="t1", version=1)


@pytest.mark.parametrize("topic_id,version", [("t2", 1), ("t1", 2), ("t1:1", 1), ("", 1)])
def test_ciphertext_moved_to_another_row_fails(topic_id, version):
    kr = Keyring.generate()
    key_id, blob = kr.encrypt(SECRET, topic_id="t1", version=1)
    with pytest.raises(DecryptionFailed):
        kr.decrypt(key_id, blob, topic_id=topic_id, version=version)


def test_wrong_or_unknown_key_fails():
    key_id, blob = Keyring.generate().encrypt(SECRET, topic_id="t1", version=1)
    with pytest.raises(DecryptionFailed):
        Keyring.generate().decrypt(key_id, blob, topic_id="t1", version=1)
    other = Keyring.generate("k2")
    with pytest.raises(DecryptionFailed, match="not in the keyring"):
        other.decrypt(key_id, blob, topic_id="t1", version=1)


def test_fingerprint_and_repr_hide_key():
    a, b = Keyring.generate(), Keyring.generate()
    raw = a._keys["k1"]
    fp = a.fingerprint("k1")
    assert len(fp) == 8 and fp == a.fingerprint() == Keyring.parse(a.dump()).fingerprint("k1")
    assert fp != b.fingerprint()
    assert fp not in raw.hex()
    for secret_form in (raw.hex(), b64(raw), b64(raw, urlsafe=True)):
        assert secret_form not in repr(a)


# --- parse / dump -------------------------------------------------------------------------------

def test_parse_formats_and_current_is_last():
    k1, k2 = os.urandom(32), os.urandom(32)
    bare = Keyring.parse(b64(k1))
    assert bare.ids == ("k1",) and bare.current_id == "k1"
    text = f"# comment\n\n k1:{b64(k1)} \n# another\nk2:{b64(k2, urlsafe=True).rstrip('=')}\n\n"
    kr = Keyring.parse(text)
    assert kr.current_id == "k2" and kr.ids == ("k1", "k2")
    assert kr._keys == {"k1": k1, "k2": k2}
    assert Keyring.parse(f"k2:{b64(k2)}\nk1:{b64(k1)}").current_id == "k1"


def test_dump_is_inverse_of_parse():
    kr = Keyring.generate().with_new_key().with_new_key()
    again = Keyring.parse(kr.dump())
    assert again == kr and again.current_id == "k3"
    key_id, blob = kr.encrypt(SECRET, topic_id="t", version=1)
    assert again.decrypt(key_id, blob, topic_id="t", version=1) == SECRET


GOOD = b64(bytes(range(32)))


@pytest.mark.parametrize("text,fragment", [
    ("", "no key found"),
    ("# only a comment\n\n", "no key found"),
    ("k1:" + b64(bytes(range(31))), "31 bytes"),
    ("k1:" + b64(bytes(range(33))), "33 bytes"),
    ("k1:not*base64*at*all!!", "not valid base64"),
    ("k1:" + GOOD + "\nk1:" + GOOD, "duplicate key id"),
    ("k 1:" + GOOD, "invalid key id"),
    (":" + GOOD, "invalid key id"),
    (GOOD + "\n" + GOOD, "only allowed alone"),
    ("Sup3rS3cretPass:word", "decodes to 3 bytes"),  # a passphrase, not a key
    ("k1:" + GOOD + "\n" + GOOD, "only allowed alone"),
])
def test_parse_errors_are_clear_and_never_echo_keys(text, fragment):
    with pytest.raises(SecretKeyProblem, match=fragment) as err:
        Keyring.parse(text)
    message = str(err.value)
    for line in text.splitlines():
        key_id, _, material = line.partition(":")
        for part in (material or line, key_id):
            if len(part) > 2 and not line.startswith("#"):
                assert part not in message


def test_with_new_key_keeps_old_keys():
    kr = Keyring.generate()
    old_id, old_blob = kr.encrypt(SECRET, topic_id="t1", version=1)
    new = kr.with_new_key()
    assert new.current_id == "k2" and new.ids == ("k1", "k2")
    assert kr.ids == ("k1",)  # original untouched
    assert new.fingerprint("k1") == kr.fingerprint("k1") != new.fingerprint("k2")
    assert new.decrypt(old_id, old_blob, topic_id="t1", version=1) == SECRET
    assert new.encrypt(SECRET, topic_id="t1", version=1)[0] == "k2"


# --- key file -----------------------------------------------------------------------------------

def test_missing_key_without_create_is_clear(tmp_path):
    path = tmp_path / "data" / "secret.key"
    with pytest.raises(SecretKeyProblem) as err:
        keystore.load_keyring(env_value="", key_path=path, create=False)
    assert str(path) in str(err.value) and "LOBBYTALKS_SECRET_KEY" in str(err.value)
    assert not path.exists()


@posix_only
def test_created_key_file_is_owner_only_and_stable(tmp_path):
    path = tmp_path / "new-dir" / "secret.key"
    previous = os.umask(0)  # the mode must come from os.open, not from a friendly umask
    try:
        kr = keystore.load_keyring(env_value="", key_path=path, create=True)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert kr.ids == ("k1",)
    assert Keyring.parse(path.read_text()) == kr
    again = keystore.load_keyring(env_value="", key_path=path, create=True)
    assert again == kr  # second start reuses, never regenerates
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret.key"]  # no temp files


def test_concurrent_creator_wins_and_is_not_clobbered(tmp_path, monkeypatch):
    path = tmp_path / "secret.key"
    other = Keyring.generate()
    real_write_temp = keystore._write_temp

    def racing_write_temp(target, text):  # another process creates the file meanwhile
        tmp = real_write_temp(target, text)
        target.write_text(other.dump())
        return tmp

    monkeypatch.setattr(keystore, "_write_temp", racing_write_temp)
    assert keystore.load_keyring(env_value="", key_path=path, create=True) == other
    assert Keyring.parse(path.read_text()) == other
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.key"]


@posix_only
def test_save_keyring_replaces_loose_file_with_owner_only(tmp_path):
    path = tmp_path / "secret.key"
    path.write_text("junk")
    path.chmod(0o644)
    kr = Keyring.generate().with_new_key()
    keystore.save_keyring(kr, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Keyring.parse(path.read_text()) == kr


@posix_only
def test_group_readable_key_file_warns(tmp_path, caplog):
    path = tmp_path / "secret.key"
    keystore.save_keyring(Keyring.generate(), path)
    with caplog.at_level(logging.WARNING, logger="lobbytalks.crypto"):
        keystore.load_keyring(env_value="", key_path=path, create=False)
    assert not caplog.records
    path.chmod(0o640)
    with caplog.at_level(logging.WARNING, logger="lobbytalks.crypto"):
        keystore.load_keyring(env_value="", key_path=path, create=False)
    assert any("chmod 600" in r.getMessage() for r in caplog.records)


def test_a_key_file_that_is_no_text_is_said_so(tmp_path):
    """The message named an exception, UnicodeDecodeError, not the problem."""
    path = tmp_path / "secret.key"
    path.write_bytes(b"\xff\xfe\x00k1")
    with pytest.raises(SecretKeyProblem) as refused:
        keystore.load_keyring(env_value="", key_path=path, create=False)
    assert str(refused.value) == (f"cannot read secret key file {path}: it is not text (a key "
                                  "file holds lines such as k1:<base64>)")


def test_env_value_overrides_file(tmp_path):
    path = tmp_path / "secret.key"
    file_kr, env_kr = Keyring.generate(), Keyring.generate()
    keystore.save_keyring(file_kr, path)
    loaded = keystore.load_keyring(env_value=env_kr.dump(), key_path=path, create=True)
    assert loaded == env_kr and loaded != file_kr and loaded.from_env
    missing = tmp_path / "absent.key"
    keystore.load_keyring(env_value=b64(os.urandom(32)), key_path=missing, create=True)
    assert not missing.exists()
    assert keystore.load_keyring(env_value="  ", key_path=path, create=False) == file_kr


def test_malformed_sources_name_where(tmp_path):
    with pytest.raises(SecretKeyProblem, match="LOBBYTALKS_SECRET_KEY: line 1"):
        keystore.load_keyring(env_value="k1:short", key_path=tmp_path / "x", create=True)
    path = tmp_path / "secret.key"
    path.write_text("\n")
    with pytest.raises(SecretKeyProblem, match="secret.key: no key found"):
        keystore.load_keyring(env_value="", key_path=path, create=True)


# --- database -----------------------------------------------------------------------------------

@pytest.mark.sqlite_only
def test_verify_keyring_accepts_right_key_and_rejects_wrong_one(db):
    kr = Keyring.generate().with_new_key()
    store(db, kr, "t1", 1, SECRET)
    key_rotation.verify_keyring(db, kr)
    key_rotation.verify_keyring(db, Keyring.parse(kr.dump()))
    wrong = Keyring.generate().with_new_key()  # same ids, different keys
    with pytest.raises(SecretKeyProblem, match="does not match this database") as err:
        key_rotation.verify_keyring(db, wrong)
    assert SECRET not in str(err.value)
    with pytest.raises(SecretKeyProblem, match="lacks"):
        key_rotation.verify_keyring(db, Keyring.generate("k1"))


@pytest.mark.sqlite_only
def test_verify_keyring_checks_every_key_id_in_use(db):
    kr = Keyring.generate()
    store(db, kr, "t1", 1, SECRET)
    kr2 = kr.with_new_key()
    store(db, kr2, "t2", 1, SECRET)
    key_rotation.verify_keyring(db, kr2)
    only_old = Keyring({"k1": kr2._keys["k1"], "k2": os.urandom(32)}, "k2")
    with pytest.raises(SecretKeyProblem, match="'k2'"):
        key_rotation.verify_keyring(db, only_old)


@pytest.mark.sqlite_only
def test_verify_keyring_on_empty_database_passes(db):
    key_rotation.verify_keyring(db, Keyring.generate())


def test_rotation_reencrypts_every_row(db, tmp_path):
    path = tmp_path / "secret.key"
    kr = Keyring.generate()
    keystore.save_keyring(kr, path)
    texts = {("t1", 1): "one", ("t1", 2): "two", ("t2", 1): SECRET, ("t3", 1): "three"}
    for (topic, version), text in texts.items():
        store(db, kr, topic, version, text)
    db.execute("INSERT INTO question_versions (topic_id, version, title, created)"
                " VALUES ('t3', 2, 'no private context', 0)")
    before = rows(db)

    new, count = key_rotation.rotate_key(db, path, kr)

    assert count == 4 and new.current_id == "k2"
    after = rows(db)
    for (topic, version, key_id, blob), (_, _, _, old_blob) in zip(after, before):
        if (topic, version) == ("t3", 2):
            assert key_id is None and blob is None
            continue
        assert key_id == "k2" and blob != old_blob
        assert new.decrypt(key_id, blob, topic_id=topic, version=version) == texts[topic, version]
        with pytest.raises(DecryptionFailed):  # really sealed with the new key
            kr.decrypt("k1", blob, topic_id=topic, version=version)
    on_disk = keystore.load_keyring(env_value="", key_path=path, create=False)
    assert on_disk == new and "k1" in on_disk
    key_rotation.verify_keyring(db, on_disk)
    # rows sealed before rotation (e.g. a backup) still open with the new keyring
    t, v, key_id, blob = before[0]
    assert on_disk.decrypt(key_id, blob, topic_id=t, version=v) == texts[t, v]


def test_rotation_is_atomic_when_a_row_fails(db, tmp_path):
    path = tmp_path / "secret.key"
    kr = Keyring.generate()
    keystore.save_keyring(kr, path)
    for topic in ("t1", "t2", "t3"):
        store(db, kr, topic, 1, f"context of {topic}")
    # corrupt the last row processed, so earlier rows were already updated when it fails
    (blob,), = db.execute("SELECT private_context FROM question_versions WHERE topic_id = 't3'")
    db.execute("UPDATE question_versions SET private_context = ? WHERE topic_id = 't3'",
               (blob[:-1] + bytes([blob[-1] ^ 1]),))
    before = rows(db)

    with pytest.raises(DecryptionFailed):
        key_rotation.rotate_key(db, path, kr)

    assert rows(db) == before
    assert not db.in_transaction
    # the file is written only once every row is re-sealed: no key added that nothing uses
    on_disk = keystore.load_keyring(env_value="", key_path=path, create=False)
    assert on_disk.ids == ("k1",) and on_disk.fingerprint("k1") == kr.fingerprint("k1")
    for topic in ("t1", "t2"):
        (key_id, blob), = db.execute(
            "SELECT private_key_id, private_context FROM question_versions WHERE topic_id = ?",
            (topic,))
        assert on_disk.decrypt(key_id, blob, topic_id=topic, version=1) == f"context of {topic}"


def test_rotation_that_cannot_write_its_key_file_changes_no_row(db, tmp_path):
    kr = Keyring.generate()
    store(db, kr, "t1", 1, SECRET)
    before = rows(db)
    (tmp_path / "not-a-folder").write_text("")
    with pytest.raises(OSError):
        key_rotation.rotate_key(db, tmp_path / "not-a-folder" / "secret.key", kr)
    assert rows(db) == before and not db.in_transaction  # still sealed with k1, as the file says


def test_reencrypt_all_rolls_back_on_unknown_key_id(db):
    kr = Keyring.generate()
    store(db, kr, "t1", 1, "a")
    store(db, kr.with_new_key(), "t2", 1, "b")  # sealed with k2, which `kr` lacks
    before = rows(db)
    with pytest.raises(DecryptionFailed, match="not in the keyring"):
        key_rotation.reencrypt_all(db, kr, kr.with_new_key())
    assert rows(db) == before and not db.in_transaction


def test_rotate_refuses_env_held_keyring(db, tmp_path):
    kr = keystore.load_keyring(env_value=b64(os.urandom(32)), key_path=tmp_path / "k", create=True)
    store(db, kr, "t1", 1, SECRET)
    before = rows(db)
    with pytest.raises(SecretKeyProblem, match="LOBBYTALKS_SECRET_KEY"):
        key_rotation.rotate_key(db, tmp_path / "k", kr)
    assert rows(db) == before and not (tmp_path / "k").exists()
