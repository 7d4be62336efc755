#!/usr/bin/env bash
# Build the single-file executable (default: dist/lobbytalks) with PyInstaller.
#
#   bash packaging/build.sh                 # uses .venv/bin/python, installs PyInstaller if missing
#   DIST=/tmp/out WORK=/tmp/work bash packaging/build.sh
#
# The executable runs on machines with the same OS and CPU family and a glibc at least as new
# as the build machine's: build on the oldest system you need to support.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-.venv/bin/python}"
DIST="${DIST:-dist}"
WORK="${WORK:-build/pyinstaller}"

if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
  "$PYTHON" -m pip install --quiet 'pyinstaller>=6.5,<7'  # the `build` extra in pyproject.toml
fi

start=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --log-level WARN \
  --distpath "$DIST" --workpath "$WORK" packaging/lobbytalks.spec
end=$(date +%s)

size=$(du -h "$DIST/lobbytalks" | cut -f1)
echo "built $DIST/lobbytalks ($size) in $((end - start))s"
