"""oslo-config-generator runs on the zun.conf namespace, and the committed sample is current."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from zun.conf import opts as zun_opts

REPO = Path(__file__).resolve().parents[3]
# The console scripts next to the interpreter running the tests (the project venv).
GENERATOR = Path(sys.executable).parent / "oslo-config-generator"
SAMPLE = REPO / "etc" / "zun" / "zun.conf.sample"


def _run(*args: str) -> str:
    result = subprocess.run(
        [str(GENERATOR), *args], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _zun_blocks(sample: str) -> dict[str, str]:
    """Text under each "# From zun.conf" heading, keyed by the section it is in."""
    blocks: dict[str, str] = {}
    for section in re.split(r"^(?=\[)", sample, flags=re.M):
        header = section.split("\n", 1)[0]
        for part in re.split(r"^#\n# From ", section, flags=re.M)[1:]:
            if part.startswith("zun.conf\n"):
                blocks[header] = part.strip()
    return blocks


def test_generator_lists_every_group_of_ours() -> None:
    output = _run("--namespace", "zun.conf")
    groups = set(re.findall(r"^\[(\w+)\]$", output, flags=re.M))
    expected = {name for name, _ in zun_opts.list_opts()}
    assert len(expected) == 22  # Zun's 21 groups, with [database] listed on its own
    assert groups == expected
    assert "#cap_drop = ALL" in output
    assert "#cap_add = CHOWN,DAC_OVERRIDE,FOWNER,KILL,NET_BIND_SERVICE,SETGID,SETUID" in output
    assert "#my_ip = <host_ipv4>" in output


def test_committed_sample_matches_the_options(tmp_path: Path) -> None:
    out = tmp_path / "zun.conf.sample"
    _run("--config-file", "etc/zun/zun-config-generator.conf", "--output-file", str(out))
    fresh = out.read_text()
    for section in ("[keystone_authtoken]", "[database]", "[oslo_messaging_rabbit]", "[cors]"):
        assert section in fresh
    # Library text may move with their releases; our own blocks must not drift.
    committed = _zun_blocks(SAMPLE.read_text())
    assert committed == _zun_blocks(fresh), (
        "etc/zun/zun.conf.sample is stale: run "
        "oslo-config-generator --config-file etc/zun/zun-config-generator.conf"
    )
    assert len(committed) == 22
