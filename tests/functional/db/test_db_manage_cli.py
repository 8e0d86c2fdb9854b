"""zun-db-manage as an operator runs it: a config file, a SQLite database, a real process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from zun.db import migration


def _manage(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zun.cmd.db_manage", "--config-file", str(config), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "zun.conf"
    path.write_text(f"[database]\nconnection = sqlite:///{tmp_path / 'zun.sqlite'}\n")
    return path


def _version(config: Path) -> str:
    result = _manage(config, "version")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_version_upgrade_and_stamp(config: Path) -> None:
    assert _version(config) == "None"

    result = _manage(config, "upgrade", migration.BASE_REVISION)
    assert result.returncode == 0, result.stderr
    assert _version(config) == migration.BASE_REVISION

    result = _manage(config, "upgrade")
    assert result.returncode == 0, result.stderr
    assert _version(config) == migration.head() != migration.BASE_REVISION

    result = _manage(config, "stamp", migration.BASE_REVISION)
    assert result.returncode == 0, result.stderr
    assert _version(config) == migration.BASE_REVISION

    # Moving forward from a stamp runs only the later revisions, which already ran here.
    result = _manage(config, "upgrade")
    assert result.returncode != 0 and "ix_container_host" in result.stderr


def test_upgrade_creates_every_table(config: Path, tmp_path: Path) -> None:
    assert _manage(config, "upgrade").returncode == 0
    url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    assert len(migration.table_names(url=url)) == 21  # Zun's 19, alembic_version, zun_lease


def test_unknown_revision_fails(config: Path) -> None:
    result = _manage(config, "upgrade", "deadbeef0000")
    assert result.returncode != 0
    assert "deadbeef0000" in result.stderr


def test_missing_connection_is_reported(tmp_path: Path) -> None:
    empty = tmp_path / "empty.conf"
    empty.write_text("[database]\n")
    result = _manage(empty, "version")
    assert result.returncode == 1
    assert "[database]/connection" in result.stderr
