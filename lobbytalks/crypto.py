"""Sealing of private question context: an AES-256-GCM keyring held outside the database.

The key file is read and written by ``keystore``; checking and re-sealing a database's rows
is ``key_rotation``.

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
import hashlib
import hmac
import logging
import os
import re
import secrets
from typing import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


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
        # Neither a key nor its id is echoed: a passphrase pasted by mistake ("word:word")
        # reads as KEYID:BASE64, and error lines end up in logs.
        keys: dict[str, bytes] = {}
        lines: dict[str, int] = {}
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
                raise SecretKeyProblem(
                    f"line {number}: duplicate key id (the one on line {lines[key_id]})")
            try:
                keys[key_id], lines[key_id] = _decode_key(material), number
            except ValueError as exc:
                raise SecretKeyProblem(f"line {number}: the key {exc}") from None
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

    def derive(self, purpose: bytes) -> bytes:
        """A 32-byte key of the current key for ``purpose`` (e.g. signing a cookie): never
        the sealing key itself, and a new one after every rotation."""
        return hmac.new(self._keys[self.current_id], b"lobbytalks:" + purpose,
                        hashlib.sha256).digest()

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
