"""One Settings object: CLI flags > ``LOBBYTALKS_*`` environment > defaults.

Every setting is declared once below with its default and help text. ``lobbytalks config``
prints them from these declarations; the README's configuration table is written by hand
and a test (tests/test_foundation.py) fails when a setting is missing from it.
Secret settings, and URLs that may carry a password, also accept ``LOBBYTALKS_<NAME>_FILE``
naming a file that holds the value (Docker and Kubernetes secrets).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from .passwords import Argon2Cost
from .uri_secrets import mask_uri_credentials

ENV_PREFIX = "LOBBYTALKS_"
SQLITE_URL_PREFIX = "sqlite:///"  # then the path, as SQLAlchemy: sqlite:////srv/lt.db is absolute
POSTGRESQL_URL_PREFIXES = ("postgresql://", "postgres://")
DATABASE_URL_PREFIXES = (SQLITE_URL_PREFIX, *POSTGRESQL_URL_PREFIXES)


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it and says what it takes."""


def _setting(default: Any, help: str, *, secret: bool = False, env: bool = True,
             from_file: bool = False) -> Any:
    """``secret``: masked whole when shown; ``secret`` or ``from_file``: ``_FILE`` accepted."""
    return field(default=default, metadata={"help": help, "secret": secret, "env": env,
                                            "from_file": secret or from_file})


