"""The worker supervisor: start-up failures end it, SIGTERM reaches every child."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from zun.service import prefork


def test_a_child_failing_at_start_stops_the_parent() -> None:
    started = time.monotonic()
    assert prefork.run_workers(2, lambda _slot: 1) == 1
    assert time.monotonic() - started < prefork.STARTUP_GRACE + 5


def test_sigterm_is_passed_to_every_child(tmp_path: Path) -> None:
    def child(_slot: int) -> int:
        stopped = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stopped.set())
        (tmp_path / f"up-{os.getpid()}").touch()
        stopped.wait(30)
        (tmp_path / f"stopped-{os.getpid()}").touch()
        return 0

    def terminate_when_up() -> None:
        deadline = time.monotonic() + 20
        while len(list(tmp_path.glob("up-*"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=terminate_when_up, daemon=True).start()
    assert prefork.run_workers(3, child) == 0
    ups = {p.name.split("-")[1] for p in tmp_path.glob("up-*")}
    stops = {p.name.split("-")[1] for p in tmp_path.glob("stopped-*")}
    assert len(ups) == 3 and ups == stops


def test_a_dead_childs_slot_is_reported_and_inherited_by_its_replacement(tmp_path: Path) -> None:
    exits: list[int] = []

    def child(slot: int) -> int:
        (tmp_path / f"slot{slot}-{os.getpid()}").touch()
        if slot == 0:
            return 0  # a clean exit: replaced, in the same slot
        threading.Event().wait(30)
        return 0

    def on_exit(slot: int) -> None:
        exits.append(slot)
        if len(exits) == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    assert prefork.run_workers(2, child, on_exit=on_exit) == 0
    assert exits == [0, 0]
    assert len(list(tmp_path.glob("slot0-*"))) >= 2  # the first child and its replacement
    assert len(list(tmp_path.glob("slot1-*"))) == 1
