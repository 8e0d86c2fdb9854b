"""Shared session fixtures: real Docker, registries, databases and RabbitMQ on this machine.

Every fixture here talks to a real service; none of them fakes one. When a service is missing,
the test is skipped with the reason on a developer machine, but fails under CI (``CI=true``),
where ``scripts/run-tests.sh`` has started everything beforehand and a skip would hide a broken
setup.

Fixtures:
  docker_client     docker.DockerClient for the local engine (session)
  busybox_image     name of the local test image, "busybox:latest" (session)
  registry          {"url", "image"} of the open registry on 127.0.0.1:5000 (session)
  private_registry  {"url", "image", "username", "password"} of the basic-auth registry on
                    127.0.0.1:5001 (session)
  mariadb_url       factory: ``mariadb_url()`` creates a throwaway database, returns its
                    SQLAlchemy URL; every database it made is dropped after the test
  postgresql_url    same for PostgreSQL
  rabbit_url        oslo.messaging transport URL of the local RabbitMQ (session)
  openstack_cloud   the local OpenStack of scripts/openstack-services.sh (session); tests using
                    it are marked ``openstack`` and run only when ``-m`` names that marker

A test using one of these fixtures is marked docker / mariadb / postgresql / rabbitmq
automatically, so ``-m "not docker"`` also deselects tests that forgot the marker.

Credentials: ``ZUN_TEST_MARIADB_URL``, ``ZUN_TEST_POSTGRESQL_URL`` and ``ZUN_TEST_RABBIT_URL``
name an account allowed to create and drop databases (no database in the URL). The defaults,
root and postgres without a password, are what the project machines accept; on a stock Debian,
``scripts/run-tests.sh`` creates a ``zun_test`` account with a password and exports the URLs.
"""

from __future__ import annotations

import os
import re
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TEST_IMAGES_SCRIPT = REPO_ROOT / "scripts" / "test-images.sh"

BUSYBOX_IMAGE = "busybox:latest"
OPEN_REGISTRY = "127.0.0.1:5000"
PRIVATE_REGISTRY = "127.0.0.1:5001"
PRIVATE_USER = "zunuser"
PRIVATE_PASSWORD = "zunpass"
MARIADB_ADMIN_URL = os.environ.get(
    "ZUN_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306"
).rstrip("/")
POSTGRESQL_ADMIN_URL = os.environ.get(
    "ZUN_TEST_POSTGRESQL_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432"
).rstrip("/")
RABBIT_URL = os.environ.get("ZUN_TEST_RABBIT_URL", "rabbit://guest:guest@127.0.0.1:5672/")

