"""The message bus: one oslo.messaging transport per process, and what crosses it.

Two transports, one code path:

* ``fake://`` for the embedded mode (``zun-all``): an in-process bus between threads; oslo's
  fake driver with a faster wake-up (:mod:`zun.common.rpc_inprocess`).
* ``rabbit://user:pass@host:5672/`` for the distributed mode, from ``[DEFAULT]/transport_url``.

Servers use oslo.messaging's ``threading`` executor; nothing here needs eventlet.

Exceptions raised by a node in :mod:`zun.common.exception` come back to the caller as
``<Class>_Remote`` subclasses (same ``code``, message followed by the node's traceback). The
in-process bus hands the server's exception object over as is, so the compute client converts
it the same way (:func:`to_remote_exception`): the API sees one behaviour in both modes.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterable
from typing import Any, TypeVar

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_messaging._drivers import common as _driver_common
from oslo_messaging._drivers import impl_fake
from oslo_messaging.rpc import server as _rpc_server

from zun.common import context as zun_context
from zun.common import exception, rpc_inprocess

LOG = logging.getLogger(__name__)

T = TypeVar("T")

# Only these modules may be rebuilt from a remote failure: importing any module a peer names
# would let it run code here. Builtin exceptions are always allowed by oslo.messaging.
ALLOWED_EXMODS: list[str] = [exception.__name__]
CONTROL_EXCHANGE = "zun"
DEFAULT_TOPIC = "zun-compute"
DEFAULT_RESPONSE_TIMEOUT = 60
REMOTE_POSTFIX = "_Remote"
_TRACEBACK_MARK = "\nTraceback (most recent call last):"
# Set on an exception object raised by an endpoint, so the in-process client can tell it
# from a failure of its own.
_SERVER_SIDE_MARK = "_zun_raised_by_rpc_server"

_LOCK = threading.Lock()
_TRANSPORT: messaging.Transport | None = None
_CONF: cfg.ConfigOpts | None = None


class HostUnreachable(exception.ZunException):
    """A compute host could not be reached over the bus in time (or is known to be down)."""

    message = "Compute host %(host)s could not handle %(method)s: %(reason)s."
    code = 503
    # Says which host and why, nothing internal: clients should see it.
    public_message = True


def conf_value(conf: cfg.ConfigOpts, group: str | None, name: str, default: Any) -> Any:
    """Read an option that another module may not have registered yet."""
    try:
        section = conf if group is None else getattr(conf, group)
        value = getattr(section, name)
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError, AttributeError):
        return default
    return default if value is None else value


def _register_library_opts(conf: cfg.ConfigOpts) -> None:
    # oslo.messaging registers its tracing and metrics groups on the global CONF only, yet
    # reads them from the conf the transport was built with: a private ConfigOpts (tests,
    # tools) would fail on the first call without them.
    from oslo_messaging._metrics import client as metrics_client
    from oslo_messaging._tracing import client as tracing_client

    conf.register_opts(tracing_client.oslo_messaging_tracing, group="oslo_messaging_tracing")
    conf.register_opts(metrics_client.oslo_messaging_metrics, group="oslo_messaging_metrics")


def init(conf: cfg.ConfigOpts, transport_url: str | None = None) -> messaging.Transport:
    """Build the process-wide transport; ``transport_url`` overrides ``[DEFAULT]/transport_url``.

    Calling it again replaces (and cleans up) the previous transport.
    """
    global _TRANSPORT, _CONF
    messaging.set_transport_defaults(control_exchange=CONTROL_EXCHANGE)
    _register_library_opts(conf)
    transport = messaging.get_rpc_transport(
        conf,
        url=transport_url,
        allowed_remote_exmods=ALLOWED_EXMODS,
        transport_cls=rpc_inprocess.InProcessTransport,
    )
    with _LOCK:
        previous, _TRANSPORT, _CONF = _TRANSPORT, transport, conf
    if previous is not None:
        previous.cleanup()
    return transport


def cleanup() -> None:
    """Close the transport's connections and threads. Servers must be stopped first."""
    global _TRANSPORT, _CONF
    with _LOCK:
        transport, _TRANSPORT, _CONF = _TRANSPORT, None, None
    if transport is not None:
        transport.cleanup()


def initialized() -> bool:
    return _TRANSPORT is not None


def get_transport() -> messaging.Transport:
    if _TRANSPORT is None:
        raise RuntimeError("zun.common.rpc.init() has not been called")
    return _TRANSPORT


_CLIENTS: dict[type, tuple[messaging.Transport, Any]] = {}


def client_for(cls: type[T]) -> T:
    """The process' RPC client of class ``cls`` (built as ``cls(transport)``), rebuilt when
    :func:`init` installed a new transport.

    A process without a message bus (a bare WSGI app in a test, a tool) gets the 503 of an
    unreachable host rather than a crash.
    """
    if _TRANSPORT is None:
        raise HostUnreachable(host="(any)", method="RPC", reason="this process has no message bus")
    transport = _TRANSPORT
    with _LOCK:
        cached = _CLIENTS.get(cls)
        if cached is None or cached[0] is not transport:
            cached = _CLIENTS[cls] = (transport, cls(transport))
        return cached[1]


