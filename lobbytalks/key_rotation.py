"""The keyring against a database's rows: checking at start, re-sealing, rotating the key.

Rows sealed with private context are found by the named queries in ``sql/queries/keys.sql``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from .crypto import ENV_NAME, DecryptionFailed, Keyring, SecretKeyProblem
from .db import Connection, Q
from .db.schema import write_begin
from .keystore import save_keyring


def verify_keyring(conn: Connection, keyring: Keyring) -> None:
    """Decrypt one sealed row per key id in use; call at startup.

    Raises SecretKeyProblem ("the secret key does not match this database: ...") if a key id
    in use is missing from the keyring or its sample row does not decrypt.
    """
    key_ids = [r[0] for r in conn.execute(Q.list_sealed_key_ids)]
    for key_id in key_ids:
        topic_id, version, _, blob = conn.execute(
            Q.get_first_row_sealed_with, {"key_id": key_id}).fetchone()
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


def reencrypt_all(conn: Connection, old: Keyring, new: Keyring,
                  before_commit: Callable[[], None] = lambda: None) -> int:
    """Re-seal every private context with ``new.current_id`` in one write transaction,
    calling ``before_commit`` once every row is re-sealed, right before it commits.

    ``old`` must hold every key id in use. Returns the number of rows. On any error (e.g.
    DecryptionFailed for a corrupt row, a database that cannot be written, or one raised by
    ``before_commit``) the transaction is rolled back, no row changes and the error
    propagates. ``conn`` must be in autocommit mode (isolation_level=None).
    """
    conn.execute(write_begin(conn))
    try:
        rows = conn.execute(Q.list_sealed_rows).fetchall()
        for topic_id, version, key_id, blob in rows:
            plaintext = old.decrypt(key_id, blob, topic_id=topic_id, version=version)
            new_id, new_blob = new.encrypt(plaintext, topic_id=topic_id, version=version)
            conn.execute(Q.reseal_private_context, {"key_id": new_id, "sealed": new_blob,
                                                    "topic": topic_id, "version": version})
        before_commit()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return len(rows)


def rotate_key(
    conn: Connection, key_path: Path, keyring: Keyring
) -> tuple[Keyring, int]:
    """Add a fresh current key and re-seal every row with it; returns (new keyring, rows).

    Order keeps data readable at every instant: every row is re-sealed in one transaction,
    and before it commits the key file is atomically replaced by old keys + new key (so it
    opens rows sealed either way, whether or not the commit happens). Old keys stay in the
    file. Raises SecretKeyProblem if the keyring came from LOBBYTALKS_SECRET_KEY (that value
    would override the file on the next start), OSError if the file cannot be written, or
    the re-encryption's error (a corrupt row, a database that cannot be written): in each
    case nothing changed, rows and file alike, and no key is added that nothing uses.
    """
    if keyring.from_env:
        raise SecretKeyProblem(
            f"the key comes from {ENV_NAME}, which would override the key file on the next "
            f"start; rotate by appending a new KEYID:BASE64 line to that value instead")
    new = keyring.with_new_key()
    count = reencrypt_all(conn, keyring, new, before_commit=lambda: save_keyring(new, key_path))
    return new, count
