"""An OpenAPI 3.1 description of this service, generated from the route table and the schemas.

This document is ours: the original Zun never published one. It is built from the same objects
that serve requests (:mod:`zun.api.routing` and the request schemas of :mod:`zun.api.validation`),
so it cannot drift from the code; ``docs/api/openapi.json`` is a generated copy, checked by a test.
Microversion windows are given per operation in ``x-openstack-microversions``.

Handlers add what the route table cannot know with :func:`describe`::

    @route("PUT", "/v1/services/enable")
    @openapi.describe(query="services.query_param_enable", status=200)
    def enable_service(req): ...

Regenerate the committed copy with ``python -m zun.api.openapi --output docs/api/openapi.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zun.api import microversion, routing, validation

F = Callable[..., Any]

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["errors"],
    "properties": {
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["request_id", "code", "status", "title", "detail", "links"],
                "properties": {
                    "request_id": {"type": "string"},
                    "code": {
                        "type": "string",
                        "description": "container.<kebab-case exception>, "
                        "or container. for server errors",
                    },
                    "status": {"type": "integer"},
                    "title": {"type": "string"},
                    "detail": {"type": "string"},
                    "links": {"type": "array"},
                    "min_version": {"type": "string"},
                    "max_version": {"type": "string"},
                },
            },
        }
    },
}

_PARAM = re.compile(r"\{(\w+)\}")


def describe(
    *,
    query: str | None = None,
    body: str | None = None,
    status: int = 200,
    summary: str | None = None,
) -> Callable[[F], F]:
    """Attach the schema names and success status of a handler, for the document only."""

    def mark(handler: F) -> F:
        handler.__openapi__ = {  # type: ignore[attr-defined]
            "query": query,
            "body": body,
            "status": status,
            "summary": summary,
        }
        return handler

    return mark


def _meta(handler: F) -> dict[str, Any]:
    return {
        "query": None,
        "body": None,
        "status": 200,
        "summary": None,
        **getattr(handler, "__openapi__", {}),
    }


def _summary(handler: F, meta: dict[str, Any]) -> str:
    if meta["summary"]:
        return meta["summary"]
    doc = (handler.__doc__ or "").strip().splitlines()
    return doc[0] if doc else handler.__name__.replace("_", " ")


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _query_parameters(schema_name: str) -> list[dict[str, Any]]:
    schema = validation.schema(schema_name)
    return [
        {
            "name": name,
            "in": "query",
            "required": name in schema.get("required", []),
            "schema": spec,
        }
        for name, spec in sorted(schema.get("properties", {}).items())
    ]


def _operation(path: str, method: str, variants: list[routing.Route]) -> dict[str, Any]:
    first = variants[0]
    meta = _meta(first.handler)
    op: dict[str, Any] = {
        "operationId": f"{first.handler.__module__.rsplit('.', 1)[-1]}.{first.handler.__name__}",
        "summary": _summary(first.handler, meta),
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in _PARAM.findall(path)
        ],
        "responses": {},
    }
    if first.versioned:
        op["x-openstack-microversions"] = [
            {
                "min_version": str(v.min_version),
                "max_version": str(v.max_version),
                "handler": v.handler.__name__,
            }
            for v in variants
        ]
        op["parameters"].append(
            {
                "name": microversion.HEADER,
                "in": "header",
                "required": False,
                "description": "container <major>.<minor> or container latest; absent means "
                f"{microversion.MIN_VERSION}",
                "schema": {"type": "string"},
            }
        )
    if meta["query"]:
        op["parameters"].extend(_query_parameters(meta["query"]))
    body_names = sorted({_meta(v.handler)["body"] for v in variants} - {None})
    if body_names:
        schemas = [_ref(n) for n in body_names]
        op["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {
                    "schema": schemas[0] if len(schemas) == 1 else {"oneOf": schemas}
                }
            },
        }
    status = str(meta["status"])
    op["responses"][status] = {"description": "Success"}
    if meta["status"] != 204:
        op["responses"][status]["content"] = {"application/json": {"schema": {}}}
    op["responses"]["default"] = {
        "description": "An error in Zun's shape",
        "content": {"application/json": {"schema": _ref("Error")}},
    }
    return op


def build_document() -> dict[str, Any]:
    """The OpenAPI document of every registered route."""
    from zun.api.app import load_handlers

    load_handlers()
    grouped: dict[str, dict[str, list[routing.Route]]] = {}
    for r in routing.registered_routes():
        grouped.setdefault(r.path, {}).setdefault(r.method, []).append(r)
    paths: dict[str, Any] = {}
    for path in sorted(grouped):
        paths[path] = {}
        for method in sorted(grouped[path]):
            variants = sorted(grouped[path][method], key=lambda v: v.min_version)
            paths[path][method.lower()] = _operation(path, method, variants)
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    for name in validation.schema_names():
        schemas[name] = validation.schema(name)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Zun Containers API",
            "version": str(microversion.MAX_VERSION),
            "description": (
                "Generated by this implementation from its route table and request schemas "
                "(not an upstream OpenStack document). Microversions "
                f"{microversion.MIN_VERSION} to {microversion.MAX_VERSION} are selected with "
                "the OpenStack-API-Version header; every path also answers with a '.json' "
                "suffix, a trailing slash, and without the /v1 prefix."
            ),
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


def render() -> str:
    return json.dumps(build_document(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", "-o", type=Path, help="file to write (default: stdout)")
    args = parser.parse_args(argv)
    text = render()
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
