"""Password hashes: Argon2id for new passwords, scrypt hashes from before still verify.

New hashes are PHC strings, ``$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`` (unpadded
base64), readable by any Argon2 library. Hashes of the older ``scrypt$n$r$p$salt$key`` form
keep working; :func:`needs_rehash` tells the caller to replace them (and Argon2id hashes of
another cost) after the next correct login.

Both decoders bound the cost a stored hash may ask for, so a corrupt or planted row cannot
make one login allocate gigabytes or spin for minutes. Functions here never raise for odd
stored values: they return False.

At most ``HASHES_AT_ONCE`` hashes are computed at a time, one per core: each holds its
memory cost (19 MiB by default) while it runs and keeps a core busy, so a burst of logins
on more worker threads than cores would only add memory, never speed.
"""
from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import os
import re
import secrets
import threading
from dataclasses import dataclass

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id

from .turns import set_aside

__all__ = ["Argon2Cost", "hash_password", "verify_password", "verify_password_timing_safe",
           "needs_rehash"]

# What a password may be, as people type it: the forms, the admin settings.
PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH = 10, 128
_SALT_BYTES = 16
_KEY_BYTES = 32
_ARGON2_VERSION = 19
# Upper bounds on what a stored Argon2id hash may ask for: 256 MiB, 16 passes, 16 lanes.
_MAX_MEMORY_KIB = 256 * 1024
_MAX_ITERATIONS = 16
_MAX_LANES = 16
HASHES_AT_ONCE = os.cpu_count() or 1
_hashing = threading.BoundedSemaphore(HASHES_AT_ONCE)


@dataclass(frozen=True)
class Argon2Cost:
    """Argon2id's cost. The defaults are OWASP's first choice: 19 MiB, 2 passes, 1 lane."""
    memory_kib: int = 19456
    iterations: int = 2
    lanes: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.lanes <= _MAX_LANES:
            raise ValueError(f"argon2 lanes must be 1-{_MAX_LANES}")
        if not 8 * self.lanes <= self.memory_kib <= _MAX_MEMORY_KIB:
            raise ValueError(f"argon2 memory must be {8 * self.lanes}-{_MAX_MEMORY_KIB} KiB")
        if not 1 <= self.iterations <= _MAX_ITERATIONS:
            raise ValueError(f"argon2 iterations must be 1-{_MAX_ITERATIONS}")


DEFAULT_COST = Argon2Cost()
_ARGON2_HASH = re.compile(
    r"\$argon2id\$v=(?P<v>[0-9]{1,3})\$m=(?P<m>[1-9][0-9]{0,8}),t=(?P<t>[1-9][0-9]{0,2}),"
    r"p=(?P<p>[1-9][0-9]{0,2})\$(?P<salt>[A-Za-z0-9+/]{11,88})\$(?P<key>[A-Za-z0-9+/]{22,88})")


def _utf8(text: str) -> bytes:
    # surrogatepass: JSON can smuggle in lone surrogates; hashing them must not raise.
    return text.encode("utf-8", "surrogatepass")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def _argon2(password: str, salt: bytes, cost: Argon2Cost, key_bytes: int) -> bytes:
    # tens of milliseconds outside the interpreter lock: others go on (waiting for a core, too)
    with set_aside(), _hashing:
        return Argon2id(salt=salt, length=key_bytes, iterations=cost.iterations,
                        lanes=cost.lanes, memory_cost=cost.memory_kib).derive(_utf8(password))


def hash_password(password: str, cost: Argon2Cost = DEFAULT_COST) -> str:
    """Hash with Argon2id and a fresh 16-byte salt into a PHC string."""
    salt = secrets.token_bytes(_SALT_BYTES)
    key = _argon2(password, salt, cost, _KEY_BYTES)
    return (f"$argon2id$v={_ARGON2_VERSION}$m={cost.memory_kib},t={cost.iterations},"
            f"p={cost.lanes}${_b64(salt)}${_b64(key)}")


