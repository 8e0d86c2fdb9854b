#!/usr/bin/env bash
# Provide the container images and registries the tests use, without any internet access.
#
#  * busybox:latest (also zun-test/busybox:latest): a root filesystem holding Debian's static
#    busybox and its applet symlinks, made with `docker import`, default command /bin/sh.
#  * an open registry on 127.0.0.1:5000 serving busybox:latest
#  * a registry with htpasswd basic auth on 127.0.0.1:5001 (zunuser / zunpass) serving
#    private/busybox:latest
#
# Both registries are Debian's docker-registry, each with its own config and storage in
# /var/lib/zun-test-registry/<port>. dockerd treats 127.0.0.0/8 as an insecure registry by
# default, so plain HTTP (and basic auth over it) works on loopback without TLS.
#
# After pushing, the local registry tags are removed and docker is logged out again, so a test
# pull really goes to the registry (and to the private one only with credentials).
#
# Idempotent: nothing is rebuilt, restarted or pushed when it is already in place.
#   scripts/test-images.sh          set everything up
#   scripts/test-images.sh --stop   stop the two registries started by this script
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IMAGE=busybox:latest
ALIAS=zun-test/busybox:latest
LABEL_KEY=org.zun.test-image
REG_BASE=/var/lib/zun-test-registry
OPEN_PORT=5000
AUTH_PORT=5001
AUTH_USER=zunuser
AUTH_PASS=zunpass
OPEN_REPO=busybox
AUTH_REPO=private/busybox

log() { echo "test-images: $*"; }
die() { echo "test-images: ERROR: $*" >&2; exit 1; }

# --- registries -----------------------------------------------------------------------------

reg_dir() { echo "$REG_BASE/$1"; }

reg_pid() {
    local pidfile pid
    pidfile="$(reg_dir "$1")/registry.pid"
    [[ -f "$pidfile" ]] || return 1
    pid="$(cat "$pidfile")"
    # Only trust the pidfile if that pid still is a docker-registry (pids get reused).
    [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == docker-regist* ]] || return 1
    echo "$pid"
}

# HTTP status of GET http://127.0.0.1:<port><path> ("000" when nothing answers).
http_status() {
    python3 - "$1" "$2" <<'PY'
import sys
import urllib.error
import urllib.request

try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}{sys.argv[2]}", timeout=3) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
except OSError:
    print("000")
PY
}

stop_registries() {
    local port pid
    for port in "$OPEN_PORT" "$AUTH_PORT"; do
        if pid="$(reg_pid "$port")"; then
            log "stopping registry on 127.0.0.1:$port (pid $pid)"
            kill "$pid"
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        else
            log "no registry of ours on 127.0.0.1:$port"
        fi
        rm -f "$(reg_dir "$port")/registry.pid"
    done
}

write_config() {
    local port=$1 auth=$2 dir
    dir="$(reg_dir "$port")"
    mkdir -p "$dir/data"
    {
        cat <<YAML
# Written by scripts/test-images.sh: a throwaway registry for the zun tests.
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
  secret: zun-test-registry-$port
  headers:
    X-Content-Type-Options: [nosniff]
YAML
        if [[ "$auth" == yes ]]; then
            cat <<YAML
auth:
  htpasswd:
    realm: zun-test-registry
    path: $dir/htpasswd
YAML
        fi
    } > "$dir/config.yml.new"
    mv "$dir/config.yml.new" "$dir/config.yml"
    if [[ "$auth" == yes ]]; then
        # The registry only accepts bcrypt hashes.
        htpasswd -Bbc "$dir/htpasswd" "$AUTH_USER" "$AUTH_PASS" 2>/dev/null
    fi
}

start_registry() {
    local port=$1 auth=$2 dir pid status
    dir="$(reg_dir "$port")"
    if pid="$(reg_pid "$port")"; then
        status="$(http_status "$port" /v2/)"
        if [[ "$status" == 200 || "$status" == 401 ]]; then
            log "registry on 127.0.0.1:$port already running (pid $pid)"
            return 0
        fi
    fi
    status="$(http_status "$port" /v2/)"
    [[ "$status" == 000 ]] || die "127.0.0.1:$port is taken by something else (HTTP $status)"
    write_config "$port" "$auth"
    log "starting registry on 127.0.0.1:$port (auth: $auth; log: $dir/registry.log)"
    # Own session and closed stdio: it must outlive this script and not hold a caller's pipe.
    setsid docker-registry serve "$dir/config.yml" </dev/null >>"$dir/registry.log" 2>&1 &
    local started=$!
    # setsid forks when it happens to lead its process group; then $! is not the registry.
    if [[ "$(cat "/proc/$started/comm" 2>/dev/null)" != docker-regist* ]]; then
        sleep 0.2
        started="$(pgrep -n -f "^docker-registry serve $dir/config.yml\$" || echo "$started")"
    fi
    echo "$started" > "$dir/registry.pid"
    for _ in $(seq 100); do
        status="$(http_status "$port" /v2/)"
        if [[ "$status" == 200 || "$status" == 401 ]]; then return 0; fi
        kill -0 "$(cat "$dir/registry.pid")" 2>/dev/null || break
        sleep 0.2
    done
    tail -n 20 "$dir/registry.log" >&2 || true
    die "registry on 127.0.0.1:$port did not come up"
}

