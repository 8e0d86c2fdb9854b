"""Relay loopback TCP ports of the main network namespace into node namespaces.

A node of the Neutron multi-node environment is a network namespace whose only other link is
the VXLAN underlay. Its neutron-openvswitch-agent needs RabbitMQ and its kuryr-libnetwork needs
Keystone and Neutron, and all of them listen on 127.0.0.1 of the main namespace only (the
Keystone catalog even says ``http://127.0.0.1:9696``). So this process opens a listening
socket on 127.0.0.1:<port> *inside* each node namespace (a socket keeps the namespace it was
created in, so the process switches with ``setns`` only while creating it) and connects each
accepted connection to 127.0.0.1:<port> of the namespace it runs in. No routes, addresses or
firewall rules anywhere; the node sees the services at the addresses the catalog names.

    python tests/multinode/nsrelay.py --netns /var/run/netns/A --netns ... --port 5672 ...
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    """setns(2) for a network namespace (os.setns exists only from Python 3.12)."""
    if hasattr(os, "setns"):
        os.setns(fd, CLONE_NEWNET)
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@contextmanager
def entered(netns: str) -> Iterator[None]:
    """Run the body with this thread in the network namespace at path ``netns``.

    Sockets made inside keep that namespace after the thread has switched back."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(netns, os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(target)
        os.close(own)


def listen_in(netns: str, port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:port inside the namespace at path ``netns``."""
    with entered(netns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def answers_in(netns: str, port: int, timeout: float = 2) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:port inside ``netns``."""
    with entered(netns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with sock:
        sock.settimeout(timeout)
        try:
            sock.connect(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except (ConnectionError, OSError):
            pass


def _handler(port: int):  # noqa: ANN202 - an asyncio client_connected_cb
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    return handle


async def serve(namespaces: list[str], ports: list[int], ready: Path | None) -> None:
    servers = []
    for netns in namespaces:
        for port in ports:
            servers.append(await asyncio.start_server(_handler(port), sock=listen_in(netns, port)))
    if ready is not None:
        ready.write_text(str(os.getpid()))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for server in servers:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--netns", action="append", required=True, help="path of a netns")
    parser.add_argument("--port", action="append", type=int, required=True)
    parser.add_argument("--ready", type=Path, help="file written with the pid once listening")
    args = parser.parse_args()
    asyncio.run(serve(args.netns, args.port, args.ready))


if __name__ == "__main__":
    main()
