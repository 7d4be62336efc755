"""deploy/compose.yaml and the Dockerfile name only settings that exist, and the image can
keep rate limits in Redis (the [scale] extra)."""
from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from lobbytalks.settings import ENV_PREFIX, Settings

pytestmark = pytest.mark.once  # about files, not the database
ROOT = Path(__file__).resolve().parent.parent


def setting_names() -> set[str]:
    """Every LOBBYTALKS_* variable Settings reads, with the _FILE forms it accepts."""
    names = set()
    for f in fields(Settings):
        if f.metadata.get("env"):
            name = ENV_PREFIX + f.name.upper()
            names |= {name, name + "_FILE"} if f.metadata.get("from_file") else {name}
    return names


def test_the_compose_example_uses_real_settings_only():
    compose = (ROOT / "deploy/compose.yaml").read_text()
    used = set(re.findall(r"^\s+(LOBBYTALKS_[A-Z_]+):", compose, re.MULTILINE))
    assert {"LOBBYTALKS_DATABASE_URL_FILE", "LOBBYTALKS_SECRET_KEY_FILE",
            "LOBBYTALKS_RATELIMIT_STORAGE", "LOBBYTALKS_WORKERS"} <= used
    assert used - {"LOBBYTALKS_DOMAIN"} <= setting_names()  # DOMAIN is Caddy's, not ours
    assert "redis://redis:6379/" in compose


def test_the_image_installs_the_redis_client():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip wheel --no-cache-dir --wheel-dir /wheels '.[scale]'" in dockerfile
    assert "--find-links /wheels 'lobbytalks[scale]'" in dockerfile
