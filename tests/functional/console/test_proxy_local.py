"""ConsoleProxy against the real engine through its unix socket (the embedded path).

The client side is websocket-client, the library python-zunclient's WebSocketClient uses,
with the same handshake (subprotocols binary/base64, Origin http://<host>:<port>).
"""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
import sqlalchemy as sa
from functional.console.support import (
    connect,
    read_to_close,
    read_until,
    wait_exec_stopped,
)

from zun.console import tokens
from zun.db import engine, models

pytestmark = pytest.mark.docker


def _exec_url(proxy: Any, container_uuid: str, token: str, exec_id: str) -> str:
    return f"ws://127.0.0.1:{proxy.port}/?token={token}&uuid={container_uuid}&exec_id={exec_id}"


def _attach_url(proxy: Any, container_uuid: str, token: str) -> str:
    return f"ws://127.0.0.1:{proxy.port}/?token={token}&uuid={container_uuid}"


def _events(container_uuid: str) -> list[tuple[str, str | None, str | None, bool]]:
    with engine.transaction(readonly=True) as session:
        rows = session.execute(
            sa.select(
                models.ContainerAction.action,
                models.ContainerActionEvent.event,
                models.ContainerActionEvent.result,
                models.ContainerActionEvent.traceback,
                models.ContainerAction.finish_time,
            )
            .join(
                models.ContainerActionEvent,
                models.ContainerActionEvent.action_id == models.ContainerAction.id,
            )
            .where(models.ContainerAction.container_uuid == container_uuid)
            .order_by(models.ContainerActionEvent.id)
        ).all()
    return [(f"{r[0]}/{r[1]}", r[2], r[3], r[4] is not None) for r in rows]


def _wait_events(container_uuid: str, count: int) -> list[Any]:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        events = _events(container_uuid)
        if len(events) >= count and all(e[3] for e in events):
            return events
        time.sleep(0.05)
    return _events(container_uuid)


def test_exec_console_round_trip_then_exec_ends(
    make_container: Any, proxy: Any, docker_client: Any
) -> None:
    ct = make_container()
    exec_id = make_container.exec_shell(ct["engine_id"])
    token = tokens.issue_exec_token(ct["uuid"], exec_id)
    ws = connect(_exec_url(proxy, ct["uuid"], token, exec_id))
    assert ws.getsubprotocol() == "binary"
    ws.send_binary(b"echo result=$((6*7))\r")
    read_until(ws, b"result=42")
    ws.send_binary(b"exit 3\r")
    _, code, reason = read_to_close(ws)
    assert (code, reason) == (1000, "console session ended")
    assert wait_exec_stopped(docker_client, exec_id)["ExitCode"] == 3
    assert _wait_events(ct["uuid"], 1) == [("console/console__exec", "Success", None, True)]


def test_client_closing_ends_the_exec_and_its_foreground_job(
    make_container: Any, proxy: Any, docker_client: Any
) -> None:
    ct = make_container()
    exec_id = make_container.exec_shell(ct["engine_id"])
    ws = connect(
        _exec_url(proxy, ct["uuid"], tokens.issue_exec_token(ct["uuid"], exec_id), exec_id)
    )
    ws.send_binary(b"sleep 4321\r")
    time.sleep(0.5)
    container = docker_client.containers.get(ct["engine_id"])
    assert "sleep 4321" in container.exec_run(["ps"]).output.decode()
    ws.close()
    wait_exec_stopped(docker_client, exec_id)
    deadline = time.monotonic() + 5
    while "sleep 4321" in container.exec_run(["ps"]).output.decode():
        assert time.monotonic() < deadline, "the console's job outlived the console"
        time.sleep(0.1)
    assert container.status == "running"  # only the console went away


def test_attach_to_tty_container_and_detach_leaves_it_running(
    make_container: Any, proxy: Any, docker_client: Any
) -> None:
    ct = make_container()
    ws = connect(_attach_url(proxy, ct["uuid"], tokens.issue_attach_token(ct["uuid"])))
    ws.send_binary(b"echo attached-$((40+2))\r")
    read_until(ws, b"attached-42")
    ws.close()
    time.sleep(0.5)
    assert docker_client.containers.get(ct["engine_id"]).status == "running"
    assert _wait_events(ct["uuid"], 1) == [("console/console__attach", "Success", None, True)]


def test_attach_without_tty_gets_plain_bytes(make_container: Any, proxy: Any) -> None:
    # Without a TTY Docker multiplexes stdout/stderr; the proxy strips the frame headers.
    ct = make_container(tty=False, command=["cat"])
    ws = connect(_attach_url(proxy, ct["uuid"], tokens.issue_attach_token(ct["uuid"])))
    ws.send_binary(b"ping-pong\n")
    got = read_until(ws, b"ping-pong\n")
    assert got == b"ping-pong\n"
    ws.close()


