"""Which image names a commit may write, checked by the API before anything is committed.

``docker commit`` replaces whatever image the name pointed to. Without a rule a member could
commit into ``busybox:latest`` and every later container (another project's, a capsule's
sandbox) would run the member's image. So:

* a member commits only into its project's namespace, ``<prefix><project_id>/...``
  (``[api]/commit_repository_prefix``, empty by default: ``<project_id>/name``);
* nobody, admins included, commits onto a name the node already has: an image row of that
  name on the host is a 409 here, and the node refuses a name its engine already has (an
  image no row records: a local build, another tool's pull);
* a project keeps at most ``[api]/max_committed_images`` committed images (its rows in its
  namespace); an admin deletes them with ``DELETE /v1/images/{id}``.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.common import exception
from zun.common.context import RequestContext
from zun.conf import CONF
from zun.db import models
from zun.image import reference


class CommitRepositoryNotAllowed(exception.NotAuthorized):
    message = (
        "A member may commit only into its project's namespace: the repository must "
        "start with %(namespace)s/ (got %(repository)s)."
    )
    code = 403


def namespace(project_id: str | None) -> str:
    prefix = str(CONF.api.commit_repository_prefix or "")
    return f"{prefix}{project_id or ''}"


def check_name(repository: str, tag: str | None) -> str:
    """400 unless ``repository`` is an image name without tag or digest and ``tag`` a tag;
    returns the tag to use (``latest`` when none)."""
    tag = tag if tag not in (None, "", "None") else "latest"
    try:
        parsed = reference.parse(f"{repository}:{tag}")
    except exception.InvalidReference as exc:
        raise exception.InvalidValue(
            message=f"Invalid repository or tag {repository!r}:{tag!r}: {exc}"
        ) from None
    if parsed.name != repository or parsed.tag != tag or parsed.digest:
        raise exception.InvalidValue(
            message=f"Give the repository without a tag or digest, and the tag apart: "
            f"{repository!r}"
        )
    return tag


def check_namespace(context: RequestContext, repository: str) -> None:
    if context.is_admin:
        return
    allowed = namespace(context.project_id)
    if not repository.startswith(allowed + "/"):
        raise CommitRepositoryNotAllowed(namespace=allowed, repository=repository)


def check_not_taken(session: Session, repository: str, tag: str, host: str | None) -> None:
    taken = session.scalar(
        sa.select(sa.func.count())
        .select_from(models.Image)
        .where(models.Image.repo == repository, models.Image.tag == tag, models.Image.host == host)
    )
    if taken:
        raise exception.ImageAlreadyExists(repo=repository, tag=tag)


def check_bound(session: Session, project_id: str | None) -> None:
    limit = int(CONF.api.max_committed_images)
    if limit < 0:
        return
    pattern = (
        namespace(project_id).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
    )
    count = session.scalar(
        sa.select(sa.func.count())
        .select_from(models.Image)
        .where(models.Image.project_id == project_id, models.Image.repo.like(pattern, escape="\\"))
    )
    if count >= limit:
        raise exception.OverQuota(
            overs=f"committed_images (at most {limit} per project, "
            "[api]/max_committed_images; an admin deletes old ones)"
        )


def check(
    session: Session, context: RequestContext, repository: str, tag: str | None, host: str | None
) -> str:
    """Every rule above for a commit by ``context`` on ``host``; returns the tag to use."""
    tag = check_name(repository, tag)
    check_namespace(context, repository)
    check_not_taken(session, repository, tag, host)
    check_bound(session, context.project_id)
    return tag
