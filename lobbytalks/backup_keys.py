"""The secret key beside a backup: copy it out, put it back, check that it opens the file.

The key that seals private question context is not in the database, so a backup is only
whole with its key (``backup --with-key``) and a restore asks whether the key in place
opens what it restored.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from . import crypto, key_rotation, keystore
from .dbfile import (OpsError, holds_a_database, open_existing, list_sealed_key_ids,
                     refuse_what_is_no_file, stamp)
from .dbswap import unused_name


def key_file_for(backup_file: str | Path) -> Path:
    """Where ``backup --with-key`` puts the key: beside the backup, ``FILE.key``."""
    backup_file = Path(backup_file)
    return backup_file.with_name(backup_file.name + ".key")


def refuse_a_key_of_no_backup(dest: Path, backup_file: Path) -> None:
    """:raise OpsError: --force would write the key of ``backup_file`` over a data folder's
    key (a backup named ``secret``), or over ``dest`` while no older backup of that name is
    beside it: then ``dest`` is some other key (another installation's
    ``LOBBYTALKS_SECRET_KEY_FILE``, a TLS key), never ours to replace. Asked before the
    backup is made, by the one command that writes a backup's key."""
    refuse_what_is_no_file(dest)
    if dest.name == "secret.key" and dest.exists():
        raise OpsError(f"refusing to overwrite {dest}: it is the name a data folder keeps its "
                       f"secret key under; choose another name for the backup")
    if dest.exists() and dest.stat().st_size and not holds_a_database(backup_file):
        raise OpsError(f"refusing to overwrite {dest}: it is not the key of an older backup "
                       f"{backup_file} (--force replaces an older backup and its key, nothing "
                       f"else); choose another name for the backup")


def export_key(env_value: str, key_path: Path, dest: Path, *, force: bool = False,
               env_name: str = crypto.ENV_NAME) -> str:
    """Write the keyring in use (env value or key file) to ``dest`` (0600); return fingerprint."""
    keyring = keystore.load_keyring(env_value=env_value, key_path=key_path, create=False,
                                    env_name=env_name)
    if dest.exists():
        if not force:
            raise OpsError(f"{dest} already exists; pass --force to overwrite it")
        refuse_what_is_no_file(dest)
        dest.unlink()
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(keyring.dump())
    return keyring.fingerprint()


def install_key(source: Path, key_path: Path, now: int) -> Path | None:
    """Make the key file ``source`` the data folder's key; keep a different old key aside.

    Returns where the previous key was kept (None if there was none or it was the same).
    """
    try:
        new = crypto.Keyring.parse(source.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise OpsError(f"cannot read key file {source}: {exc}") from None
    except crypto.SecretKeyProblem as exc:
        raise OpsError(f"key file {source}: {exc}") from None
    kept = None
    if key_path.exists():
        with contextlib.suppress(crypto.SecretKeyProblem, OSError, UnicodeDecodeError):
            if crypto.Keyring.parse(key_path.read_text("utf-8")) == new:
                return None
        # (a second restore in the same second keeps its own, as the database does)
        kept = unused_name(key_path, f"before-restore-{stamp(now)}")
        os.replace(key_path, kept)
    keystore.save_keyring(new, key_path)
    return kept


@dataclass
class KeyCheck:
    matches: bool | None  # None: the database seals nothing, any key will do
    message: str


def check_key(db_path: Path, env_value: str, key_path: Path,
              env_name: str = crypto.ENV_NAME) -> KeyCheck:
    """Does the key this installation would use open the database's private context?"""
    conn = open_existing(db_path)
    try:
        if not list_sealed_key_ids(conn):
            return KeyCheck(None, "the database holds no private context, so no particular "
                                  "key is needed")
        source = env_name if env_value.strip() else str(key_path)
        try:
            keyring = keystore.load_keyring(env_value=env_value, key_path=key_path, create=False,
                                            env_name=env_name)
            key_rotation.verify_keyring(conn, keyring)
        except crypto.SecretKeyProblem as exc:
            return KeyCheck(False, str(exc))
        return KeyCheck(True, f"the key from {source} (fingerprint {keyring.fingerprint()}) "
                              f"opens this database's private context")
    finally:
        conn.close()
