#!/usr/bin/env bash
# The Zun Tempest plugin against this project, on the local OpenStack of
# scripts/openstack-services.sh (Keystone, Neutron, Glance) and the machine's Docker engine.
#
#   scripts/tempest.sh run [--regex R] [--exclude-regex R] [--concurrency N]
#        install the Tempest venv if needed, start a zun-api and a zun-compute of this checkout
#        (Keystone auth, a MariaDB database and RabbitMQ vhost of their own), register them as
#        the `container` service in Keystone, write tempest.conf, run the plugin's API tests,
#        write $WORKDIR/results.json, stop the two processes. Exit 0 when tempest ran (whatever
#        the results: the caller judges them); non-zero when something could not be set up.
#   scripts/tempest.sh install     only the Tempest venv
#   scripts/tempest.sh start|stop  only start / stop the zun-api and zun-compute (for a manual
#                                  `tempest run` in $WORKDIR/workspace)
#   scripts/tempest.sh results     print the last run's results, one line per test
#
# Environment:
#   ZUN_OS_HOME                where scripts/openstack-services.sh keeps its services (default
#                              /opt/zun-openstack); the Tempest venv goes to $ZUN_OS_HOME/tempest
#   ZUN_TEMPEST_WORKDIR        zun.conf, logs, state, the Tempest workspace and results.json
#                              (default /tmp/zun-tempest; emptied at each run)
#   ZUN_TEMPEST_API_PORT       zun-api's port (default 20701); the console proxy's is +1
#   ZUN_TEMPEST_NETWORK_DRIVER [network]/driver of zun: kuryr (default; kuryr-libnetwork of
#                              scripts/openstack-services.sh on the machine's dockerd) or docker
#                              (the embedded bridges: the plugin's Neutron tests cannot pass)
#   ZUN_TEMPEST_CONCURRENCY    tempest workers (default 1: two shared cores)
#
# Images: the plugin runs `cirros:latest` and `nginx`, which are pulled from Docker Hub; there is
# no internet here, so the script builds stand-ins from the busybox test image and pushes them to
# the test registry on 127.0.0.1:5000 (scripts/test-images.sh), as zun-tempest/cirros (busybox
# with a `curl` that is busybox's wget) and zun-tempest/nginx (busybox httpd on port 80 serving a
# "Welcome to nginx!" page).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OS_HOME="${ZUN_OS_HOME:-/opt/zun-openstack}"
TVENV="$OS_HOME/tempest/venv"
REQS="$ROOT/scripts/tempest/requirements.txt"
WORKDIR="${ZUN_TEMPEST_WORKDIR:-/tmp/zun-tempest}"
API_PORT="${ZUN_TEMPEST_API_PORT:-20701}"
WSPROXY_PORT=$((API_PORT + 1))
NET_DRIVER="${ZUN_TEMPEST_NETWORK_DRIVER:-kuryr}"
CONCURRENCY="${ZUN_TEMPEST_CONCURRENCY:-1}"
ZVENV="$ROOT/.venv"
HOST=127.0.0.1
DB_NAME=zun_tempest
VHOST=zun-tempest
ZUN_HOST=zun-tempest-node
REGISTRY=127.0.0.1:5000
CIRROS_IMAGE=$REGISTRY/zun-tempest/cirros:latest
NGINX_IMAGE=$REGISTRY/zun-tempest/nginx:latest
IMAGE_LABEL=org.zun.tempest-image-base
OSS="$ROOT/scripts/openstack-services.sh"
REGEX_DEFAULT='^zun_tempest_plugin\.tests\.tempest\.api\.'

log() { echo "tempest.sh: $*" >&2; }

fail() {  # fail MESSAGE [LOG]
    echo "tempest.sh: ERROR: $1" >&2
    if [[ -n "${2:-}" && -f "$2" ]]; then
        echo "tempest.sh: last lines of $2:" >&2
        tail -n 30 "$2" | sed 's/^/    /' >&2
    fi
    exit 1
}

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }

# --- the Tempest venv -------------------------------------------------------------------------

