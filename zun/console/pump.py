"""Copy bytes both ways between two streams until either side ends, then close both."""

from __future__ import annotations

import logging
import threading

from zun.runtime.docker.engine_stream import Stream

LOG = logging.getLogger(__name__)


def _copy(src: Stream, dst: Stream, both: tuple[Stream, Stream]) -> None:
    try:
        while True:
            data = src.read()
            if not data:
                break
            dst.write(data)
    except OSError:
        pass  # the other side went away: the normal way for a console to end
    finally:
        # Closing both wakes the opposite copy, which is blocked reading.
        for stream in both:
            try:
                stream.close()
            except Exception:
                LOG.exception("Closing a console stream failed")


def pump_sockets(a: Stream, b: Stream) -> None:
    """Run until one direction ends; returns when both copies have stopped."""
    other = threading.Thread(target=_copy, args=(b, a, (a, b)), name="console-pump", daemon=True)
    other.start()
    _copy(a, b, (a, b))
    other.join()
