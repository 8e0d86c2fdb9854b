"""Fixtures shared by the Glance tests: two Keystone accounts, a `docker save` of the local
busybox under a unique tag, and Glance images made from it (module scope, deleted after); zun's
CONF pointed at the local Keystone (user token, service credentials); Keystone regions of the
test's own whose image endpoint is a closed port or a TLS proxy in front of the real Glance."""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import docker.errors
import openstack_env
import pytest
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

import zun.conf
from zun.conf import CONF
from zun.image import glance_client
from zun.image.glance_client import GlanceClient


@pytest.fixture(scope="module")
def accounts(openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[Any]:
    """Two ordinary users, each in a project of its own."""
    made = [openstack_env.make_account(openstack_cloud, "zun-test-glance") for _ in range(2)]
    yield SimpleNamespace(a=made[0], b=made[1])
    for account in made:
        openstack_env.delete_account(openstack_cloud, account)


def make_conf(cloud: openstack_env.OpenStackCloud, tmp: Path, **service: str) -> cfg.ConfigOpts:
    text = f"[keystone_auth]\nauth_url = {cloud.auth_url}\n"
    if service:
        text += "".join(f"{k} = {v}\n" for k, v in service.items())
    text += "[glance_client]\nregion_name = RegionOne\n"
    path = tmp / "zun.conf"
    path.write_text(text)
    conf = cfg.ConfigOpts()
    zun.conf.register_opts(conf)
    conf(["--config-file", str(path)], project="zun", default_config_files=[])
    return conf


def user_client(
    cloud: openstack_env.OpenStackCloud, account: openstack_env.Account, tmp: Path
) -> GlanceClient:
    """A client as zun-api builds it from a request: the user's token and project only."""
    token = cloud.session(account.username, account.password, account.project_name).get_token()
    ctx = SimpleNamespace(auth_token=token, project_id=account.project_id)
    conf = make_conf(cloud, tmp)
    return GlanceClient(glance_client.user_session(conf, ctx), conf)


@pytest.fixture(scope="module")
def saved_busybox(docker_client: Any, busybox_image: str) -> Iterator[tuple[str, bytes]]:
    """(unique repository:tag, `docker save` archive of it); the tag is removed locally."""
    ref = f"zun-test-glance-{uuid.uuid4().hex[:8]}:v1"
    docker_client.api.tag(busybox_image, *ref.split(":"))
    try:
        archive = b"".join(docker_client.api.get_image(ref))
    finally:
        docker_client.api.remove_image(ref)
    yield ref, archive
    try:
        docker_client.api.remove_image(ref)
    except docker.errors.NotFound:
        pass


def upload(
    cloud: openstack_env.OpenStackCloud,
    account: openstack_env.Account,
    data: bytes,
    container_format: str = "docker",
    name: str = "",
) -> dict[str, Any]:
    sess = cloud.session(account.username, account.password, account.project_name)
    url = sess.get_endpoint(service_type="image", interface="public").rstrip("/")
    image = sess.post(
        f"{url}/v2/images",
        json={
            "name": name or f"zun-test-{uuid.uuid4().hex[:8]}",
            "container_format": container_format,
            "disk_format": "raw",
            "visibility": "private",
        },
    ).json()
    sess.put(
        f"{url}/v2/images/{image['id']}/file",
        data=data,
        headers={"Content-Type": "application/octet-stream"},
    )
    return image


@pytest.fixture(scope="module")
def images(
    openstack_cloud: openstack_env.OpenStackCloud, accounts: Any, saved_busybox: tuple[str, bytes]
) -> Iterator[Any]:
    _, archive = saved_busybox
    made = SimpleNamespace(
        docker=upload(openstack_cloud, accounts.a, archive),
        bare=upload(openstack_cloud, accounts.a, b"not a container image", "bare"),
        not_an_archive=upload(openstack_cloud, accounts.a, b"plain bytes, no tar"),
        other_project=upload(openstack_cloud, accounts.b, archive),
    )
    yield made
    sess = openstack_cloud.session()
    url = sess.get_endpoint(service_type="image", interface="public").rstrip("/")
    for image in vars(made).values():
        sess.delete(f"{url}/v2/images/{image['id']}", raise_exc=False)


# --- zun's CONF (the API app and the in-process agent read the global one) --------------------


@pytest.fixture
def glance_conf(openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[None]:
    """[keystone_auth]/auth_url: where zun-api rescopes the user's token to find Glance."""
    CONF.register_opts(ks_loading.get_auth_plugin_conf_options("password"), group="keystone_auth")
    CONF.set_override("auth_url", openstack_cloud.auth_url, group="keystone_auth")
    yield
    CONF.clear_override("auth_url", group="keystone_auth")


@pytest.fixture
def service_credentials(
    glance_conf: None, openstack_cloud: openstack_env.OpenStackCloud
) -> Iterator[None]:
    """[keystone_auth] as zun-compute has it: the `zun` service user."""
    values = {
        "username": "zun",
        "password": openstack_cloud.env["ZUN_OS_SERVICE_PASSWORD"],
        "project_name": "service",
        "user_domain_name": "Default",
        "project_domain_name": "Default",
    }
    for name, value in values.items():
        CONF.set_override(name, value, group="keystone_auth")
    yield
    for name in values:
        CONF.clear_override(name, group="keystone_auth")


@pytest.fixture
def glance_options() -> Iterator[Any]:
    """Set [glance_client] / [glance] options for one test: ``glance_options(name=value...)``."""
    groups = {"images_directory": "glance"}
    set_: list[tuple[str, str]] = []

    def override(**values: Any) -> None:
        for name, value in values.items():
            group = groups.get(name, "glance_client")
            CONF.set_override(name, value, group=group)
            set_.append((name, group))

    yield override
    for name, group in set_:
        CONF.clear_override(name, group=group)


# --- image endpoints of the test's own in the real Keystone catalog ---------------------------


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def catalog_region(openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[Any]:
    """``catalog_region(url)``: a new Keystone region whose one image endpoint (interface
    ``internal``, so that nobody asking for the public one meets it) is ``url``; returns the
    region's name. Regions and endpoints are deleted after the module."""
    sess = openstack_cloud.session()
    ks = openstack_cloud.auth_url.rstrip("/")
    service = sess.get(f"{ks}/services", params={"type": "image"}).json()["services"][0]
    made: list[tuple[str, str]] = []

    def make(url: str) -> str:
        region = f"zun-test-glance-{uuid.uuid4().hex[:8]}"
        sess.post(f"{ks}/regions", json={"region": {"id": region}})
        endpoint = sess.post(
            f"{ks}/endpoints",
            json={
                "endpoint": {
                    "service_id": service["id"],
                    "interface": "internal",
                    "region_id": region,
                    "url": url,
                }
            },
        ).json()["endpoint"]
        made.append((region, endpoint["id"]))
        return region

    yield make
    for region, endpoint_id in made:
        sess.delete(f"{ks}/endpoints/{endpoint_id}", raise_exc=False)
        sess.delete(f"{ks}/regions/{region}", raise_exc=False)


# --- TLS in front of the real Glance ----------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _signed(ca: str, name: str, cn: str, usage: str, cwd: Path) -> None:
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.csr",
        "-subj",
        f"/CN={cn}",
        cwd=cwd,
    )
    (cwd / f"{name}.ext").write_text(
        "basicConstraints = CA:FALSE\nkeyUsage = digitalSignature, keyEncipherment\n"
        f"extendedKeyUsage = {usage}\nsubjectAltName = IP:127.0.0.1\n"
        "subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n"
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        f"{ca}.crt",
        "-CAkey",
        f"{ca}.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        f"{name}.crt",
        "-extfile",
        f"{name}.ext",
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A CA, a server certificate for 127.0.0.1 and a client certificate it signed, and a
    second CA that signed nothing here (openssl CLI)."""
    d = tmp_path_factory.mktemp("glance-tls")
    for ca in ("ca", "other-ca"):
        _openssl(
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{ca}.key",
            "-out",
            f"{ca}.crt",
            "-days",
            "2",
            "-subj",
            f"/CN=zun-test {ca}",
            cwd=d,
        )
    _signed("ca", "server", "127.0.0.1", "serverAuth", d)
    _signed("ca", "client", "zun-test-client", "clientAuth", d)
    return SimpleNamespace(
        **{
            f"{n.replace('-', '_')}_{ext}": str(d / f"{n}.{ext}")
            for n in ("ca", "other-ca", "server", "client")
            for ext in ("crt", "key")
        }
    )


def _wait_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"socat exited {proc.returncode}: {proc.stderr.read()!r}"
                if proc.stderr
                else f"socat exited {proc.returncode}"
            )
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"socat did not listen on {port}")


@pytest.fixture(scope="module")
def tls_glance(openstack_cloud: openstack_env.OpenStackCloud, tls_files: Any) -> Iterator[Any]:
    """Two TLS proxies (socat) in front of the real Glance, with the server certificate of
    ``tls_files``: ``one_way`` (any client) and ``mutual`` (a client certificate signed by the
    CA is required). Their https URLs."""
    sess = openstack_cloud.session()
    glance = sess.get_endpoint(service_type="image", interface="public").rstrip("/")
    target = glance.split("://", 1)[1].split("/", 1)[0]
    procs, urls = [], {}
    # Ports of this test's own range (20410-20411).
    proxies = (
        ("one_way", 20410, "verify=0"),
        ("mutual", 20411, f"verify=1,cafile={tls_files.ca_crt}"),
    )
    for name, port, verify in proxies:
        listen = (
            f"OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,"
            f"cert={tls_files.server_crt},key={tls_files.server_key},{verify}"
        )
        proc = subprocess.Popen(
            ["socat", listen, f"TCP:{target}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        procs.append(proc)
        _wait_port(port, proc)
        urls[name] = f"https://127.0.0.1:{port}"
    try:
        yield SimpleNamespace(**urls)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