# Image config digest the registry holds for <repo>:latest, empty if none.
remote_config_digest() {
    python3 - "$1" "$2" "${3:-}" <<'PY'
import base64
import json
import sys
import urllib.error
import urllib.request

port, repo, creds = sys.argv[1:4]
req = urllib.request.Request(
    f"http://127.0.0.1:{port}/v2/{repo}/manifests/latest",
    headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
)
if creds:
    req.add_header("Authorization", "Basic " + base64.b64encode(creds.encode()).decode())
try:
    with urllib.request.urlopen(req, timeout=5) as r:
        print(json.load(r).get("config", {}).get("digest", ""))
except (urllib.error.HTTPError, OSError, ValueError):
    print("")
PY
}

push_to() {
    local port=$1 repo=$2 creds=${3:-} ref image_id
    ref="127.0.0.1:$port/$repo:latest"
    image_id="$(docker image inspect -f '{{.Id}}' "$IMAGE")"
    if [[ "$(remote_config_digest "$port" "$repo" "$creds")" == "$image_id" ]]; then
        log "$ref already holds the current image"
    else
        log "pushing $IMAGE to $ref"
        docker tag "$IMAGE" "$ref"
        if [[ -n "$creds" ]]; then
            printf '%s' "$AUTH_PASS" \
                | docker login -u "$AUTH_USER" --password-stdin "127.0.0.1:$port" >/dev/null 2>&1 \
                || die "docker login 127.0.0.1:$port failed"
        fi
        local rc=0
        docker push -q "$ref" >/dev/null || rc=$?
        if [[ -n "$creds" ]]; then docker logout "127.0.0.1:$port" >/dev/null; fi
        [[ $rc -eq 0 ]] || die "docker push $ref failed"
    fi
    # No local copy under the registry's name: a test pull must really fetch from the registry.
    if docker image inspect "$ref" >/dev/null 2>&1; then
        docker rmi "$ref" >/dev/null
    fi
}

# --- image ----------------------------------------------------------------------------------

busybox_bin() {
    local b
    for b in /bin/busybox /usr/bin/busybox; do
        if [[ -x "$b" && "$(dpkg -S "$b" 2>/dev/null)" == busybox-static:* ]]; then
            echo "$b"
            return 0
        fi
    done
    return 1
}

build_image() {
    local bb version want have rootfs
    bb="$(busybox_bin)" || die "static busybox not found; run scripts/ensure-docker.sh"
    version="$(dpkg-query -W -f='${Version}' busybox-static)"
    want="busybox-static-$version"
    have="$(docker image inspect -f "{{index .Config.Labels \"$LABEL_KEY\"}}" "$IMAGE" \
        2>/dev/null || true)"
    if [[ "$have" == "$want" ]]; then
        log "$IMAGE already built from busybox-static $version"
    else
        log "building $IMAGE from $bb (busybox-static $version)"
        rootfs="$(mktemp -d)"
        # shellcheck disable=SC2064
        trap "rm -rf '$rootfs'" EXIT
        mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,etc,root,proc,sys,dev,run,var/log}
        mkdir -m 1777 "$rootfs/tmp"
        cp "$bb" "$rootfs/bin/busybox"
        # Same result as `busybox --install -s` run inside the image, without needing chroot.
        local applet
        while read -r applet; do
            [[ -e "$rootfs/$applet" || -L "$rootfs/$applet" ]] || ln -s /bin/busybox "$rootfs/$applet"
        done < <("$bb" --list-full)
        printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' \
            > "$rootfs/etc/passwd"
        printf 'root:x:0:\nnogroup:x:65534:\n' > "$rootfs/etc/group"
        tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -cf - . \
            | docker import \
                --change 'CMD ["/bin/sh"]' \
                --change "ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin" \
                --change "LABEL $LABEL_KEY=$want" \
                --message "zun test image: $want" - "$IMAGE" >/dev/null
        rm -rf "$rootfs"
        trap - EXIT
    fi
    docker tag "$IMAGE" "$ALIAS"
}

# --- main -----------------------------------------------------------------------------------

if [[ "${1:-}" == --stop ]]; then
    stop_registries
    exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [--stop]"

"$ROOT/scripts/ensure-docker.sh" >/dev/null
build_image
mkdir -p "$REG_BASE"
start_registry "$OPEN_PORT" no
start_registry "$AUTH_PORT" yes
push_to "$OPEN_PORT" "$OPEN_REPO"
push_to "$AUTH_PORT" "$AUTH_REPO" "$AUTH_USER:$AUTH_PASS"
log "ready: $IMAGE, $ALIAS, 127.0.0.1:$OPEN_PORT/$OPEN_REPO:latest," \
    "127.0.0.1:$AUTH_PORT/$AUTH_REPO:latest ($AUTH_USER/$AUTH_PASS)"
