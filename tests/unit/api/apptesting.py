"""An in-process Zun API over a migrated SQLite database, for API tests.

Used by ``tests/unit/api/conftest.py`` and ``tests/functional/api/conftest.py`` (which import
it as ``unit.api.apptesting``: pytest puts ``tests/`` on ``sys.path`` for the root conftest).
See docs/api-tests.md. In short::

    def test_x(api, seed):                         # ApiClient on a fresh database
        seed.service(host="node1")                 # rows straight into the database
        r = api.as_admin().get("/v1/services")     # admin of project "project-admin"
        r = api.as_member("project-a").at("1.4").get("/v1/hosts")
        assert r.status == 403 and r.error["code"] == "container.policy-not-authorized"

Nothing is faked: requests go through the real WSGI pipeline (the noauth strategy, which trusts
the X-* identity headers as keystonemiddleware would set them) and a real, migrated database.
"""

from __future__ import annotations

import contextlib
import datetime
import json as jsonlib
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import webob

from zun.api import app as api_app
from zun.api import routing
from zun.db import engine as db_engine
from zun.db import models

#: The three identities of the specification tests (role names as Keystone sends them).
ADMIN = {"user": "user-admin", "project": "project-admin", "roles": "admin"}
MEMBER_A = {"user": "user-a", "project": "project-a", "roles": "member"}
MEMBER_B = {"user": "user-b", "project": "project-b", "roles": "member"}
IDENTITIES = {"admin": ADMIN, "member_a": MEMBER_A, "member_b": MEMBER_B}


def migrate_sqlite(directory: Path) -> str:
    """Create ``zun.sqlite`` in ``directory`` with the real migrations; return its URL."""
    from zun.db import migration

    url = f"sqlite:///{directory / 'zun.sqlite'}"
    migration.upgrade(url=url)
    return url


@dataclass
class Reply:
    """A response: ``status``, ``headers``, raw ``body``; ``json`` and ``error`` decode it."""

    status: int
    headers: webob.response.ResponseHeaders
    body: bytes

    @property
    def json(self) -> Any:
        return jsonlib.loads(self.body) if self.body else None

    @property
    def error(self) -> dict[str, Any]:
        """``errors[0]`` of a Zun error body."""
        return self.json["errors"][0]

    def __repr__(self) -> str:
        return f"<Reply {self.status} {self.body[:300]!r}>"


@dataclass(frozen=True)
class ApiClient:
    """Sends requests to a WSGI app as one identity and one microversion.

    ``as_admin()``, ``as_member(project)``, ``anonymous()`` and ``at(version)`` return bound
    copies; ``version=None`` sends no version header (the request then runs at 1.1).
    """

    app: Callable[..., Any]
    identity: dict[str, str] | None = field(default_factory=lambda: dict(ADMIN))
    version: str | None = None
    host: str = "http://zun.test:9517"

    def as_admin(self, project: str = ADMIN["project"]) -> ApiClient:
        return replace(self, identity={**ADMIN, "project": project})

    def as_member(
        self, project: str = MEMBER_A["project"], user: str | None = None, roles: str = "member"
    ) -> ApiClient:
        return replace(
            self,
            identity={"user": user or f"user-of-{project}", "project": project, "roles": roles},
        )

    def as_identity(self, name: str) -> ApiClient:
        """One of :data:`IDENTITIES` by name (``admin``, ``member_a``, ``member_b``)."""
        return replace(self, identity=dict(IDENTITIES[name]))

    def anonymous(self) -> ApiClient:
        """No identity headers (noauth then uses its default admin)."""
        return replace(self, identity=None)

    def at(self, version: str | None) -> ApiClient:
        """Send ``OpenStack-API-Version: container <version>`` (``latest`` works too)."""
        return replace(self, version=version)

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        content_type: str | None = None,
    ) -> Reply:
        all_headers: dict[str, str] = {}
        if self.identity is not None:
            all_headers.update(
                {
                    "X-User-Id": self.identity["user"],
                    "X-Project-Id": self.identity["project"],
                    "X-Roles": self.identity["roles"],
                }
            )
        if self.version is not None:
            all_headers["OpenStack-API-Version"] = f"container {self.version}"
        if json is not None:
            body = jsonlib.dumps(json).encode()
            content_type = content_type or "application/json"
        all_headers.update(headers or {})
        req = webob.Request.blank(path, method=method, base_url=self.host, headers=all_headers)
        if body is not None:
            req.body = body
        if content_type is not None:
            req.content_type = content_type
        resp = req.get_response(self.app)
        return Reply(resp.status_code, resp.headers, resp.body)

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def head(self, path: str, **kw: Any) -> Reply:
        return self.request("HEAD", path, **kw)

    def post(self, path: str, **kw: Any) -> Reply:
        return self.request("POST", path, **kw)

    def put(self, path: str, **kw: Any) -> Reply:
        return self.request("PUT", path, **kw)

    def patch(self, path: str, **kw: Any) -> Reply:
        return self.request("PATCH", path, **kw)

    def delete(self, path: str, **kw: Any) -> Reply:
        return self.request("DELETE", path, **kw)


