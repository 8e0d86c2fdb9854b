"""Policy enforcement through oslo.policy, with the original's rule names and targets.

``authorize`` raises ``PolicyNotAuthorized`` (403, ``container.policy-not-authorized``).
Field rules (``container:get_one:<field>`` and the like) use ``might_not_exist``: a field with no
registered rule stays visible. :func:`hidden_fields` evaluates those rules once per request, not
once per row, which keeps large lists cheap.

Speed: oslo.policy looks for the policy file and policy.d in every configuration directory on
every check, and inspects each check function's signature as it evaluates it (~0.3 ms a check,
several checks a request). :class:`_Enforcer` looks at the files at most once a second (a
changed policy.yaml still applies within a second, as oslo.policy's mtime check did), and
decisions are remembered per (rule, credentials, target) until the rules change. Checks are
pure functions of those three, except ``http:``/``https:`` checks, which call out: a policy
that uses one is never cached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Iterable
from typing import Any

from oslo_policy import opts as policy_opts
from oslo_policy import policy

from zun.common import exception, policies
from zun.common.context import RequestContext
from zun.conf import CONF

# [oslo_policy] (policy_file and friends) is readable as soon as this module is imported.
policy_opts.set_defaults(CONF)

# Seconds between two looks at policy.yaml and policy.d (oslo.policy looks on every check).
RULES_CHECK_INTERVAL = 1.0
# Remembered decisions, at most (then forgotten all at once).
MAX_DECISIONS = 50_000


class _Enforcer(policy.Enforcer):
    """oslo.policy's enforcer, with throttled file checks and a decision memo."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.decisions: dict[Hashable, Any] = {}
        self._cacheable: bool | None = None
        self._next_file_check = 0.0
        super().__init__(*args, **kwargs)

    def _rules_changed(self) -> None:
        self.decisions = {}
        self._cacheable = None

    def set_rules(self, rules: Any, overwrite: bool = True, use_conf: bool = False) -> None:
        super().set_rules(rules, overwrite, use_conf)
        self._rules_changed()

    def clear(self) -> None:
        super().clear()
        self._rules_changed()
        self._next_file_check = 0.0

    def register_default(self, default: Any) -> None:
        super().register_default(default)
        self._rules_changed()

    def load_rules(self, force_reload: bool = False) -> None:
        now = time.monotonic()
        if not force_reload and self.rules and now < self._next_file_check:
            return
        size = len(self.rules)
        super().load_rules(force_reload)
        self._next_file_check = now + RULES_CHECK_INTERVAL
        if len(self.rules) != size:  # defaults filled in without set_rules
            self._rules_changed()

    @property
    def cacheable(self) -> bool:
        if self._cacheable is None:
            self._cacheable = not any(
                "http:" in text or "https:" in text
                for text in (str(rule) for rule in self.rules.values())
            )
        return self._cacheable


_ENFORCER: _Enforcer | None = None
_LOCK = threading.Lock()


def get_enforcer() -> _Enforcer:
    global _ENFORCER
    if _ENFORCER is None:
        with _LOCK:
            if _ENFORCER is None:
                enforcer = _Enforcer(CONF)
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


def _memo_key(context: RequestContext, target: dict[str, Any] | None) -> Hashable | None:
    """What a decision depends on: the credentials and the target (None: not hashable)."""
    try:
        target_key = None if target is None else tuple(sorted(target.items()))
        key = (
            context.user_id,
            context.user_domain_id,
            context.project_id,
            context.project_domain_id,
            tuple(context.roles),
            context.system_scope,
            context.is_admin,
            target_key,
        )
        hash(key)
    except TypeError:
        return None
    return key


def authorize(
    context: RequestContext,
    action: str,
    target: dict[str, Any] | None = None,
    *,
    might_not_exist: bool = False,
    fatal: bool = True,
) -> bool:
    """Check ``action`` for ``context``; raise PolicyNotAuthorized when ``fatal``."""
    enforcer = get_enforcer()
    enforcer.load_rules()  # at most once a second; a rule added to policy.yaml counts at once
    if might_not_exist and action not in enforcer.rules and action not in enforcer.registered_rules:
        return True
    if target is None:
        target = default_target(context)
    decisions = enforcer.decisions
    key = _memo_key(context, target) if enforcer.cacheable else None
    allowed = decisions.get((action, key)) if key is not None else None
    if allowed is None:
        allowed = _decide(enforcer, context, action, target)
        if key is not None:
            if len(decisions) >= MAX_DECISIONS:
                decisions.clear()
            decisions[(action, key)] = allowed
    if not allowed and fatal:
        raise exception.PolicyNotAuthorized(action=action)
    return bool(allowed)


def _decide(
    enforcer: _Enforcer, context: RequestContext, action: str, target: dict[str, Any]
) -> bool:
    if action in enforcer.registered_rules:
        allowed = enforcer.authorize(action, target, _credentials(context), do_raise=False)
    elif action in enforcer.rules:
        # A rule only an operator's policy.yaml defines (e.g. a field rule): enforce it too.
        allowed = enforcer.enforce(action, target, _credentials(context), do_raise=False)
    else:
        raise policy.PolicyNotRegistered(action)
    return bool(allowed)


def check_is_admin(context: RequestContext) -> bool:
    """Evaluate ``context_is_admin`` from roles alone, once, when the context is built."""
    return authorize(context, "context_is_admin", fatal=False)


def hidden_fields(
    context: RequestContext,
    prefix: str,
    fields: Iterable[str],
    target: dict[str, Any] | None = None,
) -> frozenset[str]:
    """The fields of a view that ``prefix:<field>`` rules hide from this caller.

    The default field rules are admin-only and do not depend on the row, so a list evaluates
    them once. A deployment whose policy.yaml makes them row-dependent (project_id) still gets
    per-row answers through :func:`hidden_fields_for_row`.
    """
    enforcer = get_enforcer()
    enforcer.load_rules()
    fields = tuple(fields)
    decisions = enforcer.decisions
    key = _memo_key(context, target) if enforcer.cacheable else None
    memo_key = ("hidden", prefix, fields, key)
    if key is not None and memo_key in decisions:
        return decisions[memo_key]
    known = enforcer.rules
    hidden = set()
    for field in fields:
        rule = f"{prefix}:{field}"
        if rule not in known:
            continue
        if not authorize(context, rule, target, might_not_exist=True, fatal=False):
            hidden.add(field)
    result = frozenset(hidden)
    if key is not None:
        decisions[memo_key] = result
    return result


def field_rules_depend_on_target(prefix: str) -> bool:
    """Whether any ``prefix:<field>`` rule looks at the target (then per-row checks are needed)."""
    enforcer = get_enforcer()
    enforcer.load_rules()
    decisions = enforcer.decisions
    memo_key = ("depends", prefix)
    if memo_key in decisions:
        return decisions[memo_key]
    result = any(
        name.startswith(prefix + ":") and "%(" in str(rule) for name, rule in enforcer.rules.items()
    )
    decisions[memo_key] = result
    return result
