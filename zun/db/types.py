"""Column types shared by the models and the migrations.

Zun keeps structured values (labels, environment, addresses, ...) as JSON inside TEXT columns,
so an existing Zun database can be read as is. :class:`JSONText` does the encoding; the
``JSONDict``/``JSONList`` helpers add in-place change tracking so ``c.labels["a"] = "b"`` is
noticed by the session (top-level changes only; replace nested values to persist them).

The stored text is canonical: :func:`canonical` of the value, which is exactly what the API
writes for that value (``json.dumps(value, separators=(",", ":"))`` of the decoded value), so
a list can put the stored text into its answer without decoding it
(zun/api/views/containers.py). Every write goes through :class:`JSONText`; rows written
before (or by Zun, with ``", "`` separators) are made canonical by migration 8d2e6f1a4c57.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.mutable import MutableDict, MutableList

# The C scanner behind json.loads, called directly: json.loads spends most of its time on a
# short value in two Python layers and two whitespace regexes. Used only when it consumed the
# whole text, so the result is exactly json.loads' (anything else goes through json.loads).
_SCAN_ONCE = json.JSONDecoder().scan_once


def loads(text: str) -> Any:
    """``json.loads(text)``, faster for the short values rows hold."""
    try:
        value, end = _SCAN_ONCE(text, 0)
    except StopIteration:
        return json.loads(text)
    if end != len(text):
        return json.loads(text)
    return value


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, separators=(",", ":"))`` without its two Python layers per call."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # not CPython: the same encoder, through its Python layers
        return json.JSONEncoder(separators=(",", ":")).encode
    # markers=None only skips the circular-reference check; stored values have no cycles.
    chunks = make(None, None, encode_basestring_ascii, None, ":", ",", False, False, True)
    return lambda value: "".join(chunks(value, 0))


#: ``json.dumps(value, separators=(",", ":"))``: the encoder of the API's lists.
encode_compact = _compact_encoder()


def canonical(value: Any) -> str:
    """The stored text of ``value``: what the API writes for the value read back from it.

    The value is encoded, decoded and encoded again: only that makes a dict whose keys
    collide once they are strings (``{1: "a", "1": "b"}`` reads back as ``{"1": "b"}``) or
    a str/int/float subclass store exactly what reading it back and encoding gives. It costs
    a few microseconds per value written.
    """
    return encode_compact(loads(encode_compact(value)))


def canonical_text(text: str | None) -> str | None:
    """A stored text as :func:`canonical` would have written its value (the migration's
    rewrite): ``None`` stays NULL, text that is not JSON becomes that string's JSON."""
    if text is None:
        return None
    return encode_compact(decode(text))


#: The canonical texts of the values that are empty (falsy) once decoded, and NULL: the view
#: shows a default for them (``value or default``). JSON has no other falsy values.
EMPTY_TEXTS: frozenset[str | None] = frozenset(
    {None, "null", "false", "0", "0.0", "-0.0", '""', "[]", "{}"}
)


def decode(text: str | None) -> Any:
    """A stored JSON column's value: ``None`` for NULL, the raw text when it is not JSON."""
    if text is None:
        return None
    try:
        return loads(text)
    except ValueError:
        return text


# MySQL and MariaDB are distinct dialect names in SQLAlchemy 2; a variant must name both.
_MYSQL_DIALECTS = ("mysql", "mariadb")


def medium_text() -> sa.types.TypeEngine[str]:
    """TEXT everywhere, MEDIUMTEXT on MySQL/MariaDB (TEXT there is limited to 64 KiB)."""
    return sa.Text().with_variant(mysql.MEDIUMTEXT(), *_MYSQL_DIALECTS)


class JSONText(sa.types.TypeDecorator[Any]):
    """A JSON value stored in a TEXT (or MEDIUMTEXT) column.

    ``None`` is stored as SQL NULL so that "unset" and "empty" stay distinct; any other value
    as its :func:`canonical` text. Values that are
    not valid JSON (rows written by very old Zun releases, e.g. a plain command string) are
    returned as the raw string rather than failing the whole query.
    """

    impl = sa.Text
    cache_ok = True

    def __init__(self, medium: bool = False) -> None:
        super().__init__()
        self.medium = medium

    def load_dialect_impl(self, dialect: Dialect) -> sa.types.TypeEngine[Any]:
        # Plain type objects, not dialect.type_descriptor(): on psycopg that turns Text into
        # the driver's string type, which renders as VARCHAR in DDL.
        if self.medium and dialect.name in _MYSQL_DIALECTS:
            return mysql.MEDIUMTEXT()
        return self.impl_instance

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        return canonical(value)

    def process_result_value(self, value: str | None, dialect: Dialect) -> Any:
        return decode(value)

    def coerce_compared_value(self, op: Any, value: Any) -> sa.types.TypeEngine[Any]:
        # Comparisons such as `labels LIKE '%x%'` bind plain strings, not JSON.
        return self.impl_instance


def JSONDict(medium: bool = False) -> sa.types.TypeEngine[Any]:
    """A dict in a JSON TEXT column, with top-level mutation tracking."""
    return MutableDict.as_mutable(JSONText(medium))


def JSONList(medium: bool = False) -> sa.types.TypeEngine[Any]:
    """A list in a JSON TEXT column, with top-level mutation tracking."""
    return MutableList.as_mutable(JSONText(medium))
