"""Helpers every resource handler shares: parameters, pagination, links, datetimes.

Each helper reproduces one rule of the public contract (rest-api.md §4), so that handlers do not
each re-implement it slightly differently:

* :func:`page_params`, :func:`next_link` - ``limit``/``marker``/``sort_key``/``sort_dir`` of
  a request and the ``next`` link of §4.7 (the page itself and the lookups by UUID or name are
  the database's: :mod:`zun.db.paging`);
* :func:`parse_bool`, :func:`all_projects` - strict booleans (§4.8);
* :func:`check_unknown_params`, :func:`require_params` - parameter checks (§4.4, §19 #6);
* :func:`format_datetime`, :func:`format_iso_datetime` - the two datetime formats of §4.6;
* :func:`links`, :func:`location` - self/bookmark links and the ``Location`` value.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from oslo_utils import strutils

from zun.common import exception
from zun.common import utils as zun_utils
from zun.db.paging import Page

T = TypeVar("T")

#: The parameters every paginated collection understands (plus the undocumented ones the
#: original accepted and ignored or used for links).
PAGE_PARAMS = ("limit", "marker", "sort_key", "sort_dir", "resource_url", "expand")

_BOOL_VALUES = ", ".join(strutils.TRUE_STRINGS + strutils.FALSE_STRINGS)


# --- parameters -------------------------------------------------------------------------------


def parse_bool(value: Any, name: str) -> bool:
    """A strict boolean: JSON true/false or ``1 t true on y yes 0 f false off n no`` (any case).

    Anything else is a 400 ``container.invalid-value`` "Valid <name> values are: ...".
    python-zunclient sends Python's ``str()`` of a bool (``True``/``False``), which is accepted.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return strutils.bool_from_string(value, strict=True)
        except ValueError:
            pass
    raise exception.InvalidValue(message=f"Valid {name} values are: {_BOOL_VALUES}")


def all_projects(params: Mapping[str, Any]) -> bool:
    """``all_projects`` of a request: absent or empty is False, else a strict boolean."""
    return zun_utils.is_all_projects(dict(params))


def optional(value: Any) -> Any:
    """An optional parameter as the rest of the service sees it: python-zunclient sends an
    unset one as the string ``None``; this is the one place that string becomes None."""
    return None if value is None or value == "None" else value


def optional_int(value: Any) -> int | None:
    value = optional(value)
    return None if value is None or value == "" else int(value)


def check_unknown_params(params: Iterable[str], allowed: Iterable[str]) -> None:
    """400 ``container.invalid-value`` "Unknown parameters: a, b" (list containers, registries)."""
    known = set(allowed)
    unknown = [str(name) for name in params if name not in known]
    if unknown:
        raise exception.InvalidValue(message="Unknown parameters: " + ", ".join(unknown))


def require_params(params: Mapping[str, Any], names: Sequence[str]) -> None:
    """400 ``container.schema-validation-error`` "'<name>' is a required property".

    The original answered a missing required parameter that its schema did not require with a
    500 (rest-api.md §19 #6); the message is jsonschema's, as if the schema had required it.
    """
    for name in names:
        if params.get(name) is None:
            raise exception.SchemaValidationError(detail=f"'{name}' is a required property")


# --- pagination -------------------------------------------------------------------------------


def page_params(params: Mapping[str, Any], *, default_sort_key: str = "id") -> Page:
    """Validate ``limit`` (positive, capped by ``[api]/max_limit``, default that maximum) and
    ``sort_dir`` (``asc``/``desc``), in the original's order; ``sort_key`` and ``marker`` are
    checked by :func:`paginate` against the table.
    """
    limit = zun_utils.validate_limit(params.get("limit"))
    sort_dir = params.get("sort_dir")
    sort_dir = zun_utils.validate_sort_dir("asc" if sort_dir is None else sort_dir)
    return Page(
        limit=limit,
        marker=params.get("marker") or None,
        sort_key=params.get("sort_key") or default_sort_key,
        sort_dir=sort_dir,
        resource_url=params.get("resource_url") or None,
    )


def next_link(
    host_url: str, collection: str, page: Page, items: Sequence[Any], *, marker_attr: str = "uuid"
) -> str | None:
    """The ``next`` value of a collection: null unless the page is full.

    ``<host_url>/v1/<collection>?sort_key=<k>&sort_dir=<d>&limit=<n>&marker=<last>``; filters
    and ``all_projects`` are not carried over (as in the original). ``resource_url``, when the
    request gave one, replaces ``<collection>``.
    """
    if not items or len(items) != page.limit:
        return None
    last = items[-1]
    marker = last.get(marker_attr) if isinstance(last, Mapping) else getattr(last, marker_attr)
    resource = page.resource_url or collection
    return (
        f"{host_url}/v1/{resource}?sort_key={page.sort_key}&sort_dir={page.sort_dir}"
        f"&limit={page.limit}&marker={marker}"
    )


# --- views ------------------------------------------------------------------------------------


def _naive_utc(value: datetime.datetime) -> datetime.datetime:
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


def format_datetime(value: datetime.datetime | None) -> str | None:
    """Container, capsule, image, host and registry views: ``YYYY-MM-DD HH:MM:SS[.ffffff]``
    (Python ``str()`` of a naive UTC datetime: no fraction when it is zero)."""
    return None if value is None else str(_naive_utc(value))


def format_iso_datetime(value: datetime.datetime | None) -> str | None:
    """Service and container-action views: ``YYYY-MM-DDTHH:MM:SS.ffffff`` (always 6 digits)."""
    return None if value is None else _naive_utc(value).strftime("%Y-%m-%dT%H:%M:%S.%f")


def links(host_url: str, collection: str, ident: str) -> list[dict[str, str]]:
    """The ``self`` and ``bookmark`` links of an item."""
    return [
        {"href": f"{host_url}/v1/{collection}/{ident}", "rel": "self"},
        {"href": f"{host_url}/{collection}/{ident}", "rel": "bookmark"},
    ]


def location(host_url: str, collection: str, ident: str) -> str:
    """The ``Location`` header value of a created item."""
    return f"{host_url}/v1/{collection}/{ident}"
