"""A service fixture that cannot connect skips on a developer machine and fails under CI=true.

Runs pytest on a small test file that uses tests/conftest.py's fixtures with every service
pointed at a closed port (port 1 on loopback), once without and once with ``CI=true``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parents[2]
CLOSED = "127.0.0.1:1"

USES_EVERY_SERVICE = """
def test_mariadb(mariadb_url):
    mariadb_url()

def test_postgresql(postgresql_url):
    postgresql_url()

def test_rabbit(rabbit_url):
    pass

def test_docker(docker_client):
    pass
"""


def _run(tmp_path: Path, ci: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text((TESTS_DIR / "conftest.py").read_text())
    (tmp_path / "test_services.py").write_text(USES_EVERY_SERVICE)
    env = {
        **os.environ,
        "CI": ci,
        "DOCKER_HOST": f"tcp://{CLOSED}",
        "ZUN_TEST_MARIADB_URL": f"mysql+pymysql://root@{CLOSED}",
        "ZUN_TEST_POSTGRESQL_URL": f"postgresql+psycopg2://postgres@{CLOSED}",
        "ZUN_TEST_RABBIT_URL": f"rabbit://guest:guest@{CLOSED}/",
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rfEs",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            os.devnull,
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )


# Under CI a function-scoped fixture's failure counts as "failed", a session one's as "error".
@pytest.mark.parametrize(
    ("ci", "summary"), [("", r"^4 skipped"), ("true", r"^2 failed, .*2 errors")]
)
def test_unreachable_services(tmp_path: Path, ci: str, summary: str) -> None:
    result = _run(tmp_path, ci)
    assert re.search(summary, result.stdout.splitlines()[-1]), result.stdout[-3000:]
    for name in ("MariaDB", "PostgreSQL", "RabbitMQ", "Docker"):
        assert name in result.stdout, result.stdout[-3000:]
