"""Which networks a project's container may join (embedded Docker networking).

Its project's bridge (``zun-<project>``) or a network registered through ``POST /v1/networks``.
Another project's bridge, the host's own networks (``host``, ``bridge``) or an ID prefix would
put the container next to other tenants' containers. Admins are not limited (Neutron's admin saw
every network too). Checked by the API before anything is stored, and again by the node before
it touches the engine, so a message that did not come from the API cannot bypass it.
"""

from __future__ import annotations

from collections.abc import Iterable

from zun.common import exception
from zun.db import engine
from zun.db.queries import networks as network_q
from zun.network import mode
from zun.network.docker_network import project_network_name


def check_joinable(is_admin: bool, project_id: str | None, names: Iterable[str | None]) -> None:
    """Raise 404 ``network-not-found`` for a network ``project_id`` may not join.

    With the kuryr driver, Neutron decides: the API resolved the networks with the user's
    token, so a network the user may not see was never found."""
    if is_admin or mode.kuryr_enabled():
        return
    own = project_network_name(project_id or "default")
    for name in names:
        if name is None or name == own:
            continue
        with engine.transaction(readonly=True) as session:
            registered = network_q.by_neutron_id(session, name)
        if not registered:
            raise exception.NetworkNotFound(network=name)
