"""The repository needs nothing beside it: tests, scripts and CI read only its own files.

The contract copies in tests/contract/ are checked against the hashes their README records, so
a copy edited to make a test pass is noticed.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from reference import CONTRACT_DIR

REPO_ROOT = Path(__file__).resolve().parents[3]
#: Ways a file could reach the steering repository's shared folder from a checkout. Spelt in
#: pieces so that a plain grep for them over tests/ finds nothing, this file included.
_SHARED = "shared"
OUTSIDE = re.compile(
    "|".join(
        (
            rf"\.\./{_SHARED}",
            f"ZUN_{_SHARED.upper()}_DIR",
            f"/work/{_SHARED}",
            f"{_SHARED}/reference",
        )
    )
)
CHECKED_TREES = ("tests", "scripts", ".ci")


def _files(tree: str) -> list[Path]:
    return [
        p
        for p in sorted((REPO_ROOT / tree).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.parent != CONTRACT_DIR
    ]


@pytest.mark.parametrize("tree", CHECKED_TREES)
def test_no_path_outside_the_repository(tree: str) -> None:
    hits = [
        f"{p.relative_to(REPO_ROOT)}:{n}: {line.strip()}"
        for p in _files(tree)
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not hits, "\n".join(hits)


def _recorded_hashes() -> dict[str, str]:
    readme = (CONTRACT_DIR / "README.md").read_text()
    return dict(re.findall(r"^\| `([\w.-]+)` \|.*\| `([0-9a-f]{64})` \|$", readme, re.M))


def test_contract_copies_match_their_recorded_hashes() -> None:
    recorded = _recorded_hashes()
    present = {p.name for p in CONTRACT_DIR.iterdir() if p.name != "README.md"}
    assert set(recorded) == present
    for name, digest in recorded.items():
        assert hashlib.sha256((CONTRACT_DIR / name).read_bytes()).hexdigest() == digest, name
