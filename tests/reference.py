"""The contract files in shared/reference/ (vectors, routes, schema dump, options).

Found in ``$ZUN_SHARED_DIR``, else in the ``shared/`` folder beside the repository (where CI
puts it), else in the developers' workspace.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

_REPO_ROOT = Path(__file__).resolve().parent.parent


def reference_path(name: str) -> Path:
    for base in (os.environ.get("ZUN_SHARED_DIR"), _REPO_ROOT.parent / "shared",
                 "/work/shared"):
        if base and (path := Path(base) / "reference" / name).is_file():
            return path
    raise FileNotFoundError(f"shared/reference/{name} not found; set ZUN_SHARED_DIR")


@functools.cache
def reference_json(name: str) -> Any:
    return json.loads(reference_path(name).read_text())


def vectors() -> dict[str, Any]:
    return reference_json("vectors.json")
