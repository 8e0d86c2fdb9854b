"""The request context: who is asking, for which project, under which request id.

Built in exactly one place for API requests (:func:`zun.api.middleware.context`), carried over
RPC as a plain dict (:meth:`RequestContext.to_dict` / :meth:`RequestContext.from_dict`) and
rebuilt on the node. The user's token is deliberately *not* carried over the bus.
"""

from __future__ import annotations

from typing import Any

from oslo_context import context as oslo_context


class RequestContext(oslo_context.RequestContext):
    def __init__(self, *, all_projects: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.all_projects = all_projects

    def to_dict(self) -> dict[str, Any]:
        values = super().to_dict()
        values["all_projects"] = self.all_projects
        # Tokens stay in the API process: long work on a node must not reuse them.
        values.pop("auth_token", None)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any], **kwargs: Any) -> RequestContext:
        kwargs.setdefault("all_projects", values.get("all_projects", False))
        return super().from_dict(values, **kwargs)

    def elevated(self) -> RequestContext:
        ctx = self.__class__.from_dict(self.to_dict())
        ctx.is_admin = True
        ctx.all_projects = True
        if "admin" not in ctx.roles:
            ctx.roles = [*ctx.roles, "admin"]
        return ctx


def get_admin_context(all_projects: bool = True) -> RequestContext:
    """A context for the service's own work (periodic tasks, recovery)."""
    return RequestContext(
        user_id=None,
        project_id=None,
        is_admin=True,
        roles=["admin"],
        all_projects=all_projects,
        overwrite=False,
    )
