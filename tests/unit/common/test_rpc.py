"""Pure parts of the messaging layer: serializer, remote-exception helpers, options, errors."""

from __future__ import annotations

import json
import threading

import oslo_messaging as messaging
import pytest
from oslo_config import cfg

from zun.common import context, exception, rpc, rpc_inprocess


class NotShippable(Exception):
    """Lives outside the allowed modules, so it must never be rebuilt from the wire."""


def _raised(exc: BaseException) -> BaseException:
    # The traceback is part of what crosses the bus: raise for real to get one.
    try:
        raise exc
    except BaseException as caught:  # noqa: B036 - any exception is fine here
        return caught


@pytest.fixture
def conf() -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    conf([])
    return conf


def test_serializer_drops_token_and_round_trips_identity() -> None:
    ctx = context.RequestContext(
        user_id="u-1",
        project_id="p-1",
        roles=["member", "reader"],
        request_id="req-0001",
        auth_token="very-secret-token",
        all_projects=True,
    )
    serializer = rpc.RequestContextSerializer()

    wire = serializer.serialize_context(ctx)
    assert "very-secret-token" not in json.dumps(wire)

    back = serializer.deserialize_context(json.loads(json.dumps(wire)))
    assert isinstance(back, context.RequestContext)
    assert (back.user_id, back.project_id, back.request_id) == ("u-1", "p-1", "req-0001")
    assert back.roles == ["member", "reader"]
    assert back.all_projects is True
    assert back.auth_token is None


def test_serializer_accepts_dicts_and_none() -> None:
    serializer = rpc.RequestContextSerializer()
    assert serializer.serialize_context(None) == {}
    assert serializer.serialize_context({"user_id": "u", "auth_token": "t"}) == {"user_id": "u"}
    assert serializer.deserialize_context({}).user_id is None


def test_serializer_makes_payloads_json_primitives() -> None:
    serializer = rpc.RequestContextSerializer()
    payload = serializer.serialize_entity({}, {"ids": {3, 1}, "t": (1, 2)})
    assert isinstance(payload["ids"], list) and sorted(payload["ids"]) == [1, 3]
    assert payload["t"] == [1, 2]


def test_conf_value_falls_back_until_registered(conf: cfg.ConfigOpts) -> None:
    assert rpc.compute_topic(conf) == "zun-compute"
    assert rpc.response_timeout(conf) == 60
    conf.register_opts([cfg.StrOpt("topic", default="zun-compute")], group="compute")
    conf.set_override("topic", "other-topic", group="compute")
    assert rpc.compute_topic(conf) == "other-topic"


def test_default_host_prefers_conf(conf: cfg.ConfigOpts) -> None:
    assert rpc.default_host(conf)  # the machine's name when [DEFAULT]/host is unknown
    conf.register_opts([cfg.StrOpt("host")])
    conf.set_override("host", "node-7")
    assert rpc.default_host(conf) == "node-7"


def test_remote_zun_exception_keeps_class_code_and_loses_traceback() -> None:
    remote = rpc.to_remote_exception(_raised(exception.Conflict("Timeout on executing command")))

    assert isinstance(remote, exception.Conflict)
    assert type(remote).__name__ == "Conflict_Remote"
    assert remote.code == 409
    assert "Traceback (most recent call last)" in str(remote)
    assert rpc.is_remote_exception(remote)

    name, message = rpc.remote_exception_summary(remote)
    assert (name, message) == ("Conflict_Remote", "Timeout on executing command")
    assert exception.convert_excp_to_err_code(name) == "conflict-remote"


def test_remote_exception_rebuilt_from_template_kwargs() -> None:
    remote = rpc.to_remote_exception(_raised(exception.ContainerNotFound(container="abc")))
    name, message = rpc.remote_exception_summary(remote)
    assert remote.code == 404
    assert name == "ContainerNotFound_Remote"
    assert "abc" in message and "Traceback" not in message


def test_remote_builtin_exception_summary_strips_traceback() -> None:
    remote = rpc.to_remote_exception(_raised(KeyError("missing-key")))
    name, message = rpc.remote_exception_summary(remote)
    assert isinstance(remote, KeyError)
    assert rpc.is_remote_exception(remote)
    assert name == "KeyError"
    assert message == "'missing-key'"


def test_exception_outside_allowed_modules_is_not_rebuilt() -> None:
    remote = rpc.to_remote_exception(_raised(NotShippable("nope")))
    assert isinstance(remote, messaging.RemoteError)
    assert not isinstance(remote, NotShippable)
    assert rpc.remote_exception_summary(remote) == ("RemoteError", "nope")


def test_local_exception_summary_is_plain() -> None:
    exc = exception.InvalidValue(value="x", type="int")
    assert not rpc.is_remote_exception(exc)
    assert rpc.remote_exception_summary(exc) == (
        "InvalidValue",
        "Received value 'x' is invalid for type int.",
    )


def test_host_unreachable_names_host_and_method() -> None:
    exc = rpc.HostUnreachable(host="node-1", method="container_show", reason="the host is down")
    assert exc.code == 503
    assert exc.error_code == "host-unreachable"
    assert "node-1" in str(exc) and "container_show" in str(exc)


def test_transport_lifecycle(conf: cfg.ConfigOpts) -> None:
    with pytest.raises(RuntimeError):
        rpc.get_transport()
    before = set(threading.enumerate())
    transport = rpc.init(conf, "fake://")
    try:
        assert rpc.initialized() and rpc.get_transport() is transport
        assert rpc.get_conf() is conf
        assert rpc.is_in_process(transport)
        assert isinstance(transport._driver, rpc_inprocess.InProcessDriver)
        # oslo.messaging forces one exchange for all of Zun's messages.
        assert transport._driver._default_exchange == rpc.CONTROL_EXCHANGE
    finally:
        rpc.cleanup()
    assert not rpc.initialized()
    assert set(threading.enumerate()) <= before