def test_base64_subprotocol(make_container: Any, proxy: Any) -> None:
    ct = make_container(tty=False, command=["cat"])
    ws = connect(
        _attach_url(proxy, ct["uuid"], tokens.issue_attach_token(ct["uuid"])),
        subprotocols=["base64"],
    )
    assert ws.getsubprotocol() == "base64"
    ws.send(base64.b64encode(b"b64 line\n").decode())
    opcode, data = ws.recv_data()
    assert opcode == 1  # text
    assert base64.b64decode(data) == b"b64 line\n"
    ws.close()


def test_two_consoles_at_once_on_one_container(
    make_container: Any, proxy: Any, docker_client: Any
) -> None:
    ct = make_container()
    # Tokens are handed out before either is used: the second must not cancel the first.
    attach_a = tokens.issue_attach_token(ct["uuid"])
    attach_b = tokens.issue_attach_token(ct["uuid"])
    exec_1 = make_container.exec_shell(ct["engine_id"])
    exec_2 = make_container.exec_shell(ct["engine_id"])
    ws1 = connect(_exec_url(proxy, ct["uuid"], tokens.issue_exec_token(ct["uuid"], exec_1), exec_1))
    ws2 = connect(_exec_url(proxy, ct["uuid"], tokens.issue_exec_token(ct["uuid"], exec_2), exec_2))
    wa = connect(_attach_url(proxy, ct["uuid"], attach_a))
    wb = connect(_attach_url(proxy, ct["uuid"], attach_b))
    ws1.send_binary(b"echo one-$((1+0))\r")
    ws2.send_binary(b"echo two-$((1+1))\r")
    read_until(ws2, b"two-2")
    read_until(ws1, b"one-1")
    wa.send_binary(b"echo main-$((2+1))\r")
    read_until(wb, b"main-3")  # both attach consoles see the container's one terminal
    ws1.send_binary(b"exit\r")
    assert read_to_close(ws1)[1] == 1000
    ws2.send_binary(b"echo still-$((2*2))\r")
    read_until(ws2, b"still-4")
    for ws in (ws2, wa, wb):
        ws.close()
    wait_exec_stopped(docker_client, exec_2)


def test_console_on_stopped_container_is_refused_clearly(
    make_container: Any, proxy: Any, docker_client: Any
) -> None:
    ct = make_container()
    token = tokens.issue_attach_token(ct["uuid"])
    docker_client.containers.get(ct["engine_id"]).kill()
    data, code, reason = read_to_close(connect(_attach_url(proxy, ct["uuid"], token)))
    assert code == 1011
    assert reason == "the container is not running (exited)"
    assert b"zun-wsproxy: the container is not running (exited)" in data
    events = _wait_events(ct["uuid"], 1)
    assert events == [
        ("console/console__attach", "Error", "the container is not running (exited)", True)
    ]


