"""Neutron networking for the multi-node environment (``Cluster(openstack=cloud)``).

With it, the nodes of a cluster share Neutron networks the way compute hosts of a cloud do: a
container on node 1 reaches a container on node 2 by its fixed IP, through VXLAN, and security
groups filter that traffic. What a node of a real deployment runs (an Open vSwitch, the Neutron
OVS agent, kuryr-libnetwork for its dockerd), each node here runs inside its own network
namespace ``zmn-<tag>-N``:

  Open vSwitch   an ovsdb-server and an ovs-vswitchd of its own (userspace ``netdev``
                 datapath: this kernel has no openvswitch module), started in the node's
                 namespace with their own database and run directory (``OVS_RUNDIR``). The
                 vswitchd must live there: kuryr makes the container's veth pair in its
                 dockerd's namespace and plugs it into br-int, and a netdev datapath opens its
                 ports in its own namespace.
  underlay       an OVS bridge ``br-ul`` whose internal port carries the node's tunnel address
                 (169.254.<x>.<N>/24, x from the cluster's tag) and whose port ``ul0`` is one end
                 of a veth pair; the other ends meet on a Linux bridge in the namespace
                 ``zmn-<tag>-ul``. Userspace tunnels leave through an OVS bridge only, so the
                 address sits on br-ul's internal port, with ``ovs/route/add`` and
                 ``tnl/neigh/set`` for every peer; tx checksum offload is off on the veths.
  OVS agent      ``neutron-openvswitch-agent`` of the local OpenStack's venv, in the node's
                 namespace, ``host`` = the node's zun host name, ``local_ip`` = its tunnel
                 address, talking to its own ovsdb (tcp:127.0.0.1:6640) and answering OpenFlow
                 on 127.0.0.1:6633 of the node's namespace. A probe port on br-int lets its
                 one-time stale-flow cleanup run before the first workload port
                 (NodeNetwork.plant_cleanup_probe).
  kuryr          ``kuryr-server`` in the node's namespace (it makes the veth pairs there) and in
                 a UTS namespace whose host name is the node's: kuryr binds ports with
                 ``binding:host_id`` = its host name, and ML2 binds a port to the agent of that
                 host. Its binding hook is the repository's ``scripts/openstack/kuryr-bindir/ovs``
                 (tx offload off on both veth ends, plug into br-int).
  dockerd        started in a private mount namespace where ``/run/docker`` and ``/etc/docker``
                 are directories of the node: kuryr accepts only sandbox keys under
                 ``/var/run/docker/netns/``, so the exec root must be ``/var/run/docker``; the
                 node's ``/etc/docker/plugins/kuryr.spec`` points at its own kuryr.
  relay          one process (``nsrelay.py``) that listens on 127.0.0.1 *inside* every node
                 namespace on the ports of RabbitMQ, Keystone and Neutron and forwards to the
                 same ports of the main namespace, where those services listen on loopback
                 only: the agent and kuryr use the addresses of the Keystone catalog unchanged.

Everything is recorded in the cluster's ``owner.json`` so that ``cluster.sweep_stale`` also
removes the underlay namespace, the processes and the Neutron agents of a killed run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from multinode import nsrelay
from neutron_support import ZUN_POOL_PREFIX

if TYPE_CHECKING:
    from multinode.cluster import Cluster, Node

REPO = Path(__file__).resolve().parents[2]
OS_HOME = Path(os.environ.get("ZUN_OS_HOME", "/opt/zun-openstack"))
NEUTRON_VENV = OS_HOME / "venv"
NEUTRON_CONF = OS_HOME / "etc" / "neutron" / "neutron.conf"
# kuryr-libnetwork's venv of scripts/openstack-services.sh; another one can be named for trials.
KURYR_VENV = Path(os.environ.get("ZUN_TEST_KURYR_VENV", str(OS_HOME / "kuryr-venv")))
KURYR_HOOK = REPO / "scripts" / "openstack" / "kuryr-bindir" / "ovs"
OVS_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
KURYR_PORT = 23750  # kuryr's default, inside each node's namespace
NEUTRON_PORT = int(os.environ.get("ZUN_OS_NEUTRON_PORT", "9696"))
PRIVSEP_SECTIONS = (
    "privsep",
    "privsep_ovs_vsctl",
    "privsep_namespace",
    "privsep_conntrack",
    "privsep_link",
    "privsep_dhcp_release",
    "privsep_sysctl",
)
TOOLS = (
    "ovsdb-tool",
    "ovsdb-server",
    "ovs-vswitchd",
    "ovs-vsctl",
    "ovs-appctl",
    "ethtool",
    "unshare",
    "hostname",
)
OVS_AGENT = "Open vSwitch agent"
# A port on br-int that the OVS agent counts as a VIF but Neutron does not know, so that the
# agent's one-time stale-flow cleanup does not wait for the first workload port (see
# NodeNetwork.plant_cleanup_probe), and the agent's log line that says the cleanup ran.
PROBE_PORT = "zmn-probe"
CLEANUP_DONE = "- cleanup stale flows."


def check_requirements() -> None:
    from multinode.cluster import SetupError

    for tool in TOOLS:
        if shutil.which(tool) is None:
            raise SetupError(
                f"the Neutron multi-node environment needs '{tool}' on PATH "
                "(Debian: openvswitch-switch, ethtool)"
            )
    for path, what in (
        (OVS_SCHEMA, "Open vSwitch's schema"),
        (
            NEUTRON_VENV / "bin" / "neutron-openvswitch-agent",
            "the local OpenStack's venv (scripts/openstack-services.sh start)",
        ),
        (NEUTRON_CONF, "the local OpenStack's neutron.conf"),
        (
            KURYR_VENV / "bin" / "kuryr-server",
            "kuryr-libnetwork's venv (scripts/openstack-services.sh start)",
        ),
        (KURYR_HOOK, "kuryr's binding hook in this checkout"),
    ):
        if not path.exists():
            raise SetupError(f"the Neutron multi-node environment needs {what}: {path}")


def netns_path(name: str) -> str:
    return f"/var/run/netns/{name}"


def in_netns(name: str, *args: str) -> list[str]:
    return ["nsenter", f"--net={netns_path(name)}", *args]


def _kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def transport_url() -> str:
    """The RabbitMQ URL of the local OpenStack's Neutron (its agents use the same)."""
    for line in NEUTRON_CONF.read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "transport_url":
            return value.strip()
    from multinode.cluster import SetupError

    raise SetupError(f"no transport_url in {NEUTRON_CONF}")