def _parse_argon2(stored: str) -> tuple[Argon2Cost, bytes, bytes] | None:
    match = _ARGON2_HASH.fullmatch(stored)
    if match is None or int(match["v"]) != _ARGON2_VERSION:
        return None
    try:
        cost = Argon2Cost(int(match["m"]), int(match["t"]), int(match["p"]))
        salt, key = _unb64(match["salt"]), _unb64(match["key"])
    except (ValueError, binascii.Error):
        return None
    return (cost, salt, key) if len(salt) >= 8 and 16 <= len(key) <= 64 else None


# --- scrypt, the scheme before Argon2id: verified, never written ------------------------

# Upper bound on r*n*p (memory is about 128*r*n*p bytes): 256 MiB, i.e. n=2**18 at r=8, p=1.
_MAX_SCRYPT_WORK = 8 * 2**18
_MIN_MAXMEM = 64 * 1024 * 1024
_SCRYPT_HASH = re.compile(
    r"scrypt\$(?P<n>[1-9][0-9]{0,7})\$(?P<r>[1-9][0-9]{0,2})\$(?P<p>[1-9][0-9]{0,2})"
    r"\$(?P<salt>[A-Za-z0-9+/]+={0,2})\$(?P<key>[A-Za-z0-9+/]+={0,2})")


def _parse_scrypt(stored: str) -> tuple[int, int, int, bytes, bytes] | None:
    match = _SCRYPT_HASH.fullmatch(stored)
    if match is None:
        return None
    n, r, p = int(match["n"]), int(match["r"]), int(match["p"])
    if n < 2 or n & (n - 1) or r * n * p > _MAX_SCRYPT_WORK:
        return None
    try:
        salt = base64.b64decode(match["salt"], validate=True)
        key = base64.b64decode(match["key"], validate=True)
    except binascii.Error:
        return None
    return (n, r, p, salt, key) if salt and 16 <= len(key) <= 64 else None


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, key_bytes: int) -> bytes:
    # OpenSSL needs about 128*r*(n+p+2) bytes and by default refuses more than 32 MiB.
    maxmem = max(_MIN_MAXMEM, 128 * r * (n + p + 2) + 1024 * 1024)
    with set_aside(), _hashing:
        return hashlib.scrypt(_utf8(password), salt=salt, n=n, r=r, p=p, maxmem=maxmem,
                              dklen=key_bytes)


# --- verifying ----------------------------------------------------------------------------

def verify_password(password: str, stored: str) -> bool:
    """True if ``password`` matches an Argon2id or legacy scrypt hash; constant-time compare.

    False, never an exception, for a wrong password or a malformed, unknown or over-costly
    ``stored`` value.
    """
    if not isinstance(password, str) or not isinstance(stored, str):
        return False
    try:
        if (argon2 := _parse_argon2(stored)) is not None:
            cost, salt, expected = argon2
            actual = _argon2(password, salt, cost, len(expected))
        elif (scrypt := _parse_scrypt(stored)) is not None:
            n, r, p, salt, expected = scrypt
            actual = _scrypt(password, salt, n, r, p, len(expected))
        else:
            return False
    except (ValueError, MemoryError, UnsupportedAlgorithm):
        return False
    return hmac.compare_digest(actual, expected)


def needs_rehash(stored: str, cost: Argon2Cost) -> bool:
    """True unless ``stored`` is an Argon2id hash of exactly ``cost`` (e.g. old scrypt)."""
    parsed = _parse_argon2(stored) if isinstance(stored, str) else None
    return parsed is None or parsed[0] != cost


@functools.lru_cache(maxsize=8)
def _dummy_hash(cost: Argon2Cost) -> str:
    # A hash of a random, forgotten password: checking against it always fails but costs
    # what checking a real user's hash of the same cost does.
    return hash_password(secrets.token_urlsafe(16), cost)


def verify_password_timing_safe(password: str, stored: str | None,
                                cost: Argon2Cost = DEFAULT_COST) -> bool:
    """Like :func:`verify_password`, but a missing user (``stored is None``) still runs one
    Argon2id of ``cost`` and returns False, so response time does not reveal which
    usernames exist. Pass the cost the server hashes with. Never raises."""
    if stored is None:
        verify_password(password, _dummy_hash(cost))
        return False
    return verify_password(password, stored)