_FIXTURE_MARKERS = {
    "docker_client": "docker",
    "busybox_image": "docker",
    "registry": "docker",
    "private_registry": "docker",
    "mariadb_url": "mariadb",
    "postgresql_url": "postgresql",
    "rabbit_url": "rabbitmq",
    "openstack_cloud": "openstack",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def service_unavailable(reason: str) -> NoReturn:
    """Skip the test, or fail it under CI where every service must be there."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: services are required, not skipped)", pytrace=False)
    pytest.skip(reason)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", ())
        for marker in {_FIXTURE_MARKERS[n] for n in names if n in _FIXTURE_MARKERS}:
            item.add_marker(marker)
    # Tests of the local OpenStack (Keystone, Neutron, OVS, kuryr, Placement, Glance) are too heavy
    # for the default run: they run when the -m expression names one of their markers, or when
    # ZUN_TEST_OPENSTACK=1 (docs/testing.md). A test marked neutron, placement or glance is an
    # openstack test too, so that -m openstack runs them all.
    for item in items:
        if any(item.get_closest_marker(m) for m in OPENSTACK_MARKERS[1:]):
            item.add_marker("openstack")
    if not openstack_selected(config.option.markexpr or ""):
        skipped = [i for i in items if i.get_closest_marker("openstack")]
        if skipped:
            config.hook.pytest_deselected(items=skipped)
            items[:] = [i for i in items if not i.get_closest_marker("openstack")]


OPENSTACK_MARKERS = ("openstack", "neutron", "placement", "glance")


def openstack_selected(markexpr: str) -> bool:
    """Whether this run asked for the tests that need the local OpenStack."""
    if os.environ.get("ZUN_TEST_OPENSTACK", "").strip().lower() in {"1", "true", "yes"}:
        return True
    words = re.findall(r"[A-Za-z_]+", markexpr)
    for i, word in enumerate(words):
        if word in OPENSTACK_MARKERS and (i == 0 or words[i - 1] != "not"):
            return True
    return False


def _registry_answers(address: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://{address}/v2/", timeout=3):
            return True
    except urllib.error.HTTPError as exc:
        return exc.code == 401  # the private registry answers, it just wants credentials
    except OSError:
        return False


_test_images_ran = False


def _run_test_images_script() -> None:
    """Build the image and start the registries; at most once per session (it is idempotent)."""
    global _test_images_ran
    if _test_images_ran:
        return
    _test_images_ran = True
    result = subprocess.run(
        ["bash", str(TEST_IMAGES_SCRIPT)], capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        service_unavailable(
            f"{TEST_IMAGES_SCRIPT.name} failed ({result.returncode}): {result.stderr[-2000:]}"
        )


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    """A docker-py client for the engine on this machine (DOCKER_HOST or the default socket)."""
    import docker

    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:  # any failure here means "no engine"; the reason is reported
        service_unavailable(f"no Docker engine answers ({exc}); run scripts/ensure-docker.sh")
    yield client
    client.close()


@pytest.fixture(scope="session")
def busybox_image(docker_client: Any) -> str:
    """Name of the local busybox test image, built by scripts/test-images.sh if missing."""
    import docker

    try:
        docker_client.images.get(BUSYBOX_IMAGE)
    except docker.errors.ImageNotFound:
        _run_test_images_script()
        docker_client.images.get(BUSYBOX_IMAGE)
    return BUSYBOX_IMAGE


@pytest.fixture(scope="session")
def registry(busybox_image: str) -> dict[str, str]:
    """The open registry: ``url`` (host:port, plain HTTP) and ``image`` it serves."""
    if not _registry_answers(OPEN_REGISTRY):
        _run_test_images_script()
    if not _registry_answers(OPEN_REGISTRY):
        service_unavailable(f"registry {OPEN_REGISTRY} does not answer")
    return {"url": OPEN_REGISTRY, "image": f"{OPEN_REGISTRY}/busybox:latest"}


@pytest.fixture(scope="session")
def private_registry(busybox_image: str) -> dict[str, str]:
    """The basic-auth registry: ``url``, ``image`` it serves, ``username`` and ``password``."""
    if not _registry_answers(PRIVATE_REGISTRY):
        _run_test_images_script()
    if not _registry_answers(PRIVATE_REGISTRY):
        service_unavailable(f"registry {PRIVATE_REGISTRY} does not answer")
    return {
        "url": PRIVATE_REGISTRY,
        "image": f"{PRIVATE_REGISTRY}/private/busybox:latest",
        "username": PRIVATE_USER,
        "password": PRIVATE_PASSWORD,
    }


def _admin_url(url: str) -> Any:
    import sqlalchemy as sa

    return sa.make_url(url)


def _shown(url: Any) -> str:
    """The URL without its password, for messages."""
    return url.render_as_string(hide_password=True)


def _unique_db_name() -> str:
    return f"zun_test_{uuid.uuid4().hex[:16]}"


@pytest.fixture
def mariadb_url() -> Iterator[Callable[[], str]]:
    """Factory: each call creates an empty MariaDB database and returns its URL."""
    import pymysql

    created: list[str] = []

    admin = _admin_url(MARIADB_ADMIN_URL)

    def connect() -> Any:
        try:
            return pymysql.connect(
                host=admin.host,
                port=admin.port or 3306,
                user=admin.username,
                password=admin.password or "",
                autocommit=True,
            )
        except pymysql.err.OperationalError as exc:
            service_unavailable(f"MariaDB at {_shown(admin)} is not usable ({exc})")

    def make() -> str:
        name = _unique_db_name()
        conn = connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
        finally:
            conn.close()
        created.append(name)
        return f"{MARIADB_ADMIN_URL}/{name}"

    yield make
    if created:
        conn = connect()
        try:
            with conn.cursor() as cur:
                for name in created:
                    cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        finally:
            conn.close()


@pytest.fixture
def postgresql_url() -> Iterator[Callable[[], str]]:
    """Factory: each call creates an empty PostgreSQL database and returns its URL."""
    import psycopg2

    created: list[str] = []

    admin = _admin_url(POSTGRESQL_ADMIN_URL)

    def connect() -> Any:
        try:
            conn = psycopg2.connect(
                host=admin.host,
                port=admin.port or 5432,
                user=admin.username,
                password=admin.password or "",
                dbname="postgres",
            )
        except psycopg2.OperationalError as exc:
            service_unavailable(f"PostgreSQL at {_shown(admin)} is not usable ({exc})")
        conn.autocommit = True  # CREATE/DROP DATABASE cannot run inside a transaction
        return conn

    def make() -> str:
        name = _unique_db_name()
        conn = connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f'CREATE DATABASE "{name}"')
        finally:
            conn.close()
        created.append(name)
        return f"{POSTGRESQL_ADMIN_URL}/{name}"

    yield make
    if created:
        conn = connect()
        try:
            with conn.cursor() as cur:
                for name in created:
                    # FORCE: a connection pool the test left open must not block the cleanup.
                    cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            conn.close()


@pytest.fixture(scope="session")
def rabbit_url() -> str:
    """oslo.messaging transport URL of the local RabbitMQ (guest/guest unless configured)."""
    import kombu

    try:
        # kombu gives up after one try where an oslo.messaging call would retry forever.
        with kombu.Connection(amqp_url(RABBIT_URL), connect_timeout=5) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:  # refused login, wrong vhost...: reported, not hidden
        service_unavailable(f"RabbitMQ at {RABBIT_URL.split('@')[-1]} is not usable ({exc})")
    return RABBIT_URL


def amqp_url(rabbit_url: str) -> str:
    """The kombu (amqp://) form of an oslo.messaging rabbit:// URL with one host."""
    rest = rabbit_url.split("://", 1)[1]
    return "amqp://" + (rest + "/" if rest.endswith("/") else rest)


@pytest.fixture(scope="session")
def openstack_cloud() -> Any:
    """The running local OpenStack (Keystone, Neutron, OVS agent, Placement, Glance):
    an ``openstack_env.OpenStackCloud``."""
    import openstack_env

    cloud = openstack_env.running_cloud()
    if cloud is None:
        service_unavailable(
            "the local OpenStack is not running: scripts/openstack-services.sh start "
            "(scripts/run-tests.sh -m openstack starts it)"
        )
    return cloud
