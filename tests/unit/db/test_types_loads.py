"""The fast JSON reader of row values gives exactly what json.loads gives, errors included."""

from __future__ import annotations

import json

import pytest

from zun.db.types import loads

VALUES = [
    "{}",
    "[]",
    '{"A": "1", "B": "two"}',
    '["sleep","3600"]',
    " {}",
    "{}\n",
    "{} x",
    '"abc"',
    "1",
    "1.5",
    "1e400",
    "null",
    "true",
    '{"a":[1,{"b":null}]}',
    "[1,]",
    "NaN",
    "-Infinity",
    '"\\ud800"',
    '"caf\\u00e9"',
    '{"a":1,"a":2}',
    "",
    "sleep 3600",
]


@pytest.mark.parametrize("text", VALUES)
def test_same_as_json_loads(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError as exc:
        with pytest.raises(ValueError):
            loads(text)
        assert type(exc) is json.JSONDecodeError
        return
    got = loads(text)
    assert repr(got) == repr(expected)
    assert type(got) is type(expected)
