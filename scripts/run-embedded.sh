#!/usr/bin/env bash
# The one run command: prepares the venv, the Docker engine and the local busybox image, then
# runs every zun service in one process (zun-all migrates its SQLite database itself).
# Extra arguments go to zun-all, e.g.  scripts/run-embedded.sh --help
# Environment: ZUN_STATE_DIR (default /var/lib/zun) holds the database and the state.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

scripts/setup-venv.sh
scripts/ensure-docker.sh
scripts/test-images.sh

exec .venv/bin/zun-all --state-dir "${ZUN_STATE_DIR:-/var/lib/zun}" "$@"
