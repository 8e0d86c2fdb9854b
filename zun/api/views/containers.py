"""The container view (rest-api.md §16.1), built straight from row tuples.

:func:`formatter` decides once per request which keys the caller may see (the
``container:get_one:<key>`` field rules) and which column feeds each key, then returns a
function that turns one row (in :data:`zun.db.queries.containers.ROW_KEYS` order) into a dict
by position, with no further policy or name lookups: a list of 1000 rows costs 1000 small
dict builds.

Formats: ``memory`` is the stored string of MiB, ``disk`` an int (0 until the node sets it),
``cpu_policy`` ``shared`` unless set, datetimes ``YYYY-MM-DD HH:MM:SS[.ffffff]``,
``registry_id`` the registry's UUID. JSON columns read back as ``{}``/``[]`` when empty, as
from Zun's database. ``links`` only on single-container answers (or with ``resource_url``).

Lists do not build dicts: :func:`encode_page` writes each item's JSON straight from a row
whose JSON columns are still the stored text, the bytes ``json.dumps(view,
separators=(",", ":"))`` gives for the dict (tests/unit/api/views/test_containers_encode.py
holds it to that). The plain values go through the json module's C encoder as one dict; a JSON
column's stored text is canonical (zun.db.types), i.e. already the bytes its value encodes
to, so it is spliced in as it is (the default when it is empty), never decoded; the dates are
formatted in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

from zun.api import common
from zun.common import consts, policy
from zun.common.context import RequestContext
from zun.compute import node_health
from zun.db import types
from zun.db.queries.containers import (
    JSON_INDEXES,
    ROW_INDEX,
    ROW_KEYS,
    VIEW_COLUMNS,
    decode_json_columns,
)

# The view's keys in the answer's order: the columns the queries read
# (``containers.VIEW_COLUMNS``, one list for both) and ``registry_id``, which is the joined
# registry's uuid (``registry_uuid`` of a row), where Zun put it, after ``healthcheck``.
_REGISTRY_AT = VIEW_COLUMNS.index("healthcheck") + 1
VIEW_KEYS: tuple[str, ...] = (
    *VIEW_COLUMNS[:_REGISTRY_AT],
    "registry_id",
    *VIEW_COLUMNS[_REGISTRY_AT:],
)

FIELD_RULE_PREFIX = "container:get_one"

# Keys whose empty (NULL or falsy) value is shown as a default. The defaults are shared
# between rows: views are serialized at once and never mutated.
_DEFAULTS: dict[str, Any] = {
    "disk": 0,
    "cpu_policy": consts.CPU_POLICY_SHARED,
    "environment": {},
    "labels": {},
    "addresses": {},
    "restart_policy": {},
    "healthcheck": {},
    "command": [],
    "entrypoint": [],
    "ports": [],
    "security_groups": [],
}
_DATES = frozenset({"created_at", "updated_at"})
_SOURCE = {"registry_id": "registry_uuid"}

Row = Sequence[Any]


def _plan(
    visible: Sequence[str],
) -> tuple[list[tuple[str, int]], list[tuple[str, int, Any]], list[tuple[str, int]]]:
    plain, defaulted, dates = [], [], []
    for key in visible:
        index = ROW_INDEX[_SOURCE.get(key, key)]
        if key in _DEFAULTS:
            defaulted.append((key, index, _DEFAULTS[key]))
        elif key in _DATES:
            dates.append((key, index))
        else:
            plain.append((key, index))
    return plain, defaulted, dates


def _builder(visible: Sequence[str], link_base: str | None) -> Callable[[Row], dict[str, Any]]:
    plain, defaulted, dates = _plan(visible)
    uuid_index = ROW_INDEX["uuid"]

    def build(row: Row) -> dict[str, Any]:
        view = {key: row[i] for key, i in plain}
        for key, i, default in defaulted:
            view[key] = row[i] or default
        for key, i in dates:
            value = row[i]
            # Naive UTC from the database: str() is the view's format.
            view[key] = None if value is None else str(value)
        if link_base is not None:
            view["links"] = common.links(link_base, "containers", row[uuid_index])
        return view

    return build


def formatter(
    context: RequestContext,
    link_base: str | None = None,
) -> Callable[[Row], dict[str, Any]]:
    """A row -> view function for this caller; ``link_base`` adds ``links`` to each item.

    The field rules are evaluated here, once. Only a deployment whose policy makes them depend
    on the row (``project_id:%(project_id)s``) pays for per-row checks.
    """
    if policy.field_rules_depend_on_target(FIELD_RULE_PREFIX):
        return _per_row_formatter(context, link_base)
    hidden = policy.hidden_fields(context, FIELD_RULE_PREFIX, VIEW_KEYS)
    return _builder([k for k in VIEW_KEYS if k not in hidden], link_base)


def _per_row_formatter(
    context: RequestContext,
    link_base: str | None,
) -> Callable[[Row], dict[str, Any]]:
    project_index, user_index = ROW_INDEX["project_id"], ROW_INDEX["user_id"]
    builders: dict[frozenset[str], Callable[[Row], dict[str, Any]]] = {}

    def fmt(row: Row) -> dict[str, Any]:
        target = {"project_id": row[project_index], "user_id": row[user_index]}
        hidden = policy.hidden_fields(context, FIELD_RULE_PREFIX, VIEW_KEYS, target)
        build = builders.get(hidden)
        if build is None:
            build = builders[hidden] = _builder(
                [k for k in VIEW_KEYS if k not in hidden], link_base
            )
        return build(row)

    return fmt


def as_row(values: Mapping[str, Any]) -> tuple[Any, ...]:
    """A mapping of row values (e.g. refreshed by the node) back into row order."""
    return tuple(values.get(key) for key in ROW_KEYS)


def render_one(context: RequestContext, row: Row, host_url: str) -> dict[str, Any]:
    """A single container, with links (show, create, update, rename, resize_container)."""
    return formatter(context, host_url)(row)


def _unhealthy_hosts(rows: Sequence[Row]) -> Mapping[str, str]:
    """``{host: reason}`` for the hosts of ``rows`` that are down (one query)."""
    host_index = ROW_INDEX["host"]
    hosts = {row[host_index] for row in rows if row[host_index]}
    return node_health.read_unhealthy(hosts) if hosts else {}


def health_marker(
    rows: Sequence[Row],
    unhealthy: Mapping[str, str] | None = None,
) -> Callable[[Row, dict[str, Any]], dict[str, Any]]:
    """Marks the views of rows whose host is down or engine-less ``Unknown`` (with why).

    One query for the hosts of ``rows``, unless ``unhealthy`` is given already.
    """
    host_index, status_index = ROW_INDEX["host"], ROW_INDEX["status"]
    if unhealthy is None:
        unhealthy = _unhealthy_hosts(rows)
    return node_health.overlay(
        lambda row: row[host_index], lambda row: row[status_index], unhealthy
    )


# --- lists: rows straight to JSON text -------------------------------------------------------

encode_compact = types.encode_compact

# Fragments of the defaulted plain columns (disk, cpu_policy) by stored value, one memo per
# column: they take few distinct values. A full memo starts over (a bound, not an LRU).
MEMO_MAX_ENTRIES = 2048
_memos: dict[int, dict[Any, str]] = {}

# A defaulted column of the item encoder: (row index, the stored values shown as the default,
# ``,"<key>":``, the default's fragment, then for a plain column its memo and the function
# that fills it, for a JSON column two Nones).
_Field = tuple[
    int, frozenset[Any], str, str, "dict[Any, str] | None", "Callable[[Any], str] | None"
]
# The falsy values of plain columns (0 also stands for 0.0, -0.0 and False in a set).
_EMPTY_VALUES: frozenset[Any] = frozenset({None, 0, ""})


def _field(key: str, index: int, default: Any) -> _Field:
    """How column ``index`` (shown as ``key``, ``default`` when empty) becomes its
    ``,"<key>":<value>`` fragment.

    A JSON column's stored text is canonical (``types.canonical``: the bytes the encoder gives
    for its value), so a value that is not empty is the text itself, never decoded.
    """
    prefix = f",{encode_basestring_ascii(key)}:"
    empty = prefix + encode_compact(default)
    if index in JSON_INDEXES:
        return index, types.EMPTY_TEXTS, prefix, empty, None, None
    memo = _memos.setdefault(index, {})

    def fill(stored: Any) -> str:
        fragment = prefix + encode_compact(stored)
        if len(memo) >= MEMO_MAX_ENTRIES:
            memo.clear()  # the same dict: the encoders holding it stay valid
        memo[stored] = fragment
        return fragment

    return index, _EMPTY_VALUES, prefix, empty, memo, fill


def _item_encoder(visible: Sequence[str], link_base: str | None) -> Callable[[Row], str]:
    """A row (JSON columns as stored text) -> the JSON text of its view, keys in the order
    :func:`_builder` puts them."""
    plain, defaulted, dates = _plan(visible)
    uuid_index = ROW_INDEX["uuid"]
    fields = [_field(key, index, default) for key, index, default in defaulted]
    stamps = [(f",{encode_basestring_ascii(key)}:", index) for key, index in dates]

    def encode(row: Row) -> str:
        # Every fragment after the plain values starts with a comma. Inline rather than a call
        # per field: this runs 11 times per row.
        tail = "".join(
            [
                empty
                if (stored := row[i]) in empties
                else (prefix + stored if memo is None else memo.get(stored) or fill(stored))
                for i, empties, prefix, empty, memo, fill in fields
            ]
        )
        for prefix, i in stamps:
            value = row[i]
            # str() of a datetime is digits, "-", ":", " " and ".": nothing to escape.
            tail += prefix + ("null" if value is None else f'"{value}"')
        if link_base is not None:
            tail += ',"links":' + encode_compact(
                common.links(link_base, "containers", row[uuid_index])
            )
        if not plain:
            return "{" + tail[1:] + "}"
        # The plain values as one dict through the C encoder, its closing brace dropped.
        return encode_compact({key: row[i] for key, i in plain})[:-1] + tail + "}"

    return encode


def encode_page(
    context: RequestContext,
    rows: Sequence[Row],
    link_base: str | None = None,
) -> tuple[list[str], dict[str, Any] | None]:
    """The JSON text of each row's view (rows from ``list_for_view``: JSON columns as stored
    text), and the view of the last row as a dict (for the ``next`` link).

    Rows of a host that is down go through the dict view and :func:`health_marker`, as a
    show does; they are rare.
    """
    if not rows:
        return [], None
    unhealthy_hosts = _unhealthy_hosts(rows)
    mark = health_marker(rows, unhealthy_hosts)
    fmt = formatter(context, link_base)
    host_index = ROW_INDEX["host"]
    if policy.field_rules_depend_on_target(FIELD_RULE_PREFIX):
        encode = _per_row_encoder(context, link_base)
    else:
        hidden = policy.hidden_fields(context, FIELD_RULE_PREFIX, VIEW_KEYS)
        encode = _item_encoder([k for k in VIEW_KEYS if k not in hidden], link_base)
    items = []
    for row in rows:
        if unhealthy_hosts and row[host_index] in unhealthy_hosts:
            items.append(encode_compact(mark(row, fmt(decode_json_columns(row)))))
        else:
            items.append(encode(row))
    return items, fmt(decode_json_columns(rows[-1]))


def _per_row_encoder(
    context: RequestContext,
    link_base: str | None,
) -> Callable[[Row], str]:
    project_index, user_index = ROW_INDEX["project_id"], ROW_INDEX["user_id"]
    encoders: dict[frozenset[str], Callable[[Row], str]] = {}

    def encode(row: Row) -> str:
        target = {"project_id": row[project_index], "user_id": row[user_index]}
        hidden = policy.hidden_fields(context, FIELD_RULE_PREFIX, VIEW_KEYS, target)
        item_encoder = encoders.get(hidden)
        if item_encoder is None:
            item_encoder = encoders[hidden] = _item_encoder(
                [k for k in VIEW_KEYS if k not in hidden], link_base
            )
        return item_encoder(row)

    return encode