def make_app(extra_routes: Iterable[routing.Route] = ()) -> Callable[..., Any]:
    """The full pipeline (noauth) with every registered handler, plus ``extra_routes``.

    Extra routes exist only in this app object (the global route table is untouched), so a test
    can add a handler that raises or checks something without leaking it into other tests.
    """
    init_config()
    zun = api_app.ZunApp()
    extra = list(extra_routes)
    if extra:
        zun.router = routing.Router(routing.registered_routes() + extra)
    return api_app.build_app("noauth", zun)


def extra_route(
    method: str,
    path: str,
    handler: Callable[..., Any],
    min_version: str | None = None,
    max_version: str | None = None,
) -> routing.Route:
    """A :class:`routing.Route` to pass to :func:`make_app` (not registered globally)."""
    from zun.api.microversion import MAX_VERSION, MIN_VERSION, Version

    return routing.Route(
        method.upper(),
        path,
        handler,
        Version.parse(min_version) if min_version else MIN_VERSION,
        Version.parse(max_version) if max_version else MAX_VERSION,
    )


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)


def init_config() -> None:
    """Parse an empty command line once (no config file), as a command would at start-up.

    oslo.policy needs a parsed configuration to look for policy files; the defaults then apply.
    """
    from zun.conf import CONF

    try:
        CONF.config_file  # noqa: B018  (raises until the configuration is parsed)
        CONF.find_file("policy.yaml")
    except Exception:
        CONF([], project="zun", default_config_files=[], default_config_dirs=[])


@contextlib.contextmanager
def database(directory: Path, template: Path | None = None) -> Iterator[str]:
    """A migrated SQLite database installed as the process-wide engine for the block.

    ``template``: a database file migrated earlier (see :func:`migrate_sqlite`) to copy instead
    of running the migrations again; much faster when every test wants a fresh database.
    """
    if template is not None:
        shutil.copyfile(template, directory / "zun.sqlite")
        url = f"sqlite:///{directory / 'zun.sqlite'}"
    else:
        url = migrate_sqlite(directory)
    db_engine.set_engine(db_engine.create_engine(url))
    try:
        yield url
    finally:
        db_engine.dispose()


