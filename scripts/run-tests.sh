#!/usr/bin/env bash
# The one test command: prepares everything the tests need on this machine, then lints and runs
# pytest. Extra arguments go to pytest, e.g.
#   scripts/run-tests.sh tests/unit
#   scripts/run-tests.sh -m "not docker" -x
# Exits non-zero on any failure, including when pytest collected no test at all.
#
# On a machine where MariaDB, PostgreSQL and RabbitMQ already answer on 127.0.0.1, they are used
# as they are. Otherwise (a fresh Debian 12, run as root, with or without systemd) the missing
# packages are installed and each server is started by hand, and when the stock accounts refuse
# password-less TCP logins, a `zun_test` account is created and handed to the tests through
# ZUN_TEST_MARIADB_URL / ZUN_TEST_POSTGRESQL_URL (see docs/testing.md). Logs of the servers this
# script starts are in /var/log/zun-run-tests/.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

LOG_DIR=/var/log/zun-run-tests
STATE_DIR=/var/lib/zun-run-tests      # the zun_test password lives here (root only)
TEST_USER=zun_test
export DEBIAN_FRONTEND=noninteractive

STEP="start"
log() { echo "run-tests: $*"; }
# fail MESSAGE [LOG...]: name the step, then show the end of each log worth reading.
fail() {
    local msg=$1 file
    shift
    echo "run-tests: ERROR in step '$STEP': $msg" >&2
    for file in "$@"; do
        if [[ -s "$file" ]]; then
            echo "run-tests: last lines of $file:" >&2
            tail -n 25 "$file" | sed 's/^/    /' >&2
        else
            echo "run-tests: (log $file is empty or missing)" >&2
        fi
    done
    exit 1
}
on_error() { echo "run-tests: ERROR in step '$STEP': a command exited $1 (line $2)" >&2; }
trap 'on_error $? $LINENO' ERR
step() { STEP=$1; log "== $1"; }

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# wait_port PORT SECONDS PID LOG...: wait for 127.0.0.1:PORT; fail early if PID (when given) dies.
wait_port() {
    local port=$1 wait=$2 pid=$3 i
    shift 3
    for ((i = 0; i < wait; i++)); do
        if port_open "$port"; then
            log "127.0.0.1:$port answers after ${i}s"
            return 0
        fi
        if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
            fail "the server exited before 127.0.0.1:$port answered" "$@"
        fi
        sleep 1
    done
    fail "nothing answers on 127.0.0.1:$port after ${wait}s" "$@"
}

