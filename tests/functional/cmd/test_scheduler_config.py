"""zun-api and zun-all refuse an unknown [scheduler] name at start-up, with a clear message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            "enabled_filters = ComputeFilter,CPUFilter,NoSuchFilter\n",
            "zun-api: configuration error: [scheduler]/enabled_filters: unknown or unavailable "
            "filter(s) 'NoSuchFilter'; available: ",
        ),
        ("driver = random_scheduler\n", "zun-api: configuration error: [scheduler]/driver: "),
        ("weigher = random\n", "zun-api: configuration error: [scheduler]/weigher: "),
        (
            "available_filters = my.filters.Special\n",
            "zun-api: configuration error: [scheduler]/available_filters: cannot load "
            "'my.filters.Special'",
        ),
    ],
)
def test_zun_api_exits_at_start_up(tmp_path: Path, section: str, message: str) -> None:
    config = tmp_path / "zun.conf"
    config.write_text(
        "[DEFAULT]\ntransport_url = fake://\n"
        f"[database]\nconnection = sqlite:///{tmp_path / 'zun.sqlite'}\n"
        f"[scheduler]\n{section}"
    )
    result = subprocess.run(
        [str(BIN / "zun-api"), "--config-file", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert message in result.stderr


def test_zun_all_exits_at_start_up(tmp_path: Path) -> None:
    config = tmp_path / "zun.conf"
    config.write_text("[scheduler]\nenabled_filters = RamFilter,BogusFilter\n")
    result = subprocess.run(
        [
            str(BIN / "zun-all"),
            "--state-dir",
            str(tmp_path / "state"),
            "--config-file",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "zun-all: configuration error: [scheduler]/enabled_filters" in result.stderr
    assert "'BogusFilter'" in result.stderr
