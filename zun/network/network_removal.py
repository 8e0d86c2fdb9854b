"""Removing a Docker network whose last endpoint the engine may still be releasing.

Docker answers 403 "error while removing network: ... has active endpoints" while any endpoint
of the network exists, and an endpoint outlives its container for as long as the network
driver takes to release it (Leave, then DeleteEndpoint: for kuryr, calls to Neutron). The
network's inspect shows the phases of a container's removal: the container still holds it (its
ID is a key of ``Containers``, its own inspect says ``removing``), then an endpoint without a
container (key ``ep-<endpoint id>``), then nothing although the endpoint's deletion has not
returned yet. None of them is "in use": a DELETE that arrives meanwhile, e.g. right after a
container's delete (the API answers that delete before the node has removed the container),
waits for the release for at most :data:`RELEASE_WAIT` seconds instead of failing with the
engine's 403. A container that stays on the network is a 409 at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import docker.errors

from zun.common import exception

# Seconds a removal waits for endpoints being released (kuryr took 0.5-0.7 s for one here).
RELEASE_WAIT = 5.0
_POLL = 0.1
# Docker's key of an endpoint that no container holds any more (libnetwork's "ep-" + its ID).
RELEASING_PREFIX = "ep-"
_GOING = ("removing", "dead")


def container_stays(client: Any, container_id: str) -> bool:
    """Whether a container keeps its networks: not one being removed, which only waits for
    its endpoints' release (the engine's inspect says ``removing``, or waits until it is
    gone; its list still shows it as it was)."""
    try:
        status = client.api.inspect_container(container_id)["State"].get("Status")
    except docker.errors.NotFound:
        return False
    return status not in _GOING


def has_containers(net: Any) -> bool:
    """Whether a container that stays holds an endpoint on ``net`` (read afresh)."""
    net.reload()
    return any(
        container_stays(net.client, key)
        for key in (net.attrs.get("Containers") or {})
        if not key.startswith(RELEASING_PREFIX)
    )


def endpoints_active(err: docker.errors.APIError) -> bool:
    """Whether the engine refused a network removal because endpoints still exist."""
    return "has active endpoints" in str(err.explanation or err)


def in_use(network: str) -> exception.Conflict:
    return exception.Conflict(message=f"Network {network} is in use by containers.")


def remove(net: Any, network: str, used: Callable[[], bool], wait: float = RELEASE_WAIT) -> None:
    """``net.remove()``, waiting up to ``wait`` seconds for endpoints being released.

    ``used()`` says whether a container uses the network (it is asked before each try):
    then, or when endpoints are still there after ``wait``, a 409 ``Conflict`` naming
    ``network``. ``docker.errors.NotFound`` and other engine errors are raised as they are."""
    deadline = time.monotonic() + wait
    while True:
        if used():
            raise in_use(network)
        try:
            net.remove()
            return
        except docker.errors.NotFound:
            raise
        except docker.errors.APIError as err:
            if not endpoints_active(err):
                raise
            if time.monotonic() >= deadline:
                raise exception.Conflict(
                    message=f"Network {network} still has endpoints the engine has not "
                    f"released after {wait:g} seconds; try again."
                ) from err
        time.sleep(_POLL)
