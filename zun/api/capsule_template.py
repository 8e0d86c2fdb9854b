"""Capsule templates: parsing and the semantic checks the JSON schema cannot express.

``POST /v1/capsules`` takes ``{"template": <object or JSON string>}`` (capsule-template.md).
:func:`load` turns the ``template`` value into a validated object; :func:`build_plan` turns that
object into a :class:`zun.compute.capsule_plan.CapsulePlan` (the domain's view: the capsule
row's values, one member per (init) container and one volume per declared volume).

Deliberate differences from Zun (docs/compatibility.md, "Capsules"):

* every template error is a 400 naming the problem. Zun answered a 500 with an obfuscated body
  for an unparsable template string, a template that is neither object nor string, an empty
  ``containers`` list, a member without ``image``, a volume with both or neither of
  ``size``/``volumeID``, a cpu given as a string, or a non-list ``command`` in an init container.
  The codes are derived from Zun's class names: ``container.invalid-capsule-template``,
  ``container.failed-parse-string-to-json``;
* ``initContainers`` items are type-checked like ``containers`` items (unknown keys are still
  ignored, as in Zun);
* the deprecated top-level ``restartPolicy`` is honoured when ``spec.restartPolicy`` is absent
  (Zun read a key its own schema forbids, so it always used ``always``);
* regular containers keep the capsule's restart policy when init containers exist (Zun leaked
  the init containers' ``on-failure``/10 into them).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Any

import jsonschema

from zun.api import json_input, validation
from zun.common import exception
from zun.compute.capsule_plan import CapsulePlan, MemberPlan, VolumePlan

# Zun's names, HTTP 400 here: the code derived from the class name stays Zun's.


class InvalidCapsuleTemplate(exception.InvalidCapsuleTemplate):
    code = 400


class FailedParseStringToJson(exception.FailedParseStringToJson):
    code = 400


TEMPLATE_SCHEMA = "parameter_types.capsule_template"
CREATE_SCHEMA = "capsules.capsule_create"

RESTART_POLICIES = {"Always": "always", "OnFailure": "on-failure", "Never": "no"}
DEFAULT_RESTART_POLICY = "always"
# What Zun gives init containers of an ``always`` capsule (they must end).
INIT_RESTART_POLICY = {"MaximumRetryCount": "10", "Name": "on-failure"}

VOLUME_MOUNT_INVALID = "volume mount parameters is invalid."


# --- loading ----------------------------------------------------------------------------------


def check_template_type(params: Mapping[str, Any]) -> None:
    """A ``template`` that is neither object nor string is a 400.

    Zun's schema lists the non-standard type ``unicode``, on which the validator itself
    crashes (500) for any other JSON type; this check runs before the schema.
    """
    if "template" not in params:
        return
    value = params["template"]
    if not isinstance(value, dict | str):
        raise exception.SchemaValidationError(
            detail=f"Invalid input for field 'template'.Value: '{value}'. {value!r} is not of "
            "type 'object', 'string'"
        )


def load(value: dict[str, Any] | str) -> dict[str, Any]:
    """The template object: a JSON string is parsed (400 when it does not parse), then the
    template schema applies (a dict was already checked by the body schema; checking again
    costs little and keeps one path)."""
    if isinstance(value, str):
        try:
            value = json_input.loads(value)
        except json_input.BadJson as exc:
            raise FailedParseStringToJson(reason=str(exc)) from None
        if not isinstance(value, dict):
            raise FailedParseStringToJson(reason="the template string is not a JSON object")
    validation.validate_body(TEMPLATE_SCHEMA, value)
    return value


# --- init container items: the containers item schema, unknown keys allowed ------------------


@functools.cache
def _init_item_validator() -> Any:
    schema = validation.schema(TEMPLATE_SCHEMA)
    item = copy.deepcopy(schema["properties"]["spec"]["properties"]["containers"]["items"])
    item["additionalProperties"] = True
    return validation.validator_for(item)


def reset() -> None:
    """Forget the cached validator (after the cpu/memory bounds changed, in tests)."""
    _init_item_validator.cache_clear()


def _check_init_item(index: int, item: Any) -> None:
    if not isinstance(item, dict):
        raise InvalidCapsuleTemplate(reason=f"initContainers[{index}] is not an object")
    error = jsonschema.exceptions.best_match(_init_item_validator().iter_errors(item))
    if error is None:
        return
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
    if error.validator == "required":
        raise InvalidCapsuleTemplate(reason=f"initContainers[{index}] has no image")
    raise exception.SchemaValidationError(
        detail=f"Invalid input for field 'initContainers[{index}]{where}'.Value: "
        f"'{error.instance}'. {error.message}"
    )


# --- building the plan ------------------------------------------------------------------------


def _flag(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _command(item: Mapping[str, Any]) -> list[str] | None:
    command = [c for c in item.get("command") or [] if c is not None]
    args = [a for a in item.get("args") or [] if a is not None]
    return (command + args) or None


def _exposed_ports(ports: Any) -> dict[str, Any] | None:
    if not ports:
        return None
    exposed: dict[str, Any] = {}
    for port in ports:
        protocol = str(port.get("protocol") or "TCP").lower()
        exposed[f"{int(port['containerPort'])}/{protocol}"] = {}
    return exposed


def _restart_policy(template: Mapping[str, Any]) -> dict[str, str]:
    spec = template["spec"]
    chosen = spec.get("restartPolicy") or template.get("restartPolicy")
    name = (
        RESTART_POLICIES.get(chosen, DEFAULT_RESTART_POLICY) if chosen else DEFAULT_RESTART_POLICY
    )
    return {"MaximumRetryCount": "0", "Name": name}


def _member(
    item: Mapping[str, Any],
    init: bool,
    restart_policy: dict[str, str],
    allow_pull_policy: bool,
    declared: set[str],
) -> MemberPlan:
    requests = (item.get("resources") or {}).get("requests") or {}
    cpu = requests.get("cpu")
    memory = requests.get("memory")
    pull_policy = item.get("imagePullPolicy")
    mounts = []
    for mount in item.get("volumeMounts") or []:
        # Zun ignores a mount naming an undeclared volume; so do we (compatibility).
        if mount["name"] in declared:
            mounts.append((mount["name"], mount["mountPath"], _flag(mount.get("readOnly"))))
    return MemberPlan(
        image=item["image"],
        init=init,
        command=_command(item),
        workdir=item.get("workDir"),
        environment=dict(item["env"]) if item.get("env") else None,
        image_pull_policy=(pull_policy.lower() if pull_policy and allow_pull_policy else None),
        interactive=_flag(item.get("stdin")),
        tty=_flag(item.get("tty")),
        cpu=None if cpu is None else float(cpu),
        memory=None if memory is None else str(int(memory)),
        exposed_ports=_exposed_ports(item.get("ports")),
        restart_policy=dict(restart_policy),
        mounts=mounts,
    )


def _volumes(spec: Mapping[str, Any]) -> list[VolumePlan]:
    plans: list[VolumePlan] = []
    seen: set[str] = set()
    for index, volume in enumerate(spec.get("volumes") or []):
        name = volume["name"]
        if name in seen:
            raise InvalidCapsuleTemplate(reason=f"volume name {name} is declared twice")
        seen.add(name)
        cinder = volume.get("cinder") or {}
        size, volume_id = cinder.get("size"), cinder.get("volumeID")
        if (size is None) == (volume_id is None):
            raise InvalidCapsuleTemplate(
                reason=f"volume {name} (volumes[{index}]) needs exactly one of cinder.size "
                "and cinder.volumeID"
            )
        if size is not None and (size <= 0 or size != int(size)):
            raise InvalidCapsuleTemplate(
                reason=f"volume {name}: size {size} is not a positive whole number of GiB"
            )
        plans.append(
            VolumePlan(
                name=name,
                size=None if size is None else int(size),
                volume_id=volume_id,
                auto_remove=_flag(cinder.get("autoRemove")),
            )
        )
    return plans


def wants_pull_policy(template: Mapping[str, Any]) -> bool:
    """Whether any member names an ``imagePullPolicy`` (then the policy rule is asked)."""
    spec = template.get("spec") or {}
    items = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return any(isinstance(i, dict) and i.get("imagePullPolicy") for i in items)


def build_plan(template: Mapping[str, Any], *, allow_pull_policy: bool) -> CapsulePlan:
    """The checked plan of a loaded template (raises 400s, see the module docstring)."""
    spec = template["spec"]
    containers = spec.get("containers") or []
    if not containers:
        raise InvalidCapsuleTemplate(reason="spec.containers needs at least one container")
    inits = spec.get("initContainers")
    if inits is None:
        inits = []
    if not isinstance(inits, list):
        raise InvalidCapsuleTemplate(reason="spec.initContainers is not a list")
    for index, item in enumerate(inits):
        _check_init_item(index, item)

    volumes = _volumes(spec)
    declared = {v.name for v in volumes}
    policy = _restart_policy(template)
    init_policy = dict(INIT_RESTART_POLICY) if policy["Name"] == "always" else dict(policy)
    init_plans = [_member(i, True, init_policy, allow_pull_policy, declared) for i in inits]
    plans = [_member(c, False, policy, allow_pull_policy, declared) for c in containers]

    mounted = {name for member in (*init_plans, *plans) for name, _, _ in member.mounts}
    if declared - mounted:
        raise exception.Invalid(message=VOLUME_MOUNT_INVALID)

    # Init containers run before the others: the capsule needs the larger of the two sets.
    cpu = sum(p.cpu or 0.0 for p in plans)
    memory = sum(int(p.memory or 0) for p in plans)
    for p in init_plans:
        cpu = max(cpu, p.cpu or 0.0)
        memory = max(memory, int(p.memory or 0))

    metadata = template.get("metadata") or {}
    labels = {str(k): str(v) for k, v in (metadata.get("labels") or {}).items()}
    annotations = metadata.get("annotations")
    if annotations is not None:
        annotations = {str(k): str(v) for k, v in annotations.items()}
    return CapsulePlan(
        name=metadata.get("name"),
        labels=labels,
        annotations=annotations,
        restart_policy=policy,
        availability_zone=template.get("availabilityZone"),
        cpu=float(cpu),
        memory=str(memory),
        init_containers=init_plans,
        containers=plans,
        volumes=volumes,
    )