class NodeNetwork:
    """Open vSwitch, the underlay port, the OVS agent and kuryr of one node."""

    def __init__(self, fabric: Fabric, node: Node) -> None:
        self.fabric = fabric
        self.node = node
        self.host = node.name
        self.netns = node.netns
        self.rundir = node.run_dir / "ovs"  # OVS_RUNDIR: db.sock, pid files, control sockets
        self.base = node.cluster.state / f"node{node.index}" / "neutron"
        self.ip = f"{fabric.prefix}.{node.index}"
        self.mac = f"02:fe:{fabric.octet:02x}:00:00:{node.index:02x}"
        self.agent_pidfile = self.base / "ovs-agent.pid"
        self.probe_id: str | None = None  # the iface-id of PROBE_PORT
        self.kuryr_pidfile = self.base / "kuryr.pid"
        self.exec_root = node.run_dir / "docker-exec"  # bind-mounted on /run/docker
        self.etc_docker = node.run_dir / "etc-docker"  # bind-mounted on /etc/docker

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "OVS_RUNDIR": str(self.rundir),
            "OVS_DBDIR": str(self.base),
            "OVS_LOGDIR": str(self.base),
        }

    def run(self, *args: str, check: bool = True, netns: bool = False) -> Any:
        from multinode.cluster import SetupError

        argv = in_netns(self.netns, *args) if netns else list(args)
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=self.env)
        if check and result.returncode != 0:
            raise SetupError(
                f"{' '.join(argv)} failed ({result.returncode}): "
                f"{(result.stderr or result.stdout)[-2000:]}"
            )
        return result

    def vsctl(self, *args: str) -> Any:
        return self.run("ovs-vsctl", "--timeout=30", *args)

    # -- Open vSwitch ----------------------------------------------------------------------

    def start_ovs(self) -> None:
        self.rundir.mkdir(parents=True, exist_ok=True)
        self.base.mkdir(parents=True, exist_ok=True)
        db = self.base / "conf.db"
        if not db.exists():
            self.run("ovsdb-tool", "create", str(db), str(OVS_SCHEMA))
        # Both daemons in the node's namespace: the agent reaches ovsdb on tcp:127.0.0.1:6640
        # there, and the netdev datapath opens br-int's ports (kuryr's veths) there.
        self.run(
            "ovsdb-server",
            str(db),
            f"--remote=punix:{self.rundir}/db.sock",
            "--remote=db:Open_vSwitch,Open_vSwitch,manager_options",
            "--pidfile",
            "--detach",
            "--no-chdir",
            f"--log-file={self.base}/ovsdb-server.log",
            netns=True,
        )
        self.vsctl("--no-wait", "init")
        self.vsctl(
            "--no-wait",
            "set",
            "Open_vSwitch",
            ".",
            f"external_ids:hostname={self.host}",
            f"external_ids:system-id={self.host}",
        )
        self.run(
            "ovs-vswitchd",
            f"unix:{self.rundir}/db.sock",
            "--pidfile",
            "--detach",
            "--no-chdir",
            f"--log-file={self.base}/ovs-vswitchd.log",
            netns=True,
        )

    def plug_underlay(self) -> None:
        fabric = self.fabric
        peer = f"n{self.node.index}"
        self.run(
            "ip",
            "-n",
            fabric.netns,
            "link",
            "add",
            peer,
            "type",
            "veth",
            "peer",
            "name",
            "ul0",
            "netns",
            self.netns,
        )
        self.run("ip", "-n", fabric.netns, "link", "set", peer, "master", "ulbr", "up")
        self.run("ethtool", "-K", "ul0", "tx", "off", netns=True)
        self.run("ip", "netns", "exec", fabric.netns, "ethtool", "-K", peer, "tx", "off")
        self.vsctl(
            "--may-exist",
            "add-br",
            "br-ul",
            "--",
            "set",
            "bridge",
            "br-ul",
            "datapath_type=netdev",
            f"other_config:hwaddr={self.mac}",
            "--",
            "--may-exist",
            "add-port",
            "br-ul",
            "ul0",
        )
        self.run("ip", "-n", self.netns, "link", "set", "ul0", "up")
        self.run("ip", "-n", self.netns, "addr", "replace", f"{self.ip}/24", "dev", "br-ul")
        self.run("ip", "-n", self.netns, "link", "set", "br-ul", "up")
        # The tunnel's route and neighbours: userspace tunnels look both up in OVS's own
        # tables, not the kernel's.
        self.run("ovs-appctl", "ovs/route/add", f"{fabric.prefix}.0/24", "br-ul", check=False)

    def set_neighbours(self, peers: list[NodeNetwork]) -> None:
        for peer in peers:
            if peer is not self:
                self.run("ovs-appctl", "tnl/neigh/set", "br-ul", peer.ip, peer.mac)

    def tunnel_peers(self) -> set[str]:
        """The remote addresses of the VXLAN ports the agent made on br-tun."""
        import json

        result = self.run(
            "ovs-vsctl",
            "--timeout=10",
            "--format=json",
            "--columns=options",
            "find",
            "Interface",
            "type=vxlan",
            check=False,
        )
        if result.returncode != 0:
            return set()
        peers = set()
        for (options,) in json.loads(result.stdout)["data"]:
            peers |= {value for key, value in options[1] if key == "remote_ip"}
        return peers

    def stop_ovs(self) -> None:
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            pid = _read_pid(self.rundir / f"{daemon}.pid")
            if pid is None:
                continue
            self.run("ovs-appctl", "-t", daemon, "exit", check=False)
            from multinode.cluster import _wait_pid_gone

            if not _wait_pid_gone(pid, 10):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def plant_cleanup_probe(self) -> None:
        """Before the agent starts: PROBE_PORT on br-int.

        The agent deletes every flow whose cookie it does not hold once, in the first loop
        iteration with work after one in which br-int had a VIF port. On an empty br-int that
        is the iteration after the first workload port went ACTIVE; the remote-group flows
        the OVS firewall adds in that same iteration (for a member that joined meanwhile)
        carry a cookie it has already given back, so the cleanup deletes them and the
        firewall, which believes them installed, never adds them again (docs/testing.md,
        "The first pair of a fresh fabric"). With the probe the agent has a VIF from its
        first iteration on, and the fabric is ready only once the cleanup has run
        (``stale_flows_cleaned``)."""
        import uuid

        self.probe_id = str(uuid.uuid4())
        self.vsctl(
            "--may-exist",
            "add-br",
            "br-int",
            "--",
            "set",
            "bridge",
            "br-int",
            "datapath_type=netdev",
            "--",
            "--may-exist",
            "add-port",
            "br-int",
            PROBE_PORT,
            "--",
            "set",
            "Interface",
            PROBE_PORT,
            "type=internal",
            f"external_ids:iface-id={self.probe_id}",
            f"external_ids:attached-mac=02:fe:{self.fabric.octet:02x}:ff:ff:{self.node.index:02x}",
            "external_ids:iface-status=active",
        )

    def stale_flows_cleaned(self) -> bool:
        """Whether the agent's one-time stale-flow cleanup has run; if not, touch the probe's
        interface: any change there gives the agent's next loop iteration work, and the
        cleanup runs at its end."""
        if CLEANUP_DONE in (self.base / "ovs-agent.log").read_text(errors="replace"):
            return True
        self.vsctl("set", "Interface", PROBE_PORT, f"external_ids:zmn-nudge={time.monotonic_ns()}")
        return False

    def filtered_before_cleanup(self) -> list[str]:
        """The ports other than the probe whose firewall the agent set up before its
        stale-flow cleanup ran (from its log): none when the probe did its job."""
        text = (self.base / "ovs-agent.log").read_text(errors="replace")
        ports = []
        for line in text.splitlines():
            if CLEANUP_DONE in line:
                break
            if "Preparing filters for devices" in line:
                named = line.split("Preparing filters for devices", 1)[1]
                ports += [
                    p
                    for p in named.strip(" {}").replace("'", "").split(", ")
                    if p and p != self.probe_id
                ]
        return ports

    def cleaned_cookies(self) -> set[str]:
        """The cookies of the flows the agent's stale-flow cleanup deleted (from its log)."""
        marker = "Deleting flow with cookie "
        text = (self.base / "ovs-agent.log").read_text(errors="replace")
        return {line.split(marker, 1)[1].split()[0] for line in text.splitlines() if marker in line}

    # -- the OVS agent ---------------------------------------------------------------------

    def agent_conf(self) -> Path:
        conf = self.base / "openvswitch_agent.ini"
        helper = (
            f"{NEUTRON_VENV}/bin/privsep-helper --config-file {NEUTRON_CONF} --config-file {conf}"
        )
        lines = [
            "[DEFAULT]",
            f"host = {self.host}",
            f"state_path = {self.base}/state",
            "[oslo_concurrency]",
            f"lock_path = {self.base}/locks",
            "[ovs]",
            "datapath_type = netdev",
            "integration_bridge = br-int",
            "tunnel_bridge = br-tun",
            f"local_ip = {self.ip}",
            "ovsdb_connection = tcp:127.0.0.1:6640",
            "of_listen_address = 127.0.0.1",
            "[agent]",
            "tunnel_types = vxlan",
            "root_helper =",
            "[securitygroup]",
            "firewall_driver = openvswitch",
            "enable_security_group = true",
        ]
        for section in PRIVSEP_SECTIONS:  # no sudo: privsep runs the venv's helper directly
            lines += [f"[{section}]", f"helper_command = {helper}"]
        conf.write_text("\n".join(lines) + "\n")
        return conf

    def start_agent(self) -> None:
        (self.base / "state").mkdir(parents=True, exist_ok=True)
        (self.base / "locks").mkdir(parents=True, exist_ok=True)
        conf = self.agent_conf()
        log = (self.base / "ovs-agent.log").open("ab")
        proc = subprocess.Popen(
            in_netns(
                self.netns,
                str(NEUTRON_VENV / "bin" / "neutron-openvswitch-agent"),
                "--config-file",
                str(NEUTRON_CONF),
                "--config-file",
                str(conf),
            ),
            stdout=log,
            stderr=log,
            start_new_session=True,
            env=self.env,
        )
        self.agent_pidfile.write_text(str(proc.pid))

    def stop_agent(self) -> None:
        # The agent ignores SIGTERM; its privsep helpers are in its process group.
        pid = _read_pid(self.agent_pidfile)
        if pid is not None:
            _kill_group(pid)
            self.agent_pidfile.unlink(missing_ok=True)

    # -- kuryr -----------------------------------------------------------------------------

    def kuryr_conf(self) -> Path:
        env = self.fabric.cloud.env
        bindir = self.base / "kuryr-bindir"
        bindir.mkdir(parents=True, exist_ok=True)
        shutil.copy(KURYR_HOOK, bindir / "ovs")
        (bindir / "ovs").chmod(0o755)
        conf = self.base / "kuryr.conf"
        conf.write_text(
            "\n".join(
                [
                    "[DEFAULT]",
                    f"bindir = {bindir}",
                    f"kuryr_uri = http://127.0.0.1:{KURYR_PORT}",
                    "capability_scope = local",
                    "process_external_connectivity = false",
                    f"log_file = {self.base}/kuryr.log",
                    "debug = true",
                    # The local OpenStack's `kuryr` service user (admin in the service project), as
                    # the machine's own kuryr of scripts/openstack-services.sh.
                    "[neutron]",
                    f"auth_url = {env['OS_AUTH_URL']}",
                    "auth_type = password",
                    "username = kuryr",
                    f"password = {env['ZUN_OS_SERVICE_PASSWORD']}",
                    "project_name = service",
                    "user_domain_name = Default",
                    "project_domain_name = Default",
                    "region_name = RegionOne",
                    "endpoint_type = public",
                    # Docker's endpoint creation waits until the agent wired the port (ACTIVE), so a
                    # container starts with a working network.
                    "vif_plugging_is_fatal = true",
                    "vif_plugging_timeout = 60",
                ]
            )
            + "\n"
        )
        return conf

    def start_kuryr(self) -> None:
        conf = self.kuryr_conf()
        log = (self.base / "kuryr.out").open("ab")
        proc = subprocess.Popen(
            in_netns(
                self.netns,
                "unshare",
                "--uts",
                "sh",
                "-c",
                'hostname "$1" && exec "$2" --config-file "$3"',
                "sh",
                self.host,
                str(KURYR_VENV / "bin" / "kuryr-server"),
                str(conf),
            ),
            stdout=log,
            stderr=log,
            start_new_session=True,
            env=self.env,
        )
        self.kuryr_pidfile.write_text(str(proc.pid))
        self.etc_docker.joinpath("plugins").mkdir(parents=True, exist_ok=True)
        self.etc_docker.joinpath("plugins", "kuryr.spec").write_text(
            f"http://127.0.0.1:{KURYR_PORT}\n"
        )

    def kuryr_answers(self) -> bool:
        return nsrelay.answers_in(netns_path(self.netns), KURYR_PORT)

    def stop_kuryr(self) -> None:
        pid = _read_pid(self.kuryr_pidfile)
        if pid is None:
            return
        from multinode.cluster import _pid_alive, _wait_pid_gone

        if _pid_alive(pid):
            _kill_group(pid, signal.SIGTERM)
            if not _wait_pid_gone(pid, 10):
                _kill_group(pid)
        self.kuryr_pidfile.unlink(missing_ok=True)

    def check_alive(self) -> None:
        from multinode.cluster import SetupError, _pid_alive

        for name, pidfile, log in (
            ("neutron-openvswitch-agent", self.agent_pidfile, "ovs-agent.log"),
            ("kuryr-server", self.kuryr_pidfile, "kuryr.out"),
        ):
            pid = _read_pid(pidfile)
            if pid is not None and not _pid_alive(pid):
                text = (self.base / log).read_text(errors="replace")[-3000:]
                raise SetupError(f"{name} of {self.host} exited: {text}")

    # -- the engine ------------------------------------------------------------------------

    def engine_command(self, dockerd_args: list[str]) -> list[str]:
        """dockerd in the node's namespace and a private mount namespace (see the module)."""
        self.exec_root.mkdir(parents=True, exist_ok=True)
        self.etc_docker.mkdir(parents=True, exist_ok=True)
        for point in ("/run/docker", "/etc/docker"):
            Path(point).mkdir(parents=True, exist_ok=True)  # mount points
        # The copies of other namespaces' nsfs mounts (the machine's containers under
        # /run/docker/netns, `ip netns` under /run/netns) are dropped in the private mount
        # namespace, or they would keep those namespaces alive until this dockerd exits.
        script = (
            "for m in $(awk '$3 == \"nsfs\" {print $2}' /proc/self/mounts); do "
            'umount -l "$m" 2>/dev/null || true; done; '
            'mount --bind "$1" /run/docker && mount --bind "$2" /etc/docker '
            '&& shift 2 && exec "$@"'
        )
        return in_netns(
            self.netns,
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
            str(self.exec_root),
            str(self.etc_docker),
            *dockerd_args,
            "--exec-root",
            "/var/run/docker",
        )

    def stop(self) -> None:
        errors = []
        for step in (self.stop_kuryr, self.stop_agent, self.stop_ovs):
            try:
                step()
            except Exception as exc:  # keep stopping the rest
                errors.append(f"{step.__name__}: {exc}")
        if errors:
            from multinode.cluster import SetupError

            raise SetupError("; ".join(errors))


