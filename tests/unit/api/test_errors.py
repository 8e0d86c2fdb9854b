"""Error bodies for server-side failures."""

from __future__ import annotations

import json

from zun.api import errors
from zun.common import exception
from zun.common.rpc import HostUnreachable


def test_internal_error_hides_the_message() -> None:
    status, body = errors.to_error(exception.DockerError(error_msg="secret path /x"), "req-1")
    err = json.loads(body)["errors"][0]
    assert status == 500 and err["code"] == "container."
    assert "secret" not in err["detail"] and "req-1" in err["detail"]


def test_public_server_error_says_what_happened() -> None:
    exc = HostUnreachable(host="node-9", method="container_logs", reason="the host is down")
    status, body = errors.to_error(exc, "req-2")
    err = json.loads(body)["errors"][0]
    assert status == 503
    assert err["code"] == "container.host-unreachable"
    assert err["title"] == "Compute host node-9 could not handle container_logs: the host is down."
    assert "req-2" in err["detail"]
    assert err["request_id"] == "req-2"
