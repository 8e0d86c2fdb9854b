"""How many containers each host holds, in all and for one project (for the weighers).

One grouped query over the ``host`` index. A capsule's own row holds nothing on its host
(its members do), so it is not counted.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.common import consts
from zun.db import models

C = models.Container

_COUNTED_TYPES = (
    consts.TYPE_CONTAINER,
    consts.TYPE_CAPSULE_CONTAINER,
    consts.TYPE_CAPSULE_INIT_CONTAINER,
)


def container_counts(session: Session, project_id: str | None) -> dict[str, tuple[int, int]]:
    """``{host: (containers, containers of project_id)}`` for every host holding any."""
    of_project = (
        sa.func.sum(sa.case((C.project_id == project_id, 1), else_=0))
        if project_id is not None
        else sa.literal(0)
    )
    stmt = (
        sa.select(C.host, sa.func.count(), of_project)
        .where(C.host.is_not(None))
        .where(sa.or_(C.container_type.in_(_COUNTED_TYPES), C.container_type.is_(None)))
        .group_by(C.host)
    )
    return {host: (int(total or 0), int(mine or 0)) for host, total, mine in session.execute(stmt)}
