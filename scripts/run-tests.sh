#!/usr/bin/env bash
# The one test command: prepares everything the tests need on this machine, then lints and runs
# pytest. Extra arguments go to pytest, e.g.
#   scripts/run-tests.sh tests/unit
#   scripts/run-tests.sh -m "not docker" -x
# Exits non-zero on any failure, including when pytest collected no test at all.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { echo "run-tests: $*"; }
die() { echo "run-tests: ERROR: $*" >&2; exit 1; }

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# ensure_service NAME PORT WAIT_SECONDS START_COMMAND...
ensure_service() {
    local name=$1 port=$2 wait=$3
    shift 3
    if port_open "$port"; then
        log "$name answers on 127.0.0.1:$port"
        return 0
    fi
    log "$name is down on 127.0.0.1:$port; starting it: $*"
    # Closed stdio so a daemon never holds our caller's output pipe open.
    "$@" </dev/null >>"/var/log/zun-run-tests-$name.log" 2>&1 \
        || log "start command for $name exited $? (see /var/log/zun-run-tests-$name.log)"
    for ((i = 0; i < wait; i++)); do
        if port_open "$port"; then
            log "$name answers on 127.0.0.1:$port after ${i}s"
            return 0
        fi
        sleep 1
    done
    die "$name does not answer on 127.0.0.1:$port after ${wait}s (tried: $*)"
}

scripts/setup-venv.sh
scripts/ensure-docker.sh
scripts/test-images.sh

ensure_service mariadb 3306 60 \
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
# shellcheck disable=SC2046
ensure_service postgresql 5432 60 \
    pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql 2>/dev/null | tail -n 1) main start
ensure_service rabbitmq 5672 120 rabbitmq-server -detached

# Lint only the folders that exist: git does not keep empty ones in a fresh clone.
lint_paths=()
for d in zun tests benchmarks; do [[ -d "$d" ]] && lint_paths+=("$d"); done
log "ruff check ${lint_paths[*]}"
.venv/bin/ruff check "${lint_paths[@]}"

log "pytest -q $*"
rc=0
.venv/bin/pytest -q "$@" || rc=$?
if [[ $rc -eq 5 ]]; then
    die "pytest collected no tests (exit 5); that counts as a failure"
fi
exit "$rc"