class Fabric:
    """The Neutron side of a cluster: the underlay, the relay and every node's networking."""

    def __init__(self, cluster: Cluster, cloud: Any) -> None:
        self.cluster = cluster
        self.cloud = cloud
        self.netns = f"zmn-{cluster.tag}-ul"
        # A /24 of the link-local range per cluster: never routed off a link, and two
        # clusters running at once get different tunnel addresses (Neutron keys tunnel
        # endpoints by address).
        self.octet = self.octet_of(cluster.tag)
        self.prefix = f"169.254.{self.octet}"
        self.base = cluster.state / "neutron"
        self.relay_pidfile = self.base / "relay.pid"
        self._relay: subprocess.Popen[bytes] | None = None
        self._zun_conf: dict[str, dict[str, str]] | None = None
        self.nodes = [NodeNetwork(self, node) for node in cluster.nodes]
        for node, network in zip(cluster.nodes, self.nodes, strict=True):
            node.network = network

    def zun_conf(self) -> dict[str, dict[str, str]]:
        """The zun.conf sections `scripts/openstack-services.sh zun-conf` prints for zun-api
        and zun-compute on the local OpenStack ([api] keystone, [keystone_authtoken],
        [keystone_auth], [neutron_client], [network] kuryr...)."""
        if self._zun_conf is None:
            import configparser

            import openstack_env

            result = openstack_env.script("zun-conf", timeout=60)
            if result.returncode != 0:
                from multinode.cluster import SetupError

                raise SetupError(f"openstack-services.sh zun-conf: {result.stderr[-1000:]}")
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(result.stdout)
            self._zun_conf = {section: dict(parser[section]) for section in parser.sections()}
        return self._zun_conf

    @staticmethod
    def octet_of(tag: str) -> int:
        return int(hashlib.sha256(tag.encode()).hexdigest(), 16) % 250 + 2

    @property
    def hosts(self) -> list[str]:
        return [n.host for n in self.nodes]

    def relay_ports(self) -> list[int]:
        rabbit = urllib.parse.urlsplit(transport_url())
        keystone = urllib.parse.urlsplit(self.cloud.env["OS_AUTH_URL"])
        return sorted({rabbit.port or 5672, keystone.port or 80, NEUTRON_PORT})

    def start(self, timeout: float = 120) -> None:
        """After the node namespaces exist and before their engines start."""
        from multinode.cluster import _run

        check_requirements()
        self.base.mkdir(parents=True, exist_ok=True)
        _run(["ip", "netns", "add", self.netns])
        _run(["ip", "-n", self.netns, "link", "set", "lo", "up"])
        _run(["ip", "-n", self.netns, "link", "add", "ulbr", "type", "bridge"])
        _run(["ip", "-n", self.netns, "link", "set", "ulbr", "up"])
        self.start_relay()
        for network in self.nodes:
            network.start_ovs()
            network.plug_underlay()
        for network in self.nodes:
            network.set_neighbours(self.nodes)
            network.plant_cleanup_probe()
            network.start_agent()
            network.start_kuryr()
        self.wait_ready(timeout)

    def start_relay(self) -> None:
        from multinode.cluster import SetupError

        ready = self.base / "relay.ready"
        ready.unlink(missing_ok=True)
        args = [sys.executable, str(Path(nsrelay.__file__)), "--ready", str(ready)]
        for network in self.nodes:
            args += ["--netns", netns_path(network.netns)]
        for port in self.relay_ports():
            args += ["--port", str(port)]
        log = (self.base / "relay.log").open("ab")
        self._relay = subprocess.Popen(args, stdout=log, stderr=log, start_new_session=True)
        self.relay_pidfile.write_text(str(self._relay.pid))
        deadline = time.monotonic() + 20
        while not ready.exists():
            if self._relay.poll() is not None or time.monotonic() > deadline:
                raise SetupError(
                    "the relay into the node namespaces did not start: "
                    f"{(self.base / 'relay.log').read_text()[-2000:]}"
                )
            time.sleep(0.1)

    def agents(self) -> list[dict[str, Any]]:
        sess = self.cloud.session()
        url = sess.get_endpoint(service_type="network", interface="public").rstrip("/")
        agents = sess.get(f"{url}/v2.0/agents", params={"agent_type": OVS_AGENT}).json()
        return [a for a in agents["agents"] if a["host"] in self.hosts]

    def wait_ready(self, timeout: float = 120) -> None:
        """Until every node's agent is alive in Neutron's view, has tunnels to every other
        node and has done its stale-flow cleanup, and every kuryr answers."""
        from multinode.cluster import SetupError

        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            for network in self.nodes:
                network.check_alive()
            try:
                alive = {a["host"] for a in self.agents() if a["alive"]}
                # Ready: alive in Neutron's view, kuryr answering, a VXLAN port towards
                # every other node (the agents learn each other through Neutron's fanout),
                # and the agent's stale-flow cleanup done (plant_cleanup_probe says why).
                waiting = [
                    n.host
                    for n in self.nodes
                    if n.host not in alive
                    or not n.kuryr_answers()
                    or not {p.ip for p in self.nodes if p is not n} <= n.tunnel_peers()
                    or not n.stale_flows_cleaned()
                ]
                if not waiting:
                    return
                last = waiting
            except Exception as exc:  # Neutron busy: try again until the deadline
                last = exc
            time.sleep(1)
        raise SetupError(f"Neutron agents or kuryr not ready within {timeout}s: {last!r}")

    def stop(self) -> None:
        """Stop every node's networking, the relay, the underlay; forget the agents."""
        from multinode.cluster import _run

        errors = []
        for network in self.nodes:
            try:
                network.stop()
            except Exception as exc:
                errors.append(f"{network.host}: {exc}")
        pid = _read_pid(self.relay_pidfile)
        if pid is not None:
            _kill_group(pid, signal.SIGTERM)
        if self._relay is not None:
            try:
                self._relay.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._relay.kill()
        _run(["ip", "netns", "del", self.netns], check=False)
        try:
            delete_agents(self.cloud, self.hosts)
        except Exception as exc:
            errors.append(f"deleting the Neutron agents: {exc}")
        if errors:
            from multinode.cluster import SetupError

            raise SetupError("; ".join(errors))


