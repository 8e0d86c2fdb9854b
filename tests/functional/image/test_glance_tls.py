"""[glance_client] as our Glance calls use it: region_name and endpoint_type choose the endpoint
in the real Keystone catalog; ca_file, cert_file, key_file and insecure reach the TLS handshake
with Glance (a socat TLS proxy in front of the real Glance, with a CA made by the test), on the
API side (the user's token) and on the node side (zun's service credentials).
Run with ``scripts/run-tests.sh -m glance``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import openstack_env
import pytest
from functional.image.glance_support import closed_port, make_conf

from zun.common import exception
from zun.image import glance_client
from zun.image.glance_client import GlanceClient

pytestmark = pytest.mark.glance


def _conf(
    cloud: openstack_env.OpenStackCloud,
    tmp: Path,
    region: str,
    service: bool = False,
    **glance: Any,
) -> Any:
    creds = {}
    if service:
        creds = {
            "auth_type": "password",
            "username": "zun",
            "password": cloud.env["ZUN_OS_SERVICE_PASSWORD"],
            "project_name": "service",
            "user_domain_name": "Default",
            "project_domain_name": "Default",
        }
    conf = make_conf(cloud, tmp, **creds)
    conf.set_override("region_name", region, group="glance_client")
    conf.set_override("endpoint_type", "internalURL", group="glance_client")
    for name, value in glance.items():
        conf.set_override(name, value, group="glance_client")
    return conf


def _user(
    cloud: openstack_env.OpenStackCloud, account: openstack_env.Account, conf: Any
) -> GlanceClient:
    token = cloud.session(account.username, account.password, account.project_name).get_token()
    ctx = SimpleNamespace(auth_token=token, project_id=account.project_id)
    return GlanceClient(glance_client.user_session(conf, ctx), conf)


def test_region_and_endpoint_type_choose_the_endpoint(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    catalog_region: Any,
    tmp_path: Path,
) -> None:
    down = catalog_region(f"http://127.0.0.1:{closed_port()}")
    # RegionOne's public endpoint: found.
    ok = make_conf(openstack_cloud, tmp_path)
    assert _user(openstack_cloud, accounts.a, ok).find(images.docker["id"]).is_docker
    # The test's region with its internal endpoint on a closed port: that endpoint was used.
    client = _user(openstack_cloud, accounts.a, _conf(openstack_cloud, tmp_path, down))
    with pytest.raises(exception.GlanceUnavailable) as err:
        client.find(images.docker["id"])
    assert "cannot be reached" in str(err.value) and err.value.code == 503
    # The same region through the public interface: no such endpoint there.
    conf = _conf(openstack_cloud, tmp_path, down, endpoint_type="publicURL")
    with pytest.raises(exception.GlanceUnavailable) as err:
        _user(openstack_cloud, accounts.a, conf).find(images.docker["id"])
    assert "no image endpoint" in str(err.value)
    # An API version Zun does not speak.
    conf = make_conf(openstack_cloud, tmp_path)
    conf.set_override("api_version", "1", group="glance_client")
    with pytest.raises(exception.GlanceUnavailable) as err:
        _user(openstack_cloud, accounts.a, conf).find(images.docker["id"])
    assert "api_version 1 is not supported" in str(err.value)


def test_ca_file_is_used_and_a_wrong_ca_refused(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    catalog_region: Any,
    tls_glance: Any,
    tls_files: Any,
    tmp_path: Path,
) -> None:
    region = catalog_region(tls_glance.one_way)
    good = _conf(openstack_cloud, tmp_path, region, ca_file=tls_files.ca_crt)
    assert (
        _user(openstack_cloud, accounts.a, good).find(images.docker["name"]).id
        == images.docker["id"]
    )
    for bad in ({"ca_file": tls_files.other_ca_crt}, {}):  # another CA; the system's CAs
        conf = _conf(openstack_cloud, tmp_path, region, **bad)
        with pytest.raises(exception.GlanceUnavailable) as err:
            _user(openstack_cloud, accounts.a, conf).find(images.docker["name"])
        assert err.value.code == 503 and "TLS handshake with Glance failed" in str(err.value)
        assert "CERTIFICATE_VERIFY_FAILED" in str(err.value)
    # insecure skips the verification, whatever ca_file says.
    conf = _conf(openstack_cloud, tmp_path, region, ca_file=tls_files.other_ca_crt, insecure=True)
    assert _user(openstack_cloud, accounts.a, conf).find(images.docker["id"]).is_docker


def test_client_certificate_and_the_node_side(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    saved_busybox: tuple[str, bytes],
    catalog_region: Any,
    tls_glance: Any,
    tls_files: Any,
    tmp_path: Path,
) -> None:
    region = catalog_region(tls_glance.mutual)
    # The proxy wants a client certificate: none is refused...
    conf = _conf(openstack_cloud, tmp_path, region, service=True, ca_file=tls_files.ca_crt)
    with pytest.raises(exception.GlanceUnavailable) as err:
        glance_client.for_service(conf).find(images.docker["id"])
    assert err.value.code == 503
    # ... cert_file + key_file pass, and the node (service credentials) downloads through it.
    conf = _conf(
        openstack_cloud,
        tmp_path,
        region,
        service=True,
        ca_file=tls_files.ca_crt,
        cert_file=tls_files.client_crt,
        key_file=tls_files.client_key,
    )
    client = glance_client.for_service(conf)
    image = client.find(images.docker["id"], for_project=accounts.a.project_id)
    path = client.download(image, str(tmp_path / "images"))
    assert Path(path).read_bytes() == saved_busybox[1]
    # The API side (the user's token) with the same options.
    user = _user(
        openstack_cloud,
        accounts.a,
        _conf(
            openstack_cloud,
            tmp_path,
            region,
            ca_file=tls_files.ca_crt,
            cert_file=tls_files.client_crt,
            key_file=tls_files.client_key,
        ),
    )
    assert images.docker["id"] in {i.id for i in user.search("zun-test-")}
