"""A distributed Zun on one machine: several nodes, each with its own Docker engine.

Imported as ``multinode.cluster`` (tests/ is on sys.path). What one ``Cluster`` runs:

  MariaDB       a database of its own, ``zun_mn_<tag>``, built by ``zun-db-manage upgrade``
  RabbitMQ      a vhost of its own, ``zun-mn-<tag>`` (``rabbitmqctl add_vhost``)
  node N        a network namespace ``zmn-<tag>-N`` (``ip netns add``) with a dockerd started
                in it through ``nsenter --net=...`` (not ``ip netns exec``, which remounts /sys
                and hides the cgroup mounts from dockerd); the engine listens on
                ``unix:///run/zmn-<tag>-N/docker.sock`` and gets the local busybox test image
                by ``docker save | docker load`` (no registry, no internet in the namespace)
  zun-compute   one per node, in the main namespace (it needs RabbitMQ and MariaDB on
                loopback), host name ``mn-<tag>-nN``, ``[docker]/api_url`` = that node's socket
  zun-api       one, noauth, on a free loopback port

No dockerd ever runs in the main network namespace besides the machine's own. Everything the
cluster creates is recorded under ``/var/lib/zun-multinode/<tag>/`` with the pid of the
process that owns it; :func:`sweep_stale` tears down what a killed test run left behind
(only runs whose owner is dead, so parallel runs do not disturb each other).

Processes read their configuration from ini files rendered from nested dicts; a test that
needs other settings restarts a process with overrides (``node.restart_agent({...})``,
``cluster.restart_api({...})``) and ``cluster.reset()`` puts the defaults back.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multinode.neutron import Fabric, NodeNetwork

BIN = Path(sys.executable).parent
STATE_ROOT = Path("/var/lib/zun-multinode")
RUN_ROOT = Path("/run")
# The account of tests/conftest.py's mariadb_url (scripts/run-tests.sh may export another).
MARIADB_URL = os.environ.get("ZUN_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306").rstrip(
    "/"
)
_MARIADB_PARSED = urllib.parse.urlsplit(MARIADB_URL)
MARIADB = {
    "host": _MARIADB_PARSED.hostname,
    "port": _MARIADB_PARSED.port or 3306,
    "user": urllib.parse.unquote(_MARIADB_PARSED.username or ""),
    "password": urllib.parse.unquote(_MARIADB_PARSED.password or ""),
}
RABBIT = "rabbit://guest:guest@127.0.0.1:5672"
TEST_IMAGES = ("busybox:latest", "zun-test/busybox:latest")
NODE_LABEL = "zun-test.node"
AGENT_READY = "zun-compute running on host "  # logged once init_host and the RPC server ran

Conf = dict[str, dict[str, Any]]


class SetupError(RuntimeError):
    """The environment could not be built (missing tool, daemon that does not answer...)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def merge(*confs: Conf | None) -> Conf:
    out: Conf = {}
    for conf in confs:
        for section, values in (conf or {}).items():
            out.setdefault(section, {}).update(values)
    return out


