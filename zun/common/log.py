"""Logging to stderr with the request id on every line.

The id is kept in a context variable: the API sets it per request, the node per RPC message,
so a line about one request can be found in every process it went through.
"""

from __future__ import annotations

import contextvars
import logging
import logging.handlers
import sys

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s [%(request_id)s] %(message)s"


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


def setup(debug: bool = False, stream=None, log_file: str | None = None) -> None:
    """Log to ``log_file`` when given (reopened after logrotate moves it), else to stderr."""
    root = logging.getLogger()
    # Libraries (or an earlier call) may have installed handlers: one format, one stream.
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler: logging.Handler
    if log_file:
        handler = logging.handlers.WatchedFileHandler(log_file)
    else:
        handler = logging.StreamHandler(stream or sys.stderr)
    handler._zun = True  # type: ignore[attr-defined]
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    for noisy in (
        "oslo_policy",
        "stevedore",
        "urllib3",
        "docker",
        "amqp",
        "kombu",
        "oslo_messaging",
        "waitress",
    ):
        logging.getLogger(noisy).setLevel(logging.WARNING)