class Seed:
    """Rows written straight into the database, with sensible defaults for every column."""

    def _add(self, row: Any) -> Any:
        with db_engine.transaction() as session:
            session.add(row)
        return row

    def service(
        self,
        host: str = "node1",
        binary: str = "zun-compute",
        *,
        seen: datetime.datetime | int | str | None = "now",
        **values: Any,
    ) -> models.ZunService:
        """A zun_service row. ``seen`` is its last heartbeat: "now" (default), a datetime, a
        number of seconds ago, or None (never; the row is then created a day ago)."""
        now = _now()
        if seen == "now":
            last: datetime.datetime | None = now
        elif isinstance(seen, int):
            last = now - datetime.timedelta(seconds=seen)
        else:
            last = seen  # type: ignore[assignment]
        values.setdefault("created_at", last or now - datetime.timedelta(days=1))
        values.setdefault("report_count", 1)
        return self._add(models.ZunService(host=host, binary=binary, last_seen_up=last, **values))

    def compute_node(self, hostname: str = "node1", **values: Any) -> models.ComputeNode:
        defaults: dict[str, Any] = {
            "uuid": str(uuid.uuid4()),
            "rp_uuid": str(uuid.uuid4()),
            "mem_total": 2048,
            "mem_used": 512,
            "cpus": 4,
            "cpu_used": 1.5,
            "total_containers": 2,
            "architecture": "x86_64",
            "os_type": "linux",
            "os": "Debian GNU/Linux 12",
            "kernel_version": "6.1.0",
            "labels": {"dc": "one"},
            "disk_total": 100,
            "disk_used": 10,
            "disk_quota_supported": False,
            "runtimes": ["runc"],
            "enable_cpu_pinning": False,
        }
        defaults.update(values)
        return self._add(models.ComputeNode(hostname=hostname, **defaults))

    def container(self, **values: Any) -> models.Container:
        """A container row; defaults: Created on node1 in project-a (see :func:`_container`).
        ``registry`` (a registry UUID) sets ``registry_id``."""
        registry = values.pop("registry", None)
        if registry is not None:
            import sqlalchemy as sa

            with db_engine.transaction(readonly=True) as session:
                values["registry_id"] = session.scalar(
                    sa.select(models.Registry.id).where(models.Registry.uuid == registry)
                )
        return self._add(_container(**values))

    def registry(self, **values: Any) -> models.Registry:
        """A registry row (the password, when given, is stored encrypted as the API does)."""
        from zun.common import crypt

        row = _seed_defaults(
            values,
            {
                "uuid": str(uuid.uuid4()),
                "name": f"reg-{uuid.uuid4().hex[:6]}",
                "domain": "registry.example.com",
                "username": "user",
                "project_id": MEMBER_A["project"],
                "user_id": MEMBER_A["user"],
            },
        )
        if row.get("password") is not None:
            row["password"] = crypt.encrypt(str(row["password"]))
        return self._add(models.Registry(**row))

    def image(self, **values: Any) -> models.Image:
        return self._add(
            models.Image(
                **_seed_defaults(
                    values,
                    {
                        "uuid": str(uuid.uuid4()),
                        "repo": "127.0.0.1:5000/busybox",
                        "tag": "latest",
                        "host": "node1",
                        "image_id": "sha256:" + "0" * 64,
                        "size": "1024",
                        "project_id": MEMBER_A["project"],
                        "user_id": MEMBER_A["user"],
                    },
                )
            )
        )

    def container_action(self, **values: Any) -> models.ContainerAction:
        """A container action; ``events`` (a list of dicts) adds its events."""
        events = values.pop("events", [])
        now = _now()
        action = self._add(
            models.ContainerAction(
                **_seed_defaults(
                    values,
                    {
                        "action": "start",
                        "request_id": f"req-{uuid.uuid4()}",
                        "user_id": MEMBER_A["user"],
                        "project_id": MEMBER_A["project"],
                        "start_time": now,
                        "finish_time": None,
                        "message": None,
                    },
                )
            )
        )
        for event in events:
            self._add(
                models.ContainerActionEvent(
                    action_id=action.id,
                    **_seed_defaults(
                        event,
                        {
                            "event": "compute__do_container_start",
                            "start_time": now,
                            "finish_time": now,
                            "result": "Success",
                            "traceback": None,
                        },
                    ),
                )
            )
        return action

    def network(self, **values: Any) -> models.Network:
        return self._add(
            models.Network(
                **_seed_defaults(
                    values,
                    {
                        "uuid": str(uuid.uuid4()),
                        "name": "net",
                        "neutron_net_id": "net-1",
                        "network_id": "d" * 64,
                        "host": "node1",
                        "project_id": ADMIN["project"],
                        "user_id": ADMIN["user"],
                    },
                )
            )
        )

    def quota(self, project_id: str, resource: str, hard_limit: int) -> models.Quota:
        return self._add(
            models.Quota(project_id=project_id, resource=resource, hard_limit=hard_limit)
        )

    def quota_class(self, class_name: str, resource: str, hard_limit: int) -> models.QuotaClass:
        return self._add(
            models.QuotaClass(class_name=class_name, resource=resource, hard_limit=hard_limit)
        )

    def row(self, row: Any) -> Any:
        """Any other model instance."""
        return self._add(row)


