"""Runs python-zunclient's own console commands, for the e2e tests to drive in a pty.

    python zunclient_console.py <api url> exec <container> [<command>...]
    python zunclient_console.py <api url> attach <container>
    python zunclient_console.py <api url> exec-url <container> <exec id> <proxy url>

``exec`` is ``zun exec --interactive`` (zunclient.v1.containers_shell.do_exec), ``attach`` is
``zun attach`` (do_attach); both end in zunclient.common.websocketclient. The shell entry point
itself needs Keystone credentials; the commands are the same functions it would call.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str]) -> int:
    from zunclient import client
    from zunclient.v1 import containers_shell

    url, mode, container, *command = argv
    cs = client.Client("1.40", endpoint_override=url, auth_token="notused")
    if mode == "exec-url":  # a URL obtained earlier: what a replayed link does
        from zunclient.common.websocketclient import websocketclient

        exec_id, proxy_url = command
        websocketclient.do_exec(cs, proxy_url, container, exec_id, "~", 0.5)
    elif mode == "exec":
        # Show the exec's id (the test checks the engine's exec afterwards); the call itself
        # is zunclient's own.
        execute = cs.containers.execute

        def shown(*args: object, **kwargs: object) -> dict:
            reply = execute(*args, **kwargs)
            print(f"exec-id: {reply['exec_id']}\r")
            return reply

        cs.containers.execute = shown
        containers_shell.do_exec(
            cs, argparse.Namespace(container=container, command=command or ["sh"], interactive=True)
        )
    else:
        containers_shell.do_attach(cs, argparse.Namespace(container=container))
    print("\r\nconsole-client-done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