class TestRefusals:
    def _refusal(self, url: str, **kwargs: Any) -> tuple[int | None, str]:
        """(close code, reason); the reason comes whole in the text line, and cut to the
        protocol's 123 bytes in the close frame."""
        data, code, reason = read_to_close(connect(url, **kwargs))
        line = data.decode()
        assert line.startswith("zun-wsproxy: ") and line.endswith("\r\n")
        full = line[len("zun-wsproxy: ") : -2]
        assert full.startswith(reason) and len(reason.encode()) <= 123
        return code, full

    def test_replayed_token(self, make_container: Any, proxy: Any) -> None:
        ct = make_container()
        url = _attach_url(proxy, ct["uuid"], tokens.issue_attach_token(ct["uuid"]))
        connect(url).close()
        assert self._refusal(url) == (1008, f"token already used for container {ct['uuid']}")

    def test_replayed_exec_token(self, make_container: Any, proxy: Any) -> None:
        ct = make_container()
        exec_id = make_container.exec_shell(ct["engine_id"])
        url = _exec_url(proxy, ct["uuid"], tokens.issue_exec_token(ct["uuid"], exec_id), exec_id)
        ws = connect(url)
        ws.send_binary(b"exit\r")
        read_to_close(ws)
        assert self._refusal(url) == (1008, f"token already used for exec {exec_id}")

    def test_expired_token(self, make_container: Any, proxy: Any) -> None:
        ct = make_container()
        token = tokens.issue_attach_token(ct["uuid"], ttl_seconds=1)
        time.sleep(2.2)
        assert self._refusal(_attach_url(proxy, ct["uuid"], token)) == (
            1008,
            f"token expired for container {ct['uuid']}",
        )

    def test_expiry_follows_configured_ttl(self, make_container: Any, proxy: Any) -> None:
        from zun.conf import CONF

        CONF.set_override("token_ttl", 1, group="websocket_proxy")
        try:
            ct = make_container()
            token = tokens.issue_attach_token(ct["uuid"])
        finally:
            CONF.clear_override("token_ttl", group="websocket_proxy")
        time.sleep(2.2)
        assert self._refusal(_attach_url(proxy, ct["uuid"], token))[1].startswith("token expired")

    def test_token_of_another_container(self, make_container: Any, proxy: Any) -> None:
        mine, other = make_container(), make_container()
        token = tokens.issue_attach_token(other["uuid"])
        assert self._refusal(_attach_url(proxy, mine["uuid"], token)) == (
            1008,
            f"invalid token for container {mine['uuid']}",
        )
        # The refused attempt did not spend it: it still opens its own container.
        ws = connect(_attach_url(proxy, other["uuid"], token))
        ws.send_binary(b"echo own-$((3*3))\r")
        read_until(ws, b"own-9")
        ws.close()

    def test_wrong_exec_id(self, make_container: Any, proxy: Any) -> None:
        ct = make_container()
        exec_id = make_container.exec_shell(ct["engine_id"])
        other_exec = make_container.exec_shell(ct["engine_id"])
        token = tokens.issue_exec_token(ct["uuid"], exec_id)
        tokens.issue_exec_token(ct["uuid"], other_exec)
        assert self._refusal(_exec_url(proxy, ct["uuid"], token, other_exec)) == (
            1008,
            f"invalid token for exec {other_exec}",
        )
        unknown = "0" * 64
        assert self._refusal(_exec_url(proxy, ct["uuid"], token, unknown)) == (
            1008,
            f"unknown exec {unknown} for container {ct['uuid']}",
        )
        # An exec token is not an attach token.
        assert (
            self._refusal(_attach_url(proxy, ct["uuid"], token))[1]
            == f"invalid token for container {ct['uuid']}"
        )

    def test_exec_of_another_container(self, make_container: Any, proxy: Any) -> None:
        mine, other = make_container(), make_container()
        exec_id = make_container.exec_shell(other["engine_id"])
        token = tokens.issue_exec_token(other["uuid"], exec_id)
        assert (
            self._refusal(_exec_url(proxy, mine["uuid"], token, exec_id))[1]
            == f"unknown exec {exec_id} for container {mine['uuid']}"
        )

    def test_disallowed_origin_does_not_spend_the_token(
        self, make_container: Any, proxy: Any
    ) -> None:
        ct = make_container()
        url = _attach_url(proxy, ct["uuid"], tokens.issue_attach_token(ct["uuid"]))
        assert self._refusal(url, origin="http://evil.example:80") == (
            1008,
            "origin evil.example is not allowed",
        )
        assert self._refusal(url, origin="https://127.0.0.1:1") == (
            1008,
            "origin scheme https does not match the proxy's (http)",
        )
        ws = connect(url)
        ws.send_binary(b"echo ok-$((5+5))\r")
        read_until(ws, b"ok-10")
        ws.close()

    def test_allowed_origins_option(self, make_container: Any, proxy_factory: Any) -> None:
        proxy = proxy_factory(allowed_origins=["console.example"])
        ct = make_container()
        ws = connect(
            _attach_url(proxy, ct["uuid"], tokens.issue_attach_token(ct["uuid"])),
            origin="http://console.example:8080",
        )
        ws.send_binary(b"echo origin-$((4+4))\r")
        read_until(ws, b"origin-8")
        ws.close()

    def test_no_token_and_unknown_container(self, make_container: Any, proxy: Any) -> None:
        ct = make_container()
        assert self._refusal(f"ws://127.0.0.1:{proxy.port}/?uuid={ct['uuid']}") == (
            1008,
            "no token given",
        )
        assert self._refusal(f"ws://127.0.0.1:{proxy.port}/?token=x&uuid=nope") == (
            1008,
            "container nope not found",
        )


def test_proxy_stop_closes_open_consoles(
    make_container: Any, proxy_factory: Any, docker_client: Any
) -> None:
    proxy = proxy_factory()
    ct = make_container()
    exec_id = make_container.exec_shell(ct["engine_id"])
    ws = connect(
        _exec_url(proxy, ct["uuid"], tokens.issue_exec_token(ct["uuid"], exec_id), exec_id)
    )
    ws.send_binary(b"echo up\r")
    read_until(ws, b"up\r\n")
    started = time.monotonic()
    proxy.stop()
    assert time.monotonic() - started < 10
    assert read_to_close(ws)[1] == 1001
    wait_exec_stopped(docker_client, exec_id)
