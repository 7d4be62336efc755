#!/usr/bin/env bash
# Install everything the test suite needs, then run the whole suite.
# Used by the README's quick start and by .ci/run, so the two can never disagree.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${LOBBYTALKS_TEST_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e '.[test,build]'

# need PROGRAM PACKAGE...: install Debian's PACKAGEs when PROGRAM is missing and we may.
need() {
  local program="$1"; shift
  command -v "$program" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    echo "$program is not installed; run: sudo apt-get install $*" >&2
    exit 1
  fi
}

# The browser tests drive Debian's Chromium (a test tool's own browser download does not
# work offline), with a CJK font so the screenshots of the Chinese pages show text rather
# than empty boxes.
need chromium chromium fonts-noto-cjk
# The shared rate-limit tests start Debian's redis-server in a temporary folder.
need redis-server redis-server
# Real MCP clients, at the versions tests/mcp_ts/package-lock.json pins: the official MCP
# TypeScript SDK (tests/test_mcp_ts_sdk.py) and the three harnesses the protocol names,
# DeepSeek Harness's MCP bridge, OpenAI's Codex CLI and Anthropic's Claude Code CLI
# (tests/test_mcp_dsh.py, test_mcp_codex.py, test_mcp_claude_code.py; the two CLIs run
# against tests/scripted_model.py instead of a model).
need node nodejs
need npm npm
npm ci --prefix tests/mcp_ts --silent --no-audit --no-fund

# tests/pgserver.py starts a throwaway PostgreSQL (its own tests, and LOBBYTALKS_TEST_DATABASE_URL
# runs); it needs Debian's server binaries.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "PostgreSQL is not installed; run: sudo apt-get install postgresql" >&2
    exit 1
  fi
fi

# The suite runs twice: on SQLite (the default backend), then on a throwaway PostgreSQL with
# the `once` tests (browser, single executable) left out, since they do not depend on the
# database. LOBBYTALKS_TEST_BACKENDS picks one ("sqlite" or "postgresql"); a server named by
# LOBBYTALKS_TEST_DATABASE_URL is used instead of a throwaway one. Both runs always happen,
# and the script fails when either fails.
BACKENDS="${LOBBYTALKS_TEST_BACKENDS:-sqlite postgresql}"
PG_URL="${LOBBYTALKS_TEST_DATABASE_URL:-}"
unset LOBBYTALKS_TEST_DATABASE_URL

# The PostgreSQL run adds "not once" to a -m the caller gave, rather than replacing it.
pg_args=()
marker=""
while [ $# -gt 0 ]; do
  case "$1" in
    -m) marker="$2"; shift 2 ;;
    -m*) marker="${1#-m}"; shift ;;
    *) pg_args+=("$1"); shift ;;
  esac
done
sqlite_args=("${pg_args[@]}")
if [ -n "$marker" ]; then
  sqlite_args+=(-m "$marker")
  pg_args+=(-m "($marker) and not once")
else
  pg_args+=(-m "not once")
fi

failed=0
case " $BACKENDS " in *" sqlite "*)
  echo "== the suite on SQLite"
  "$VENV/bin/python" -m pytest "${sqlite_args[@]}" || failed=1 ;;
esac
case " $BACKENDS " in *" postgresql "*)
  if [ -z "$PG_URL" ]; then
    PG_DIR="$(mktemp -d /tmp/lobbytalks-pg.XXXXXX)"
    trap '"$VENV/bin/python" tests/pgserver.py stop "$PG_DIR" || true; rm -rf "$PG_DIR"' EXIT
    PG_URL="$("$VENV/bin/python" tests/pgserver.py start "$PG_DIR")"
  fi
  echo "== the suite on PostgreSQL ($PG_URL)"
  LOBBYTALKS_TEST_DATABASE_URL="$PG_URL" "$VENV/bin/python" -m pytest "${pg_args[@]}" || failed=1 ;;
esac
exit "$failed"
