"""Placement, when ``[scheduler]/use_placement`` is on: providers, candidates, allocations.

Each zun-compute reports one resource provider, named after the node's hostname, whose UUID
is the node's ``compute_node.rp_uuid`` (its own UUID unless a provider of that name already
existed: then that provider is found again and adopted, never duplicated). Its inventory is
VCPU, MEMORY_MB and DISK_GB with the node's own allocation ratios and reserves; its traits
are the ones set on it by others plus ``CUSTOM_ZUN_COMPUTE_STATUS_DISABLED`` while the node's
zun-compute service is disabled (the original's only trait).

zun-api asks ``GET /allocation_candidates`` with the original's query (resources as the
original computes them: whole VCPUs rounded up, defaults for unset values; the forbidden
disabled trait; ``in_tree`` for a requested host; ``limit`` = ``[scheduler]/
max_placement_results``), and claims ``PUT /allocations/{container uuid}`` with the consumer
generation (microversion 1.28+), ``consumer_type`` ``ZUN_CONTAINER`` (1.38) and the
container's project and user. A claim that loses a generation race is retried (bounded); a
claim that no longer fits (someone else, e.g. Nova, took the room) moves on to the next
candidate.

Every failure to reach Placement (connection refused, timeout, 5xx, no endpoint, unusable
service credentials) is :class:`zun.common.exception.PlacementUnavailable` (503).

The calls use zun's own service credentials (``[keystone_auth]``) and ``[placement_client]``
for the endpoint (region, interface) and TLS.
"""

from __future__ import annotations

import logging
import math
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session

from zun.common import exception, service_catalog
from zun.conf import CONF

LOG = logging.getLogger(__name__)

# 1.38: consumer_type on allocations (1.28 consumer generations, 1.31 in_tree, 1.22
# forbidden traits come with it). Placement 16.x speaks up to 1.39.
MICROVERSION = "1.38"
CONSUMER_TYPE = "ZUN_CONTAINER"
DISABLED_TRAIT = "CUSTOM_ZUN_COMPUTE_STATUS_DISABLED"
# Bounded retries of a write that lost a generation race to a concurrent writer.
GENERATION_RETRIES = 4
DEFAULT_TIMEOUT = 30.0


def enabled() -> bool:
    return bool(CONF.scheduler.use_placement)


# --- what a container asks for --------------------------------------------------------------


def resources_of(cpu: float | None, memory_mb: int | None, disk_gb: int | None) -> dict[str, int]:
    """Placement amounts for a container, as the original computes them: VCPU is the CPU
    count rounded up (at least 1), MEMORY_MB at least 1, DISK_GB only when asked for;
    unset values take ``[DEFAULT]/default_cpu`` and ``default_memory``."""
    cpu = float(CONF.default_cpu) if cpu is None else float(cpu)
    memory = int(CONF.default_memory) if memory_mb is None else int(memory_mb)
    amounts = {"VCPU": max(1, math.ceil(cpu)), "MEMORY_MB": max(1, memory)}
    if disk_gb and int(disk_gb) > 0:
        amounts["DISK_GB"] = int(disk_gb)
    return amounts