apt_install() {
    local apt_log=$LOG_DIR/apt.log own_policy=0 rc=0
    [[ $(id -u) -eq 0 ]] || fail "need root to install $*"
    log "apt-get install $* (log: $apt_log)"
    # Package scripts must not try to start services (no init system to hand them to, and we
    # start them below ourselves): a policy-rc.d answering 101, removed only if we created it.
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        own_policy=1
    fi
    { apt-get -o DPkg::Lock::Timeout=600 update -q && apt-get -o DPkg::Lock::Timeout=600 install -y -q "$@"; } >>"$apt_log" 2>&1 || rc=$?
    if [[ $own_policy -eq 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
    [[ $rc -eq 0 ]] || fail "apt-get install $* exited $rc" "$apt_log"
}

# --- MariaDB --------------------------------------------------------------------------------
start_mariadb() {
    local out=$LOG_DIR/mariadb.log
    install -d -o mysql -g mysql -m 0755 /run/mysqld
    if [[ ! -d /var/lib/mysql/mysql ]]; then
        log "creating the MariaDB system tables (log: $out)"
        mariadb-install-db --user=mysql --datadir=/var/lib/mysql >>"$out" 2>&1 \
            || fail "mariadb-install-db failed" "$out"
    fi
    # mariadbd refuses to run as root; --user makes it switch to mysql. Not start-stop-daemon
    # --background, which would hide that kind of message: stderr goes to our log.
    log "starting mariadbd --user=mysql (log: $out)"
    setsid mariadbd --user=mysql </dev/null >>"$out" 2>&1 &
    wait_port 3306 60 $! "$out"
}

# --- PostgreSQL -----------------------------------------------------------------------------
start_postgresql() {
    local out=$LOG_DIR/postgresql.log ver
    ver="$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)"
    if [[ -z "$ver" ]]; then
        ver="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
        log "creating PostgreSQL cluster $ver/main (log: $out)"
        pg_createcluster "$ver" main >>"$out" 2>&1 || fail "pg_createcluster $ver main failed" "$out"
    fi
    log "pg_ctlcluster $ver main start (log: /var/log/postgresql/postgresql-$ver-main.log)"
    pg_ctlcluster --skip-systemctl-redirect "$ver" main start </dev/null >>"$out" 2>&1 \
        || fail "pg_ctlcluster $ver main start failed" "$out" \
            "/var/log/postgresql/postgresql-$ver-main.log"
    wait_port 5432 60 "" "$out" "/var/log/postgresql/postgresql-$ver-main.log"
}

# --- RabbitMQ -------------------------------------------------------------------------------
start_rabbitmq() {
    local out=$LOG_DIR/rabbitmq.log node_log host
    host="$(hostname -s)"
    node_log="/var/log/rabbitmq/rabbit@$host.log"
    # The node is named rabbit@<host name>; it cannot start if that name does not resolve.
    getent hosts "$host" >/dev/null \
        || fail "host name '$host' does not resolve; RabbitMQ needs it (add '127.0.1.1 $host' to /etc/hosts)"
    log "rabbitmq-server -detached (logs: $out, $node_log)"
    rabbitmq-server -detached </dev/null >>"$out" 2>&1 \
        || fail "rabbitmq-server -detached failed" "$out" "$node_log"
    wait_port 5672 120 "" "$out" "$node_log"
}

# --- accounts -------------------------------------------------------------------------------
# db_usable URL: can this account create and drop a database over TCP? Prints the reason if not.
db_usable() {
    .venv/bin/python - "$1" <<'PY'
import sys
import uuid

import sqlalchemy as sa

url = sa.make_url(sys.argv[1])
name = f"zun_test_probe_{uuid.uuid4().hex[:8]}"
try:
    if url.drivername.startswith("mysql"):
        import pymysql
        conn = pymysql.connect(host=url.host, port=url.port or 3306, user=url.username,
                               password=url.password or "", autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}`")
            cur.execute(f"DROP DATABASE `{name}`")
    else:
        import psycopg2
        conn = psycopg2.connect(host=url.host, port=url.port or 5432, user=url.username,
                                password=url.password or "", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
            cur.execute(f'DROP DATABASE "{name}"')
    conn.close()
except Exception as exc:
    print(str(exc).strip().splitlines()[0])
    sys.exit(1)
PY
}

test_password() {
    local file=$STATE_DIR/$TEST_USER.password
    if [[ ! -s "$file" ]]; then
        install -d -m 0700 "$STATE_DIR"
        (umask 077 && .venv/bin/python -c 'import secrets; print(secrets.token_hex(16))' > "$file")
    fi
    cat "$file"
}

# ensure_db_account KIND DEFAULT_URL: export ZUN_TEST_<KIND>_URL if the default account will not do.
ensure_db_account() {
    local kind=$1 default=$2 var="ZUN_TEST_${1^^}_URL" why pw url out=$LOG_DIR/accounts.log
    if [[ -n "${!var:-}" ]]; then
        why="$(db_usable "${!var}")" || fail "$var is set but unusable: $why"
        log "$kind: using $var as given"
        return 0
    fi
    if why="$(db_usable "$default")"; then
        log "$kind: ${default%%@*}@... can create databases; using it as it is"
        return 0
    fi
    log "$kind: ${default} refused ($why); creating or updating account $TEST_USER"
    pw="$(test_password)"
    case $kind in
        mariadb)
            # As root over the local socket: Debian's root logs in by unix_socket there.
            mariadb --protocol=socket -u root >>"$out" 2>&1 <<SQL || fail "creating the MariaDB account failed" "$out"
CREATE USER IF NOT EXISTS '$TEST_USER'@'127.0.0.1' IDENTIFIED BY '$pw';
CREATE USER IF NOT EXISTS '$TEST_USER'@'localhost' IDENTIFIED BY '$pw';
ALTER USER '$TEST_USER'@'127.0.0.1' IDENTIFIED BY '$pw';
ALTER USER '$TEST_USER'@'localhost' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON *.* TO '$TEST_USER'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO '$TEST_USER'@'localhost';
SQL
            url="mysql+pymysql://$TEST_USER:$pw@127.0.0.1:3306" ;;
        postgresql)
            # As postgres over the local socket (peer authentication). SUPERUSER because the
            # fixtures drop databases WITH (FORCE), as they do with the postgres account.
            (cd / && runuser -u postgres -- psql -v ON_ERROR_STOP=1 -q) >>"$out" 2>&1 <<SQL || fail "creating the PostgreSQL account failed" "$out"
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$TEST_USER') THEN
    CREATE ROLE $TEST_USER;
  END IF;
END \$\$;
ALTER ROLE $TEST_USER WITH LOGIN SUPERUSER PASSWORD '$pw';
SQL
            url="postgresql+psycopg2://$TEST_USER:$pw@127.0.0.1:5432" ;;
    esac
    why="$(db_usable "$url")" || fail "the new $TEST_USER account cannot create a database: $why" "$out"
    export "$var=$url"
    log "$kind: tests use $TEST_USER (password in $STATE_DIR/$TEST_USER.password)"
}

# --- the steps ------------------------------------------------------------------------------
mkdir -p "$LOG_DIR"

step "python venv (scripts/setup-venv.sh)"
scripts/setup-venv.sh || fail "scripts/setup-venv.sh exited $? (its output is above)"

step "docker engine (scripts/ensure-docker.sh)"
scripts/ensure-docker.sh || fail "scripts/ensure-docker.sh exited $? (its output is above)" \
    /var/log/dockerd.log

step "test images and registries (scripts/test-images.sh)"
scripts/test-images.sh || fail "scripts/test-images.sh exited $? (its output is above)"

step "service packages"
missing=()
if ! port_open 3306 && ! command -v mariadbd >/dev/null; then missing+=(mariadb-server); fi
if ! port_open 5432 && ! command -v pg_ctlcluster >/dev/null; then missing+=(postgresql); fi
if ! port_open 5672 && ! command -v rabbitmq-server >/dev/null; then missing+=(rabbitmq-server); fi
# Tools the tests call: rabbitmqctl (RabbitMQ vhosts), ip (network namespaces), socat (an
# engine relay cut to simulate a lost engine), ps/pidof (process checks).
command -v rabbitmqctl >/dev/null || [[ " ${missing[*]} " == *" rabbitmq-server "* ]] \
    || missing+=(rabbitmq-server)
command -v ip >/dev/null || missing+=(iproute2)
command -v socat >/dev/null || missing+=(socat)
command -v ps >/dev/null || missing+=(procps)
if [[ ${#missing[@]} -gt 0 ]]; then
    apt_install "${missing[@]}"
else
    log "nothing to install"
fi

step "MariaDB on 127.0.0.1:3306"
if port_open 3306; then log "answers; used as it is"; else start_mariadb; fi
step "PostgreSQL on 127.0.0.1:5432"
if port_open 5432; then log "answers; used as it is"; else start_postgresql; fi
step "RabbitMQ on 127.0.0.1:5672"
if port_open 5672; then log "answers; used as it is"; else start_rabbitmq; fi

step "database accounts"
ensure_db_account mariadb "mysql+pymysql://root@127.0.0.1:3306"
ensure_db_account postgresql "postgresql+psycopg2://postgres@127.0.0.1:5432"

# Tests marked openstack (or neutron, placement, glance, which imply it) run only when -m names
# one of those markers, or with ZUN_TEST_OPENSTACK=1 (tests/conftest.py); then the local
# OpenStack is started first. Under CI a service that cannot start fails the run here.
wants_openstack=0
case "${ZUN_TEST_OPENSTACK:-}" in 1|true|yes) wants_openstack=1 ;; esac
prev=""
for arg in "$@"; do
    markexpr=""
    case "$prev:$arg" in
        -m:*) markexpr=$arg ;;
        *:-m*) markexpr=${arg#-m} ;;
    esac
    if [[ -n "$markexpr" ]] && .venv/bin/python - "$markexpr" <<'PY'
import re, sys
words = re.findall(r"[A-Za-z_]+", sys.argv[1])
names = {"openstack", "neutron", "placement", "glance"}
sys.exit(0 if any(w in names and (i == 0 or words[i - 1] != "not") for i, w in enumerate(words)) else 1)
PY
    then
        wants_openstack=1
    fi
    prev=$arg
done
# CI (CI=true, no arguments) runs everything, in three pytest runs: the tests that need no
# OpenStack, while in the background the local OpenStack installs and starts (10-20 min on a
# machine without its venv, about a minute with it) and then the Tempest test runs (about 15
# min, mostly waiting on containers: it hardly slows the other run); then the other openstack
# tests. Set ZUN_TEST_OPENSTACK=0 to leave them out.
ci_full=0
if [[ $# -eq 0 && "${CI:-}" =~ ^(1|true|yes)$ && "${ZUN_TEST_OPENSTACK:-1}" =~ ^(1|true|yes)$ ]]; then
    ci_full=1
fi
OPENSTACK_LOG=$LOG_DIR/openstack-start.log
TEMPEST_TEST=tests/functional/scripts/test_tempest.py
TEMPEST_LOG=$LOG_DIR/tempest-pytest.log
# In the background: wait for the OpenStack start, then the Tempest test (its exit status).
run_tempest_after_openstack() {
    trap - ERR
    set +e
    while kill -0 "$openstack_pid" 2>/dev/null; do sleep 5; done
    # start prints the OS_* environment once every service is up.
    if ! grep -q "^export OS_AUTH_URL" "$OPENSTACK_LOG"; then
        echo "run-tests: the local OpenStack did not start; Tempest not run" >"$TEMPEST_LOG"
        return 1
    fi
    # Its own basetemp: pytest sessions prune each other's older numbered ones.
    .venv/bin/pytest -q -m openstack --basetemp="$LOG_DIR/tempest-basetemp" "$TEMPEST_TEST" \
        >"$TEMPEST_LOG" 2>&1
}
openstack_pid=""
tempest_pid=""
if [[ $ci_full -eq 1 ]]; then
    step "local OpenStack in the background (log: $OPENSTACK_LOG), then $TEMPEST_TEST (log: $TEMPEST_LOG)"
    scripts/openstack-services.sh start >"$OPENSTACK_LOG" 2>&1 &
    openstack_pid=$!
    run_tempest_after_openstack &
    tempest_pid=$!
elif [[ $wants_openstack -eq 1 ]]; then
    step "local OpenStack (scripts/openstack-services.sh start)"
    scripts/openstack-services.sh start >/dev/null \
        || fail "scripts/openstack-services.sh start failed (see its message above)"
fi

# Lint only the folders that exist: git does not keep empty ones in a fresh clone.
lint_paths=()
for d in zun tests benchmarks; do [[ -d "$d" ]] && lint_paths+=("$d"); done
step "ruff check and ruff format --check ${lint_paths[*]}"
.venv/bin/ruff check "${lint_paths[@]}"
.venv/bin/ruff format --check "${lint_paths[@]}"
.venv/bin/lint-imports

# run_pytest ARGS...: pytest, where collecting no test at all is a failure too.
run_pytest() {
    local rc=0
    .venv/bin/pytest -q "$@" || rc=$?
    if [[ $rc -eq 5 ]]; then
        echo "run-tests: ERROR in step '$STEP': pytest collected no tests (exit 5); that counts as a failure" >&2
    fi
    return "$rc"
}

trap - ERR
if [[ $ci_full -eq 0 ]]; then
    step "pytest -q $*"
    rc=0
    run_pytest "$@" || rc=$?
    exit "$rc"
fi

step "pytest -q -m 'not openstack' (the local OpenStack starts meanwhile)"
rc=0
run_pytest -m "not openstack" || rc=$?
step "local OpenStack (waiting for the background start)"
if ! wait "$openstack_pid"; then
    fail "scripts/openstack-services.sh start failed" "$OPENSTACK_LOG"
fi
log "$(grep -c . "$OPENSTACK_LOG") lines in $OPENSTACK_LOG; services up"
step "pytest -q -m openstack (all but $TEMPEST_TEST)"
rc2=0
run_pytest -m openstack --ignore "$TEMPEST_TEST" || rc2=$?
step "$TEMPEST_TEST (started in the background once the local OpenStack was up)"
rc3=0
wait "$tempest_pid" || rc3=$?
tail -n 30 "$TEMPEST_LOG"
log "summary: tests without OpenStack exited $rc, openstack tests exited $rc2, Tempest exited $rc3"
for code in "$rc" "$rc2" "$rc3"; do
    if [[ $code -ne 0 ]]; then exit "$code"; fi
done
exit 0
