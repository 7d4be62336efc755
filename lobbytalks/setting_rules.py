"""What a setting may be: refused at start, naming the setting, instead of failing later,
request by request (a cookie date past the calendar, a thread that cannot start, a mail
header split by a line break)."""
from __future__ import annotations

import re
from dataclasses import fields
from typing import TYPE_CHECKING

from .origins import origin_of
from .passwords import PASSWORD_MIN_LENGTH
from .proxies import parse_networks
from .settings import DATABASE_URL_PREFIXES, ENV_PREFIX, SettingsError
from .uri_secrets import mask_uri_credentials, unusable_uri

if TYPE_CHECKING:
    from .settings import Settings

# The least and the most each counted setting may be (workers: ``workers.refusal`` says
# its least, for --workers too). The most: a session ends within ten years (a cookie's date
# must stay within the calendar), waitress starts every thread at once, and a count the
# database compares or limits by must fit its 64-bit integers (a larger one failed every
# login 503); the rest are far past any use, to catch a mistyped value.
_A_YEAR = 366 * 86400
_PLENTY = 1_000_000_000
_AT_LEAST = {"port": 0, "threads": 1, "connection_limit": 1,
             "connections_per_client": 0, "idle_timeout": 1, "request_timeout": 1,
             "session_days": 1, "trusted_proxies": 0, "sessions_per_user": 1, "smtp_port": 1}
_AT_MOST = {"port": 65535, "threads": 256, "session_days": 3650, "smtp_port": 65535,
            "workers": 256, "connection_limit": _PLENTY, "connections_per_client": _PLENTY,
            "idle_timeout": _A_YEAR, "request_timeout": _A_YEAR, "trusted_proxies": 100,
            "sessions_per_user": _PLENTY}
_LONGEST_RATE_WINDOW = _A_YEAR
_ZERO_MULTIPLE = re.compile(r"(?:/|per)\s*0+\s*[A-Za-z]", re.IGNORECASE)
_CHOICES = {"log_format": ("plain", "json"), "smtp_security": ("starttls", "ssl", "none")}
# C0, DEL, C1 (NEL, U+0085, among them) and the Unicode line and paragraph separators:
# each breaks a line somewhere (the email library refuses them all in a header).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check(settings: "Settings") -> None:
    """:raise SettingsError: naming the first setting that cannot be used."""
    _check_text(settings)
    if settings.database_url and not settings.database_url.startswith(DATABASE_URL_PREFIXES):
        raise SettingsError(f"{ENV_PREFIX}DATABASE_URL must start with sqlite:/// or "
                            f"postgresql://; {unusable_uri(settings.database_url, 'postgresql://')}")
    if settings.uses_postgres:
        _check_userinfo("DATABASE_URL", settings.database_url)
    try:
        settings.password_cost  # building the cost checks its bounds
    except ValueError as exc:
        raise SettingsError(f"{ENV_PREFIX}ARGON2_MEMORY_KIB / _ITERATIONS: {exc}") from None
    _check_counts(settings)
    if settings.public_url:
        _check_public_url(settings.public_url)
    _check_rate_storage(settings.ratelimit_storage)
    try:
        parse_networks(settings.trusted_proxy_networks)
    except ValueError as exc:
        raise SettingsError(f"{ENV_PREFIX}TRUSTED_PROXY_NETWORKS: {exc}") from None
    for f in fields(settings):
        if f.name.startswith("rate_"):
            _check_rate(ENV_PREFIX + f.name.upper(), getattr(settings, f.name))
    if settings.admin_username:
        _check_admin_username(settings.admin_username)
    if settings.admin_password and not settings.admin_username:  # no admin would be made
        raise SettingsError(f"{ENV_PREFIX}ADMIN_PASSWORD is set without {ENV_PREFIX}"
                            "ADMIN_USERNAME: set both to make that admin at start, or neither")
    if settings.admin_username and len(settings.admin_password) < PASSWORD_MIN_LENGTH:
        raise SettingsError(
            f"{ENV_PREFIX}ADMIN_PASSWORD must have at least {PASSWORD_MIN_LENGTH} "
            f"characters, as logging in takes (set it, or its _FILE, with ADMIN_USERNAME)")


def _check_text(settings: "Settings") -> None:
    """No setting's text holds a line break or another control character: in a mail
    header (SMTP_FROM) one adds headers, and the mailer then failed at every mail. Secrets
    are left as given (a secret key may hold older keys, a line each)."""
    for f in fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, str) and not f.metadata.get("secret") and _CONTROLS.search(value):
            raise SettingsError(f"{ENV_PREFIX}{f.name.upper()} must be one line without "
                                f"control characters")


def _check_counts(settings: "Settings") -> None:
    for name, least in _AT_LEAST.items():
        if getattr(settings, name) < least:
            raise SettingsError(f"{ENV_PREFIX}{name.upper()} must be at least {least}, "
                                f"got {getattr(settings, name)}")
    for name, most in _AT_MOST.items():
        if getattr(settings, name) > most:
            raise SettingsError(f"{ENV_PREFIX}{name.upper()} must be at most {most}, "
                                f"got {getattr(settings, name)}")
    for name, choices in _CHOICES.items():
        if getattr(settings, name) not in choices:
            raise SettingsError(f"{ENV_PREFIX}{name.upper()} must be one of "
                                f"{', '.join(choices)}, got {getattr(settings, name)!r}")


