#!/usr/bin/env bash
# A local OpenStack for development and tests: Keystone, Neutron (API + RPC server, ML2/OVS with
# vxlan), Open vSwitch in userspace with the OVS agent, Placement and Glance (file store), and
# kuryr-libnetwork as the Docker network plugin `kuryr` of this machine's dockerd.
#
#   scripts/openstack-services.sh start    install what is missing, start what is down, then print
#                                          the OS_* environment and the zun.conf sections
#   scripts/openstack-services.sh stop     stop everything this script started
#   scripts/openstack-services.sh status   one line per service; exit 0 only if all are up
#   scripts/openstack-services.sh env      print the admin OS_* environment (shell syntax)
#   scripts/openstack-services.sh zun-conf print the zun.conf sections for these services
#   scripts/openstack-services.sh databases
#                                          only the MariaDB part of `start`: databases and user
#
# Everything listens on 127.0.0.1 only. No systemd: each service is a process group of its own
# with a pid file. Idempotent: a second `start` finds everything up and only prints.
#
# Environment:
#   ZUN_OS_HOME   where the venv, configs, state, logs and pid files live
#                 (default /opt/zun-openstack: outside the checkout, so that a fresh clone in CI
#                 on the same machine reuses the installed venv)
#   ZUN_OS_KEYSTONE_PORT / _NEUTRON_PORT / _PLACEMENT_PORT / _GLANCE_PORT
#                 (defaults 35357 / 9696 / 8778 / 9292; 5000 is the test registry's)
#   ZUN_OS_KURYR_PORT
#                 kuryr-libnetwork's plugin API (default 23750, kuryr's own default)
#   ZUN_OS_DOCKER_PLUGIN_DIR
#                 where dockerd finds the plugin's spec file kuryr.spec (default /etc/docker/plugins)
#   ZUN_OS_WAIT   seconds to wait for each service to answer (default 120)
#   ZUN_OS_DB_PORT / ZUN_OS_DB_SOCKET
#                 MariaDB's TCP port on 127.0.0.1 (default 3306) and its local socket (default:
#                 the mariadb client's, /run/mysqld/mysqld.sock on Debian)
#   ZUN_TEST_MARIADB_URL
#                 an administrator account (mysql+pymysql://user:password@host:port), tried when
#                 root cannot log in (see setup_database)
#
# The MariaDB (127.0.0.1:3306) and RabbitMQ (127.0.0.1:5672) of this machine are used as they
# are; the script only adds its own databases (zun_os_*), database user (zun_os), RabbitMQ
# vhost (zun-openstack) and RabbitMQ user (zun_os).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${ZUN_OS_HOME:-/opt/zun-openstack}"
VENV="$HOME_DIR/venv"
ETC="$HOME_DIR/etc"
STATE="$HOME_DIR/state"
LOGS="$HOME_DIR/logs"
RUN="$HOME_DIR/run"
SECRETS="$HOME_DIR/secrets.env"
REQS="$ROOT/scripts/openstack/requirements.txt"
KURYR_VENV="$HOME_DIR/kuryr-venv"
KURYR_REQS="$ROOT/scripts/openstack/kuryr-requirements.txt"
KURYR_BINDIR="$HOME_DIR/kuryr-bindir"
HOST=127.0.0.1
KEYSTONE_PORT="${ZUN_OS_KEYSTONE_PORT:-35357}"
NEUTRON_PORT="${ZUN_OS_NEUTRON_PORT:-9696}"
PLACEMENT_PORT="${ZUN_OS_PLACEMENT_PORT:-8778}"
GLANCE_PORT="${ZUN_OS_GLANCE_PORT:-9292}"
KURYR_PORT="${ZUN_OS_KURYR_PORT:-23750}"
DOCKER_PLUGIN_DIR="${ZUN_OS_DOCKER_PLUGIN_DIR:-/etc/docker/plugins}"
WAIT="${ZUN_OS_WAIT:-120}"
DB_PORT="${ZUN_OS_DB_PORT:-3306}"
OVS_CTL=/usr/share/openvswitch/scripts/ovs-ctl
RABBIT_VHOST=zun-openstack
DB_USER=zun_os
KEYSTONE_URL="http://$HOST:$KEYSTONE_PORT/v3"

