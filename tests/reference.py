"""The contract files the tests check against, kept in ``tests/contract/`` (see its README).

They are unchanged copies of the original Zun 18.0.0 contract (the README says where each came
from); the tests read only these copies, never anything outside the repository.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

CONTRACT_DIR = Path(__file__).resolve().parent / "contract"


def reference_path(name: str) -> Path:
    path = CONTRACT_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; tests/contract/README.md lists the files")
    return path


@functools.cache
def reference_json(name: str) -> Any:
    return json.loads(reference_path(name).read_text())


def vectors() -> dict[str, Any]:
    return reference_json("vectors.json")