def _check_public_url(url: str) -> None:
    """An address of a web service, optionally with a path: the docs add /api/external/...
    to it, and the Origin rule compares its scheme, host and port."""
    if origin_of(url, path_allowed=True) is None:
        raise SettingsError(f"{ENV_PREFIX}PUBLIC_URL must be an address such as "
                            f"https://talk.example.org (http:// or https://, a host, a port "
                            f"up to 65535), without a user, query or fragment, got "
                            f"{mask_uri_credentials(url)!r}")


def _check_rate_storage(uri: str) -> None:
    """One of the documented storages (the ``limits`` library knows more), told before ``serve``
    tries to reach it: ``config`` says so too."""
    scheme, sep, _ = uri.partition("://")
    scheme = scheme.lower()  # RFC 3986 3.1: Memory:// is memory://, as limits reads it
    # What is documented and installed with [scale]: limits knows more (memcached,
    # MongoDB, Valkey...), each needing a client library of its own that is not installed.
    if not sep or scheme not in RATE_STORAGE_SCHEMES:
        raise SettingsError(f"{ENV_PREFIX}RATELIMIT_STORAGE must be memory://, redis:// or "
                            f"rediss://, such as redis://host:6379/0; "
                            f"{unusable_uri(uri, 'redis://')}")
    _check_userinfo("RATELIMIT_STORAGE", uri)
    # The Redis client reads a database number from the path and quietly takes 0 for any
    # other path: two communities meant to be apart would share their counters.
    after_user = uri.partition("://")[2].rpartition("@")[2]
    _, slash, database = after_user.split("?", 1)[0].split("#", 1)[0].partition("/")
    if scheme != "memory" and slash and not _REDIS_DATABASE.fullmatch(database):
        raise SettingsError(f"{ENV_PREFIX}RATELIMIT_STORAGE names a Redis database by its "
                            f"number after the host, such as redis://host:6379/0; the value "
                            f"is not shown")


RATE_STORAGE_SCHEMES = ("memory", "redis", "rediss")
_REDIS_DATABASE = re.compile(r"[0-9]{0,5}")  # redis://host/ and redis://host are database 0
# Characters that end a URL's userinfo where a parser meets them: in a password they must
# be percent-encoded, or the driver reads part of the password as the host, the port or
# the path, and quotes that part in its error.
_RESERVED_IN_USERINFO = re.compile(r"[/?#@]")


def _check_userinfo(name: str, uri: str) -> None:
    refuse_unescaped_userinfo(ENV_PREFIX + name, uri)


def refuse_unescaped_userinfo(label: str, uri: str) -> None:
    """:raise SettingsError: naming ``label`` (a setting, a flag) and never the value."""
    rest = uri.partition("://")[2]
    userinfo = rest[:rest.rfind("@")] if "@" in rest else ""
    if _RESERVED_IN_USERINFO.search(userinfo):
        raise SettingsError(
            f"{label}: what comes before the last \"@\" holds \"/\", \"?\", \"#\" "
            f"or \"@\" as it is: in a password, write them percent-encoded (%2F, %3F, %23, "
            f"%40); the value is not shown")


def _check_rate(name: str, value: str) -> None:
    """A rate limit as the gate reads it (``limits.parse``, as ``lobbytalks.limits`` does):
    "20/minute", "5 per hour"."""
    from limits import parse, parse_many  # only here: settings are loaded first
    try:
        item = parse(value)
        allowed, window = item.amount, item.get_expiry()
        # one rate, as the gate reads one: "10/minute;100/hour" dropped the second, and
        # "1/0 minute" was read as 1/minute
        if len(parse_many(value)) != 1 or _ZERO_MULTIPLE.search(value):
            allowed = 0
    except (ValueError, OverflowError):
        allowed, window = 0, 0
    # 0/minute refused the first request, then failed every next one 503; a window of
    # eons allowed one request ever, and said to retry in 3e27 seconds; 1e20 a day passed
    # the database's integers (the day's questions are counted there)
    if not 1 <= allowed <= _PLENTY or not 0 < window <= _LONGEST_RATE_WINDOW:
        raise SettingsError(f"{name} must be a rate such as 20/minute or 5 per hour, one "
                            f"rate allowing 1 to {_PLENTY:,} in at most a year, got {value!r}")


def _check_admin_username(name: str) -> None:
    """The name must be one people can log in with: the registration rule."""
    from .models.common import USERNAME_LENGTH, USERNAME_PATTERN

    shortest, longest = USERNAME_LENGTH
    if not (shortest <= len(name) <= longest and re.fullmatch(USERNAME_PATTERN, name)):
        raise SettingsError(
            f"{ENV_PREFIX}ADMIN_USERNAME must be {shortest}–{longest} letters, digits or "
            f"underscores, as a username to log in with; got {name!r}")
