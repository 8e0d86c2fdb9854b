"""The compute bus end to end, over the in-process bus and over the local RabbitMQ.

Every test runs on both transports. On RabbitMQ each test gets its own exchange and topic,
deleted afterwards, so runs and parallel workers never see each other's messages.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kombu
import oslo_messaging as messaging
import pytest
from oslo_config import cfg

from zun.common import context, exception, rpc, rpc_service
from zun.common.rpc_client import ComputeRPCClient

WAIT = 10.0  # upper bound for anything that should take milliseconds


class Endpoint:
    def __init__(self, name: str) -> None:
        self.name = name
        self.cast_values: list[Any] = []
        self.cast_seen = threading.Event()
        self.release = threading.Event()
        self.slow_started = threading.Event()

    def echo(self, ctxt: context.RequestContext, value: Any) -> dict[str, Any]:
        return {"host": self.name, "value": value}

    def whoami(self, ctxt: context.RequestContext) -> dict[str, Any]:
        return {
            "type": type(ctxt).__name__,
            "user_id": ctxt.user_id,
            "project_id": ctxt.project_id,
            "roles": ctxt.roles,
            "request_id": ctxt.request_id,
            "auth_token": ctxt.auth_token,
            "all_projects": ctxt.all_projects,
        }

    def record(self, ctxt: context.RequestContext, value: Any) -> None:
        self.cast_values.append(value)
        self.cast_seen.set()

    def conflict(self, ctxt: context.RequestContext, text: str) -> None:
        raise exception.Conflict(text)

    def not_found(self, ctxt: context.RequestContext, uuid: str) -> None:
        raise exception.ContainerNotFound(container=uuid)

    def slow(self, ctxt: context.RequestContext) -> str:
        self.slow_started.set()
        self.release.wait(WAIT)
        return "late"


@dataclass
class Bus:
    kind: str
    topic: str
    services: list[rpc_service.RPCService] = field(default_factory=list)

    def serve(self, host: str, endpoint: Endpoint) -> rpc_service.RPCService:
        service = rpc_service.RPCService(host, [endpoint], topic=self.topic)
        service.start()
        self.services.append(service)
        return service

    def client(self, **kwargs: Any) -> ComputeRPCClient:
        return ComputeRPCClient(topic=self.topic, **kwargs)


def _delete_rabbit_leftovers(url: str, exchange: str, topic: str, hosts: list[str]) -> None:
    with kombu.Connection(url.replace("rabbit://", "amqp://", 1) + "/") as conn:
        for name in [topic, *(f"{topic}.{host}" for host in hosts)]:
            conn.channel().queue_delete(name)
        for name in (exchange, f"{topic}_fanout"):
            conn.channel().exchange_delete(name)


def _wait_until(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture(params=["inprocess", pytest.param("rabbit", marks=pytest.mark.rabbitmq)])
def bus(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bus]:
    run = uuid.uuid4().hex[:10]
    exchange, topic = f"zun-test-{run}", f"zun-compute-test-{run}"
    # The rabbit_url fixture skips (or fails under CI) without RabbitMQ.
    url = request.getfixturevalue("rabbit_url") if request.param == "rabbit" else "fake://"
    # Through a config file, as an operator would: the option is registered only by init().
    conf_file = tmp_path / "zun.conf"
    conf_file.write_text(f"[DEFAULT]\ncontrol_exchange = {exchange}\n")
    conf = cfg.ConfigOpts()
    conf(["--config-file", str(conf_file)])

    threads_before = set(threading.enumerate())
    rpc.init(conf, url)
    state = Bus(request.param, topic)
    try:
        yield state
    finally:
        for service in state.services:
            service.stop()
            service.wait()
        rpc.cleanup()
        if request.param == "rabbit":
            _delete_rabbit_leftovers(url, exchange, topic, [s.host for s in state.services])
    leaked = set(threading.enumerate()) - threads_before
    assert _wait_until(lambda: not set(threading.enumerate()) - threads_before, 5), leaked


def test_call_returns_endpoint_value(bus: Bus) -> None:
    bus.serve("host-a", Endpoint("host-a"))
    result = bus.client().call(context.get_admin_context(), "host-a", "echo", value=[1, "two"])
    assert result == {"host": "host-a", "value": [1, "two"]}


def test_cast_runs_on_server(bus: Bus) -> None:
    endpoint = Endpoint("host-a")
    bus.serve("host-a", endpoint)
    assert bus.client().cast(context.get_admin_context(), "host-a", "record", value=42) is None
    assert endpoint.cast_seen.wait(WAIT)
    assert endpoint.cast_values == [42]


def test_context_round_trips_without_token(bus: Bus) -> None:
    bus.serve("host-a", Endpoint("host-a"))
    ctx = context.RequestContext(
        user_id="user-1",
        project_id="proj-1",
        roles=["member", "reader"],
        request_id="req-1234",
        auth_token="secret-token",
        all_projects=True,
    )
    seen = bus.client().call(ctx, "host-a", "whoami")
    assert seen == {
        "type": "RequestContext",
        "user_id": "user-1",
        "project_id": "proj-1",
        "roles": ["member", "reader"],
        "request_id": "req-1234",
        "auth_token": None,
        "all_projects": True,
    }


def test_zun_exception_comes_back_remote_with_code(bus: Bus) -> None:
    bus.serve("host-a", Endpoint("host-a"))
    client = bus.client()
    with pytest.raises(exception.Conflict) as caught:
        client.call(context.get_admin_context(), "host-a", "conflict", text="Timeout on ls")
    exc = caught.value
    assert type(exc).__name__ == "Conflict_Remote"
    assert exc.code == 409
    assert "Traceback (most recent call last)" in str(exc)
    name, message = rpc.remote_exception_summary(exc)
    assert (name, message) == ("Conflict_Remote", "Timeout on ls")
    assert exception.convert_excp_to_err_code(name) == "conflict-remote"

    with pytest.raises(exception.ContainerNotFound) as caught:
        client.call(context.get_admin_context(), "host-a", "not_found", uuid="c-1")
    assert caught.value.code == 404
    name, message = rpc.remote_exception_summary(caught.value)
    assert name == "ContainerNotFound_Remote" and "c-1" in message
    assert "Traceback" not in message


def test_unknown_method_is_a_remote_error(bus: Bus) -> None:
    bus.serve("host-a", Endpoint("host-a"))
    with pytest.raises(messaging.RemoteError) as caught:
        bus.client().call(context.get_admin_context(), "host-a", "no_such_method")
    assert caught.value.exc_type == "NoSuchMethod"


def test_call_to_unserved_host_fails_fast(bus: Bus) -> None:
    client = bus.client()
    start = time.monotonic()
    with pytest.raises(rpc.HostUnreachable) as caught:
        client.call(context.get_admin_context(), "host-nobody", "echo", timeout=1.5, value=1)
    assert time.monotonic() - start < 4
    assert caught.value.code == 503
    assert "host-nobody" in str(caught.value) and "echo" in str(caught.value)


def test_call_to_stopped_host_times_out_with_clear_error(bus: Bus) -> None:
    # Its queue may outlive it on RabbitMQ: only the timeout can tell.
    service = bus.serve("host-a", Endpoint("host-a"))
    service.stop()
    service.wait()
    start = time.monotonic()
    with pytest.raises(rpc.HostUnreachable, match="no reply within 1 seconds"):
        bus.client().call(context.get_admin_context(), "host-a", "echo", timeout=1, value=1)
    assert 0.9 < time.monotonic() - start < 4


def test_slow_method_times_out_on_caller_timeout(bus: Bus) -> None:
    endpoint = Endpoint("host-a")
    bus.serve("host-a", endpoint)
    try:
        with pytest.raises(rpc.HostUnreachable, match="no reply within 0.5 seconds"):
            bus.client().call(context.get_admin_context(), "host-a", "slow", timeout=0.5)
    finally:
        endpoint.release.set()


def test_cast_to_unserved_host(bus: Bus) -> None:
    client = bus.client()
    if bus.kind == "rabbit":
        # RabbitMQ bounces a mandatory message that no queue takes.
        with pytest.raises(rpc.HostUnreachable, match="nothing listens"):
            client.cast(context.get_admin_context(), "host-nobody", "record", value=1)
    else:
        # The in-process bus keeps it for a server that may start later.
        client.cast(context.get_admin_context(), "host-later", "record", value=1)
        endpoint = Endpoint("host-later")
        bus.serve("host-later", endpoint)
        assert endpoint.cast_seen.wait(WAIT)


def test_host_known_down_fails_without_sending(bus: Bus) -> None:
    endpoint = Endpoint("host-a")
    bus.serve("host-a", endpoint)
    checked: list[str] = []

    def is_host_up(host: str) -> bool:
        checked.append(host)
        return host != "host-a"

    client = bus.client(is_host_up=is_host_up)
    start = time.monotonic()
    with pytest.raises(rpc.HostUnreachable, match="the host is down"):
        client.call(context.get_admin_context(), "host-a", "echo", value=1)
    with pytest.raises(rpc.HostUnreachable, match="the host is down"):
        client.cast(context.get_admin_context(), "host-a", "record", value=1)
    assert time.monotonic() - start < 0.5
    assert checked == ["host-a", "host-a"]
    # Nothing reached the server: a later cast from a client without the check is the first.
    bus.client().cast(context.get_admin_context(), "host-a", "record", value=2)
    assert endpoint.cast_seen.wait(WAIT)
    assert endpoint.cast_values == [2]


def test_each_host_gets_only_its_own_messages(bus: Bus) -> None:
    a, b = Endpoint("host-a"), Endpoint("host-b")
    bus.serve("host-a", a)
    bus.serve("host-b", b)
    client = bus.client()
    ctx = context.get_admin_context()

    for i in range(5):
        assert client.call(ctx, "host-a", "echo", value=i)["host"] == "host-a"
        assert client.call(ctx, "host-b", "echo", value=i)["host"] == "host-b"
    client.cast(ctx, "host-a", "record", value="for-a")
    assert a.cast_seen.wait(WAIT)
    # A call queued after the cast on host-b's queue proves b had its chance to see it.
    client.call(ctx, "host-b", "echo", value="sync")
    assert a.cast_values == ["for-a"]
    assert b.cast_values == []


def test_server_stops_cleanly(bus: Bus) -> None:
    before = set(threading.enumerate())
    service = bus.serve("host-a", Endpoint("host-a"))
    assert service.running
    assert set(threading.enumerate()) - before  # a listener thread at least
    service.stop()
    service.wait()
    service.wait()  # idempotent
    assert not service.running
    assert _wait_until(lambda: not set(threading.enumerate()) - before, 5)


def test_server_finishes_message_in_flight_before_wait_returns(bus: Bus) -> None:
    endpoint = Endpoint("host-a")
    service = bus.serve("host-a", endpoint)
    results: list[Any] = []
    caller = threading.Thread(
        target=lambda: results.append(
            bus.client().call(context.get_admin_context(), "host-a", "slow", timeout=WAIT)
        )
    )
    caller.start()
    assert endpoint.slow_started.wait(WAIT)
    service.stop()
    threading.Timer(0.3, endpoint.release.set).start()
    service.wait()
    caller.join(WAIT)
    assert results == ["late"]


def test_cast_with_broker_down_fails_after_bounded_retry(tmp_path: Path) -> None:
    # Nothing listens on this loopback port: the broker is "down".
    conf = cfg.ConfigOpts()
    conf([])
    rpc.init(conf, "rabbit://guest:guest@127.0.0.1:1/")
    try:
        client = ComputeRPCClient(topic="zun-compute-test-down", retry=0)
        start = time.monotonic()
        with pytest.raises(rpc.HostUnreachable, match="message bus is unreachable"):
            client.cast(context.get_admin_context(), "host-a", "record", value=1)
        assert time.monotonic() - start < 5
    finally:
        rpc.cleanup()
