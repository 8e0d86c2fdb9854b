"""The embedded state directory's files: modes, the key, and which key wins."""

from __future__ import annotations

import stat
from pathlib import Path

from oslo_config import cfg

from zun.common import crypt
from zun.service import state_dir


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_secure_narrows_an_open_directory_and_database(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    (state / "zun.sqlite").write_bytes(b"")
    (state / "zun.sqlite").chmod(0o644)
    (state / "zun.sqlite-journal").write_bytes(b"")
    (state / "zun.sqlite-journal").chmod(0o644)
    state_dir.secure(state)
    assert _mode(state) == 0o700
    assert _mode(state / "zun.sqlite") == 0o600
    assert _mode(state / "zun.sqlite-journal") == 0o600


def test_secure_creates_the_database_file_private(tmp_path: Path) -> None:
    state = tmp_path / "new" / "state"
    state_dir.secure(state)
    assert _mode(state) == 0o700 and _mode(state / "zun.sqlite") == 0o600


def test_key_is_made_once_random_and_private(tmp_path: Path) -> None:
    first = state_dir.load_or_create_key(tmp_path)
    assert len(first) == 32 and first.isascii() and first != crypt.DEFAULT_KEY
    assert _mode(tmp_path / "auth_encryption_key") == 0o600
    assert state_dir.load_or_create_key(tmp_path) == first
    # A usable Fernet key: it round-trips a secret.
    assert crypt.decrypt(crypt.encrypt("pw", first), first) == "pw"
    assert state_dir.new_key() != first


def _conf() -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt("auth_encryption_key", default=crypt.DEFAULT_KEY))
    return conf


def test_the_state_key_replaces_only_the_default(tmp_path: Path) -> None:
    conf = _conf()
    conf([], default_config_files=[])
    assert state_dir.use_state_key(conf, tmp_path, create=False) is None
    assert conf.auth_encryption_key == crypt.DEFAULT_KEY
    source = state_dir.use_state_key(conf, tmp_path, create=True)
    assert source == str(tmp_path / "auth_encryption_key")
    assert conf.auth_encryption_key == (tmp_path / "auth_encryption_key").read_text().strip()


def test_a_configured_key_wins(tmp_path: Path) -> None:
    conf_file = tmp_path / "zun.conf"
    conf_file.write_text("[DEFAULT]\nauth_encryption_key = " + "k" * 32 + "\n")
    conf = _conf()
    conf(["--config-file", str(conf_file)], default_config_files=[])
    assert state_dir.use_state_key(conf, tmp_path, create=True) == "configuration"
    assert conf.auth_encryption_key == "k" * 32
    assert not (tmp_path / "auth_encryption_key").exists()