install_venv() {
    local stamp="$TVENV/.zun-tempest-stamp" want
    want="$(sha256sum "$REQS" | cut -d' ' -f1)"
    if [[ -x "$TVENV/bin/tempest" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        return 0
    fi
    mkdir -p "$OS_HOME/tempest"
    local ilog="$OS_HOME/tempest/install.log"
    log "installing tempest and zun-tempest-plugin into $TVENV (log: $ilog)"
    [[ -x "$TVENV/bin/python" ]] || python3 -m venv "$TVENV" >>"$ilog" 2>&1 \
        || fail "python3 -m venv $TVENV" "$ilog"
    rm -f "$stamp"
    "$TVENV/bin/python" -m pip install -q -r "$REQS" >>"$ilog" 2>&1 \
        || fail "pip install -r $REQS" "$ilog"
    echo "$want" >"$stamp"
}

# --- prerequisites: the local OpenStack, the repo venv, the test images -----------------------

ensure_prereqs() {
    [[ -x "$ZVENV/bin/zun-api" ]] || "$ROOT/scripts/setup-venv.sh" >&2 \
        || fail "scripts/setup-venv.sh"
    if ! "$OSS" status >/dev/null 2>&1; then
        log "the local OpenStack is not all up: scripts/openstack-services.sh start"
        "$OSS" start >/dev/null || fail "scripts/openstack-services.sh start"
    fi
    eval "$("$OSS" env)"
    port_open 5000 || "$ROOT/scripts/test-images.sh" >&2 || fail "scripts/test-images.sh"
}

# build_image NAME: the stand-in image NAME, from busybox:latest, pushed to the test registry.
# Rebuilt when busybox:latest changed (its id is kept in a label).
build_image() {
    local name=$1 base_id have cid
    base_id="$(docker image inspect -f '{{.Id}}' busybox:latest)"
    have="$(docker image inspect -f "{{index .Config.Labels \"$IMAGE_LABEL\"}}" "$name" \
            2>/dev/null || true)"
    if [[ "$have" != "$base_id" ]]; then
        log "building $name"
        cid="$(docker create busybox:latest /bin/true)"
        local tmp
        tmp="$(mktemp -d)"
        local change=(--change "LABEL $IMAGE_LABEL=$base_id")
        case "$name" in
            */cirros:*)
                mkdir -p "$tmp/usr/bin"
                # curl URL: what the plugin's tests do with curl (print the page)
                printf '#!/bin/sh\nu="$1"\ncase "$u" in *://*) ;; *) u="http://$u" ;; esac\nexec wget -q -O - "$u"\n' \
                    >"$tmp/usr/bin/curl"
                chmod 755 "$tmp/usr/bin/curl"
                docker cp "$tmp/usr/bin/curl" "$cid:/usr/bin/curl" >/dev/null
                change+=(--change 'CMD ["/bin/sh"]')
                ;;
            */nginx:*)
                mkdir -p "$tmp/html"
                printf '<html><body><h1>Welcome to nginx!</h1><p>busybox httpd standing in for nginx</p></body></html>\n' \
                    >"$tmp/html/index.html"
                docker cp "$tmp/html" "$cid:/www" >/dev/null
                change+=(--change 'EXPOSE 80/tcp'
                         --change 'CMD ["httpd", "-f", "-p", "80", "-h", "/www"]')
                ;;
        esac
        docker commit "${change[@]}" "$cid" "$name" >/dev/null
        docker rm -f "$cid" >/dev/null
        rm -rf "$tmp"
    fi
    docker push -q "$name" >/dev/null || fail "docker push $name"
}

# --- zun-api and zun-compute ------------------------------------------------------------------

service_password() {
    # shellcheck disable=SC1091
    (source "$OS_HOME/secrets.env" && echo "$SERVICE_PASSWORD")
}

write_zun_conf() {
    local pw ks="http://$HOST:35357"
    pw="$(service_password)"
    mkdir -p "$WORKDIR/state" "$WORKDIR/logs" "$WORKDIR/run"
    cat >"$WORKDIR/zun.conf" <<EOF
[DEFAULT]
host = $ZUN_HOST
my_ip = $HOST
state_path = $WORKDIR/state
transport_url = rabbit://guest:guest@$HOST:5672/$VHOST
debug = true

[database]
connection = mysql+pymysql://root@$HOST:3306/$DB_NAME?charset=utf8mb4

[api]
auth_strategy = keystone
host_ip = $HOST
port = $API_PORT
workers = 1

[websocket_proxy]
wsproxy_host = $HOST
wsproxy_port = $WSPROXY_PORT

[network]
driver = $NET_DRIVER

[keystone_authtoken]
www_authenticate_uri = $ks/v3
auth_url = $ks/v3
auth_type = password
username = zun
password = $pw
project_name = service
user_domain_name = Default
project_domain_name = Default

[keystone_auth]
auth_url = $ks/v3
auth_type = password
username = zun
password = $pw
project_name = service
user_domain_name = Default
project_domain_name = Default

[neutron_client]
region_name = RegionOne
endpoint_type = publicURL

[glance_client]
region_name = RegionOne
endpoint_type = publicURL
api_version = 2

[placement_client]
region_name = RegionOne
endpoint_type = publicURL
EOF
}

setup_db_and_vhost() {
    mysql -h "$HOST" -u root -e "DROP DATABASE IF EXISTS $DB_NAME; CREATE DATABASE $DB_NAME CHARACTER SET utf8mb4" \
        || fail "create database $DB_NAME"
    rabbitmqctl -q list_vhosts 2>/dev/null | grep -qx "$VHOST" \
        || rabbitmqctl -q add_vhost "$VHOST" >/dev/null || fail "rabbitmqctl add_vhost $VHOST"
    rabbitmqctl -q set_permissions -p "$VHOST" guest ".*" ".*" ".*" >/dev/null \
        || fail "rabbitmqctl set_permissions $VHOST"
    "$ZVENV/bin/zun-db-manage" --config-file "$WORKDIR/zun.conf" upgrade \
        >>"$WORKDIR/logs/db-manage.log" 2>&1 || fail "zun-db-manage upgrade" "$WORKDIR/logs/db-manage.log"
}

register_endpoint() {
    "$OS_HOME/venv/bin/python" "$ROOT/scripts/openstack/keystone_setup.py" --endpoints-only \
        --endpoint "container=http://$HOST:$API_PORT/v1" >>"$WORKDIR/logs/keystone.log" 2>&1 \
        || fail "register the container endpoint in Keystone" "$WORKDIR/logs/keystone.log"
}

pid_alive() { [[ -f "$WORKDIR/run/$1.pid" ]] && kill -0 "$(cat "$WORKDIR/run/$1.pid")" 2>/dev/null; }

spawn() {  # spawn NAME BINARY
    # 9>&-: the run lock stays with this script, not with what it starts
    setsid "$ZVENV/bin/$2" --config-file "$WORKDIR/zun.conf" </dev/null 9>&- \
        >>"$WORKDIR/logs/$1.log" 2>&1 &
    echo $! >"$WORKDIR/run/$1.pid"
}

stop_one() {
    local pidfile="$WORKDIR/run/$1.pid" pid i
    [[ -f "$pidfile" ]] || return 0
    pid="$(cat "$pidfile")"
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM -- "-$pid" 2>/dev/null || true
        for ((i = 0; i < 60; i++)); do
            kill -0 -- "-$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

# An admin token's request to zun-api: prints the HTTP status (000 when nothing answers).
api_status() {
    "$ZVENV/bin/python" - "$1" <<'PY'
import os, sys
from keystoneauth1 import session
from keystoneauth1.identity import v3
auth = v3.Password(auth_url=os.environ["OS_AUTH_URL"], username=os.environ["OS_USERNAME"],
                   password=os.environ["OS_PASSWORD"], project_name=os.environ["OS_PROJECT_NAME"],
                   user_domain_name="Default", project_domain_name="Default")
try:
    r = session.Session(auth=auth).get(sys.argv[1], raise_exc=False, timeout=10,
                                       headers={"OpenStack-API-Version": "container 1.40"})
    print(r.status_code, r.text[:2000])
except Exception as exc:
    print("000", exc)
PY
}

start_zun() {
    [[ -n "${OS_AUTH_URL:-}" ]] || eval "$("$OSS" env)"
    if pid_alive zun-api && pid_alive zun-compute; then
        log "zun-api and zun-compute already run"
        return 0
    fi
    port_open "$API_PORT" && fail "port $API_PORT is taken by another process"
    write_zun_conf
    setup_db_and_vhost
    register_endpoint
    log "starting zun-compute ($ZUN_HOST) and zun-api on $HOST:$API_PORT (logs: $WORKDIR/logs)"
    spawn zun-compute zun-compute
    spawn zun-api zun-api
    local i out
    for ((i = 0; i < 120; i++)); do
        pid_alive zun-api || fail "zun-api exited" "$WORKDIR/logs/zun-api.log"
        pid_alive zun-compute || fail "zun-compute exited" "$WORKDIR/logs/zun-compute.log"
        if port_open "$API_PORT"; then
            out="$(api_status "http://$HOST:$API_PORT/v1/hosts")"
            if [[ "$out" == 200* && "$out" == *"$ZUN_HOST"* ]] \
                    && grep -q "zun-compute running on host $ZUN_HOST" "$WORKDIR/logs/zun-compute.log"; then
                return 0
            fi
        fi
        sleep 1
    done
    fail "zun-api did not list host $ZUN_HOST within 120 s (last answer: ${out:-none})" \
        "$WORKDIR/logs/zun-api.log"
}

stop_zun() {
    stop_one zun-api
    stop_one zun-compute
}

# After the run, the Docker networks zun made on the machine's engine for this run:
# - docker driver: the per-project bridges zun-<project id> of the two Tempest projects;
# - kuryr driver: the kuryr networks (named after their Neutron network) of the two accounts'
#   networks and of every Neutron network the plugin's tests made and deleted (their DELETE is
#   in tempest.log); the plugin never asks zun to remove them (the original left them too).
#   They go as zun-compute removes them (zun/network/kuryr_networks.py): the Docker network,
#   then zun's Neutron subnet pool it was made with (zun-pool-<subnet>-<host>).
cleanup_networks() {
    local id
    [[ -f "$WORKDIR/accounts" ]] || return 0
    if [[ "$NET_DRIVER" == docker ]]; then
        for id in $(awk '{print $1}' "$WORKDIR/accounts"); do
            docker network rm "zun-$id" >/dev/null 2>&1 || true
        done
        return 0
    fi
    [[ -n "${OS_AUTH_URL:-}" ]] || eval "$("$OSS" env)"
    "$ZVENV/bin/python" - $(awk '{print $2}' "$WORKDIR/accounts") \
        $(grep -o "DELETE http://[^ ]*/v2.0/networks/[0-9a-f-]\{36\}" \
              "$WORKDIR/workspace/tempest.log" 2>/dev/null | grep -o '[0-9a-f-]\{36\}$' | sort -u) \
        <<'PY' || true
import os, sys
import docker
from keystoneauth1 import session
from keystoneauth1.identity import v3
from zun.network import kuryr_networks
from zun.network.neutron import NeutronClient
auth = v3.Password(auth_url=os.environ["OS_AUTH_URL"], username=os.environ["OS_USERNAME"],
                   password=os.environ["OS_PASSWORD"], project_name=os.environ["OS_PROJECT_NAME"],
                   user_domain_name="Default", project_domain_name="Default")
neutron = NeutronClient(session.Session(auth=auth))
client = docker.from_env()
for net_id in dict.fromkeys(sys.argv[1:]):
    nets = [n for n in client.networks.list(names=[net_id]) if n.name == net_id]
    if nets and nets[0].attrs.get("Driver") == "kuryr":
        try:
            kuryr_networks.remove(client, neutron, net_id)
        except Exception as exc:
            print(f"cleanup: Docker network {net_id}: {exc}", file=sys.stderr)
PY
}

# --- the plugin's Docker engine on tcp://localhost:2375 ---------------------------------------
#
# test_run_container_with_image_driver_glance pulls `alpine` through a Docker engine at
# tcp://localhost:2375 (hard-coded in the plugin: devstack opens the node's engine there), saves
# it, uploads it to Glance and removes it. The machine's dockerd listens on its unix socket only
# and there is no Docker Hub here, so for the run: a dockerd of our own in a network namespace
# (no bridge, no iptables: it only pulls and saves), whose registry mirror is the test registry
# (127.0.0.1:5000, reached from the namespace through a unix socket relay) where a stand-in
# `library/alpine` (the busybox test image) is pushed; and a relay from 127.0.0.1:2375 to the
# engine's socket. All of it is stopped and removed with zun-api and zun-compute.
PULL_NS=zun-tempest-pull
PULL_RUN=/run/$PULL_NS
PULL_DATA=/var/lib/$PULL_NS
PULL_MIRROR_PORT=$((API_PORT + 9))
ALPINE_STANDIN=$REGISTRY/library/alpine:latest

spawn_cmd() {  # spawn_cmd NAME CMD...: a process group of its own, pid in $WORKDIR/run
    local name=$1
    shift
    setsid "$@" </dev/null 9>&- >>"$WORKDIR/logs/$name.log" 2>&1 &
    echo $! >"$WORKDIR/run/$name.pid"
}

start_pull_engine() {
    port_open 2375 && fail "127.0.0.1:2375 is taken: the plugin's Docker engine must listen there"
    docker tag busybox:latest "$ALPINE_STANDIN" && docker push -q "$ALPINE_STANDIN" >/dev/null \
        || fail "docker push $ALPINE_STANDIN"
    docker rmi "$ALPINE_STANDIN" >/dev/null
    mkdir -p "$PULL_RUN" "$PULL_DATA" "$WORKDIR/run"
    ip netns list | grep -qw "$PULL_NS" || ip netns add "$PULL_NS" || fail "ip netns add $PULL_NS"
    ip -n "$PULL_NS" link set lo up
    spawn_cmd pull-registry-relay socat "UNIX-LISTEN:$PULL_RUN/registry.sock,fork,unlink-early" \
        "TCP:$HOST:5000"
    spawn_cmd pull-mirror-relay nsenter "--net=/var/run/netns/$PULL_NS" socat \
        "TCP-LISTEN:$PULL_MIRROR_PORT,bind=$HOST,fork,reuseaddr" "UNIX-CONNECT:$PULL_RUN/registry.sock"
    spawn_cmd pull-dockerd nsenter "--net=/var/run/netns/$PULL_NS" dockerd \
        --data-root "$PULL_DATA" --exec-root "$PULL_RUN/exec" --pidfile "$PULL_RUN/dockerd.pid" \
        -H "unix://$PULL_RUN/docker.sock" --registry-mirror "http://$HOST:$PULL_MIRROR_PORT" \
        --bridge none --iptables=false --ip6tables=false
    local i
    for ((i = 0; i < 90; i++)); do
        docker -H "unix://$PULL_RUN/docker.sock" version >/dev/null 2>&1 && break
        pid_alive pull-dockerd || fail "the pull engine's dockerd exited" "$WORKDIR/logs/pull-dockerd.log"
        sleep 1
    done
    docker -H "unix://$PULL_RUN/docker.sock" version >/dev/null 2>&1 \
        || fail "the pull engine's dockerd did not answer in 90 s" "$WORKDIR/logs/pull-dockerd.log"
    spawn_cmd pull-engine-relay socat "TCP-LISTEN:2375,bind=$HOST,fork,reuseaddr" \
        "UNIX-CONNECT:$PULL_RUN/docker.sock"
    for ((i = 0; i < 20; i++)); do port_open 2375 && return 0; sleep 0.5; done
    fail "no relay on 127.0.0.1:2375" "$WORKDIR/logs/pull-engine-relay.log"
}

stop_pull_engine() {
    local pid i
    stop_one pull-engine-relay
    if [[ -f "$PULL_RUN/dockerd.pid" ]]; then
        pid="$(cat "$PULL_RUN/dockerd.pid")"
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 60; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    stop_one pull-dockerd
    stop_one pull-mirror-relay
    stop_one pull-registry-relay
    ip netns list | grep -qw "$PULL_NS" && ip netns del "$PULL_NS"
    grep -o " $PULL_DATA[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf "$PULL_RUN" "$PULL_DATA"
    # The test's container was made from the Glance copy of the stand-in: `docker load` left it
    # as alpine:latest on the machine's engine. Only that image (same id as busybox) is removed.
    if [[ "$(docker image inspect -f '{{.Id}}' alpine:latest 2>/dev/null)" == \
          "$(docker image inspect -f '{{.Id}}' busybox:latest)" ]]; then
        docker rmi alpine:latest >/dev/null 2>&1 || true
    fi
}

# --- tempest.conf -----------------------------------------------------------------------------

write_tempest_conf() {
    local ws="$WORKDIR/workspace"
    rm -rf "$ws"
    # Its own workspace registry: the default ~/.tempest/workspace.yaml is shared by name.
    "$TVENV/bin/tempest" init --workspace-path "$WORKDIR/workspace.yaml" --name zun-tempest \
        "$ws" >>"$WORKDIR/logs/tempest-init.log" 2>&1 \
        || fail "tempest init" "$WORKDIR/logs/tempest-init.log"
    "$OS_HOME/venv/bin/python" "$ROOT/scripts/tempest/accounts.py" --out "$ws/etc/accounts.yaml" \
        >"$WORKDIR/accounts" 2>>"$WORKDIR/logs/keystone.log" \
        || fail "the Tempest accounts in Keystone and Neutron" "$WORKDIR/logs/keystone.log"
    cat >"$ws/etc/tempest.conf" <<EOF
[DEFAULT]
log_file = tempest.log
debug = true

[auth]
# Pre-provisioned accounts (scripts/tempest/accounts.py says why): a member and an admin, each
# with a project network.
use_dynamic_credentials = false
test_accounts_file = $ws/etc/accounts.yaml
default_credentials_domain_name = Default

[identity]
uri_v3 = $OS_AUTH_URL
auth_version = v3
region = RegionOne
v3_endpoint_type = public

[identity-feature-enabled]
api_v2 = false

[service_available]
zun = true
neutron = true
glance = true
cinder = false
nova = false
swift = false
horizon = false

[container_service]
catalog_type = container
min_microversion = 1.40
max_microversion = 1.40
cirros_image = $CIRROS_IMAGE
nginx_image = $NGINX_IMAGE
ubuntu_image = $CIRROS_IMAGE
wait_timeout = 120

[validation]
run_validation = false
ping_timeout = 30
EOF
}

write_results() {
    (cd "$WORKDIR/workspace" && "$TVENV/bin/stestr" last --subunit) \
        | "$TVENV/bin/python" "$ROOT/scripts/tempest/results.py" >"$WORKDIR/results.json" \
        || fail "reading the subunit stream of the run"
}

print_results() {
    python3 - "$WORKDIR/results.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
for test_id, t in data["tests"].items():
    reason = t["reason"].strip().splitlines()[-1][:150] if t["status"] != "success" and t["reason"].strip() else ""
    print(f"{t['status']:8} {test_id}" + (f"  -- {reason}" if reason else ""))
print(" ".join(f"{k}={v}" for k, v in sorted(data["counts"].items())))
PY
}

cmd_run() {
    local regex="$REGEX_DEFAULT" exclude=()
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --regex) regex=$2; shift 2 ;;
            --exclude-regex) exclude=(--exclude-regex "$2"); shift 2 ;;
            --concurrency) CONCURRENCY=$2; shift 2 ;;
            *) fail "unknown argument $1" ;;
        esac
    done
    install_venv
    # One run at a time on this machine (fixed ports, database, vhost, namespace, port 2375): a
    # second one waits for the first.
    exec 9>"$OS_HOME/tempest/run.lock"
    flock -w 3600 9 || fail "another scripts/tempest.sh run held $OS_HOME/tempest/run.lock for 1 h"
    ensure_prereqs
    build_image "$CIRROS_IMAGE"
    build_image "$NGINX_IMAGE"
    stop_zun
    stop_pull_engine
    rm -rf "$WORKDIR"
    mkdir -p "$WORKDIR/logs"
    trap 'stop_zun; cleanup_networks; stop_pull_engine' EXIT
    start_zun
    start_pull_engine
    write_tempest_conf
    log "tempest run --regex '$regex' ${exclude[*]} --concurrency $CONCURRENCY (log: $WORKDIR/workspace/tempest.log)"
    local started=$SECONDS rc=0
    (cd "$WORKDIR/workspace" && "$TVENV/bin/tempest" run --regex "$regex" "${exclude[@]}" \
        --concurrency "$CONCURRENCY") >"$WORKDIR/logs/tempest-run.log" 2>&1 || rc=$?
    log "tempest exited $rc after $((SECONDS - started)) s"
    write_results
    print_results
}

case "${1:-}" in
    run) shift; cmd_run "$@" ;;
    install) install_venv ;;
    start) install_venv; ensure_prereqs; build_image "$CIRROS_IMAGE"; build_image "$NGINX_IMAGE"
           mkdir -p "$WORKDIR/logs"; start_zun; start_pull_engine; write_tempest_conf
           log "ready: cd $WORKDIR/workspace && $TVENV/bin/tempest run --regex '$REGEX_DEFAULT'" ;;
    stop) stop_zun; cleanup_networks; stop_pull_engine ;;
    results) print_results ;;
    *) echo "usage: $0 run [--regex R] [--exclude-regex R] [--concurrency N] | install | start | stop | results" >&2
       exit 2 ;;
esac
