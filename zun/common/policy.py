"""Policy enforcement through oslo.policy, with the original's rule names and targets.

``authorize`` raises ``PolicyNotAuthorized`` (403, ``container.policy-not-authorized``).
Field rules (``container:get_one:<field>`` and the like) use ``might_not_exist``: a field with no
registered rule stays visible. :func:`hidden_fields` evaluates those rules once per request, not
once per row, which keeps large lists cheap.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from oslo_policy import opts as policy_opts
from oslo_policy import policy

from zun.common import exception, policies
from zun.common.context import RequestContext
from zun.conf import CONF

# [oslo_policy] (policy_file and friends) is readable as soon as this module is imported.
policy_opts.set_defaults(CONF)

_ENFORCER: policy.Enforcer | None = None
_LOCK = threading.Lock()


def get_enforcer() -> policy.Enforcer:
    global _ENFORCER
    if _ENFORCER is None:
        with _LOCK:
            if _ENFORCER is None:
                enforcer = policy.Enforcer(CONF)
                enforcer.register_defaults(policies.list_rules())
                enforcer.load_rules()
                _ENFORCER = enforcer
    return _ENFORCER


def reset() -> None:
    """Forget the enforcer (tests, or after the configuration changed)."""
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is not None:
            _ENFORCER.clear()
        _ENFORCER = None


def _credentials(context: RequestContext) -> dict[str, Any]:
    # Built by hand: oslo.context's policy values warn on every read of is_admin, which
    # Zun's check strings (is_admin:True) read on purpose.
    return {
        "user_id": context.user_id,
        "user_domain_id": context.user_domain_id,
        "project_id": context.project_id,
        "project_domain_id": context.project_domain_id,
        "roles": list(context.roles),
        "system_scope": context.system_scope,
        "is_admin": context.is_admin,
    }


def default_target(context: RequestContext) -> dict[str, Any]:
    return {"project_id": context.project_id, "user_id": context.user_id}


def authorize(context: RequestContext, action: str, target: dict[str, Any] | None = None,
              *, might_not_exist: bool = False, fatal: bool = True) -> bool:
    """Check ``action`` for ``context``; raise PolicyNotAuthorized when ``fatal``."""
    enforcer = get_enforcer()
    if might_not_exist and action not in enforcer.rules and action not in enforcer.registered_rules:
        return True
    if target is None:
        target = default_target(context)
    if action in enforcer.registered_rules:
        allowed = enforcer.authorize(action, target, _credentials(context), do_raise=False)
    elif action in enforcer.rules:
        # A rule only an operator's policy.yaml defines (e.g. a field rule): enforce it too.
        allowed = enforcer.enforce(action, target, _credentials(context), do_raise=False)
    else:
        raise policy.PolicyNotRegistered(action)
    if not allowed and fatal:
        raise exception.PolicyNotAuthorized(action=action)
    return bool(allowed)


def check_is_admin(context: RequestContext) -> bool:
    """Evaluate ``context_is_admin`` from roles alone, once, when the context is built."""
    enforcer = get_enforcer()
    creds = _credentials(context)
    target = {"project_id": context.project_id, "user_id": context.user_id}
    return bool(enforcer.authorize("context_is_admin", target, creds, do_raise=False))


def hidden_fields(context: RequestContext, prefix: str, fields: Iterable[str],
                  target: dict[str, Any] | None = None) -> frozenset[str]:
    """The fields of a view that ``prefix:<field>`` rules hide from this caller.

    The default field rules are admin-only and do not depend on the row, so a list evaluates
    them once. A deployment whose policy.yaml makes them row-dependent (project_id) still gets
    per-row answers through :func:`hidden_fields_for_row`.
    """
    enforcer = get_enforcer()
    known = enforcer.rules
    hidden = set()
    for field in fields:
        rule = f"{prefix}:{field}"
        if rule not in known:
            continue
        if not authorize(context, rule, target, might_not_exist=True, fatal=False):
            hidden.add(field)
    return frozenset(hidden)


def field_rules_depend_on_target(prefix: str) -> bool:
    """Whether any ``prefix:<field>`` rule looks at the target (then per-row checks are needed)."""
    enforcer = get_enforcer()
    for name, rule in enforcer.rules.items():
        if name.startswith(prefix + ":") and "%(" in str(rule):
            return True
    return False
