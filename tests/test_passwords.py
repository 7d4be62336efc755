"""lobbytalks.passwords: Argon2id hashes, legacy scrypt hashes, bounded costs, timing, and how
many hashes run at once."""
from __future__ import annotations

import base64
import hashlib
import os
import secrets
import threading
import time

import pytest
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id

from lobbytalks import passwords
from lobbytalks.passwords import (
    DEFAULT_COST,
    Argon2Cost,
    hash_password,
    needs_rehash,
    verify_password,
    verify_password_timing_safe,
)

FAST = Argon2Cost(memory_kib=8, iterations=1)
SCRYPT_N = 2**10


def legacy_scrypt_hash(password: str, n: int = SCRYPT_N, r: int = 8, p: int = 1) -> str:
    """A hash as LobbyTalks wrote them before Argon2id (written here independently)."""
    salt = secrets.token_bytes(16)
    key = hashlib.scrypt(password.encode("utf-8", "surrogatepass"), salt=salt, n=n, r=r,
                         p=p, maxmem=64 * 1024 * 1024, dklen=32)
    return f"scrypt${n}${r}${p}${base64.b64encode(salt).decode()}${base64.b64encode(key).decode()}"


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


@pytest.mark.parametrize(
    "password", ["hunter22", "", "密码很长很长", "emoji😀", " spaced ", "\ud800"],
)
def test_argon2_round_trip(password):
    stored = hash_password(password, FAST)
    assert verify_password(password, stored)
    assert not verify_password(password + "x", stored)


def test_argon2_hash_is_a_standard_phc_string():
    stored = hash_password("pw", FAST)
    empty, scheme, version, params, salt, key = stored.split("$")
    assert (empty, scheme, version, params) == ("", "argon2id", "v=19", "m=8,t=1,p=1")
    assert len(_unb64(salt)) == 16 and len(_unb64(key)) == 32
    # Any Argon2id implementation derives the same key from the string's parameters.
    again = Argon2id(salt=_unb64(salt), length=32, iterations=1, lanes=1,
                     memory_cost=8).derive(b"pw")
    assert again == _unb64(key)


def test_default_cost_is_owasps_argon2id_recommendation():
    assert (DEFAULT_COST.memory_kib, DEFAULT_COST.iterations, DEFAULT_COST.lanes) == (19456, 2, 1)
    stored = hash_password("correct horse")
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    assert verify_password("correct horse", stored)


def test_hashes_are_salted():
    assert hash_password("same", FAST) != hash_password("same", FAST)


@pytest.mark.parametrize("memory,iterations,lanes", [
    (7, 1, 1), (15, 1, 2), (256 * 1024 + 1, 1, 1), (8, 0, 1), (8, 17, 1), (8, 1, 0), (256, 1, 17),
])
def test_cost_out_of_bounds_is_refused(memory, iterations, lanes):
    with pytest.raises(ValueError):
        Argon2Cost(memory, iterations, lanes)


def test_legacy_scrypt_hashes_still_verify():
    stored = legacy_scrypt_hash("correct horse 1")
    assert verify_password("correct horse 1", stored)
    assert not verify_password("correct horse 2", stored)


def test_needs_rehash():
    assert needs_rehash(legacy_scrypt_hash("pw"), FAST)
    assert needs_rehash(hash_password("pw", FAST), DEFAULT_COST)
    assert not needs_rehash(hash_password("pw", FAST), FAST)
    assert needs_rehash("garbage", FAST)


class KdfSpy:
    """Records every Argon2id and scrypt run (with its cost) instead of trusting timing."""

    def __init__(self, monkeypatch):
        self.runs: list[tuple] = []
        real_argon2, real_scrypt = passwords._argon2, hashlib.scrypt

        def argon2(password, salt, cost, key_bytes):
            self.runs.append(("argon2id", cost.memory_kib, cost.iterations))
            return real_argon2(password, salt, cost, key_bytes)

        def scrypt(*args, **kwargs):
            self.runs.append(("scrypt", kwargs["n"]))
            return real_scrypt(*args, **kwargs)

        monkeypatch.setattr(passwords, "_argon2", argon2)
        monkeypatch.setattr(passwords.hashlib, "scrypt", scrypt)


def _field(stored: str, index: int, value: str) -> str:
    fields = stored.split("$")
    fields[index] = value
    return "$".join(fields)


ARGON = hash_password("pw", FAST)
SCRYPT = legacy_scrypt_hash("pw")


