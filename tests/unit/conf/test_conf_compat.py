"""An existing Zun deployment's zun.conf loads unchanged and every value in it is read back."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import oslo_messaging
import pytest
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

import zun.conf

FIXTURE = Path(__file__).parent / "fixtures" / "zun.conf"
# The console scripts next to the interpreter running the tests (the project venv).
VENV_BIN = Path(sys.executable).parent

# The library namespaces an operator's zun.conf uses besides ours.
LIBRARY_NAMESPACES = (
    "oslo.db",
    "oslo.messaging",
    "oslo.log",
    "oslo.policy",
    "oslo.middleware.cors",
    "keystonemiddleware.auth_token",
    "oslo.concurrency",
)


def _read_ini(path: Path) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> every value given (MultiStr options repeat keys)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        assert current is not None
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def _library_opts() -> list[tuple[str, list[cfg.Opt]]]:
    found = {ep.name: ep for ep in entry_points(group="oslo.config.opts")}
    result = []
    for namespace in LIBRARY_NAMESPACES:
        for group, opts in found[namespace].load()():
            name = group.name if isinstance(group, cfg.OptGroup) else group
            result.append((name or "DEFAULT", opts))
    return result


@pytest.fixture
def loaded() -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    zun.conf.register_opts(conf)
    for group, opts in _library_opts():
        for opt in opts:
            # Some libraries list an option that zun.conf already registered
            # (oslo.log's), which is fine as long as the definitions agree.
            conf.register_opt(opt, group=None if group == "DEFAULT" else group)
    zun.conf.parse_args(["zun-compute", "--config-file", str(FIXTURE)], [], conf=conf)
    # keystoneauth1 registers a plugin's options (username, ...) as it loads them,
    # for our service credentials as for keystonemiddleware's.
    ks_loading.load_auth_from_conf_options(conf, "keystone_auth")
    ks_loading.load_auth_from_conf_options(conf, "keystone_authtoken")
    return conf


def _value(conf: cfg.ConfigOpts, section: str, key: str) -> object:
    holder = conf if section == "DEFAULT" else conf[section]
    return holder[key]


def _opt(conf: cfg.ConfigOpts, section: str, key: str) -> cfg.Opt:
    return conf._get_opt_info(key, None if section == "DEFAULT" else section)["opt"]


def test_every_setting_of_the_file_is_known_and_read_back(loaded: cfg.ConfigOpts) -> None:
    settings = _read_ini(FIXTURE)
    checked = 0
    for section, keys in settings.items():
        for key, raw_values in keys.items():
            opt = _opt(loaded, section, key)  # raises NoSuchOptError on an unknown one
            if isinstance(opt, cfg.MultiStrOpt):
                expected: object = raw_values
            else:
                expected = opt.type(raw_values[-1])
            assert _value(loaded, section, key) == expected, f"[{section}]/{key}"
            checked += 1
    assert checked > 100  # the reader did see the file


def test_values_seen_by_the_services(loaded: cfg.ConfigOpts) -> None:
    assert loaded.debug is True
    assert loaded.host == "compute-01"
    assert loaded.api.workers == 4
    assert loaded.image_driver_list == ["glance", "docker"]
    assert loaded.compute.unique_container_name_scope == "project"
    assert loaded.quota.memory == -1
    assert loaded.websocket_proxy.base_url == "ws://zun.example.com:6784/"
    assert loaded.docker.default_registry_password == "registry-secret"
    assert loaded.cni_daemon.sriov_physnet_resource_mappings == {"physnet1": "intel_sriov"}
    assert len(loaded.pci.passthrough_whitelist) == 2
    assert loaded.database.connection.startswith("mysql+pymysql://zun:")
    assert loaded.keystone_authtoken.www_authenticate_uri == "http://10.0.0.11/identity"
    assert loaded.keystone_auth.username == "zun"
    # Options the file leaves out keep their defaults, with $ references resolved.
    assert loaded.docker.docker_remote_api_host == "10.0.0.21"
    assert loaded.compute.reap_grace_period == 600


def test_transport_and_rabbit_options(loaded: cfg.ConfigOpts) -> None:
    transport = oslo_messaging.get_rpc_transport(loaded)
    try:
        assert loaded.transport_url == "rabbit://stackrabbit:secretrabbit@10.0.0.11:5672/"
        assert loaded.control_exchange == "zun"
        assert loaded.oslo_messaging_rabbit.heartbeat_timeout_threshold == 60
    finally:
        transport.cleanup()


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    args = [str(VENV_BIN / "oslo-config-validator"), "--input-file", str(path)]
    for namespace in ("zun.conf", *LIBRARY_NAMESPACES):
        args += ["--namespace", namespace]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_oslo_config_validator_accepts_the_file() -> None:
    result = _validate(FIXTURE)
    assert result.returncode == 0, result.stderr[-3000:]


def test_oslo_config_validator_rejects_an_unknown_option(tmp_path: Path) -> None:
    # Proves the validation above can fail.
    broken = tmp_path / "zun.conf"
    broken.write_text(FIXTURE.read_text() + "\n[docker]\napi_ulr = unix:///x\n")
    result = _validate(broken)
    assert result.returncode != 0
    assert "api_ulr" in result.stderr