def render(conf: Conf) -> str:
    lines = []
    for section, values in conf.items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, list | tuple):
                value = ",".join(str(v) for v in value)
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def _run(args: list[str], timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise SetupError(
            f"{' '.join(args)} failed ({result.returncode}): "
            f"{(result.stderr or result.stdout)[-2000:]}"
        )
    return result


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_pid_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_alive(pid):
            return True
        try:  # reap it if it is our child
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    return not _pid_alive(pid)


def _find_image(source: Any, timeout: float = 60) -> Any:
    import docker

    deadline = time.monotonic() + timeout
    while True:
        for name in TEST_IMAGES:
            try:
                return source.images.get(name)
            except docker.errors.ImageNotFound:
                continue
        if time.monotonic() > deadline:
            raise SetupError(f"none of the test images {TEST_IMAGES} is on the machine's engine")
        time.sleep(1)


def check_requirements() -> None:
    """Raise SetupError naming what is missing to build namespaces and engines."""
    if os.geteuid() != 0:
        raise SetupError("the multi-node environment needs root (network namespaces, dockerd)")
    for tool in ("ip", "nsenter", "dockerd", "rabbitmqctl"):
        if shutil.which(tool) is None:
            raise SetupError(f"the multi-node environment needs '{tool}' on PATH")


class Process:
    """One zun service process with its config file and log."""

    def __init__(self, base: Path, name: str, binary: str) -> None:
        self.name = name
        self.binary = binary
        self.config = base / f"{name}.conf"
        self.log = base / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_offset = 0

    def logged_since_start(self, text: str) -> bool:
        """Whether this run of the process (not an earlier one) has logged ``text``."""
        try:
            with self.log.open("rb") as log:
                log.seek(self.log_offset)
                return text.encode() in log.read()
        except OSError:
            return False

    def start(self, conf: Conf) -> None:
        self.config.write_text(render(conf))
        with self.log.open("ab") as log:
            log.write(f"---- start {time.strftime('%H:%M:%S')}\n".encode())
            log.flush()
            self.log_offset = log.tell()
            self.proc = subprocess.Popen(
                [str(BIN / self.binary), "--config-file", str(self.config)],
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise SetupError(
                f"{self.name} exited ({self.proc.returncode}): {self.log.read_text()[-3000:]}"
            )

    def stop(self, timeout: float = 30) -> None:
        if not self.running:
            return
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, as a crash or a lost machine."""
        if self.running:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)


class Node:
    """One node: a network namespace, its dockerd, and the zun-compute that drives it."""

    def __init__(self, cluster: Cluster, index: int) -> None:
        self.cluster = cluster
        self.index = index
        self.name = f"mn-{cluster.tag}-n{index}"  # the zun host name
        self.netns = f"zmn-{cluster.tag}-{index}"
        self.run_dir = RUN_ROOT / self.netns
        self.data_root = cluster.state / f"node{index}" / "docker"
        self.state_path = cluster.state / f"node{index}" / "zun"
        self.socket = self.run_dir / "docker.sock"
        self.api_url = f"unix://{self.socket}"
        self.pidfile = self.run_dir / "dockerd.pid"
        self.engine_log = cluster.state / f"node{index}" / "dockerd.log"
        self.agent = Process(cluster.state, f"zun-compute-n{index}", "zun-compute")
        self.overrides: Conf = {}
        self._dockerd: subprocess.Popen[bytes] | None = None
        # Set by multinode.neutron.Fabric when the cluster has Neutron networking.
        self.network: NodeNetwork | None = None

    # -- the engine ------------------------------------------------------------------------

    def create_netns(self) -> None:
        _run(["ip", "netns", "add", self.netns])
        _run(["ip", "-n", self.netns, "link", "set", "lo", "up"])

    def start_engine(self, timeout: float = 90) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.data_root.mkdir(parents=True, exist_ok=True)
        self.engine_log.parent.mkdir(parents=True, exist_ok=True)
        log = self.engine_log.open("ab")
        dockerd = [
            "dockerd",
            "--data-root",
            str(self.data_root),
            "--pidfile",
            str(self.pidfile),
            # An engine label zun-compute reports as a node label (for LabelFilter).
            "--label",
            f"{NODE_LABEL}=n{self.index}",
            "-H",
            self.api_url,
        ]
        if self.network is not None:  # exec root /var/run/docker, for kuryr
            argv = self.network.engine_command(dockerd)
        else:
            argv = [
                "nsenter",
                f"--net=/var/run/netns/{self.netns}",
                *dockerd,
                "--exec-root",
                str(self.run_dir / "exec"),
            ]
        self._dockerd = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
        self.wait_engine(timeout)

    def wait_engine(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._dockerd is not None and self._dockerd.poll() is not None:
                raise SetupError(
                    f"dockerd of {self.netns} exited: {self.engine_log.read_text()[-3000:]}"
                )
            if self.engine_answers():
                return
            time.sleep(0.2)
        raise SetupError(
            f"dockerd of {self.netns} did not answer within {timeout}s: "
            f"{self.engine_log.read_text()[-3000:]}"
        )

    def engine_answers(self) -> bool:
        try:
            return bool(self.engine().ping())
        except Exception:
            return False

    def engine(self) -> Any:
        """A docker-py client for this node's engine (a new one each call: cheap)."""
        import docker

        return docker.DockerClient(base_url=self.api_url, timeout=60)

    def engine_pid(self) -> int | None:
        try:
            return int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None

    def stop_engine(self, timeout: float = 60) -> None:
        """Stop dockerd as an operator would (SIGTERM; it stops its containers and containerd)."""
        pid = self.engine_pid()
        if pid is not None and _pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
            if not _wait_pid_gone(pid, timeout):
                os.kill(pid, signal.SIGKILL)
                _wait_pid_gone(pid, 10)
        if self._dockerd is not None:
            try:
                self._dockerd.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._dockerd.kill()
            self._dockerd = None

    def load_images(self, source: Any) -> None:
        """Copy the test images from the machine's engine: docker save | docker load.

        The image is looked up under each of its names, for a while: other tests on the
        shared engine may untag one name for a moment."""
        image = _find_image(source)
        target = self.engine()
        try:
            loaded = target.images.load(b"".join(image.save(named=False)))[0]
            for name in TEST_IMAGES:
                repo, _, tag = name.rpartition(":")
                loaded.tag(repo, tag)
        finally:
            target.close()

    def remove_engine_containers(self) -> None:
        if not self.engine_answers():
            return
        client = self.engine()
        try:
            for container in client.containers.list(ignore_removed=True, all=True):
                container.remove(force=True, v=True)
        finally:
            client.close()

    def remove_engine_networks(self) -> None:
        """Remove the engine's own networks (with kuryr's driver, their Neutron side goes
        too). Only after the containers of every node are gone: kuryr's IPAM pools are
        shared by the nodes that use one Neutron subnet."""
        if not self.engine_answers():
            return
        client = self.engine()
        try:
            for network in client.networks.list():
                if network.name not in ("bridge", "host", "none"):
                    network.remove()
        finally:
            client.close()

    # -- the agent -------------------------------------------------------------------------

    def agent_conf(self) -> Conf:
        return merge(
            self.cluster.common_conf(),
            {
                "DEFAULT": {"host": self.name, "state_path": str(self.state_path)},
                "docker": {"api_url": self.api_url},
            },
            self.overrides,
        )

    def start_agent(self, overrides: Conf | None = None) -> None:
        if overrides is not None:
            self.overrides = overrides
        self.state_path.mkdir(parents=True, exist_ok=True)
        self.agent.start(self.agent_conf())

    def stop_agent(self) -> None:
        self.agent.stop()

    def kill_agent(self) -> None:
        self.agent.kill()

    def restart_agent(self, overrides: Conf | None = None) -> None:
        self.agent.stop()
        self.start_agent(overrides)

    # -- teardown --------------------------------------------------------------------------

    def destroy(self) -> None:
        self.agent.stop()
        self.remove_engine_containers()
        self.stop_engine()
        if self.network is not None:
            self.network.stop()
        _unmount_under(self.data_root)
        _run(["ip", "netns", "del", self.netns], check=False)
        shutil.rmtree(self.run_dir, ignore_errors=True)


class Cluster:
    """zun-api and N nodes on a database and a RabbitMQ vhost of their own."""

    def __init__(self, nodes: int = 2, tag: str | None = None, openstack: Any = None) -> None:
        """``openstack``: an ``openstack_env.OpenStackCloud`` to give the nodes Neutron
        networking (multinode.neutron); without it the nodes have Docker's bridges only."""
        self.tag = tag or uuid.uuid4().hex[:8]
        self.state = STATE_ROOT / self.tag
        self.db_name = f"zun_mn_{self.tag}"
        self.vhost = f"zun-mn-{self.tag}"
        self.db_url = f"{MARIADB_URL}/{self.db_name}"
        self.transport_url = f"{RABBIT}/{self.vhost}"
        self.api_port = free_port()
        self.url = f"http://127.0.0.1:{self.api_port}"
        self.api = Process(self.state, "zun-api", "zun-api")
        self.api_overrides: Conf = {}
        self.nodes = [Node(self, i) for i in range(1, nodes + 1)]
        self._clients: list[Any] = []
        self.fabric: Fabric | None = None
        if openstack is not None:
            from multinode.neutron import Fabric

            self.fabric = Fabric(self, openstack)

    # -- configuration ---------------------------------------------------------------------

    def common_conf(self) -> Conf:
        conf: Conf = {
            "DEFAULT": {"transport_url": self.transport_url, "my_ip": "127.0.0.1", "debug": True},
            "database": {"connection": self.db_url},
            "api": {"auth_strategy": "noauth", "host_ip": "127.0.0.1", "port": self.api_port},
            "network": {"driver": "docker"},
        }
        if self.fabric is not None:
            # As a deployment on the local OpenStack: Keystone auth, the kuryr driver, the
            # zun service user toward Neutron (the sections `openstack-services.sh zun-conf`
            # prints).
            conf = merge(conf, self.fabric.zun_conf())
        return conf

    def api_conf(self) -> Conf:
        return merge(
            self.common_conf(), {"DEFAULT": {"host": f"mn-{self.tag}-api"}}, self.api_overrides
        )

    # -- lifecycle -------------------------------------------------------------------------

    def _record(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        (self.state / "owner.json").write_text(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "db": self.db_name,
                    "vhost": self.vhost,
                    "netns": [n.netns for n in self.nodes]
                    + ([self.fabric.netns] if self.fabric is not None else []),
                    "neutron_hosts": self.fabric.hosts if self.fabric is not None else [],
                }
            )
        )

    def start(self, timeout: float = 120) -> Cluster:
        check_requirements()
        self._record()
        self._create_database()
        self._create_vhost()
        _run(
            [str(BIN / "zun-db-manage"), "--config-file", str(self._db_conf()), "upgrade"],
            timeout=180,
        )
        import docker

        source = docker.from_env(timeout=120)
        try:
            for node in self.nodes:
                node.create_netns()
            if self.fabric is not None:
                self.fabric.start()
            for node in self.nodes:
                node.start_engine()
                node.load_images(source)
        finally:
            source.close()
        for node in self.nodes:
            node.start_agent()
        self.api.start(self.api_conf())
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 120, nodes: list[Node] | None = None) -> None:
        """Until the API answers and lists every node (each has reported its inventory), and
        every running agent of ``nodes`` has finished starting (recovery done, RPC server
        up): its row and heartbeat may be older than the process, so they prove nothing."""
        chosen = nodes if nodes is not None else self.nodes
        wanted = {n.name for n in chosen}
        starting = [n for n in chosen if n.agent.running]
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            self.api.check_alive()
            for node in self.nodes:
                node.agent.check_alive()
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2):
                    pass
                listed = {h.hostname for h in self.client().hosts.list()}
                pending = [
                    n.name for n in starting if not n.agent.logged_since_start(AGENT_READY + n.name)
                ]
                if wanted <= listed and not pending:
                    return
                last = (listed, pending)
            except Exception as exc:  # not up yet; the last reason goes into the error
                last = exc
            time.sleep(0.3)
        raise SetupError(
            f"the cluster was not ready within {timeout}s ({last!r}); api log: "
            f"{self.api.log.read_text()[-2000:]}"
        )

    def restart_api(self, overrides: Conf | None = None) -> None:
        self.close_clients()
        self.api.stop()
        if overrides is not None:
            self.api_overrides = overrides
        self.api.start(self.api_conf())
        self.wait_ready()

    def reset(self) -> None:
        """Back to the default configuration and every process running."""
        changed = bool(self.api_overrides) or not self.api.running
        for node in self.nodes:
            if not node.engine_answers():
                node.start_engine()
            if node.overrides or not node.agent.running:
                node.overrides = {}
                node.restart_agent()
        if changed:
            self.api_overrides = {}
            self.restart_api()
        else:
            self.wait_ready()

    def client(self, version: str = "1.40", project: str | None = None, session: Any = None) -> Any:
        """A zunclient; with Neutron (Keystone auth), on ``session`` or the admin's."""
        from zunclient import client

        if self.fabric is not None:
            zun = client.Client(
                version,
                session=session or self.fabric.cloud.session(),
                endpoint_override=self.url + "/v1",
            )
        else:
            zun = client.Client(version, endpoint_override=self.url + "/v1", auth_token="notused")
        self._clients.append(zun)
        return zun

    def delete_containers(
        self, zun: Any, uuids: Sequence[str], timeout: float = 90, stop: bool = False
    ) -> None:
        """Force-delete the containers with ``zun`` (an admin's client: a member's forced
        delete is a 403; only a 404, gone already, is not raised) and wait until the API
        lists none of them and no node's engine has a container of one: a delete is a cast.
        An AssertionError naming what is left when ``timeout`` passes first."""
        from zunclient import exceptions

        for uuid_ in uuids:
            try:
                zun.containers.delete(uuid_, force=True, stop=stop, all_projects=True)
            except exceptions.NotFound:
                pass
        wanted = set(uuids)
        deadline = time.monotonic() + timeout
        while True:
            listed = wanted & {c.uuid for c in zun.containers.list(all_projects=True)}
            engines = self._engine_containers(wanted)
            if not listed and not engines:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"containers not deleted within {timeout} s: listed "
                    f"{sorted(listed)}, on the engines {engines}"
                )
            time.sleep(0.5)

    def _engine_containers(self, uuids: set[str]) -> list[str]:
        """``node: name`` of the engine containers of ``uuids`` on the nodes that answer."""
        found = []
        for node in self.nodes:
            if not node.engine_answers():
                continue
            client = node.engine()
            try:
                found += [
                    f"{node.name}: {c.name}"
                    for c in client.containers.list(ignore_removed=True, all=True)
                    if c.labels.get("zun.container.uuid") in uuids
                ]
            finally:
                client.close()
        return found

    def close_clients(self) -> None:
        for zun in self._clients:
            zun.http_client.session.session.close()
        self._clients.clear()

    def node(self, host: str) -> Node:
        return next(n for n in self.nodes if n.name == host)

    def stop(self) -> None:
        """Tear everything down; each step runs even when an earlier one failed."""
        errors: list[str] = []
        self.close_clients()
        steps = [self._stop_processes]
        if self.fabric is not None:
            steps += [n.remove_engine_containers for n in self.nodes]
            steps += [n.remove_engine_networks for n in self.nodes]
        steps += [n.destroy for n in self.nodes]
        if self.fabric is not None:
            steps.append(self.fabric.stop)
        steps += [self._drop_vhost, self._drop_database]
        for step in steps:
            try:
                step()
            except Exception as exc:  # keep tearing down; report at the end
                errors.append(f"{getattr(step, '__qualname__', step)}: {exc}")
        shutil.rmtree(self.state, ignore_errors=True)
        if errors:
            raise SetupError("multi-node teardown: " + "; ".join(errors))

    def _stop_processes(self) -> None:
        # SIGTERM to all first: each takes seconds to leave, and they can do it together.
        procs = [self.api] + [n.agent for n in self.nodes]
        for proc in procs:
            if proc.running:
                assert proc.proc is not None
                proc.proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.stop()

    # -- database and vhost ----------------------------------------------------------------

    def _db_conf(self) -> Path:
        path = self.state / "db.conf"
        path.write_text(render(merge(self.common_conf(), {"DEFAULT": {"host": "db"}})))
        return path

    def _create_database(self) -> None:
        import pymysql

        conn = pymysql.connect(**MARIADB, autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE `{self.db_name}` CHARACTER SET utf8mb4")
        finally:
            conn.close()

    def _drop_database(self) -> None:
        drop_database(self.db_name)

    def _create_vhost(self) -> None:
        _run(["rabbitmqctl", "-q", "add_vhost", self.vhost])
        _run(["rabbitmqctl", "-q", "set_permissions", "-p", self.vhost, "guest", ".*", ".*", ".*"])

    def _drop_vhost(self) -> None:
        drop_vhost(self.vhost)


def drop_database(name: str) -> None:
    import pymysql

    conn = pymysql.connect(**MARIADB, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
    finally:
        conn.close()


def drop_vhost(name: str) -> None:
    result = _run(["rabbitmqctl", "-q", "delete_vhost", name], check=False)
    if result.returncode != 0 and "not_found" not in (result.stderr + result.stdout):
        raise SetupError(f"rabbitmqctl delete_vhost {name}: {result.stderr[-500:]}")


def _unmount_under(path: Path) -> None:
    """Unmount whatever a killed dockerd left mounted below ``path`` (deepest first)."""
    prefix = str(path)
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts if line.split()[1].startswith(prefix)]
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def sweep_stale() -> list[str]:
    """Tear down clusters whose owning process is dead; returns their tags."""
    swept = []
    if not STATE_ROOT.is_dir():
        return swept
    for state in STATE_ROOT.iterdir():
        owner_file = state / "owner.json"
        try:
            owner = json.loads(owner_file.read_text())
        except (OSError, ValueError):
            continue
        if _pid_alive(int(owner.get("pid", 0))):
            continue
        for netns in owner.get("netns", []):
            pidfile = RUN_ROOT / netns / "dockerd.pid"
            try:
                pid = int(pidfile.read_text().strip())
            except (OSError, ValueError):
                pid = 0
            if pid and _pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
                if not _wait_pid_gone(pid, 30):
                    os.kill(pid, signal.SIGKILL)
            _run(["ip", "netns", "del", netns], check=False)
            shutil.rmtree(RUN_ROOT / netns, ignore_errors=True)
        _kill_agents_of(state, [RUN_ROOT / netns for netns in owner.get("netns", [])])
        _unmount_under(state)
        try:
            drop_database(owner["db"])
            drop_vhost(owner["vhost"])
        except Exception:  # the services may be down; the directory is removed anyway
            pass
        if owner.get("neutron_hosts"):
            _forget_neutron_run(state.name, owner["neutron_hosts"])
        shutil.rmtree(state, ignore_errors=True)
        swept.append(state.name)
    return swept


def _forget_neutron_run(tag: str, hosts: list[str]) -> None:
    """The Neutron agents, ports and test resources (``zmn-<tag>-*``) of a killed run's nodes
    (when the local OpenStack runs)."""
    try:
        import openstack_env
        from multinode.neutron import delete_agents, delete_run_resources

        cloud = openstack_env.running_cloud()
        if cloud is not None:
            delete_agents(cloud, hosts)
            delete_run_resources(cloud, tag)
    except Exception:  # best effort: the state directory is removed anyway
        pass


def _kill_agents_of(state: Path, run_dirs: Sequence[Path] = ()) -> None:
    """Processes with an argument in ``state`` or one of ``run_dirs`` (left by a killed run):
    zun services (--config-file), the Neutron agents, kuryr, Open vSwitch (--log-file=...)."""
    prefixes = [str(state) + "/"] + [str(d) + "/" for d in run_dirs]
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [arg.decode(errors="replace") for arg in cmdline]
        if any(prefix in arg for arg in args for prefix in prefixes):
            try:
                os.kill(int(proc.name), signal.SIGKILL)
            except ProcessLookupError:
                pass
