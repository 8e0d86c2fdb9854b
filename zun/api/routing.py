"""The route table: every handler declares its method, path and microversion window here.

Handlers register with :func:`route`; :class:`Router` matches a normalised path to the
handlers of that path (one per method and version window). Keeping the window on the
decorator makes each handler's versions visible in one place, and lets a test count them.

:func:`misroute` registers what answers a method a path does not serve, where the original
answered something other than 405 (``POST /v1/containers/<uuid>`` is a 400 there). Those
answer no resource, so they stay out of the route table.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zun.api.microversion import MAX_VERSION, MIN_VERSION, Version

Handler = Callable[..., Any]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    handler: Handler
    min_version: Version
    max_version: Version
    versioned: bool = True
    # Parameters that may span several path segments (an image name with a registry).
    greedy: tuple[str, ...] = ()

    def accepts(self, version: Version) -> bool:
        return self.min_version <= version <= self.max_version


_REGISTRY: list[Route] = []


def route(
    method: str,
    path: str,
    min_version: str | None = None,
    max_version: str | None = None,
    *,
    versioned: bool = True,
    greedy: tuple[str, ...] = (),
) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of ``method path`` for a version window."""
    low = Version.parse(min_version) if min_version else MIN_VERSION
    high = Version.parse(max_version) if max_version else MAX_VERSION

    def register(handler: Handler) -> Handler:
        _REGISTRY.append(Route(method.upper(), path, handler, low, high, versioned, greedy))
        return handler

    return register


def registered_routes() -> list[Route]:
    return list(_REGISTRY)


_MISROUTES: list[Route] = []


def misroute(method: str, path: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the answer to ``method path``, which has no route."""

    def register(handler: Handler) -> Handler:
        _MISROUTES.append(
            Route(method.upper(), path, handler, MIN_VERSION, MAX_VERSION, versioned=False)
        )
        return handler

    return register


def registered_misroutes() -> list[Route]:
    return list(_MISROUTES)


@dataclass
class PathEntry:
    template: str
    pattern: re.Pattern[str]
    by_method: dict[str, list[Route]] = field(default_factory=dict)
    misroutes: dict[str, Handler] = field(default_factory=dict)

    @property
    def is_custom_action(self) -> bool:
        # /v1/<collection>/{ident}/<action>: Pecan answers a wrong verb there with 404, not 405.
        parts = self.template.strip("/").split("/")
        return len(parts) >= 4 and "{" not in parts[-1] and parts[-2].startswith("{")


_PARAM = re.compile(r"\{(\w+)\}")


def _compile(template: str, greedy: tuple[str, ...] = ()) -> re.Pattern[str]:
    out, pos = [], 0
    for match in _PARAM.finditer(template):
        out.append(re.escape(template[pos : match.start()]))
        name = match.group(1)
        out.append(f"(?P<{name}>.+)" if name in greedy else f"(?P<{name}>[^/]+)")
        pos = match.end()
    out.append(re.escape(template[pos:]))
    return re.compile("^" + "".join(out) + "$")


def normalise_path(path: str) -> str:
    """Apply the original's URL forms: optional /v1, a ``.json`` suffix, a trailing slash."""
    if path.endswith(".json"):
        path = path[: -len(".json")]
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    if path != "/" and path != "/v1" and not path.startswith("/v1/"):
        path = "/v1" + path
    return path


class Router:
    def __init__(self, routes: list[Route], misroutes: list[Route] | None = None) -> None:
        entries: dict[str, PathEntry] = {}

        def entry_of(r: Route) -> PathEntry:
            entry = entries.get(r.path)
            if entry is None:
                entry = entries[r.path] = PathEntry(r.path, _compile(r.path, r.greedy))
            return entry

        for r in routes:
            entry_of(r).by_method.setdefault(r.method, []).append(r)
        for r in registered_misroutes() if misroutes is None else misroutes:
            entry_of(r).misroutes[r.method] = r.handler
        # Literal paths first, so /v1/services/enable never matches a {param} sibling.
        self._entries = sorted(entries.values(), key=lambda e: e.template.count("{"))
        self._literal = {e.template: e for e in self._entries if "{" not in e.template}

    def match(self, path: str) -> tuple[PathEntry, dict[str, str]] | None:
        entry = self._literal.get(path)
        if entry is not None:
            return entry, {}
        for entry in self._entries:
            found = entry.pattern.match(path)
            if found:
                return entry, found.groupdict()
        return None

    @property
    def entries(self) -> list[PathEntry]:
        return list(self._entries)
