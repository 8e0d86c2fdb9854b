#!/usr/bin/env bash
# Create the repository's virtualenv (.venv) and install the package with its test extras.
#
# Idempotent: the install is skipped when a stamp file says the same pyproject.toml was already
# installed into the same venv from the same checkout path (an editable install records absolute
# paths, so a moved checkout needs a fresh install).
#
# Environment:
#   ZUN_VENV     where to create the venv (default: <repo>/.venv)
#   PYTHON       interpreter used to create it (default: python3)
#   ZUN_FORCE_INSTALL=1  reinstall even when the stamp matches
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ZUN_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
STAMP="$VENV/.zun-install-stamp"

log() { echo "setup-venv: $*"; }

fingerprint() {
    {
        sha256sum "$ROOT/pyproject.toml"
        echo "$ROOT"
        "$PYTHON" -c 'import sys; print(sys.version)'
    } | sha256sum | cut -d' ' -f1
}

want="$(fingerprint)"
if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" \
      && "${ZUN_FORCE_INSTALL:-0}" != "1" ]]; then
    log "$VENV is up to date (pyproject.toml unchanged), nothing to do"
    exit 0
fi

if [[ ! -x "$VENV/bin/python" ]]; then
    # Debian ships the venv/ensurepip modules in a separate package.
    if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
        log "python venv support missing, installing python3-venv"
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q python3-venv
    fi
    log "creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi

log "installing $ROOT[test] into $VENV"
rm -f "$STAMP"
# This machine's pip config lists local index folders that need not exist; drop that noise only.
"$VENV/bin/python" -m pip install -q -e "$ROOT[test]" \
    2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
echo "$want" > "$STAMP"
log "done"
