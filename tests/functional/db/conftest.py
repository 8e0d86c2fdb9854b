"""Lets the tests here import their helper module (_db_schema_dump) under --import-mode=importlib,
which does not put a test's folder on sys.path."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
