#!/usr/bin/env bash
# Build (once) a Python virtualenv from a requirements file, and print its python's path.
#   scripts/python-env.sh                 -> the interop tests' venv (test/interop/requirements.txt)
#   scripts/python-env.sh REQUIREMENTS    -> a venv for that file (Schemathesis has its own)
#
# The venv lives in ${TOOLWIRE_CACHE:-~/.cache/toolwire}/venv-<hash>, where <hash> covers
# the requirements file and the Python minor version, so a changed requirement gets a fresh
# venv and an unchanged one costs only a file check. Concurrent callers wait on a lock.
# Python: $TOOLWIRE_PYTHON, else the first of python3.11, python3.12, python3.13, python3, then pyenv's
# (${PYENV_ROOT:-~/.pyenv}/versions/*), that is new enough: >= 3.11, or what a line
# `# requires-python: >=3.12` in the requirements file asks (dify_plugin 0.10 needs 3.12).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="${1:-$ROOT/test/interop/requirements.txt}"
# The interop venv must import TrustGraph; another venv only needs pip to have succeeded.
CHECK="import trustgraph.base, pulsar"
[ -z "${1:-}" ] || CHECK="pass"
CACHE="${TOOLWIRE_CACHE:-$HOME/.cache/toolwire}"

log() { echo "[python-env] $*" >&2; }
die() { log "$*"; exit 1; }

[ -f "$REQ" ] || die "missing $REQ"
MIN="$(sed -n 's/^# requires-python: >=\([0-9]*\.[0-9]*\).*/\1/p' "$REQ" | head -n1)"
MIN="${MIN:-3.11}"

# Prints "<command> <major.minor>" for the first Python >= $MIN (one interpreter start each).
find_python() {
  local c v
  for c in ${TOOLWIRE_PYTHON:-} python3.11 python3.12 python3.13 python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
    command -v "$c" >/dev/null 2>&1 || continue
    if v=$("$c" -c "import sys; assert sys.version_info >= tuple(map(int, '$MIN'.split('.'))); print('%d.%d' % sys.version_info[:2])" 2>/dev/null); then
      echo "$c $v"; return 0
    fi
  done
  return 1
}

found="$(find_python)" || die "no Python >= $MIN found (set TOOLWIRE_PYTHON)"
PY="${found% *}"
PYVER="${found##* }"
HASH="$( { cat "$REQ"; echo "python $PYVER"; } | sha256sum | cut -c1-12)"
VENV="$CACHE/venv-$HASH"
MARK="$VENV/.toolwire-complete"

if [ -f "$MARK" ] && [ -x "$VENV/bin/python" ]; then echo "$VENV/bin/python"; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/venv-$HASH.lock"
flock -w 1800 9 || die "could not lock $CACHE/venv-$HASH.lock"
if [ -f "$MARK" ] && [ -x "$VENV/bin/python" ]; then echo "$VENV/bin/python"; exit 0; fi

start=$SECONDS
log "creating $VENV with $PY ($PYVER) from $REQ"
rm -rf "$VENV"
"$PY" -m venv "$VENV" >&2 || die "python -m venv failed"
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQ" >&2; then
  rm -rf "$VENV"
  die "pip install -r $REQ failed (see above)"
fi
"$VENV/bin/python" -c "$CHECK" || { rm -rf "$VENV"; die "the venv does not pass: $CHECK"; }
date -u +%FT%TZ >"$MARK"
log "ready in $((SECONDS - start))s"
echo "$VENV/bin/python"
