"""Policy enforcement: defaults, operator overrides, field rules that may not exist."""

from __future__ import annotations

from pathlib import Path

import pytest
from unit.api.apptesting import init_config

from zun.common import exception, policy
from zun.common.context import RequestContext
from zun.conf import CONF


def _ctx(project: str = "p1", roles: tuple[str, ...] = ("member",)) -> RequestContext:
    ctx = RequestContext(user_id="u1", project_id=project, roles=list(roles))
    ctx.is_admin = policy.check_is_admin(ctx)
    return ctx


@pytest.fixture
def policy_file(tmp_path: Path):
    init_config()
    path = tmp_path / "policy.yaml"

    def write(text: str) -> None:
        path.write_text(text)
        CONF.set_override("policy_file", str(path), group="oslo_policy")
        policy.reset()

    yield write
    CONF.clear_override("policy_file", group="oslo_policy")
    policy.reset()


def test_defaults_owner_and_admin(policy_file) -> None:
    policy_file("{}")
    assert policy.authorize(_ctx(), "container:get_one", {"project_id": "p1"})
    with pytest.raises(exception.PolicyNotAuthorized) as err:
        policy.authorize(_ctx(), "container:get_one", {"project_id": "other"})
    assert "container:get_one" in str(err.value)
    assert policy.authorize(_ctx(roles=("admin",)), "container:get_one", {"project_id": "x"})


def test_privileged_is_denied_to_everybody_by_default(policy_file) -> None:
    policy_file("{}")
    admin = _ctx(roles=("admin",))
    assert not policy.authorize(admin, "container:create:privileged", fatal=False)


def test_field_rule_without_definition_is_visible(policy_file) -> None:
    policy_file("{}")
    assert policy.authorize(_ctx(), "container:get_one:labels", might_not_exist=True)
    assert policy.hidden_fields(_ctx(), "container:get_one", ["labels", "host", "runtime"]) == {
        "host",
        "runtime",
    }


def test_field_rule_defined_only_in_policy_file_is_enforced(policy_file) -> None:
    policy_file('"container:get_one:labels": "role:admin"\n')
    assert not policy.authorize(
        _ctx(), "container:get_one:labels", might_not_exist=True, fatal=False
    )
    assert "labels" in policy.hidden_fields(_ctx(), "container:get_one", ["labels"])
    assert policy.authorize(
        _ctx(roles=("admin",)), "container:get_one:labels", might_not_exist=True
    )


def test_operator_can_relax_a_default(policy_file) -> None:
    policy_file('"container:get_one:host": "@"\n')
    assert policy.hidden_fields(_ctx(), "container:get_one", ["host"]) == frozenset()


def test_unknown_rule_is_an_error(policy_file) -> None:
    policy_file("{}")
    from oslo_policy import policy as oslo_policy

    with pytest.raises(oslo_policy.PolicyNotRegistered):
        policy.authorize(_ctx(), "container:no-such-rule")


def test_a_changed_policy_file_applies_without_a_restart(policy_file, tmp_path: Path) -> None:
    # Decisions are remembered, and the file is looked at once a second at most: a change
    # must still be seen after that second, and not before the file is read again.
    policy_file('"container:get_one": "role:member"\n')
    assert policy.authorize(_ctx(), "container:get_one", {"project_id": "p1"}, fatal=False)
    path = tmp_path / "policy.yaml"
    path.write_text('"container:get_one": "role:nobody"\n')
    import os
    import time

    stat = path.stat()
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))  # a distinct mtime, whatever the fs
    time.sleep(policy.RULES_CHECK_INTERVAL + 0.1)
    assert not policy.authorize(_ctx(), "container:get_one", {"project_id": "p1"}, fatal=False)


def test_remembered_decisions_are_per_caller_and_target(policy_file) -> None:
    policy_file("{}")
    member, admin = _ctx(), _ctx(roles=("admin",))
    for _ in range(2):  # the second pass is answered from memory
        assert policy.authorize(member, "container:get_one", {"project_id": "p1"}, fatal=False)
        assert not policy.authorize(member, "container:get_one", {"project_id": "p2"}, fatal=False)
        assert policy.authorize(admin, "container:get_one", {"project_id": "p2"}, fatal=False)
        assert policy.hidden_fields(member, "container:get_one", ["host", "name"]) == {"host"}
        assert policy.hidden_fields(admin, "container:get_one", ["host", "name"]) == set()


def test_a_policy_with_an_http_check_is_never_remembered(policy_file) -> None:
    policy_file('"container:get_one": "http://127.0.0.1:9/check"\n')
    enforcer = policy.get_enforcer()
    enforcer.load_rules()
    assert not enforcer.cacheable
