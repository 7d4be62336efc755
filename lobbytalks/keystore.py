"""The key file: ``DATA_DIR/secret.key``, written atomically and owner-only.

The keyring itself (its format, sealing and opening) is in ``crypto``; what a database's
rows need from it (checking, re-sealing, rotating) is in ``key_rotation``.
"""
from __future__ import annotations

import contextlib
import logging
import os
import secrets
from pathlib import Path

from .crypto import ENV_NAME, Keyring, SecretKeyProblem
from .db import make_private_dir

log = logging.getLogger("lobbytalks.crypto")  # the name operators filter key warnings by


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
        reason = ("it is not text (a key file holds lines such as k1:<base64>)"
                  if isinstance(exc, UnicodeDecodeError) else exc.strerror or str(exc))
        raise SecretKeyProblem(f"cannot read secret key file {key_path}: {reason}") from None
    try:
        keyring = Keyring.parse(text)
    except SecretKeyProblem as exc:
        raise SecretKeyProblem(f"secret key file {key_path}: {exc}") from None
    if os.name != "nt" and mode & 0o077:
        log.warning("secret key file %s is readable by group/others (mode %o); run chmod 600 %s",
                    key_path, mode & 0o777, key_path)
    return keyring


def load_keyring(*, env_value: str, key_path: Path, create: bool,
                 env_name: str = ENV_NAME) -> Keyring:
    """The keyring from ``env_value`` (LOBBYTALKS_SECRET_KEY, or the file its _FILE names:
    ``env_name`` says which to messages) if non-empty, else key_path.

    A missing file is generated (key ``k1``, 0600, atomic) when ``create`` is true. Raises
    SecretKeyProblem if the value/file is malformed or unreadable, or the file is missing and
    ``create`` is false. Logs a warning if the file is group/world readable.
    """
    if env_value and env_value.strip():
        try:
            return Keyring.parse(env_value, from_env=True)
        except SecretKeyProblem as exc:
            raise SecretKeyProblem(f"{env_name}: {exc}") from None
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
