"""zun-status upgrade check against real databases."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ZUN_STATUS = Path(sys.executable).parent / "zun-status"
ZUN_DB_MANAGE = Path(sys.executable).parent / "zun-db-manage"


def _conf(tmp_path: Path, key: str = "") -> Path:
    conf = tmp_path / "zun.conf"
    conf.write_text(
        f"[DEFAULT]\nauth_encryption_key = {key}\n"
        f"[database]\nconnection = sqlite:///{tmp_path / 'zun.sqlite'}\n"
    )
    return conf


def _status(conf: Path, before: bool = False) -> subprocess.CompletedProcess[str]:
    option = ["--config-file", str(conf)]
    args = [*option, "upgrade", "check"] if before else ["upgrade", "check", *option]
    return subprocess.run([str(ZUN_STATUS), *args], capture_output=True, text=True, timeout=120)


def test_unmigrated_database_fails(tmp_path: Path) -> None:
    result = _status(_conf(tmp_path, "k" * 32))
    assert result.returncode == 2
    assert "zun-db-manage upgrade" in result.stdout


def test_migrated_database_succeeds(tmp_path: Path) -> None:
    conf = _conf(tmp_path, "k" * 32)
    subprocess.run(
        [str(ZUN_DB_MANAGE), "--config-file", str(conf), "upgrade"], check=True, timeout=120
    )
    result = _status(conf)
    assert result.returncode == 0, result.stdout
    assert "Database schema: Success" in result.stdout


def test_options_before_the_subcommand_work_too(tmp_path: Path) -> None:
    """``zun-status --config-file F upgrade check`` (oslo.upgradecheck's order) reads F."""
    conf = _conf(tmp_path, "k" * 32)
    subprocess.run(
        [str(ZUN_DB_MANAGE), "--config-file", str(conf), "upgrade"], check=True, timeout=120
    )
    result = _status(conf, before=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Database schema: Success" in result.stdout


def test_missing_encryption_key_warns(tmp_path: Path) -> None:
    conf = _conf(tmp_path)
    subprocess.run(
        [str(ZUN_DB_MANAGE), "--config-file", str(conf), "upgrade"], check=True, timeout=120
    )
    result = _status(conf)
    assert result.returncode == 1
    assert "Registry password key: Warning" in result.stdout


@pytest.mark.parametrize("args", [[], ["upgrade"], ["check", "upgrade"]])
def test_usage_error(args: list[str]) -> None:
    result = subprocess.run([str(ZUN_STATUS), *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "usage" in result.stderr
