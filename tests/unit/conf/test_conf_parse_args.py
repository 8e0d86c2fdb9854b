"""zun.conf.parse_args on the global CONF, as every command calls it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import oslo_messaging
import pytest
from oslo_config import cfg

import zun.conf
from zun.conf import CONF


@pytest.fixture(autouse=True)
def _fresh_conf() -> Iterator[None]:
    CONF.reset()
    yield
    CONF.reset()
    CONF.clear()


def test_conf_is_oslo_global() -> None:
    assert CONF is cfg.CONF


def test_no_config_file() -> None:
    conf = zun.conf.parse_args(["zun-api"], default_config_files=[])
    assert conf is CONF
    assert CONF.config_file == []
    assert CONF.api.port == 9517
    assert CONF.api.auth_strategy == "keystone"
    assert CONF.websocket_proxy.base_url == f"ws://{CONF.my_ip}:6784/"
    assert CONF.database.connection is None


def test_command_line_and_file(tmp_path: Path) -> None:
    conf_file = tmp_path / "zun.conf"
    conf_file.write_text(
        "[DEFAULT]\nstate_path = /tmp/zun-state\n"
        "[api]\nport = 19517\nauth_strategy = noauth\n"
        "[network]\ndriver = docker\n"
        "[docker]\ncap_drop =\npids_limit = 0\n"
    )
    zun.conf.parse_args(["/usr/bin/zun-all", "--config-file", str(conf_file), "--debug"])
    assert CONF.debug is True
    assert CONF.api.port == 19517
    assert CONF.api.auth_strategy == "noauth"
    assert CONF.network.driver == "docker"
    assert CONF.docker.cap_drop == []
    assert CONF.docker.pids_limit == 0
    assert CONF.volume.volume_dir == "/tmp/zun-state/mnt"
    assert CONF.glance.images_directory == "/tmp/zun-state/images"


@pytest.mark.parametrize(
    "section, text, group, name",
    [
        ("api", "auth_strategy = password", "api", "auth_strategy"),
        ("network", "driver = flannel", "network", "driver"),
        ("docker", "pids_limit = -5", "docker", "pids_limit"),
        ("docker", "cap_drop = NET_RAW,SYS ADMIN", "docker", "cap_drop"),
        ("websocket_proxy", "token_ttl = 0", "websocket_proxy", "token_ttl"),
        (
            "compute",
            "unique_container_name_scope = tenant",
            "compute",
            "unique_container_name_scope",
        ),
    ],
)
def test_invalid_values_are_refused(
    tmp_path: Path, section: str, text: str, group: str, name: str
) -> None:
    conf_file = tmp_path / "zun.conf"
    conf_file.write_text(f"[{section}]\n{text}\n")
    zun.conf.parse_args(["zun-api", "--config-file", str(conf_file)], default_config_files=[])
    with pytest.raises(cfg.ConfigFileValueError):
        getattr(CONF[group], name)


def test_rpc_transport_from_transport_url(tmp_path: Path) -> None:
    conf_file = tmp_path / "zun.conf"
    conf_file.write_text("[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n")
    zun.conf.parse_args(["zun-api", "--config-file", str(conf_file)], default_config_files=[])
    # oslo.messaging registers transport_url itself, after the files were parsed.
    transport = oslo_messaging.get_rpc_transport(CONF)
    try:
        assert CONF.transport_url == "rabbit://guest:guest@127.0.0.1:5672/"
        assert transport._driver._url.hosts[0].hostname == "127.0.0.1"
        # Zun's exchange, so that queues meet those of an existing deployment.
        assert CONF.control_exchange == "zun"
    finally:
        transport.cleanup()


def test_registering_again_is_harmless() -> None:
    zun.conf.register_opts(CONF)
    zun.conf.parse_args(["zun-compute"], default_config_files=[])
    assert CONF.compute.topic == "zun-compute"
