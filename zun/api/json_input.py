"""JSON text from clients, parsed with bounds: nesting depth, finite numbers, no NUL.

Python's parser accepts ``NaN``/``Infinity`` and turns ``1e400`` into ``inf`` (a ``cpu`` of
NaN slipped through every range check), recurses once per nesting level (a deeply nested body
raised RecursionError, a 500), and keeps NUL characters, which PostgreSQL refuses in text
columns. Every JSON text a request carries goes through :func:`loads`: the body, and the
template string of a capsule.
"""

from __future__ import annotations

import json
import math
from typing import Any

from zun.conf import CONF

DEFAULT_MAX_DEPTH = 32
# Top-level keys whose string may hold NULs: put_archive's ``data`` before 1.25 is a tar as
# text (one character per byte); it goes to the engine, never to the database.
BINARY_KEYS = frozenset({"data"})


_SKIP = object()


class BadJson(ValueError):
    """The text is not acceptable JSON; the message says why, for the client.

    ``syntax``: the text does not parse at all (as opposed to breaking a bound).
    """

    def __init__(self, message: str, syntax: bool = False) -> None:
        super().__init__(message)
        self.syntax = syntax


def max_depth() -> int:
    return int(CONF.api.max_json_depth or DEFAULT_MAX_DEPTH)


def _no_constant(name: str) -> Any:
    raise BadJson(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadJson(f"{text[:40]} is out of the range of numbers")
    return value


def check_value(value: Any, limit: int | None = None) -> None:
    """Depth at most ``limit`` (default ``[api]/max_json_depth``), no NUL in any string.

    Iterative, so a value built in Python at any depth is checked without recursion.
    """
    limit = max_depth() if limit is None else limit
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if "\x00" in node:
                raise BadJson("NUL characters are not allowed")
            continue
        if node is _SKIP:
            continue
        if not isinstance(node, dict | list):
            continue
        if depth > limit:
            raise BadJson(f"it is nested more than {limit} levels deep ([api]/max_json_depth)")
        if isinstance(node, dict):
            for key, item in node.items():
                if "\x00" in key:
                    raise BadJson("NUL characters are not allowed")
                if depth == 1 and key in BINARY_KEYS and isinstance(item, str):
                    item = _SKIP
                stack.append((item, depth + 1))
        else:
            stack.extend((item, depth + 1) for item in node)


def loads(text: str | bytes) -> Any:
    """Parse ``text``; :class:`BadJson` (a ValueError) for anything unacceptable."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise BadJson(
            f"it is nested more than {max_depth()} levels deep ([api]/max_json_depth)"
        ) from None
    except BadJson:
        raise
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, too many int digits
        raise BadJson(str(exc), syntax=True) from None
    check_value(value)
    return value
