"""The node relay: tickets, plain and TLS connections, and the proxy reaching a console on
another host through RPC (in-process transport here; RabbitMQ and separate processes in
tests/e2e/test_console_distributed.py)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from functional.console.support import connect, read_to_close, read_until, wait_exec_stopped

from zun.common import exception
from zun.common import rpc as zun_rpc
from zun.common.context import get_admin_context
from zun.common.rpc_service import RPCService
from zun.console import relay, tokens
from zun.console.endpoint import ConsoleEndpoint
from zun.runtime.docker.engine_stream import ConsoleUnavailable

pytestmark = pytest.mark.docker

NODE = "node-b"


def _read_until(stream: Any, needle: bytes, timeout: float = 10) -> bytes:
    got = b""
    deadline = time.monotonic() + timeout
    while needle not in got:
        assert time.monotonic() < deadline, f"{needle!r} not received; got {got!r}"
        data = stream.read()
        assert data, f"stream ended before {needle!r}; got {got!r}"
        got += data
    return got


@pytest.fixture
def endpoint(console_db: str) -> Iterator[ConsoleEndpoint]:
    node = ConsoleEndpoint(NODE, relay_host="127.0.0.1", relay_port=0, relay_ssl=None)
    yield node
    node.cleanup_host()


def test_ticket_opens_one_exec_console_once(
    endpoint: ConsoleEndpoint, make_container: Any, docker_client: Any
) -> None:
    ct = make_container(host=NODE)
    exec_id = make_container.exec_shell(ct["engine_id"])
    ticket = endpoint.console_relay_open(get_admin_context(), ct["uuid"], exec_id)
    assert ticket["host"] == "127.0.0.1" and ticket["tls"] is False
    stream = relay.connect(ticket["host"], ticket["port"], ticket["ticket"])
    assert stream.tty
    stream.write(b"echo relayed-$((20+1))\r")
    _read_until(stream, b"relayed-21")
    with pytest.raises(ConsoleUnavailable, match="invalid or expired relay ticket"):
        relay.connect(ticket["host"], ticket["port"], ticket["ticket"])
    stream.close()
    wait_exec_stopped(docker_client, exec_id)  # the relay hung the exec up


def test_relay_speaks_no_docker_api(endpoint: ConsoleEndpoint, make_container: Any) -> None:
    import socket

    ct = make_container(host=NODE)
    ticket = endpoint.console_relay_open(get_admin_context(), ct["uuid"])
    with socket.create_connection((ticket["host"], ticket["port"]), timeout=5) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(100) == b"ERR invalid or expired relay ticket\n"
    with pytest.raises(ConsoleUnavailable, match="invalid or expired relay ticket"):
        relay.connect(ticket["host"], ticket["port"], "guessed")
    # A refused attempt does not spend the real ticket.
    relay.connect(ticket["host"], ticket["port"], ticket["ticket"]).close()


def test_ticket_expires() -> None:
    book = relay.TicketBook(ttl=0.2)
    ticket = book.issue(relay.Target("x"))
    time.sleep(0.3)
    assert book.take(ticket) is None
    assert len(book) == 0 or book.take(book.issue(relay.Target("y"))) == relay.Target("y")


def test_endpoint_refuses_containers_of_other_hosts(
    endpoint: ConsoleEndpoint, make_container: Any
) -> None:
    ct = make_container(host="node-c")
    with pytest.raises(exception.Invalid, match="is on host node-c, not node-b"):
        endpoint.console_relay_open(get_admin_context(), ct["uuid"])
    with pytest.raises(exception.ContainerNotFound):
        endpoint.console_relay_open(get_admin_context(), "missing")


def test_stopped_container_error_comes_through_the_relay(
    endpoint: ConsoleEndpoint, make_container: Any
) -> None:
    ct = make_container(host=NODE, running=False)
    ticket = endpoint.console_relay_open(get_admin_context(), ct["uuid"])
    with pytest.raises(ConsoleUnavailable, match=r"^the container is not running \(created\)$"):
        relay.connect(ticket["host"], ticket["port"], ticket["ticket"])


def _self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "relay")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "relay.crt", directory / "relay.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_tls_relay(tmp_path: Path, make_container: Any) -> None:
    cert, key = _self_signed(tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    node = ConsoleEndpoint(NODE, relay_host="127.0.0.1", relay_port=0, relay_ssl=server_ctx)
    try:
        ct = make_container(host=NODE, tty=False, command=["cat"])
        ticket = node.console_relay_open(get_admin_context(), ct["uuid"])
        assert ticket["tls"] is True
        with pytest.raises(ConsoleUnavailable, match="handshake failed"):
            # Not trusted without the relay's CA; the ticket is not spent by the failure.
            relay.connect(
                ticket["host"],
                ticket["port"],
                ticket["ticket"],
                ssl_context=ssl.create_default_context(),
            )
        trusted = ssl.create_default_context(cafile=str(cert))
        stream = relay.connect(
            ticket["host"], ticket["port"], ticket["ticket"], ssl_context=trusted
        )
        assert not stream.tty
        stream.write(b"over tls\n")
        assert _read_until(stream, b"over tls\n") == b"over tls\n"
        stream.close()
    finally:
        node.cleanup_host()


@pytest.fixture
def node_rpc(endpoint: ConsoleEndpoint) -> Iterator[ConsoleEndpoint]:
    from zun.conf import CONF

    zun_rpc.init(CONF, "fake://")
    service = RPCService(NODE, [endpoint], serializer=zun_rpc.get_serializer())
    service.start()
    yield endpoint
    service.stop()
    service.wait()
    zun_rpc.cleanup()


def test_proxy_reaches_a_remote_node_through_rpc_and_relay(
    node_rpc: ConsoleEndpoint, make_container: Any, proxy_factory: Any, docker_client: Any
) -> None:
    proxy = proxy_factory(local_host="proxy-a")
    ct = make_container(host=NODE)
    exec_id = make_container.exec_shell(ct["engine_id"])
    token = tokens.issue_exec_token(ct["uuid"], exec_id)
    ws = connect(f"ws://127.0.0.1:{proxy.port}/?token={token}&uuid={ct['uuid']}&exec_id={exec_id}")
    ws.send_binary(b"echo remote-$((7*6))\r")
    read_until(ws, b"remote-42")
    ws.send_binary(b"exit\r")
    assert read_to_close(ws)[1:] == (1000, "console session ended")
    wait_exec_stopped(docker_client, exec_id)
    assert len(node_rpc.relay().tickets) == 0  # the ticket was spent


def test_proxy_reports_an_unreachable_node(
    console_db: str, make_container: Any, proxy_factory: Any
) -> None:
    from zun.conf import CONF

    zun_rpc.init(CONF, "fake://")
    try:
        proxy = proxy_factory(local_host="proxy-a")
        ct = make_container(host="node-gone")
        token = tokens.issue_attach_token(ct["uuid"])
        data, code, reason = read_to_close(
            connect(f"ws://127.0.0.1:{proxy.port}/?token={token}&uuid={ct['uuid']}"), 30
        )
        assert code == 1011
        assert reason.startswith("the node node-gone did not open the console")
    finally:
        zun_rpc.cleanup()
