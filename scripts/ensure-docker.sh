#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine, and that the Debian packages the test image
# script needs are installed (busybox-static, docker-registry, apache2-utils).
#
# There is no systemd here, so dockerd is started by hand in the background (log in
# /var/log/dockerd.log). A dockerd that already runs in this network namespace is never doubled:
# if one exists but does not answer yet, we wait for it instead.
#
# Environment:
#   DOCKERD_WAIT   seconds to wait for the engine to answer (default 90)
set -euo pipefail

DOCKERD_LOG=/var/log/dockerd.log
DOCKERD_WAIT="${DOCKERD_WAIT:-90}"
export DEBIAN_FRONTEND=noninteractive

log() { echo "ensure-docker: $*"; }
die() { echo "ensure-docker: ERROR: $*" >&2; exit 1; }

docker_answers() { command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1; }

apt_updated=0
apt_install() {
    [[ $(id -u) -eq 0 ]] || die "need root to apt-get install $*"
    if [[ $apt_updated -eq 0 ]]; then
        apt-get -o DPkg::Lock::Timeout=600 update -q
        apt_updated=1
    fi
    # Package scripts must not try to start services (no init system to hand them to); the
    # standard Debian way is a policy-rc.d that answers 101. Only remove it if we created it.
    local own_policy=0
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        own_policy=1
    fi
    local rc=0
    apt-get -o DPkg::Lock::Timeout=600 install -y -q "$@" || rc=$?
    if [[ $own_policy -eq 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
    [[ $rc -eq 0 ]] || die "apt-get install $* failed (exit $rc)"
}

pkg_installed() {
    # No pipe into `grep -q`: with pipefail an early-exiting grep can turn success into SIGPIPE.
    [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

# Pids of dockerd processes that share our network namespace; a dockerd started inside another
# namespace (e.g. a test host made with `ip netns`) does not serve our socket and does not count.
our_dockerd_pids() {
    local me pid
    me="$(readlink /proc/self/ns/net)"
    for pid in $(pgrep -x dockerd || true); do
        if [[ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" == "$me" ]]; then
            echo "$pid"
        fi
    done
}

# remove_stale_pidfile FILE COMM: drop FILE unless its pid is a live process named COMM.
remove_stale_pidfile() {
    local file=$1 comm=$2 pid
    [[ -f "$file" ]] || return 0
    pid="$(cat "$file" 2>/dev/null || true)"
    if [[ -n "$pid" && "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$comm" ]]; then
        return 0
    fi
    log "removing stale $file (pid ${pid:-none} is not a running $comm)"
    rm -f "$file"
}

# --- packages -------------------------------------------------------------------------------
missing=()
# docker.io carries both the engine and the CLI (a CLI may also come from elsewhere).
if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then missing+=(docker.io); fi
# The test image needs a *static* busybox; Debian's plain "busybox" package is dynamically linked.
pkg_installed busybox-static || missing+=(busybox-static)
command -v docker-registry >/dev/null || missing+=(docker-registry)
command -v htpasswd >/dev/null || missing+=(apache2-utils)
if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing ${missing[*]}"
    apt_install "${missing[@]}"
fi

# --- engine ---------------------------------------------------------------------------------
if docker_answers; then
    log "docker engine answers, nothing to start"
    exit 0
fi

pids="$(our_dockerd_pids)"
if [[ -n "$pids" ]]; then
    log "dockerd already running (pid $(echo "$pids" | tr '\n' ' ')) but not answering yet; waiting"
else
    # dockerd needs cgroup hierarchies; without an init system nobody may have mounted them.
    if [[ ! -e /sys/fs/cgroup/cgroup.controllers ]] && ! mountpoint -q /sys/fs/cgroup/memory; then
        command -v cgroupfs-mount >/dev/null || apt_install cgroupfs-mount
        log "mounting cgroup hierarchies"
        cgroupfs-mount
    fi
    # Pid files left by a dockerd/containerd that was killed (CI ends every process a session
    # left running): if the pid now belongs to some other process, dockerd would refuse to start
    # or wait for a containerd that is not there.
    remove_stale_pidfile /var/run/docker.pid dockerd
    remove_stale_pidfile /var/run/docker/containerd/containerd.pid containerd
    log "starting dockerd (log: $DOCKERD_LOG)"
    # setsid + closed stdio: dockerd must outlive this script and must not hold a caller's pipe
    # open (a CI runner waits for EOF on its output) nor be killed with our process group.
    setsid dockerd </dev/null >>"$DOCKERD_LOG" 2>&1 &
fi

for ((i = 0; i < DOCKERD_WAIT; i++)); do
    if docker_answers; then
        log "docker engine answers after ${i}s"
        exit 0
    fi
    if [[ -z "$(our_dockerd_pids)" && $i -gt 2 ]]; then
        tail -n 20 "$DOCKERD_LOG" >&2 || true
        die "dockerd exited; see $DOCKERD_LOG"
    fi
    sleep 1
done
tail -n 20 "$DOCKERD_LOG" >&2 || true
die "docker engine did not answer within ${DOCKERD_WAIT}s; see $DOCKERD_LOG"