# --- defaults of the seeded rows ---------------------------------------------------------------


def _seed_defaults(values: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    return {**defaults, **values}


def _container(**values: Any) -> models.Container:
    """A container row as a created one looks (status Created on node1, project-a)."""
    return models.Container(
        **_seed_defaults(
            values,
            {
                "uuid": str(uuid.uuid4()),
                "name": f"c-{uuid.uuid4().hex[:8]}",
                "image": "busybox",
                "status": "Created",
                "host": "node1",
                "project_id": MEMBER_A["project"],
                "user_id": MEMBER_A["user"],
                "cpu": 1.0,
                "memory": "512",
                "command": ["sleep", "100"],
                "interactive": False,
                "tty": False,
                "auto_heal": False,
                "privileged": False,
                "image_driver": "docker",
                "container_type": 0,
            },
        )
    )


def container_values(ident: str) -> dict[str, Any] | None:
    """The stored columns of the container whose UUID or name is ``ident`` (None: no row)."""
    import sqlalchemy as sa

    C = models.Container
    with db_engine.transaction(readonly=True) as session:
        row = session.scalars(
            sa.select(C).where(sa.or_(C.uuid == ident, C.name == ident)).order_by(C.id).limit(1)
        ).first()
        if row is None:
            return None
        return {
            attr.key: getattr(row, attr.key)
            for attr in sa.inspect(models.Container).mapper.column_attrs
        }


# --- a message bus with recording compute nodes --------------------------------------------------

#: Every method the API sends to a compute node (containers, images, networks).
NODE_METHODS = (
    "container_create",
    "container_delete",
    "container_start",
    "container_stop",
    "container_reboot",
    "container_pause",
    "container_unpause",
    "container_kill",
    "container_rebuild",
    "resize_container",
    "network_attach",
    "network_detach",
    "container_commit",
    "container_show",
    "container_logs",
    "container_exec",
    "container_exec_resize",
    "container_attach",
    "container_resize",
    "container_top",
    "container_get_archive",
    "container_put_archive",
    "container_stats",
    "container_update",
    "network_list",
    "image_pull",
    "image_delete",
    "image_search",
    "network_create",
    "network_delete",
)


@dataclass
class SentMessage:
    method: str
    kwargs: dict[str, Any]
    context: dict[str, Any]


class RecordingNode:
    """A genuine oslo.messaging endpoint on ``zun-compute.<host>`` that records every message.

    Calls answer ``replies[method]`` (default None) or raise ``failures[method]``: a Zun
    exception raised here crosses the bus and reaches the API as ``<Class>_Remote``, exactly
    as a node's would. Casts are recorded when the server thread runs them (use
    :meth:`wait_for`).
    """

    target = None  # oslo.messaging reads ``target`` from an endpoint: use the server's

    def __init__(self, host: str) -> None:
        import threading

        self.host = host
        self.messages: list[SentMessage] = []
        self.replies: dict[str, Any] = {}
        self.failures: dict[str, BaseException] = {}
        self._arrived = threading.Condition()

    def _record(self, method: str, ctxt: Any, kwargs: dict[str, Any]) -> Any:
        with self._arrived:
            self.messages.append(SentMessage(method, kwargs, ctxt.to_dict()))
            self._arrived.notify_all()
        if method in self.failures:
            raise self.failures[method]
        return self.replies.get(method)

    def wait_for(self, method: str, count: int = 1, timeout: float = 10.0) -> list[SentMessage]:
        """The messages of ``method`` once ``count`` of them arrived (casts are async)."""
        import time

        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                found = [m for m in self.messages if m.method == method]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"{method} x{count} not received by {self.host}; "
                        f"got {[m.method for m in self.messages]}"
                    )
                self._arrived.wait(left)

    def methods(self) -> list[str]:
        return [m.method for m in self.messages]