log() { echo "openstack-services: $*" >&2; }

# fail STEP LOG: name the failed step and show the end of its log, then exit non-zero.
fail() {
    local step=$1 logfile=${2:-}
    echo "openstack-services: ERROR: step '$step' failed" >&2
    if [[ -n "$logfile" ]]; then
        echo "openstack-services: log: $logfile; its last lines:" >&2
        tail -n 25 "$logfile" 2>/dev/null | sed 's/^/    /' >&2 || true
    fi
    exit 1
}

# run STEP LOG CMD...: run a command with its output appended to LOG; fail with STEP otherwise.
run() {
    local step=$1 logfile=$2
    shift 2
    echo "=== $(date -u +%FT%TZ) $*" >>"$logfile"
    "$@" </dev/null >>"$logfile" 2>&1 || fail "$step" "$logfile"
}

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }

pid_alive() {
    local pidfile="$RUN/$1.pid"
    [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# --- installation -----------------------------------------------------------------------------

install_debian() {
    # ethtool: kuryr's binding hook turns veth checksum offload off (scripts/openstack/kuryr-bindir)
    if command -v ovs-vsctl >/dev/null && [[ -x "$OVS_CTL" ]] && command -v ethtool >/dev/null; then
        return 0
    fi
    log "installing openvswitch-switch and ethtool from Debian"
    mkdir -p "$LOGS"
    if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q openvswitch-switch ethtool \
            >>"$LOGS/install.log" 2>&1; then
        run "apt-get update" "$LOGS/install.log" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q
        run "apt-get install openvswitch-switch ethtool" "$LOGS/install.log" \
            env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q openvswitch-switch ethtool
    fi
}

install_venv() {
    local stamp="$VENV/.zun-os-stamp" want
    want="$(sha256sum "$REQS" | cut -d' ' -f1)"
    if [[ -x "$VENV/bin/uwsgi" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        return 0
    fi
    mkdir -p "$LOGS"
    log "installing the OpenStack services into $VENV (log: $LOGS/install.log)"
    [[ -x "$VENV/bin/python" ]] || run "create venv" "$LOGS/install.log" python3 -m venv "$VENV"
    rm -f "$stamp"
    run "pip install" "$LOGS/install.log" "$VENV/bin/python" -m pip install -q -r "$REQS"
    echo "$want" >"$stamp"
}

# kuryr-libnetwork in a venv of its own: it needs pyroute2 0.7 where Neutron has 0.9.
install_kuryr() {
    local stamp="$KURYR_VENV/.zun-os-stamp" want
    want="$(sha256sum "$KURYR_REQS" | cut -d' ' -f1)"
    if [[ -x "$KURYR_VENV/bin/kuryr-server" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        return 0
    fi
    mkdir -p "$LOGS"
    log "installing kuryr-libnetwork into $KURYR_VENV (log: $LOGS/install.log)"
    [[ -x "$KURYR_VENV/bin/python" ]] \
        || run "create kuryr venv" "$LOGS/install.log" python3 -m venv "$KURYR_VENV"
    rm -f "$stamp"
    run "pip install kuryr" "$LOGS/install.log" \
        "$KURYR_VENV/bin/python" -m pip install -q -r "$KURYR_REQS"
    echo "$want" >"$stamp"
}

# --- secrets, database, message queue -----------------------------------------------------------

load_secrets() {
    if [[ ! -f "$SECRETS" ]]; then
        mkdir -p "$HOME_DIR"
        local umask_was
        umask_was=$(umask)
        umask 077
        {
            for name in ADMIN DB RABBIT SERVICE; do
                echo "${name}_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
            done
        } >"$SECRETS"
        umask "$umask_was"
    fi
    # shellcheck disable=SC1090
    source "$SECRETS"
}

setup_database() {
    local sql="CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASSWORD';"
    for db in keystone neutron placement glance; do
        sql+="
CREATE DATABASE IF NOT EXISTS zun_os_$db CHARACTER SET utf8mb4;
GRANT ALL PRIVILEGES ON zun_os_$db.* TO '$DB_USER'@'127.0.0.1';
GRANT ALL PRIVILEGES ON zun_os_$db.* TO '$DB_USER'@'localhost';"
    done
    mkdir -p "$LOGS"
    local client out="$LOGS/setup.log" user password host port
    local socket=(--protocol=socket -u root)
    [[ -n "${ZUN_OS_DB_SOCKET:-}" ]] && socket+=("--socket=$ZUN_OS_DB_SOCKET")
    client="$(command -v mariadb || command -v mysql)" \
        || fail "create databases: no mariadb (or mysql) client; apt-get install mariadb-client"
    # As the first administrator that gets in: root over the local socket (a stock Debian's
    # root logs in only by unix_socket there: over TCP it is error 1698), root over TCP without
    # a password (this project's machines), then the ZUN_TEST_MARIADB_URL account (it needs
    # CREATE USER and GRANT OPTION). The SQL is idempotent, so a retry as the next one is fine.
    # The socket counts only if its server is the one on DB_PORT (the one the services use).
    echo "=== $(date -u +%FT%TZ) create databases as root over the local socket" >>"$out"
    if [[ "$("$client" "${socket[@]}" -N -e 'SELECT @@port' </dev/null 2>>"$out")" == "$DB_PORT" ]] \
        && "$client" "${socket[@]}" -e "$sql" </dev/null >>"$out" 2>&1; then
        return 0
    fi
    echo "=== $(date -u +%FT%TZ) as root over TCP $HOST:$DB_PORT" >>"$out"
    "$client" --protocol=tcp -h "$HOST" -P "$DB_PORT" -u root -e "$sql" </dev/null >>"$out" 2>&1 \
        && return 0
    if [[ -n "${ZUN_TEST_MARIADB_URL:-}" ]]; then
        IFS=$'\t' read -r user password host port < <(python3 - "$ZUN_TEST_MARIADB_URL" <<'PY'
import sys
from urllib.parse import unquote, urlsplit
u = urlsplit(sys.argv[1])
print("\t".join([unquote(u.username or ""), unquote(u.password or ""), u.hostname or "127.0.0.1",
                 str(u.port or 3306)]))
PY
        )
        echo "=== $(date -u +%FT%TZ) as $user (ZUN_TEST_MARIADB_URL) over TCP $host:$port" >>"$out"
        MYSQL_PWD="$password" "$client" --protocol=tcp -h "$host" -P "$port" -u "$user" \
            -e "$sql" </dev/null >>"$out" 2>&1 && return 0
    fi
    fail "create databases (as root over the socket, root over TCP${ZUN_TEST_MARIADB_URL:+, the ZUN_TEST_MARIADB_URL account}: all refused)" "$out"
}

setup_rabbit() {
    if rabbitmqctl -q list_vhosts 2>/dev/null | grep -qx "$RABBIT_VHOST" \
       && rabbitmqctl -q list_users 2>/dev/null | grep -q "^$DB_USER\b"; then
        return 0
    fi
    run "rabbitmq vhost" "$LOGS/setup.log" rabbitmqctl add_vhost "$RABBIT_VHOST"
    rabbitmqctl -q list_users 2>/dev/null | grep -q "^$DB_USER\b" \
        || run "rabbitmq user" "$LOGS/setup.log" rabbitmqctl add_user "$DB_USER" "$RABBIT_PASSWORD"
    run "rabbitmq permissions" "$LOGS/setup.log" \
        rabbitmqctl set_permissions -p "$RABBIT_VHOST" "$DB_USER" ".*" ".*" ".*"
}

db_url() { echo "mysql+pymysql://$DB_USER:$DB_PASSWORD@$HOST:$DB_PORT/zun_os_$1?charset=utf8mb4"; }

# --- configuration files ----------------------------------------------------------------------

authtoken() {  # authtoken USER: the [keystone_authtoken] section of a service
    cat <<EOF
[keystone_authtoken]
www_authenticate_uri = http://$HOST:$KEYSTONE_PORT
auth_url = http://$HOST:$KEYSTONE_PORT
auth_type = password
username = $1
password = $SERVICE_PASSWORD
project_name = service
user_domain_name = Default
project_domain_name = Default
EOF
}

write_configs() {
    mkdir -p "$ETC"/{keystone,neutron,placement,glance} "$STATE"/{keystone,neutron,glance} \
        "$STATE"/glance/{images,staging,tasks} "$STATE/locks" "$LOGS" "$RUN"
    cat >"$ETC/keystone/keystone.conf" <<EOF
[database]
connection = $(db_url keystone)
[token]
provider = fernet
[fernet_tokens]
key_repository = $STATE/keystone/fernet-keys
[fernet_receipts]
key_repository = $STATE/keystone/fernet-keys
[credential]
key_repository = $STATE/keystone/credential-keys
[identity]
# A development cloud on 2 shared cores: the default 12 bcrypt rounds cost seconds per login.
password_hash_rounds = 4
EOF

    cat >"$ETC/neutron/neutron.conf" <<EOF
[DEFAULT]
core_plugin = ml2
service_plugins =
auth_strategy = keystone
bind_host = $HOST
bind_port = $NEUTRON_PORT
state_path = $STATE/neutron
transport_url = rabbit://$DB_USER:$RABBIT_PASSWORD@$HOST:5672/$RABBIT_VHOST
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
api_paste_config = $VENV/etc/neutron/api-paste.ini
api_workers = 1
rpc_workers = 1
rpc_state_report_workers = 1
[database]
connection = $(db_url neutron)
$(authtoken neutron)
[oslo_concurrency]
lock_path = $STATE/locks
[agent]
# root already: no sudo, no rootwrap
root_helper =
EOF
    cat >"$ETC/neutron/ml2_conf.ini" <<EOF
[ml2]
type_drivers = flat,vlan,vxlan
tenant_network_types = vxlan
mechanism_drivers = openvswitch
extension_drivers = port_security
[ml2_type_vxlan]
vni_ranges = 1:1000
[securitygroup]
firewall_driver = openvswitch
EOF
    # The kernel has no openvswitch module, so the userspace datapath; privsep runs as root
    # directly through the venv's helper (there is no sudo).
    local helper="$VENV/bin/privsep-helper --config-file $ETC/neutron/neutron.conf"
    helper+=" --config-file $ETC/neutron/openvswitch_agent.ini"
    cat >"$ETC/neutron/openvswitch_agent.ini" <<EOF
[ovs]
datapath_type = netdev
integration_bridge = br-int
tunnel_bridge = br-tun
local_ip = $HOST
ovsdb_connection = tcp:$HOST:6640
of_listen_address = $HOST
[agent]
tunnel_types = vxlan
root_helper =
[securitygroup]
firewall_driver = openvswitch
enable_security_group = true
EOF
    for section in privsep privsep_ovs_vsctl privsep_namespace privsep_conntrack privsep_link \
                   privsep_dhcp_release privsep_sysctl; do
        printf '[%s]\nhelper_command = %s\n' "$section" "$helper" \
            >>"$ETC/neutron/openvswitch_agent.ini"
    done

    write_kuryr_conf

    cat >"$ETC/placement/placement.conf" <<EOF
[api]
auth_strategy = keystone
[placement_database]
connection = $(db_url placement)
$(authtoken placement)
EOF

    cat >"$ETC/glance/glance-api.conf" <<EOF
[DEFAULT]
enabled_backends = fs:file
bind_host = $HOST
bind_port = $GLANCE_PORT
worker_self_reference_url = http://$HOST:$GLANCE_PORT
[database]
connection = $(db_url glance)
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = $STATE/glance/images/
[os_glance_staging_store]
filesystem_store_datadir = $STATE/glance/staging/
[os_glance_tasks_store]
filesystem_store_datadir = $STATE/glance/tasks/
$(authtoken glance)
[paste_deploy]
flavor = keystone
config_file = $(glance_paste)
[oslo_messaging_notifications]
driver = noop
[oslo_concurrency]
lock_path = $STATE/locks
EOF
}

# kuryr.conf: the plugin API on loopback, Neutron through the `kuryr` service user (admin in the
# service project: it must see and tag the networks, subnets and ports of every project), and
# the binding hook of this repository. vif_plugging_is_fatal makes Docker's endpoint creation wait
# until the agent has wired the port (ACTIVE), so a container starts with a working network.
write_kuryr_conf() {
    mkdir -p "$ETC/kuryr" "$KURYR_BINDIR"
    install -m 0755 "$ROOT/scripts/openstack/kuryr-bindir/ovs" "$KURYR_BINDIR/ovs"
    cat >"$ETC/kuryr/kuryr.conf" <<EOF
[DEFAULT]
bindir = $KURYR_BINDIR
kuryr_uri = http://$HOST:$KURYR_PORT
capability_scope = local
[neutron]
auth_url = http://$HOST:$KEYSTONE_PORT/v3
auth_type = password
username = kuryr
password = $SERVICE_PASSWORD
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
endpoint_type = public
vif_plugging_is_fatal = true
vif_plugging_timeout = 60
[binding]
veth_dst_prefix = eth
EOF
}

glance_paste() {
    local p
    for p in "$VENV/etc/glance/glance-api-paste.ini" "$ROOT/scripts/openstack/glance-api-paste.ini"; do
        [[ -f "$p" ]] && { echo "$p"; return; }
    done
    echo "$VENV/etc/glance/glance-api-paste.ini"
}

# --- processes --------------------------------------------------------------------------------

# spawn NAME CMD...: start CMD in a new session (so its whole process group can be stopped), with
# its output in $LOGS/NAME.log and its pid in $RUN/NAME.pid.
spawn() {
    local name=$1
    shift
    echo "=== $(date -u +%FT%TZ) $*" >>"$LOGS/$name.log"
    setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
    echo $! >"$RUN/$name.pid"
}

wait_port() {  # wait_port NAME PORT
    local name=$1 port=$2 i
    for ((i = 0; i < WAIT; i++)); do
        port_open "$port" && return 0
        pid_alive "$name" || fail "start $name (process exited)" "$LOGS/$name.log"
        sleep 1
    done
    fail "start $name (no answer on $HOST:$port after ${WAIT}s)" "$LOGS/$name.log"
}

# uwsgi_start NAME PORT MODULE [ENV=VALUE...]
uwsgi_start() {
    local name=$1 port=$2 module=$3
    shift 3
    if pid_alive "$name" && port_open "$port"; then
        log "$name already answers on $HOST:$port"
        return 0
    fi
    port_open "$port" && fail "start $name ($HOST:$port is taken by another process)"
    local envs=() kv
    for kv in "$@"; do envs+=(--env "$kv"); done
    log "starting $name on $HOST:$port"
    # Connection: close because keystoneauth's keep-alive requests otherwise meet
    # RemoteDisconnected from uwsgi; raw body + auto chunked for Glance's streamed uploads.
    spawn "$name" "$VENV/bin/uwsgi" --master --processes 1 --threads 4 --enable-threads \
        --http-socket "$HOST:$port" --module "$module" --need-app --lazy-apps \
        --add-header "Connection: close" --buffer-size 65535 \
        --http-auto-chunked --http-raw-body --chunked-input-limit 10485760 \
        --die-on-term --hook-master-start "unix_signal:15 gracefully_kill_them_all" \
        --home "$VENV" --procname-prefix "zun-os-$name " "${envs[@]}"
    wait_port "$name" "$port"
}

stop_one() {  # stop_one NAME [KILL]: TERM (or KILL) its process group, then KILL what remains
    local name=$1 sig=${2:-TERM} pidfile="$RUN/$1.pid" pid i
    [[ -f "$pidfile" ]] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        log "stopping $name (process group $pid)"
        kill "-$sig" -- "-$pid" 2>/dev/null || true
        for ((i = 0; i < 20; i++)); do
            kill -0 -- "-$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

# --- the services -----------------------------------------------------------------------------

start_keystone() {
    local klog="$LOGS/keystone-manage.log" kconf="--config-dir=$ETC/keystone"
    if ! (pid_alive keystone && port_open "$KEYSTONE_PORT"); then
        run "keystone db_sync" "$klog" "$VENV/bin/keystone-manage" "$kconf" db_sync
        [[ -d "$STATE/keystone/fernet-keys" ]] || run "keystone fernet_setup" "$klog" \
            "$VENV/bin/keystone-manage" "$kconf" fernet_setup \
            --keystone-user root --keystone-group root
        [[ -d "$STATE/keystone/credential-keys" ]] || run "keystone credential_setup" "$klog" \
            "$VENV/bin/keystone-manage" "$kconf" credential_setup \
            --keystone-user root --keystone-group root
        run "keystone bootstrap" "$klog" "$VENV/bin/keystone-manage" "$kconf" bootstrap \
            --bootstrap-password "$ADMIN_PASSWORD" \
            --bootstrap-admin-url "http://$HOST:$KEYSTONE_PORT/v3" \
            --bootstrap-internal-url "http://$HOST:$KEYSTONE_PORT/v3" \
            --bootstrap-public-url "http://$HOST:$KEYSTONE_PORT/v3" \
            --bootstrap-region-id RegionOne
    fi
    uwsgi_start keystone "$KEYSTONE_PORT" keystone.wsgi.api:application \
        "OS_KEYSTONE_CONFIG_DIR=$ETC/keystone"
    admin_env
    # Service project, users and catalog. The setup is idempotent but costs ~25 s of Keystone
    # calls here, so it is skipped when a stamp says the same setup already succeeded.
    local args=(--password "$SERVICE_PASSWORD"
                --endpoint "network=http://$HOST:$NEUTRON_PORT"
                --endpoint "placement=http://$HOST:$PLACEMENT_PORT"
                --endpoint "image=http://$HOST:$GLANCE_PORT")
    local stamp="$STATE/keystone/setup.stamp" want
    want="$(printf '%s\n' "${args[@]}" | cat - "$ROOT/scripts/openstack/keystone_setup.py" \
            | sha256sum | cut -d' ' -f1)"
    [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && return 0
    run "keystone service users and endpoints" "$LOGS/setup.log" "$VENV/bin/python" \
        "$ROOT/scripts/openstack/keystone_setup.py" "${args[@]}"
    echo "$want" >"$stamp"
}

start_placement() {
    pid_alive placement && port_open "$PLACEMENT_PORT" \
        || run "placement db sync" "$LOGS/placement-manage.log" \
            "$VENV/bin/placement-manage" --config-file "$ETC/placement/placement.conf" db sync
    uwsgi_start placement "$PLACEMENT_PORT" placement.wsgi.api:application \
        "OS_PLACEMENT_CONFIG_DIR=$ETC/placement"
}

start_glance() {
    pid_alive glance && port_open "$GLANCE_PORT" \
        || run "glance db_sync" "$LOGS/glance-manage.log" \
            "$VENV/bin/glance-manage" --config-dir "$ETC/glance" db_sync
    uwsgi_start glance "$GLANCE_PORT" glance.wsgi.api:application \
        "OS_GLANCE_CONFIG_DIR=$ETC/glance"
}

neutron_conf_args=()
start_neutron() {
    neutron_conf_args=(--config-file "$ETC/neutron/neutron.conf"
                       --config-file "$ETC/neutron/ml2_conf.ini")
    pid_alive neutron-api && port_open "$NEUTRON_PORT" \
        || run "neutron db upgrade" "$LOGS/neutron-db-manage.log" \
            "$VENV/bin/neutron-db-manage" "${neutron_conf_args[@]}" upgrade heads
    uwsgi_start neutron-api "$NEUTRON_PORT" neutron.wsgi.api:application \
        "OS_NEUTRON_CONFIG_DIR=$ETC/neutron" \
        "OS_NEUTRON_CONFIG_FILES=neutron.conf;ml2_conf.ini"
    if pid_alive neutron-rpc; then
        log "neutron-rpc-server already runs"
    else
        log "starting neutron-rpc-server"
        spawn neutron-rpc "$VENV/bin/neutron-rpc-server" "${neutron_conf_args[@]}"
    fi
}

start_ovs() {
    if "$OVS_CTL" status >/dev/null 2>&1; then
        log "Open vSwitch already runs"
    else
        log "starting Open vSwitch (userspace datapath)"
        run "ovs-ctl start" "$LOGS/ovs.log" "$OVS_CTL" start --system-id=random --no-mlockall
    fi
}

start_ovs_agent() {
    if pid_alive ovs-agent; then
        log "neutron-openvswitch-agent already runs"
    else
        log "starting neutron-openvswitch-agent"
        spawn ovs-agent "$VENV/bin/neutron-openvswitch-agent" \
            --config-file "$ETC/neutron/neutron.conf" \
            --config-file "$ETC/neutron/openvswitch_agent.ini"
    fi
    # Alive in Neutron's own view: the agent reported its state over RPC.
    local i
    for ((i = 0; i < WAIT; i++)); do
        if "$VENV/bin/python" "$ROOT/scripts/openstack/keystone_setup.py" --check-ovs-agent \
                >>"$LOGS/setup.log" 2>&1; then
            return 0
        fi
        pid_alive ovs-agent || fail "start neutron-openvswitch-agent (exited)" "$LOGS/ovs-agent.log"
        sleep 2
    done
    fail "neutron-openvswitch-agent alive in Neutron (not after $((WAIT * 2))s)" \
        "$LOGS/ovs-agent.log"
}

# kuryr-server answers on loopback; dockerd finds it through a spec file (read when a network of
# driver `kuryr` is first used, so no dockerd restart). It must run in its dockerd's network
# namespace (it makes the veth pairs there): this one is for the machine's own dockerd.
start_kuryr() {
    if pid_alive kuryr && port_open "$KURYR_PORT"; then
        log "kuryr-libnetwork already answers on $HOST:$KURYR_PORT"
    else
        port_open "$KURYR_PORT" && fail "start kuryr ($HOST:$KURYR_PORT is taken by another process)"
        log "starting kuryr-libnetwork on $HOST:$KURYR_PORT"
        spawn kuryr "$KURYR_VENV/bin/kuryr-server" --config-file "$ETC/kuryr/kuryr.conf"
        wait_port kuryr "$KURYR_PORT"
    fi
    mkdir -p "$DOCKER_PLUGIN_DIR"
    local spec="$DOCKER_PLUGIN_DIR/kuryr.spec" want="http://$HOST:$KURYR_PORT"
    [[ -f "$spec" && "$(cat "$spec")" == "$want" ]] || echo "$want" >"$spec"
}

# --- output -----------------------------------------------------------------------------------

admin_env() {
    export OS_AUTH_URL="$KEYSTONE_URL" OS_IDENTITY_API_VERSION=3 OS_REGION_NAME=RegionOne \
        OS_USERNAME=admin OS_PASSWORD="$ADMIN_PASSWORD" OS_PROJECT_NAME=admin \
        OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_INTERFACE=public
}

print_env() {
    cat <<EOF
export OS_AUTH_URL=$KEYSTONE_URL
export OS_IDENTITY_API_VERSION=3
export OS_REGION_NAME=RegionOne
export OS_INTERFACE=public
export OS_USERNAME=admin
export OS_PASSWORD=$ADMIN_PASSWORD
export OS_PROJECT_NAME=admin
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export ZUN_OS_SERVICE_PASSWORD=$SERVICE_PASSWORD
EOF
}

client_section() {  # client_section GROUP: a [*_client] section of zun.conf
    printf '[%s]\nregion_name = RegionOne\nendpoint_type = publicURL\n' "$1"
}

print_zun_conf() {
    cat <<EOF
# zun.conf sections for zun-api and zun-compute using these services
[api]
auth_strategy = keystone

[keystone_authtoken]
www_authenticate_uri = http://$HOST:$KEYSTONE_PORT/v3
auth_url = http://$HOST:$KEYSTONE_PORT/v3
auth_type = password
username = zun
password = $SERVICE_PASSWORD
project_name = service
user_domain_name = Default
project_domain_name = Default

# service credentials zun uses toward Neutron, Placement and Glance
[keystone_auth]
auth_url = http://$HOST:$KEYSTONE_PORT/v3
auth_type = password
username = zun
password = $SERVICE_PASSWORD
project_name = service
user_domain_name = Default
project_domain_name = Default

$(client_section neutron_client)

# Neutron networking through kuryr-libnetwork (the Docker network plugin "kuryr")
[network]
driver = kuryr
driver_name = kuryr

$(client_section placement_client)

$(client_section glance_client)
api_version = 2
EOF
}

# --- commands ---------------------------------------------------------------------------------

cmd_start() {
    install_debian
    install_venv
    install_kuryr
    load_secrets
    write_configs
    setup_database
    setup_rabbit
    start_keystone
    start_placement
    start_glance
    start_neutron
    start_ovs
    start_ovs_agent
    start_kuryr
    log "all services up; logs in $LOGS"
    print_env
    echo
    print_zun_conf
}

cmd_stop() {
    # The OVS agent ignores SIGTERM, so it gets KILL; its privsep helpers share its group.
    stop_one kuryr
    stop_one ovs-agent KILL
    stop_one neutron-rpc
    stop_one neutron-api
    stop_one glance
    stop_one placement
    stop_one keystone
    if [[ -x "$OVS_CTL" ]] && "$OVS_CTL" status >/dev/null 2>&1; then
        log "stopping Open vSwitch"
        "$OVS_CTL" stop >>"$LOGS/ovs.log" 2>&1 || log "ovs-ctl stop failed (see $LOGS/ovs.log)"
    fi
    log "stopped"
}

cmd_status() {
    local rc=0 name port state
    for entry in keystone:$KEYSTONE_PORT placement:$PLACEMENT_PORT glance:$GLANCE_PORT \
                 neutron-api:$NEUTRON_PORT neutron-rpc: ovs-agent: kuryr:$KURYR_PORT; do
        name=${entry%%:*} port=${entry#*:}
        if pid_alive "$name" && { [[ -z "$port" ]] || port_open "$port"; }; then
            state="running (pid $(cat "$RUN/$name.pid"))${port:+ on $HOST:$port}"
        else
            state=stopped rc=3
        fi
        printf '%-12s %s\n' "$name" "$state"
    done
    if [[ -x "$OVS_CTL" ]] && "$OVS_CTL" status >/dev/null 2>&1; then
        printf '%-12s %s\n' openvswitch running
    else
        printf '%-12s %s\n' openvswitch stopped
        rc=3
    fi
    return "$rc"
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) load_secrets; print_env ;;
    zun-conf) load_secrets; print_zun_conf ;;
    databases) load_secrets; setup_database ;;
    *) echo "usage: $0 start|stop|status|env|zun-conf|databases" >&2; exit 2 ;;
esac