@dataclass(frozen=True)
class Settings:
    host: str = _setting("127.0.0.1", "Address to listen on")
    port: int = _setting(8000, "Port to listen on")
    data_dir: str = _setting("lobbytalks-data", "Folder for the database and the secret key")
    db: str = _setting("", "SQLite database path (default: DATA_DIR/lobbytalks.db)")
    database_url: str = _setting(
        "", "Database as a URL: sqlite:////abs/path.db, or postgresql://user:pass@host/name "
        "(unset: the SQLite file DB / DATA_DIR/lobbytalks.db); the password is never shown",
        from_file=True)
    public_url: str = _setting(
        "", "Public address of the service, e.g. https://talk.example.org; used for the Origin "
        "rule, Secure cookies and the URLs shown in docs (unset: each request's own host)")
    secret_key: str = _setting(
        "", "Key for private question context (base64 of 32 bytes, optionally KEYID:BASE64); "
        "unset: generated once into DATA_DIR/secret.key", secret=True)
    # The file LOBBYTALKS_SECRET_KEY_FILE named, when the key came from it: messages about
    # the key then say where it really is.
    secret_key_file: str = _setting("", "", env=False)
    admin_username: str = _setting("", "Administrator account created or updated at start")
    admin_password: str = _setting("", "Password for ADMIN_USERNAME", secret=True)
    admin_contact: str = _setting(
        "", "How people reach the admins (an e-mail address or a web address), shown where a "
        "forgotten password sends them; unset: the pages only say to ask an admin")
    clock_offset_file: str = _setting(
        "", "File holding seconds added to the clock, re-read per request (testing only)")
    workers: int = _setting(
        1, "Server processes sharing the listening socket (more than 1 needs PostgreSQL and "
        "a shared RATELIMIT_STORAGE)")
    threads: int = _setting(4, "Waitress worker threads (on SQLite they take turns: lobbytalks.turns)")
    take_turns: bool = _setting(True, "On SQLite, worker threads take turns instead of competing "
                                "for the interpreter (off: a database far larger than memory)")
    connection_limit: int = _setting(
        1000, "Open client connections at most; idle and slow ones only hold a socket, "
        "never a worker thread, and when all are open the one waiting longest without a "
        "request (or else one of the client holding the most) makes room for a new client")
    connections_per_client: int = _setting(
        100, "Open connections one client address may hold (an IPv6 /64 counts as one); "
        "0: no limit. Not applied behind a trusted proxy, whose address every connection has")
    idle_timeout: int = _setting(
        30, "Seconds an idle connection (keep-alive, or nothing sent yet) stays open")
    request_timeout: int = _setting(
        20, "Seconds a client has to send one whole request (headers and body); slower "
        "senders are disconnected")
    session_days: int = _setting(30, "Days a login session lasts")
    trusted_proxies: int = _setting(
        0, "Number of reverse proxies in front whose X-Forwarded-For/-Proto/-Host are trusted "
        "(0: none)")
    trusted_proxy_networks: str = _setting(
        "127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,169.254.0.0/16,fc00::/7,"
        "fe80::/10", "Addresses or networks (comma-separated) the trusted proxy connects from; "
        "X-Forwarded-* from any other peer are dropped (default: loopback and private ranges)")
    log_format: str = _setting("plain", "Access log format: plain or json")
    access_log: bool = _setting(True, "Write one access-log line per request")
    ratelimit_storage: str = _setting(
        "memory://", "Where rate-limit counters live: memory:// (this process only) or "
        "redis://[:password@]host:port/db, rediss://... (shared by every process)",
        from_file=True)
    rate_token: str = _setting("120/minute", "External REST + MCP requests per agent token")
    rate_claim: str = _setting("20/minute", "Task claims per user")
    rate_manage: str = _setting("20/hour", "Agent management actions per user")
    rate_community: str = _setting("30/hour", "Community create/join/leave/update actions per user")
    rate_topic: str = _setting("10/day", "Questions asked per user")
    rate_register: str = _setting("30/hour", "Account registrations per client address")
    rate_login_pair: str = _setting(
        "10/15minute", "Failed logins per username from one client address")
    rate_login_user: str = _setting(
        "100/hour", "Failed logins per username from all addresses together (the ceiling "
        "that bounds a distributed guesser)")
    rate_login_client: str = _setting("30/15minute", "Failed logins per client address")
    rate_login_success: str = _setting("20/hour", "Successful logins per user")
    rate_web_write: str = _setting("120/hour", "Other web write actions per user")
    rate_report: str = _setting("20/hour", "Reports to the admins per user")
    rate_email_code: str = _setting(
        "5/day", "Confirmation codes mailed per user (each is a mail to the address given)")
    rate_password_reset: str = _setting(
        "5/day", "Password-reset mails asked for per account name or address (each is a mail "
        "to the account's confirmed address)")
    sessions_per_user: int = _setting(
        10, "Login sessions a user may hold at once; a new login ends the oldest beyond it")
    argon2_memory_kib: int = _setting(19456, "Argon2id memory cost of new password hashes, KiB")
    argon2_iterations: int = _setting(2, "Argon2id passes for new password hashes")
    smtp_host: str = _setting("", "SMTP server for notification e-mail (unset: no e-mail is sent)")
    smtp_port: int = _setting(587, "SMTP server port")
    smtp_security: str = _setting("starttls", "SMTP connection security: starttls, ssl or none")
    smtp_username: str = _setting("", "SMTP login name (unset: no login)")
    smtp_password: str = _setting("", "SMTP password", secret=True)
    smtp_from: str = _setting("LobbyTalks <noreply@localhost>", "From address of notification e-mail")

    @property
    def db_path(self) -> Path:
        if self.database_url.startswith(SQLITE_URL_PREFIX):
            return Path(self.database_url[len(SQLITE_URL_PREFIX):])
        return Path(self.db) if self.db else Path(self.data_dir) / "lobbytalks.db"

    def __post_init__(self) -> None:
        """Refuse at start what would otherwise fail later, request by request."""
        from .setting_rules import check  # the rules read this module's names
        check(self)

    @property
    def password_cost(self) -> Argon2Cost:
        """The Argon2id cost of new password hashes."""
        return Argon2Cost(self.argon2_memory_kib, self.argon2_iterations)

    @property
    def questions_per_window(self) -> tuple[int, int]:
        """RATE_TOPIC as (questions, seconds): counted from the questions a person asked,
        not by the rate-limit storage (``topics.create``)."""
        from .limits import window
        return window(self.rate_topic)

    @property
    def secret_key_path(self) -> Path:
        return self.db_path.parent / "secret.key"

    @property
    def secret_key_source(self) -> str:
        """Where the key in use comes from, as messages name it."""
        if not self.secret_key.strip():
            return str(self.secret_key_path)
        if self.secret_key_file:
            return f"{ENV_PREFIX}SECRET_KEY_FILE ({self.secret_key_file})"
        return f"{ENV_PREFIX}SECRET_KEY"

    @property
    def sends_mail(self) -> bool:
        """Whether an SMTP server is named: mail goes out (notifications, codes, reset links)."""
        return bool(self.smtp_host)

    @property
    def uses_postgres(self) -> bool:
        """PostgreSQL holds the data; db_path then only names the secret key's folder."""
        return self.database_url.startswith(POSTGRESQL_URL_PREFIXES)

    @property
    def database_shown(self) -> str:
        """Where the data is, as messages may show it (a URL's password masked)."""
        return mask_uri_credentials(self.database_url) if self.uses_postgres else str(self.db_path)

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> "Settings":
        """Defaults, then the environment, then explicit overrides (CLI flags, tests)."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            if not f.metadata.get("env"):
                continue
            name = ENV_PREFIX + f.name.upper()
            raw = env.get(name)
            # empty is unset (a compose file's `X=`), so its _FILE is read all the same
            if not raw and f.metadata.get("from_file") and env.get(name + "_FILE"):
                raw = _read_setting_file(name + "_FILE", env[name + "_FILE"])
            if raw is not None and raw != "":
                values[f.name] = _convert(f.type, raw, name)
        explicit = {k: v for k, v in overrides.items() if v is not None}
        # Where the database is, the environment says three ways (DATABASE_URL, DB,
        # DATA_DIR): a flag naming it wins over all of them, or `restore --data-dir X` would
        # restore into the file LOBBYTALKS_DB names. A PostgreSQL URL stays beside
        # --data-dir alone (the folder then holds only the key).
        if "db" in explicit:
            values.pop("database_url", None)
        elif "data_dir" in explicit:
            values.pop("db", None)
            if values.get("database_url", "").startswith(SQLITE_URL_PREFIX):
                del values["database_url"]
        if values.get("secret_key") and not env.get(ENV_PREFIX + "SECRET_KEY"):
            values["secret_key_file"] = env.get(ENV_PREFIX + "SECRET_KEY_FILE", "")
        if "secret_key" in explicit:
            values.pop("secret_key_file", None)
        values.update(explicit)
        return cls(**values)

    def with_overrides(self, **overrides: Any) -> "Settings":
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def describe(self) -> list[tuple[str, str, str]]:
        """(env name, effective value with secrets masked, help) for every setting."""
        rows = []
        for f in fields(self):
            if not f.metadata.get("env"):
                continue
            value = getattr(self, f.name)
            hidden = f.metadata.get("secret") or (  # a URL without a scheme may be a password
                f.metadata.get("from_file") and "://" not in str(value))
            shown = ("****" if value else "") if hidden else mask_uri_credentials(str(value))
            rows.append((ENV_PREFIX + f.name.upper(), shown, f.metadata["help"]))
        return rows


SETTING_FILE_LIMIT = 64 * 1024  # a secret or a URL; more is some other file


def _read_setting_file(name: str, path: str) -> str:
    try:
        given = Path(path)
        if given.exists() and not (given.is_file() or given.is_dir()):
            # a pipe, which would block the start until someone writes to it
            raise SettingsError(f"{name}: cannot read {path}: it is not a regular file")
        with open(given, "rb") as file:
            data = file.read(SETTING_FILE_LIMIT + 1)
        if len(data) > SETTING_FILE_LIMIT:
            raise SettingsError(f"{name}: {path} is larger than a setting can be (64 KiB)")
        value = data.decode("utf-8").strip()
        if not value:  # a secret not yet written: read as unset, a new key or SQLite took over
            raise SettingsError(f"{name}: {path} is empty")
        return value
    except OSError as exc:
        raise SettingsError(f"{name}: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SettingsError(f"{name}: cannot read {path}: it is not UTF-8 text") from None


def _convert(kind: Any, raw: str, name: str) -> Any:
    kind = kind if isinstance(kind, str) else kind.__name__
    if kind == "int":
        try:
            return int(raw)
        except ValueError:
            raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
    if kind == "bool":
        lowered = raw.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
        raise SettingsError(f"{name} must be true or false, got {raw!r}")
    return raw
