"""Interactive exec and attach end to end: zun-all (API, node and console proxy in one
process), python-zunclient's own console commands in a pseudo-terminal, the real engine."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e.support import ZunAll, delete_container, wait_for
from functional.console.support import PtyProgram

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

CLIENT = Path(__file__).resolve().parents[1] / "functional" / "console" / "zunclient_console.py"


@pytest.fixture
def interactive(zun_all: ZunAll, zun: Any, docker_client: Any) -> Iterator[Any]:
    """A running container whose main process is an interactive ``sh``, deleted after."""
    created = zun.containers.run(
        image="busybox",
        command=["sh"],
        interactive=True,
        tty=True,
        image_pull_policy="ifnotpresent",
    )
    try:
        yield wait_for(zun, created.uuid, "Running")
    finally:
        delete_container(zun_all, docker_client, created.uuid)


def _client(zun_all: Any, *args: str, rows: int = 30, cols: int = 100) -> PtyProgram:
    return PtyProgram(
        [sys.executable, str(CLIENT), zun_all.url + "/v1", *args], rows=rows, cols=cols
    )


def _console_actions(zun: Any, container_uuid: str) -> list[Any]:
    return [a for a in zun.actions.list(container_uuid) if a.action == "console"]


def test_exec_interactive_type_read_resize_exit(
    zun_all: Any, zun: Any, docker_client: Any, interactive: Any
) -> None:
    ct = interactive
    term = _client(zun_all, "exec", ct.uuid)
    try:
        exec_id = term.expect(r"exec-id: ([0-9a-f]{64})").group(1).decode()
        term.expect(f"connected to {ct.uuid}, press Enter to continue")
        term.prompt()
        mark = len(term.output)
        term.send(b"stty size\r")
        term.expect(r"\n30 100\r", start=mark)  # zunclient sent the terminal's size at once
        mark = len(term.output)
        term.prompt()
        term.resize(40, 120)  # SIGWINCH -> zunclient -> POST .../execute_resize
        time.sleep(1)
        term.send(b"stty size\r")
        term.expect(r"\n40 120\r", start=mark)
        term.send(b"echo typed-$((2+3))\r")
        term.expect(r"\ntyped-5\r")
        term.send(b"exit\r")
        term.expect("console-client-done")
        assert term.wait() == 0
    finally:
        term.close()
    info = docker_client.api.exec_inspect(exec_id)
    assert (info["Running"], info["ExitCode"]) == (False, 0)
    deadline = time.monotonic() + 10
    while not any(a.finish_time for a in _console_actions(zun, ct.uuid)):
        assert time.monotonic() < deadline, "the console session was not recorded"
        time.sleep(0.2)


def test_replayed_exec_url_is_refused_in_the_client(
    zun_all: Any, zun: Any, interactive: Any
) -> None:
    ct = interactive
    reply = zun.containers.execute(ct.uuid, command='"sh"', run=False, interactive=True)
    assert reply["output"] is None and reply["exit_code"] is None
    assert reply["proxy_url"].startswith("ws://127.0.0.1:")  # [websocket_proxy]/base_url
    assert reply["proxy_url"].endswith(f"&uuid={ct.uuid}&exec_id={reply['exec_id']}")
    first = _client(zun_all, "exec-url", ct.uuid, reply["exec_id"], reply["proxy_url"])
    try:
        first.expect("connected to")
        first.prompt()
        first.send(b"exit\r")
        first.expect("console-client-done")
    finally:
        first.close()
    again = _client(zun_all, "exec-url", ct.uuid, reply["exec_id"], reply["proxy_url"])
    try:
        again.expect(f"zun-wsproxy: token already used for exec {reply['exec_id']}")
        again.expect("console-client-done")
    finally:
        again.close()


def test_attach_resize_and_two_consoles_at_once(
    zun_all: Any, zun: Any, docker_client: Any, interactive: Any
) -> None:
    ct = interactive
    attach = _client(zun_all, "attach", ct.uuid, rows=33, cols=90)
    shell = _client(zun_all, "exec", ct.uuid)
    try:
        attach.expect(f"connected to {ct.uuid}")
        shell.expect(f"connected to {ct.uuid}")
        shell.prompt()
        attach.send(b"\r")  # the main shell printed its prompt before anyone was attached
        attach.prompt()
        mark = len(attach.output)
        attach.send(b"stty size\r")
        attach.expect(r"\n33 90\r", start=mark)  # POST .../resize of the container's TTY
        shell.send(b"echo from-exec-$((1+1))\r")
        shell.expect(r"\nfrom-exec-2\r")
        attach.send(b"echo from-attach-$((1+2))\r")
        attach.expect(r"\nfrom-attach-3\r")
        shell.send(b"exit\r")
        shell.expect("console-client-done")
        # Leaving the main shell stops the container; the attached client is told.
        attach.send(b"exit\r")
        attach.expect("console-client-done")
        assert attach.wait() == 0
    finally:
        attach.close()
        shell.close()
    stopped = wait_for(zun, ct.uuid, "Stopped", timeout=30)
    assert stopped.status == "Stopped"
    from zunclient import exceptions

    # A console on a stopped container: the API says why, no URL is handed out.
    with pytest.raises(exceptions.Conflict, match="Cannot attach container .* in Stopped state"):
        zun.containers.attach(ct.uuid)