def _node_method(name: str) -> Callable[..., Any]:
    def method(self: RecordingNode, ctxt: Any, **kwargs: Any) -> Any:
        return self._record(name, ctxt, kwargs)

    method.__name__ = name
    return method


for _name in NODE_METHODS:
    setattr(RecordingNode, _name, _node_method(_name))


class RecordingBus:
    """The in-process (``fake://``) transport, as zun-all uses it, with a recording node
    listening for each of ``hosts``. :meth:`close` stops the servers and the transport.

    Stopping a server that handled a message takes about a second (oslo.messaging's worker
    pool), so a caller running many tests on the same hosts may keep one bus and
    :meth:`reset` it between tests instead.
    """

    def __init__(self, hosts: Iterable[str]) -> None:
        from zun.common import rpc
        from zun.common.rpc_service import RPCService
        from zun.conf import CONF

        init_config()
        rpc.init(CONF, "fake://")
        self.hosts = tuple(hosts)
        self.nodes: dict[str, RecordingNode] = {}
        self._services: list[RPCService] = []
        try:
            for host in self.hosts:
                node = self.nodes[host] = RecordingNode(host)
                service = RPCService(host, [node])
                service.start()
                self._services.append(service)
        except BaseException:
            self.close()
            raise

    def reset(self) -> None:
        """Forget what was recorded and how calls answer."""
        for node in self.nodes.values():
            with node._arrived:
                node.messages.clear()
            node.replies.clear()
            node.failures.clear()

    def close(self) -> None:
        from zun.common import rpc

        for service in self._services:
            service.stop()
        for service in self._services:
            service.wait()
        self._services.clear()
        rpc.cleanup()


@contextlib.contextmanager
def recording_bus(hosts: Iterable[str]) -> Iterator[dict[str, RecordingNode]]:
    """A :class:`RecordingBus` for the block; yields its nodes by host."""
    bus = RecordingBus(hosts)
    try:
        yield bus.nodes
    finally:
        bus.close()


@contextlib.contextmanager
def policy_rules(rules: dict[str, str]) -> Iterator[None]:
    """Override some policy rules for the block (as an operator's policy.yaml would)."""
    from oslo_policy import policy as oslo_policy

    from zun.common import policy

    enforcer = policy.get_enforcer()
    enforcer.set_rules(oslo_policy.Rules.from_dict(rules), overwrite=False, use_conf=False)
    try:
        yield
    finally:
        policy.reset()


@contextlib.contextmanager
def config_overrides(values: dict[str, dict[str, Any]]) -> Iterator[None]:
    """``{group: {option: value}}`` (group ``DEFAULT`` for the top level) for the block."""
    from zun.conf import CONF

    init_config()
    done: list[tuple[str, str | None]] = []
    try:
        for group, options in values.items():
            name = None if group == "DEFAULT" else group
            for option, value in options.items():
                CONF.set_override(option, value, group=name)
                done.append((option, name))
        yield
    finally:
        for option, name in done:
            CONF.clear_override(option, group=name)
