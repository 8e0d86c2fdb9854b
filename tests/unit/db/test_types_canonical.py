"""A JSON column's stored text is canonical: exactly the bytes the API writes for its value.

The list view splices stored texts into its answers undecoded (zun/api/views/containers.py),
which is right only if every write stores ``canonical(value)``, the migration leaves rows
written before in that form, and the texts of empty values are known (``value or default``).
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from zun.db import types

MIGRATION = (
    Path(types.__file__).parent / "migrations" / "versions" / "8d2e6f1a4c57_canonical_json_text.py"
)

# As Zun (", " separators), old releases (plain strings) or hand edits left them.
OLD_TEXTS = [
    "",
    "{}",
    "[]",
    "null",
    "0",
    "-0",
    "0.0",
    "-0.0",
    "false",
    "true",
    '""',
    "1E2",
    "1e400",
    '{"a": "1", "b": [1, 2]}',
    '{"é":"ü", "x":"\\u00E9\\/"}',
    '{"a":1,"a":2}',
    "sleep 100",
    ' ["padded"] ',
    '{"nested": {"deep": [{"k": null}]}}',
    "[NaN, -Infinity]",
    '{"emoji": "\U0001f600", "pair": "\\ud83d\\ude00", "lone": "\\ud800"}',
    '{"ctl": "\\u0001\\n\\t\\""}',
    "[[[]]]",
    "{not json",
    '"\\u2028</script>"',
]
VALUES: list[Any] = [
    {},
    [],
    "",
    0,
    False,
    0.0,
    -0.0,
    True,
    1,
    "x",
    {"a": "b"},
    ["sh", "-c", "echo ünï 😀"],
    {"net": [{"addr": "10.0.0.2", "version": 4, "preserve_on_delete": False}]},
    {"nested": {"deep": [{"k": None, "f": 1.5, "big": 10**30, "tiny": 1e-300}]}},
    {1: "a", "1": "b"},
    {True: 1, None: 2, 1.5: 3},
    ("tuple", 1),
    [float("inf")],
]


def _same(a: Any, b: Any) -> bool:
    """Equal values, NaN equal to itself (compared through repr)."""
    return repr(a) == repr(b)


def _falsy_json_values() -> list[Any]:
    # Every value json.loads can give that is falsy.
    return [None, False, 0, 0.0, -0.0, "", [], {}]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_canonical_is_what_the_list_encoder_writes_for_the_value_read_back(value: Any) -> None:
    text = types.canonical(value)
    assert text == types.encode_compact(types.decode(text))
    assert text == json.dumps(types.decode(text), separators=(",", ":"))
    assert text.isascii()
    assert types.JSONText().process_bind_param(value, None) == text  # type: ignore[arg-type]


@pytest.mark.parametrize("text", OLD_TEXTS)
def test_canonical_text_keeps_the_value_and_is_a_fixpoint(text: str) -> None:
    new = types.canonical_text(text)
    assert new is not None
    assert _same(types.decode(new), types.decode(text))
    assert types.canonical_text(new) == new
    assert new == types.encode_compact(types.decode(new))


def test_colliding_keys_store_what_reads_back() -> None:
    assert types.canonical({1: "a", "1": "b"}) == '{"1":"b"}'
    assert json.dumps({1: "a", "1": "b"}, separators=(",", ":")) == '{"1":"a","1":"b"}'


def test_empty_texts_are_exactly_the_falsy_values() -> None:
    empties = {types.canonical(value) for value in _falsy_json_values() if value is not None}
    assert types.EMPTY_TEXTS == empties | {None, "null"}
    for text in OLD_TEXTS:
        new = types.canonical_text(text)
        assert (new in types.EMPTY_TEXTS) == (not types.decode(new)), text
    for value in VALUES:
        assert (types.canonical(value) in types.EMPTY_TEXTS) == (not value), value
    assert types.canonical(float("nan")) not in types.EMPTY_TEXTS
    assert math.isnan(types.decode(types.canonical(float("nan"))))


def _migration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("canonical_json_text", MIGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_migration_writes_what_the_models_write() -> None:
    migration = _migration()
    for text in [None, *OLD_TEXTS]:
        assert migration.canonical_text(text) == types.canonical_text(text), text
    for value in VALUES:
        text = json.dumps(value)  # Zun's separators
        assert migration.canonical_text(text) == types.canonical(value), value
