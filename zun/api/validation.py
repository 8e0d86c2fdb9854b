"""JSON-schema validation of request bodies and query strings.

The schemas are the original service's (Draft 4, in ``zun/api/schemas/request_schemas.json``);
bounds that come from configuration (cpu, memory, disk, image drivers) are filled in from the
live configuration when the schemas are first loaded, in the schemas that size one container
(containers and capsules) only: a quota's cpu/memory/disk is a project's total, bounded by -1
(unlimited) below and nothing above. As in the original, ``minimum`` and
``maximum`` also apply to numbers given as strings.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema import validators

from zun.common import exception

_SCHEMA_FILE = Path(__file__).parent / "schemas" / "request_schemas.json"


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        for convert in (int, float):
            try:
                return convert(value)
            except ValueError:
                continue
    return None


def _not_finite(number: float | None) -> bool:
    # NaN compares false with every bound, so it passed both minimum and maximum.
    return isinstance(number, float) and not math.isfinite(number)


def _minimum(validator: Any, minimum: Any, instance: Any, schema: dict) -> Any:
    number = _as_number(instance)
    if _not_finite(number):
        yield jsonschema.ValidationError(f"{instance!r} is not a finite number")
    elif number is not None and number < minimum:
        yield jsonschema.ValidationError(f"{instance!r} is less than the minimum of {minimum!r}")


def _maximum(validator: Any, maximum: Any, instance: Any, schema: dict) -> Any:
    number = _as_number(instance)
    if _not_finite(number):
        return
    if number is not None and number > maximum:
        yield jsonschema.ValidationError(f"{instance!r} is greater than the maximum of {maximum!r}")


_Validator = validators.extend(
    jsonschema.Draft4Validator, {"minimum": _minimum, "maximum": _maximum}
)


#: Schemas whose cpu/memory/disk size one container: the per-container bounds apply there.
_SIZED_SCHEMAS = ("containers.", "capsules.", "parameter_types.capsule_template")


def _apply_config(schemas: dict[str, dict]) -> None:
    from zun.conf import CONF

    bounds = {
        "cpu": (CONF.minimum_cpus, CONF.maximum_cpus),
        "memory": (CONF.minimum_memory, CONF.maximum_memory),
        "disk": (CONF.minimum_disk, CONF.maximum_disk),
    }
    drivers = [*CONF.image_driver_list, None, "None"]

    def walk(node: Any, sized: bool) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                for name, (low, high) in bounds.items():
                    spec = props.get(name)
                    if sized and isinstance(spec, dict) and "minimum" in spec:
                        spec["minimum"], spec["maximum"] = low, high
                spec = props.get("image_driver")
                if isinstance(spec, dict) and "enum" in spec:
                    spec["enum"] = drivers
            for value in node.values():
                walk(value, sized)
        elif isinstance(node, list):
            for value in node:
                walk(value, sized)

    for name, node in schemas.items():
        walk(node, name.startswith(_SIZED_SCHEMAS))


@functools.cache
def _validators() -> dict[str, Any]:
    schemas = json.loads(_SCHEMA_FILE.read_text())
    _apply_config(schemas)
    checker = jsonschema.FormatChecker(("ipv4", "ipv6"))
    return {name: _Validator(schema, format_checker=checker) for name, schema in schemas.items()}


def validator_for(schema: dict[str, Any]) -> Any:
    """A validator with this module's rules (bounded numeric strings) for a schema of its own."""
    return _Validator(schema, format_checker=jsonschema.FormatChecker(("ipv4", "ipv6")))


def reset() -> None:
    """Reload the schemas (after a configuration change, in tests)."""
    _validators.cache_clear()


def schema(name: str) -> dict[str, Any]:
    return copy.deepcopy(_validators()[name].schema)


def schema_names() -> list[str]:
    return sorted(_validators())


def _message(error: jsonschema.ValidationError, query: bool) -> str:
    if error.path:
        field = error.path[-1]
        if query:
            return (
                f"Invalid input for query parameters '{field}'. Value: "
                f"'{error.instance}'. {error.message}"
            )
        return f"Invalid input for field '{field}'.Value: '{error.instance}'. {error.message}"
    return error.message


def _validate(name: str, data: Any, query: bool) -> None:
    validator = _validators()[name]
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise exception.SchemaValidationError(detail=_message(error, query))


def validate_body(name: str, data: Any) -> None:
    """Validate a JSON body (or the merged body and query) against schema ``name``."""
    _validate(name, data, query=False)


def validate_query(name: str, params: dict[str, Any]) -> None:
    """Validate URL query parameters against schema ``name``."""
    _validate(name, params, query=True)
