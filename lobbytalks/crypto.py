"""Sealing of private question context: an AES-256-GCM keyring held outside the database.

``question_versions.private_context`` holds ``nonce (12 bytes) || ciphertext+tag`` and
``private_key_id`` names the keyring entry that sealed it. The associated data binds the
ciphertext to its (topic id, version), so a blob copied into another row does not decrypt.

The keyring comes from ``LOBBYTALKS_SECRET_KEY`` or, when that is unset, from
``DATA_DIR/secret.key`` (generated on first start, owner-only). Its text format is one key per
line, ``KEYID:BASE64`` (standard or URL-safe base64 of exactly 32 bytes; a single bare
``BASE64`` line means key id ``k1``); the last line is the current key; blank lines and
``#`` comments are ignored. Key material never appears in messages, logs or ``repr``.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import logging
import os
import re
import secrets
import sqlite3
from pathlib import Path
from typing import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .db import make_private_dir

log = logging.getLogger(__name__)

KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16
ENV_NAME = "LOBBYTALKS_SECRET_KEY"
_KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


class SecretKeyProblem(RuntimeError):
    """The secret key is missing, malformed, unreadable or does not match the database."""


class DecryptionFailed(Exception):
    """A ciphertext did not authenticate: tampered, moved to another row, or wrong/unknown key."""


def _decode_key(text: str) -> bytes:
    """Base64 (standard or URL-safe, padding optional) of exactly 32 bytes; ValueError otherwise."""
    s = text.strip().replace("-", "+").replace("_", "/")
    s += "=" * (-len(s) % 4)
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("is not valid base64") from None
    if len(raw) != KEY_BYTES:
        raise ValueError(f"decodes to {len(raw)} bytes, expected {KEY_BYTES}")
    return raw


def _aad(topic_id: str, version: int) -> bytes:
    if not isinstance(topic_id, str) or type(version) is not int:
        raise TypeError("topic_id must be str and version int")
    # version is an int (no ':'), so the last ':' always separates it from the topic id
    return f"lobbytalks:private-context:{topic_id}:{version}".encode()


class Keyring:
    """Immutable set of 32-byte AES keys by id, one of which (``current_id``) seals new data."""

    __slots__ = ("_keys", "_aead", "current_id", "from_env")

    def __init__(self, keys: Mapping[str, bytes], current_id: str, *, from_env: bool = False):
        """Raises SecretKeyProblem if an id is malformed, a key is not 32 bytes, or
        ``current_id`` is not among the keys."""
        for key_id, key in keys.items():
            if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
                raise SecretKeyProblem(f"invalid key id {key_id!r} (use letters, digits, _ or -)")
            if not isinstance(key, bytes) or len(key) != KEY_BYTES:
                raise SecretKeyProblem(f"key {key_id!r} must be exactly {KEY_BYTES} bytes")
        if current_id not in keys:
            raise SecretKeyProblem(f"current key id {current_id!r} is not in the keyring")
        # current key last, so dump() writes it on the last line
        self._keys = {k: v for k, v in keys.items() if k != current_id}
        self._keys[current_id] = keys[current_id]
        self._aead = {k: AESGCM(v) for k, v in self._keys.items()}
        self.current_id = current_id
        self.from_env = from_env  # rotate_key refuses: the env value would override the file

    @classmethod
    def generate(cls, key_id: str = "k1") -> "Keyring":
        """A keyring with one fresh random key."""
        return cls({key_id: secrets.token_bytes(KEY_BYTES)}, key_id)

    @classmethod
    def parse(cls, text: str, *, from_env: bool = False) -> "Keyring":
        """Parse the ``KEYID:BASE64`` lines format (see module doc).

        Raises SecretKeyProblem naming the line number on no keys, bad id, bad base64, wrong
        length, duplicate id, or a bare key line next to other keys. Never echoes key material.
        """
        entries: list[tuple[int, str | None, str]] = []
        for number, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key_id, sep, material = line.partition(":")
            entries.append((number, key_id.strip(), material) if sep else (number, None, line))
        if not entries:
            raise SecretKeyProblem("no key found (expected KEYID:BASE64 lines or one BASE64 line)")
        keys: dict[str, bytes] = {}
        for number, key_id, material in entries:
            if key_id is None:
                if len(entries) > 1:
                    raise SecretKeyProblem(
                        f"line {number}: a key without KEYID: prefix is only allowed alone")
                key_id = "k1"
            if not _KEY_ID.fullmatch(key_id):
                raise SecretKeyProblem(
                    f"line {number}: invalid key id (use 1-32 letters, digits, _ or -)")
            if key_id in keys:
                raise SecretKeyProblem(f"line {number}: duplicate key id {key_id!r}")
            try:
                keys[key_id] = _decode_key(material)
            except ValueError as exc:
                raise SecretKeyProblem(f"line {number}: key {key_id!r} {exc}") from None
        return cls(keys, key_id, from_env=from_env)

    def dump(self) -> str:
        """The text ``parse`` reads back to an equal keyring (current key on the last line)."""
        lines = ["# LobbyTalks secret keys: KEYID:BASE64, last line is current. Keep private."]
        lines += [f"{k}:{base64.urlsafe_b64encode(v).decode()}" for k, v in self._keys.items()]
        return "\n".join(lines) + "\n"

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def __contains__(self, key_id: object) -> bool:
        return key_id in self._keys

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Keyring):
            return NotImplemented
        return self.current_id == other.current_id and self._keys == other._keys

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={self.fingerprint(k)}" for k in self._keys)
        return f"<Keyring current={self.current_id} {shown}>"

    def fingerprint(self, key_id: str | None = None) -> str:
        """Short non-secret tag of a key (default: current) for logs; KeyError if unknown."""
        key = self._keys[self.current_id if key_id is None else key_id]
        return hmac.new(key, b"lobbytalks:fingerprint", hashlib.sha256).hexdigest()[:8]

    def encrypt(self, plaintext: str, *, topic_id: str, version: int) -> tuple[str, bytes]:
        """Seal with the current key: returns (key_id, nonce || ciphertext+tag).

        Raises TypeError if topic_id is not str or version not int.
        """
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._aead[self.current_id].encrypt(
            nonce, plaintext.encode("utf-8"), _aad(topic_id, version))
        return self.current_id, nonce + sealed

    def decrypt(self, key_id: str, blob: bytes, *, topic_id: str, version: int) -> str:
        """Open a blob sealed for (topic_id, version).

        Raises DecryptionFailed on an unknown key id, a truncated or tampered blob, or a blob
        sealed for another row; the message names only the row and key id.
        """
        where = f"private context of {topic_id!r} v{version} (key {key_id!r})"
        aead = self._aead.get(key_id) if isinstance(key_id, str) else None
        if aead is None:
            raise DecryptionFailed(f"{where}: key id not in the keyring")
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise DecryptionFailed(f"{where}: stored value is not a blob")
        blob = bytes(blob)
        if len(blob) < NONCE_BYTES + TAG_BYTES:
            raise DecryptionFailed(f"{where}: blob too short")
        try:
            raw = aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], _aad(topic_id, version))
            return raw.decode("utf-8")
        except (InvalidTag, UnicodeDecodeError):
            raise DecryptionFailed(f"{where}: does not authenticate") from None

    def with_new_key(self) -> "Keyring":
        """A new keyring: all current keys plus a fresh one (next free ``kN``) as current."""
        n = len(self._keys) + 1
        while f"k{n}" in self._keys:
            n += 1
        keys = dict(self._keys)
        keys[f"k{n}"] = secrets.token_bytes(KEY_BYTES)
        return Keyring(keys, f"k{n}", from_env=self.from_env)


# --- key file --------------------------------------------------------------------------------

def _write_temp(path: Path, text: str) -> Path:
    """Write text to a fresh owner-only (0600) temp file beside path, fsynced."""
    make_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not possible on Windows; best effort elsewhere
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def save_keyring(keyring: Keyring, key_path: Path) -> None:
    """Atomically replace key_path with the keyring (0600, fsynced). Raises OSError."""
    key_path = Path(key_path)
    tmp = _write_temp(key_path, keyring.dump())
    try:
        os.replace(tmp, key_path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(key_path.parent)


def _create_keyring_file(key_path: Path) -> Keyring:
    """Generate and write a new key unless another process created the file meanwhile."""
    keyring = Keyring.generate("k1")
    tmp = _write_temp(key_path, keyring.dump())
    try:
        try:
            os.link(tmp, key_path)  # unlike os.replace, never clobbers a concurrent creator
        except FileExistsError:
            return _read_keyring_file(key_path)
        except OSError:  # no hard links on this filesystem
            os.replace(tmp, key_path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    _fsync_dir(key_path.parent)
    log.warning("generated a new secret key %s (fingerprint %s); back it up with the database",
                key_path, keyring.fingerprint())
    return keyring


def _read_keyring_file(key_path: Path) -> Keyring:
    try:
        text = key_path.read_text("utf-8")
        mode = key_path.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise SecretKeyProblem(f"cannot read secret key file {key_path}: {reason}") from None
    try:
        keyring = Keyring.parse(text)
    except SecretKeyProblem as exc:
        raise SecretKeyProblem(f"secret key file {key_path}: {exc}") from None
    if os.name != "nt" and mode & 0o077:
        log.warning("secret key file %s is readable by group/others (mode %o); run chmod 600 %s",
                    key_path, mode & 0o777, key_path)
    return keyring


def load_keyring(*, env_value: str, key_path: Path, create: bool) -> Keyring:
    """The keyring from ``env_value`` (LOBBYTALKS_SECRET_KEY) if non-empty, else key_path.

    A missing file is generated (key ``k1``, 0600, atomic) when ``create`` is true. Raises
    SecretKeyProblem if the value/file is malformed or unreadable, or the file is missing and
    ``create`` is false. Logs a warning if the file is group/world readable.
    """
    if env_value and env_value.strip():
        try:
            return Keyring.parse(env_value, from_env=True)
        except SecretKeyProblem as exc:
            raise SecretKeyProblem(f"{ENV_NAME}: {exc}") from None
    key_path = Path(key_path)
    if key_path.exists():
        return _read_keyring_file(key_path)
    if not create:
        raise SecretKeyProblem(
            f"no secret key: expected the key file {key_path} or {ENV_NAME}; restore the key "
            f"used with this database there (KEYID:BASE64 lines, or base64 of 32 bytes)")
    try:
        return _create_keyring_file(key_path)
    except OSError as exc:
        problem = f"cannot create secret key file {key_path}: {exc.strerror}"
        raise SecretKeyProblem(problem) from None


# --- database --------------------------------------------------------------------------------

_SEALED_ROWS = (
    "SELECT topic_id, version, private_key_id, private_context FROM question_versions"
    " WHERE private_context IS NOT NULL")


def verify_keyring(conn: sqlite3.Connection, keyring: Keyring) -> None:
    """Decrypt one sealed row per key id in use; call at startup.

    Raises SecretKeyProblem ("the secret key does not match this database: ...") if a key id
    in use is missing from the keyring or its sample row does not decrypt.
    """
    key_ids = [r[0] for r in conn.execute(
        "SELECT DISTINCT private_key_id FROM question_versions WHERE private_context IS NOT NULL")]
    for key_id in key_ids:
        topic_id, version, _, blob = conn.execute(
            _SEALED_ROWS + " AND private_key_id IS ? LIMIT 1", (key_id,)).fetchone()
        if key_id not in keyring:
            problem = f"rows are sealed with key id {key_id!r}, which the keyring lacks"
        else:
            try:
                keyring.decrypt(key_id, blob, topic_id=topic_id, version=version)
                continue
            except DecryptionFailed:
                problem = (f"key {key_id!r} (fingerprint {keyring.fingerprint(key_id)}) "
                           f"does not decrypt the private context of {topic_id!r} v{version}")
        raise SecretKeyProblem(
            f"the secret key does not match this database: {problem}; restore the key file or "
            f"{ENV_NAME} that was used with this database")


def reencrypt_all(conn: sqlite3.Connection, old: Keyring, new: Keyring) -> int:
    """Re-seal every private context with ``new.current_id`` in one BEGIN IMMEDIATE transaction.

    ``old`` must hold every key id in use. Returns the number of rows. On any error (e.g.
    DecryptionFailed for a corrupt row) the transaction is rolled back, no row changes and
    the error propagates. ``conn`` must be in autocommit mode (isolation_level=None).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        rows = conn.execute(_SEALED_ROWS + " ORDER BY topic_id, version").fetchall()
        for topic_id, version, key_id, blob in rows:
            plaintext = old.decrypt(key_id, blob, topic_id=topic_id, version=version)
            new_id, new_blob = new.encrypt(plaintext, topic_id=topic_id, version=version)
            conn.execute(
                "UPDATE question_versions SET private_key_id = ?, private_context = ?"
                " WHERE topic_id = ? AND version = ?", (new_id, new_blob, topic_id, version))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return len(rows)


def rotate_key(
    conn: sqlite3.Connection, key_path: Path, keyring: Keyring
) -> tuple[Keyring, int]:
    """Add a fresh current key and re-seal every row with it; returns (new keyring, rows).

    Order keeps data readable at every instant: first the key file is atomically replaced by
    old keys + new key (so it opens rows sealed either way), then all rows are re-sealed in
    one transaction. Old keys stay in the file. Raises SecretKeyProblem if the keyring came
    from LOBBYTALKS_SECRET_KEY (that value would override the file on the next start), OSError
    if the file cannot be written (nothing changed), or the re-encryption error (rows keep
    their old keys; the file already holds both).
    """
    if keyring.from_env:
        raise SecretKeyProblem(
            f"the key comes from {ENV_NAME}, which would override the key file on the next "
            f"start; rotate by appending a new KEYID:BASE64 line to that value instead")
    new = keyring.with_new_key()
    save_keyring(new, key_path)
    count = reencrypt_all(conn, keyring, new)
    return new, count