def get_conf() -> cfg.ConfigOpts:
    """The configuration the transport was built from."""
    if _CONF is None:
        raise RuntimeError("zun.common.rpc.init() has not been called")
    return _CONF


def compute_topic(conf: cfg.ConfigOpts | None = None) -> str:
    return str(conf_value(conf or get_conf(), "compute", "topic", DEFAULT_TOPIC))


def default_host(conf: cfg.ConfigOpts | None = None) -> str:
    return str(conf_value(conf or get_conf(), None, "host", None) or socket.gethostname())


def response_timeout(conf: cfg.ConfigOpts | None = None) -> float:
    return float(
        conf_value(conf or get_conf(), None, "rpc_response_timeout", DEFAULT_RESPONSE_TIMEOUT)
    )


def is_in_process(transport: messaging.Transport) -> bool:
    """True for the ``fake://`` bus, which hands exception objects over unserialized."""
    return isinstance(getattr(transport, "_driver", None), impl_fake.FakeDriver)


class RequestContextSerializer(messaging.Serializer):
    """Context as a plain dict on the wire (no auth token); payloads as JSON primitives."""

    def __init__(self) -> None:
        self._payload = messaging.JsonPayloadSerializer()

    def serialize_entity(self, ctxt: dict[str, Any], entity: Any) -> Any:
        return self._payload.serialize_entity(ctxt, entity)

    def deserialize_entity(self, ctxt: dict[str, Any], entity: Any) -> Any:
        return self._payload.deserialize_entity(ctxt, entity)

    def serialize_context(self, ctxt: Any) -> dict[str, Any]:
        if ctxt is None:
            return {}
        if isinstance(ctxt, dict):
            values = dict(ctxt)
            values.pop("auth_token", None)
            return values
        return ctxt.to_dict()

    def deserialize_context(self, ctxt: dict[str, Any]) -> zun_context.RequestContext:
        # The default overwrite=True makes it the worker thread's current context, so the
        # node's log lines carry the API's request id.
        return zun_context.RequestContext.from_dict(ctxt or {})


def get_serializer() -> RequestContextSerializer:
    return RequestContextSerializer()


class _MarkingDispatcher(messaging.RPCDispatcher):
    """Tags what an endpoint raised, so an in-process caller can treat it as remote."""

    def dispatch(self, incoming: Any) -> Any:
        try:
            return super().dispatch(incoming)
        except messaging.ExpectedException as exc:
            _mark_server_side(exc.exc_info[1])
            raise
        except Exception as exc:
            _mark_server_side(exc)
            raise


def _mark_server_side(exc: BaseException | None) -> None:
    if exc is not None:
        try:
            setattr(exc, _SERVER_SIDE_MARK, True)
        except (AttributeError, TypeError):
            LOG.debug("Cannot tag %s as raised by an RPC endpoint", type(exc).__name__)


def build_server(
    transport: messaging.Transport,
    target: messaging.Target,
    endpoints: Iterable[object],
    serializer: messaging.Serializer | None = None,
) -> _rpc_server.RPCServer:
    """An oslo.messaging RPC server on the threading executor (see :mod:`rpc_service`)."""
    dispatcher = _MarkingDispatcher(
        list(endpoints), serializer or get_serializer(), messaging.DefaultRPCAccessPolicy
    )
    # Positional executor: the keyword form is flagged as deprecated by oslo.messaging.
    server = _rpc_server.RPCServer(transport, target, dispatcher, "threading")
    if server.executor_type != "threading":  # pragma: no cover - guards a library change
        raise RuntimeError(f"unexpected RPC executor {server.executor_type!r}")
    return server


def is_remote_exception(exc: BaseException) -> bool:
    """True for an exception that crossed the bus (``<Class>_Remote`` or ``RemoteError``)."""
    return (
        isinstance(exc, messaging.RemoteError)
        or type(exc).__name__.endswith(REMOTE_POSTFIX)
        or _TRACEBACK_MARK in _first_text(exc)
    )


def raised_by_server(exc: BaseException) -> bool:
    return bool(getattr(exc, _SERVER_SIDE_MARK, False))


def to_remote_exception(exc: BaseException) -> BaseException:
    """What the same exception would have become after crossing a real broker."""
    data = _driver_common.serialize_remote_exception((type(exc), exc, exc.__traceback__))
    return _driver_common.deserialize_remote_exception(data, ALLOWED_EXMODS)


def _first_text(exc: BaseException) -> str:
    # KeyError's str() is the repr of its argument: read the argument itself.
    if len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def remote_exception_summary(exc: BaseException) -> tuple[str, str]:
    """``(class name, message)`` of an exception, without any node traceback.

    The class name is kept as raised (``Conflict_Remote``), so that
    :func:`zun.common.exception.convert_excp_to_err_code` yields ``conflict-remote``.
    """
    name = type(exc).__name__
    if isinstance(exc, messaging.RemoteError):
        return name, str(exc.value or "")
    if isinstance(exc, exception.ZunException) and isinstance(exc.message, str):
        text = exc.message
    else:
        text = _first_text(exc)
    cut = text.find(_TRACEBACK_MARK)
    return name, (text[:cut] if cut >= 0 else text)