def sum_resources(parts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for part in parts:
        for rc, amount in part.items():
            total[rc] = total.get(rc, 0) + int(amount)
    return total


def candidate_query(
    resources: Mapping[str, int], *, in_tree: str | None = None, limit: int | None = None
) -> str:
    """The ``GET /allocation_candidates`` query string (the original's, key order
    included: tests/contract/vectors.json ``placement_query``)."""
    params: list[tuple[str, str]] = []
    if in_tree:
        params.append(("in_tree", in_tree))
    if limit is not None:
        params.append(("limit", str(int(limit))))
    params.append(("required", "!" + DISABLED_TRAIT))
    params.append(
        ("resources", ",".join(f"{rc}:{amount}" for rc, amount in sorted(resources.items())))
    )
    return urllib.parse.urlencode(params)


def query_limit(hints: Mapping[str, Any] | None, hosts_for_requested: int | None) -> int | None:
    """The original drops the limit for a ``same_host`` hint and for a requested host that
    matches several nodes; otherwise ``[scheduler]/max_placement_results``."""
    if hints and "same_host" in hints:
        return None
    if hosts_for_requested is not None and hosts_for_requested > 1:
        return None
    return int(CONF.scheduler.max_placement_results)


# --- the client -------------------------------------------------------------------------------


def _unavailable(what: str, exc: BaseException | str) -> exception.PlacementUnavailable:
    return exception.PlacementUnavailable(reason=f"{what}: {exc}")


def _session() -> ks_session.Session:
    try:
        auth = ks_loading.load_auth_from_conf_options(CONF, "keystone_auth")
    except Exception as exc:  # noqa: BLE001 - keystoneauth raises several kinds here
        raise _unavailable("zun's service credentials ([keystone_auth]) are unusable", exc) from exc
    tls = service_catalog.tls_options(CONF.placement_client)
    if tls:
        return ks_session.Session(
            auth=auth,
            verify=tls.get("verify", True),
            cert=tls.get("cert"),
            timeout=CONF.keystone_auth.timeout or DEFAULT_TIMEOUT,
        )
    sess = ks_loading.load_session_from_conf_options(CONF, "keystone_auth", auth=auth)
    if sess.timeout is None:
        sess.timeout = DEFAULT_TIMEOUT
    return sess


@dataclass
class Response:
    status: int
    body: Any

    def error_codes(self) -> list[str]:
        if not isinstance(self.body, dict):
            return []
        return [str(e.get("code")) for e in self.body.get("errors") or [] if e.get("code")]


class PlacementClient:
    """Placement's REST API at :data:`MICROVERSION` (keystoneauth adapter, service type
    ``placement``)."""

    def __init__(
        self, session: ks_session.Session | None = None, endpoint_override: str | None = None
    ) -> None:
        self._session = session
        self._endpoint_override = endpoint_override
        self._adapter: ks_adapter.Adapter | None = None
        self._known_traits: set[str] = set()

    def adapter(self) -> ks_adapter.Adapter:
        if self._adapter is None:
            group = CONF.placement_client
            self._adapter = ks_adapter.Adapter(
                self._session or _session(),
                service_type="placement",
                interface=service_catalog.interface(group.endpoint_type),
                region_name=group.region_name,
                endpoint_override=self._endpoint_override or group.endpoint_override,
                default_microversion=MICROVERSION,
                raise_exc=False,
            )
        return self._adapter

    def request(self, method: str, path: str, json: Any = None) -> Response:
        try:
            resp = self.adapter().request(path, method, json=json)
        except ks_exc.EndpointNotFound as exc:
            raise _unavailable("no placement endpoint in the service catalog", exc) from exc
        except (ks_exc.ConnectionError, ks_exc.ConnectTimeout, ks_exc.RequestTimeout) as exc:
            raise _unavailable(f"{method} {path} could not reach it", exc) from exc
        except ks_exc.ClientException as exc:
            raise _unavailable(f"{method} {path} failed", exc) from exc
        if resp.status_code >= 500 or resp.status_code in (401, 403):
            raise _unavailable(f"{method} {path}", f"it answered {resp.status_code}")
        try:
            body = resp.json() if resp.content else None
        except ValueError:
            body = None
        return Response(resp.status_code, body)

    def _ok(
        self, method: str, path: str, json: Any = None, accept: Iterable[int] = (200, 201, 204)
    ) -> Response:
        resp = self.request(method, path, json)
        if resp.status not in accept:
            raise exception.ZunException(
                f"Placement refused {method} {path}: {resp.status} {resp.body}"
            )
        return resp

    # --- providers ----------------------------------------------------------------------------

    def get_provider(self, rp_uuid: str) -> dict[str, Any] | None:
        resp = self.request("GET", f"/resource_providers/{rp_uuid}")
        if resp.status == 404:
            return None
        return (
            self._ok("GET", f"/resource_providers/{rp_uuid}").body
            if resp.status != 200
            else resp.body
        )

    def provider_by_name(self, name: str) -> dict[str, Any] | None:
        query = urllib.parse.urlencode({"name": name})
        found = self._ok("GET", f"/resource_providers?{query}").body["resource_providers"]
        return found[0] if found else None

    def ensure_provider(
        self, rp_uuid: str, name: str, other_names: Iterable[str] = ()
    ) -> dict[str, Any]:
        """The provider with this UUID, else the one with this name (or one of
        ``other_names``), else a new one: a node already known to Placement is found again."""
        found = self.get_provider(rp_uuid)
        if found is not None:
            return found
        for candidate in (name, *other_names):
            found = self.provider_by_name(candidate)
            if found is not None:
                return found
        resp = self.request("POST", "/resource_providers", {"uuid": rp_uuid, "name": name})
        if resp.status in (200, 201):
            return resp.body
        if resp.status == 409:  # created meanwhile by a concurrent reporter
            found = self.get_provider(rp_uuid) or self.provider_by_name(name)
            if found is not None:
                return found
        raise exception.ZunException(
            f"Placement refused to create provider {name} ({rp_uuid}): {resp.status} {resp.body}"
        )

    def delete_provider(self, rp_uuid: str) -> None:
        self._ok("DELETE", f"/resource_providers/{rp_uuid}", accept=(204, 404))

    def set_inventory(self, rp_uuid: str, inventories: Mapping[str, Mapping[str, Any]]) -> None:
        """Replace the provider's inventory (retried when a concurrent writer moved its
        generation)."""
        for _ in range(GENERATION_RETRIES):
            current = self._ok("GET", f"/resource_providers/{rp_uuid}/inventories").body
            if current["inventories"] == inventories:
                return
            resp = self.request(
                "PUT",
                f"/resource_providers/{rp_uuid}/inventories",
                {
                    "resource_provider_generation": current["resource_provider_generation"],
                    "inventories": dict(inventories),
                },
            )
            if resp.status == 200:
                return
            if resp.status != 409 or "placement.concurrent_update" not in resp.error_codes():
                raise exception.ZunException(
                    f"Placement refused the inventory of {rp_uuid}: {resp.status} {resp.body}"
                )
        raise exception.ZunException(f"The inventory of {rp_uuid} kept changing under us")

    def ensure_trait(self, trait: str) -> None:
        if trait not in self._known_traits:
            self._ok("PUT", f"/traits/{trait}", accept=(201, 204))
            self._known_traits.add(trait)

    def set_traits(
        self, rp_uuid: str, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> set[str]:
        """Add and remove traits, keeping those others set; the provider's traits after."""
        add, remove = set(add), set(remove)
        for trait in add:
            self.ensure_trait(trait)
        for _ in range(GENERATION_RETRIES):
            current = self._ok("GET", f"/resource_providers/{rp_uuid}/traits").body
            have = set(current["traits"])
            want = (have | add) - remove
            if want == have:
                return have
            resp = self.request(
                "PUT",
                f"/resource_providers/{rp_uuid}/traits",
                {
                    "resource_provider_generation": current["resource_provider_generation"],
                    "traits": sorted(want),
                },
            )
            if resp.status == 200:
                return want
            if resp.status != 409:
                raise exception.ZunException(
                    f"Placement refused the traits of {rp_uuid}: {resp.status} {resp.body}"
                )
        raise exception.ZunException(f"The traits of {rp_uuid} kept changing under us")

    # --- candidates -------------------------------------------------------------------------

    def allocation_candidates(self, query: str) -> list[str]:
        """Provider UUIDs of the candidates, in Placement's order, each once."""
        self.ensure_trait(DISABLED_TRAIT)  # a forbidden trait must exist
        body = self._ok("GET", f"/allocation_candidates?{query}").body
        seen: list[str] = []
        for request in body.get("allocation_requests") or []:
            for rp_uuid in request.get("allocations") or {}:
                if rp_uuid not in seen:
                    seen.append(rp_uuid)
        return seen

    # --- allocations ------------------------------------------------------------------------

    def get_allocations(self, consumer: str) -> dict[str, Any]:
        """``{"allocations": {rp: {"resources": ...}}, "consumer_generation": ...,
        "consumer_type": ...}`` (empty allocations for an unknown consumer)."""
        return self._ok("GET", f"/allocations/{consumer}").body

    def provider_allocations(self, rp_uuid: str) -> dict[str, dict[str, int]]:
        """``{consumer: resources}`` of every allocation against the provider."""
        body = self._ok("GET", f"/resource_providers/{rp_uuid}/allocations").body
        return {
            consumer: dict(item.get("resources") or {})
            for consumer, item in (body.get("allocations") or {}).items()
        }

    def put_allocation(
        self,
        consumer: str,
        allocations: Mapping[str, Mapping[str, int]],
        *,
        project_id: str,
        user_id: str,
        expect: Mapping[str, Any] | None = None,
    ) -> bool:
        """Set the consumer's allocations to exactly ``allocations`` (``{rp: resources}``);
        False when they do not fit. A lost generation race is retried (bounded).

        ``expect``: the consumer's allocations as just read (saves a GET)."""
        current = expect
        for _ in range(GENERATION_RETRIES):
            if current is None:
                current = self.get_allocations(consumer)
            body = {
                "allocations": {rp: {"resources": dict(res)} for rp, res in allocations.items()},
                "project_id": project_id,
                "user_id": user_id,
                "consumer_generation": current.get("consumer_generation"),
                "consumer_type": CONSUMER_TYPE,
            }
            resp = self.request("PUT", f"/allocations/{consumer}", body)
            if resp.status == 204:
                return True
            if resp.status == 409 and "placement.concurrent_update" in resp.error_codes():
                LOG.info("Allocation of %s: generation conflict, retrying", consumer)
                current = None
                continue
            if resp.status == 409:
                LOG.info("Allocation of %s does not fit: %s", consumer, resp.body)
                return False
            raise exception.ZunException(
                f"Placement refused the allocation of {consumer}: {resp.status} {resp.body}"
            )
        raise exception.Conflict(
            message=f"The allocation of {consumer} kept changing in Placement; retry."
        )

    def delete_allocation(self, consumer: str) -> None:
        self._ok("DELETE", f"/allocations/{consumer}", accept=(204, 404))


_CLIENT: PlacementClient | None = None
_CLIENT_LOCK = threading.Lock()


def client() -> PlacementClient:
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None:
            _CLIENT = PlacementClient()
        return _CLIENT


def reset_client() -> None:
    """Forget the process's client (configuration changed)."""
    global _CLIENT
    with _CLIENT_LOCK:
        _CLIENT = None


# --- claiming, in a scheduling transaction ------------------------------------------------


@dataclass(frozen=True)
class Consumer:
    """Who an allocation is for: a container's (or capsule's) UUID, project and user, and
    the amounts (:func:`resources_of`)."""

    uuid: str
    project_id: str
    user_id: str
    resources: dict[str, int]
    # A container being created: Placement cannot know it yet, so its allocations are not
    # read first (one round trip less; a stale guess is a generation conflict, retried).
    new: bool = False


NO_ALLOCATIONS: dict[str, Any] = {"allocations": {}, "consumer_generation": None}


def consumer_of(
    uuid: str,
    project_id: str | None,
    user_id: str | None,
    resources: Mapping[str, int],
    new: bool = False,
) -> Consumer:
    # Placement wants both ids; a row written without a user (tests, the embedded mode's
    # noauth admin) gets the project's.
    project = project_id or "zun"
    return Consumer(uuid, project, user_id or project, dict(resources), new)


def claim_in_transaction(
    session: Any, consumer: Consumer, rp_uuid: str, current: Mapping[str, Any] | None = None
) -> bool:
    """Set the consumer's allocation to ``rp_uuid`` (replacing any it had elsewhere, which
    is how a move gives the old host's back); False when it does not fit there.

    Tied to ``session``: if its transaction rolls back, the allocations the consumer had
    before are put back (none: the new one is deleted), so Placement and the database agree
    either way."""
    api = client()
    before = dict(current) if current is not None else api.get_allocations(consumer.uuid)
    if not api.put_allocation(
        consumer.uuid,
        {rp_uuid: consumer.resources},
        project_id=consumer.project_id,
        user_id=consumer.user_id,
        expect=before,
    ):
        return False
    from sqlalchemy import event

    outcome = {"committed": False}

    def committed(_session: Any) -> None:
        outcome["committed"] = True

    def rolled_back(_session: Any) -> None:
        if not outcome["committed"]:
            _restore(consumer, before.get("allocations") or {})

    event.listen(session, "after_commit", committed, once=True)
    event.listen(session, "after_rollback", rolled_back, once=True)
    return True


def _restore(consumer: Consumer, previous: Mapping[str, Any]) -> None:
    try:
        if not previous:
            client().delete_allocation(consumer.uuid)
            return
        client().put_allocation(
            consumer.uuid,
            {rp: dict(item.get("resources") or {}) for rp, item in previous.items()},
            project_id=consumer.project_id,
            user_id=consumer.user_id,
        )
    except Exception as exc:  # noqa: BLE001 - healed by the nodes' reconciliation
        LOG.warning(
            "Could not put back the Placement allocation of %s after a rollback: %s",
            consumer.uuid,
            exc,
        )


# --- releasing, from anywhere ---------------------------------------------------------------


def release(consumer: str) -> None:
    """Delete the consumer's allocation now; a failure is logged, never raised: the node's
    reconciliation deletes allocations whose container is gone."""
    if not enabled():
        return
    try:
        client().delete_allocation(consumer)
    except Exception as exc:  # noqa: BLE001 - healed by the reconciliation
        LOG.warning(
            "Could not delete the Placement allocation of %s (the node's reconciliation will): %s",
            consumer,
            exc,
        )


def release_after_commit(session: Any, consumer: str) -> None:
    """Delete the consumer's allocation once ``session``'s transaction has committed."""
    if not enabled():
        return
    from sqlalchemy import event

    event.listen(session, "after_commit", lambda _s: release(consumer), once=True)