def delete_agents(cloud: Any, hosts: list[str]) -> None:
    """Forget the agents of these hosts in Neutron: with them go their tunnel endpoints (and
    the other agents' VXLAN ports towards them) and the ports still bound to them."""
    sess = cloud.session()
    url = sess.get_endpoint(service_type="network", interface="public").rstrip("/")
    for host in hosts:
        ports = sess.get(f"{url}/v2.0/ports", params={"binding:host_id": host}).json()["ports"]
        for port in ports:
            if port.get("device_owner", "").startswith("compute:"):
                sess.delete(f"{url}/v2.0/ports/{port['id']}", raise_exc=False)
        agents = sess.get(f"{url}/v2.0/agents", params={"host": host}).json()["agents"]
        for agent in agents:
            sess.delete(f"{url}/v2.0/agents/{agent['id']}", raise_exc=False)


def delete_run_resources(cloud: Any, tag: str) -> None:
    """What the tests of a killed run left in Neutron under the run's names (``zmn-<tag>-*``):
    security groups, networks with their ports, and kuryr's subnet pools of their subnets
    (``kuryrPool-<cidr>``, which kuryr removes only when the Docker network goes, and a killed
    dockerd never removed it) and zun's per-node pools of them (``zun-pool-<subnet id>-<host>``,
    which zun-compute removes after the Docker network). A kuryr pool still used by a live run
    with the same CIDR would go too; the CIDRs of two runs differ unless their tags hash alike
    (1 in 250)."""
    sess = cloud.session()
    url = sess.get_endpoint(service_type="network", interface="public").rstrip("/") + "/v2.0"
    prefix = f"zmn-{tag}-"
    networks = [
        n for n in sess.get(f"{url}/networks").json()["networks"] if n["name"].startswith(prefix)
    ]
    cidrs = set()
    zun_pools: list[str] = []
    for net in networks:
        for port in sess.get(f"{url}/ports", params={"network_id": net["id"]}).json()["ports"]:
            sess.delete(f"{url}/ports/{port['id']}", raise_exc=False)
        subnets = sess.get(f"{url}/subnets", params={"network_id": net["id"]}).json()
        cidrs |= {subnet["cidr"] for subnet in subnets["subnets"]}
        zun_pools += [f"{ZUN_POOL_PREFIX}{subnet['id']}-" for subnet in subnets["subnets"]]
        sess.delete(f"{url}/networks/{net['id']}", raise_exc=False)
    owned = (prefix, *zun_pools)
    for pool in sess.get(f"{url}/subnetpools").json()["subnetpools"]:
        if pool["name"].startswith(owned) or pool["name"] in {f"kuryrPool-{c}" for c in cidrs}:
            sess.delete(f"{url}/subnetpools/{pool['id']}", raise_exc=False)
    for group in sess.get(f"{url}/security-groups").json()["security_groups"]:
        if group["name"].startswith(prefix):
            sess.delete(f"{url}/security-groups/{group['id']}", raise_exc=False)