@pytest.mark.parametrize("stored", [
    "", "plain text", "$argon2id$", "scrypt$", None, 12345,
    ARGON + "$extra",
    ARGON.replace("argon2id", "argon2i", 1),
    _field(ARGON, 2, "v=16"),
    _field(ARGON, 3, "m=4,t=1,p=1"),                  # below Argon2's minimum
    _field(ARGON, 3, f"m={2**20},t=1,p=1"),           # 1 GiB: over the cap, must not run
    _field(ARGON, 3, "m=8,t=999,p=1"),
    _field(ARGON, 3, "m=8,t=1,p=99"),
    _field(ARGON, 3, "m=08,t=1,p=1"),
    _field(ARGON, 3, "t=1,m=8,p=1"),
    _field(ARGON, 4, "short"),                        # salt under 8 bytes
    _field(ARGON, 5, "QUFB"),                         # 3-byte key
    _field(ARGON, 5, "not*base64" * 3),
    SCRYPT + "$extra",
    SCRYPT.replace("scrypt", "bcrypt", 1),
    _field(SCRYPT, 1, "1000"),                        # n not a power of two
    _field(SCRYPT, 1, "0"),
    _field(SCRYPT, 1, str(2**19)),                    # over the cost cap
    _field(SCRYPT, 1, "99999999999"),
    _field(SCRYPT, 1, "+1024"),
    _field(SCRYPT, 2, "4096"),                        # r*n over the cap
    _field(_field(SCRYPT, 1, str(2**18)), 2, "16"),
    _field(SCRYPT, 4, "not*base64"),
    _field(SCRYPT, 4, "abc"),                         # bad padding
    _field(SCRYPT, 5, "QUFB"),                        # 3-byte key
    _field(SCRYPT, 5, ""),
])
def test_malformed_or_over_costly_stored_hash_is_false_without_hashing(stored, monkeypatch):
    spy = KdfSpy(monkeypatch)
    assert verify_password("pw", stored) is False
    assert spy.runs == []  # rejected before any (possibly huge) derivation runs


@pytest.mark.parametrize("stored", [ARGON, SCRYPT])
def test_a_changed_key_is_false(stored):
    index = 5
    fields = stored.split("$")
    raw = bytearray(_unb64(fields[index]))
    raw[0] ^= 1
    fields[index] = base64.b64encode(bytes(raw)).decode()
    if stored is ARGON:
        fields[index] = fields[index].rstrip("=")
    assert verify_password("pw", "$".join(fields)) is False


def test_verify_rejects_a_non_str_password():
    assert verify_password(None, ARGON) is False  # type: ignore[arg-type]


def test_timing_safe_runs_the_same_argon2id_for_a_missing_user(monkeypatch):
    verify_password_timing_safe("warm the dummy cache", None, FAST)
    spy = KdfSpy(monkeypatch)
    assert verify_password_timing_safe("anything", None, FAST) is False
    assert spy.runs == [("argon2id", 8, 1)]


def test_timing_safe_with_a_stored_hash(monkeypatch):
    stored = hash_password("right", FAST)
    spy = KdfSpy(monkeypatch)
    assert verify_password_timing_safe("right", stored, FAST) is True
    assert verify_password_timing_safe("wrong", stored, FAST) is False
    assert spy.runs == [("argon2id", 8, 1)] * 2
    assert verify_password_timing_safe("right", "garbage", FAST) is False


class BlockingKdf:
    """Stands in for Argon2id and scrypt: each run waits until released, counting how many
    run at once."""

    def __init__(self, monkeypatch):
        self.inside, self.most = 0, 0
        self.lock, self.release = threading.Lock(), threading.Event()
        kdf = self

        class Argon2id:
            def __init__(self, **cost):
                pass

            def derive(self, password):
                return kdf.run()
        monkeypatch.setattr(passwords, "Argon2id", Argon2id)
        monkeypatch.setattr(passwords.hashlib, "scrypt", lambda *a, **k: self.run())

    def run(self) -> bytes:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        self.release.wait(timeout=10)
        with self.lock:
            self.inside -= 1
        return bytes(32)


def test_no_more_hashes_run_at_once_than_there_are_cores(monkeypatch):
    assert passwords.HASHES_AT_ONCE == (os.cpu_count() or 1)
    monkeypatch.setattr(passwords, "_hashing", threading.BoundedSemaphore(2))
    kdf = BlockingKdf(monkeypatch)
    legacy = legacy_scrypt_hash("pw")  # written before the stand-in
    calls = [lambda: hash_password("pw", FAST), lambda: verify_password("pw", ARGON),
             lambda: verify_password("pw", legacy)] * 2
    threads = [threading.Thread(target=call) for call in calls]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 5
    while kdf.inside < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # time for the other four to start too, were they let in
    inside = kdf.inside
    kdf.release.set()
    for thread in threads:
        thread.join(timeout=10)
    assert inside == 2 and kdf.most == 2
    assert not any(thread.is_alive() for thread in threads)
