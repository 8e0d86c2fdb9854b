"""Version discovery: ``GET /`` and ``GET /v1``."""

from __future__ import annotations

from typing import Any

import webob

from zun.api.microversion import MAX_VERSION, MIN_VERSION
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route

_V1_RESOURCES = (
    "services",
    "containers",
    "images",
    "networks",
    "hosts",
    "capsules",
    "availability_zones",
    "quotas",
    "quota_classes",
    "registries",
)


def _version_entry(host_url: str) -> dict[str, Any]:
    return {
        "id": "v1",
        "links": [{"href": f"{host_url}/v1/", "rel": "self"}],
        "status": "CURRENT",
        "max_version": str(MAX_VERSION),
        "min_version": str(MIN_VERSION),
    }


@route("GET", "/", versioned=False)
def versions(req: ApiRequest) -> webob.Response:
    entry = _version_entry(req.host_url)
    return json_reply(
        {
            "name": "OpenStack Zun API",
            "description": "Zun is an OpenStack project which aims to provide containers service.",
            "versions": [entry],
            "default_version": entry,
        }
    )


@route("GET", "/v1", versioned=False)
def v1(req: ApiRequest) -> webob.Response:
    host = req.host_url
    body: dict[str, Any] = {
        "id": "v1",
        "media_types": [
            {"base": "application/json", "type": "application/vnd.openstack.zun.v1+json"}
        ],
        "links": [
            {"href": f"{host}/v1/", "rel": "self"},
            {
                "href": "https://docs.openstack.org/developer/zun/dev/api-spec-v1.html",
                "rel": "describedby",
                "type": "text/html",
            },
        ],
    }
    for name in _V1_RESOURCES:
        body[name] = [
            {"href": f"{host}/v1/{name}/", "rel": "self"},
            {"href": f"{host}/{name}/", "rel": "bookmark"},
        ]
    return json_reply(body)
