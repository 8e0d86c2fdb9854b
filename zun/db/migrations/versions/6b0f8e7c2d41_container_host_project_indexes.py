"""Index container.host and container.project_id.

Revision ID: 6b0f8e7c2d41
Revises: 3f2b36231bee

Zun's schema has no index on either column. Each compute node syncs its own containers
(``WHERE host = ?``) every period, and every non-admin list is ``WHERE project_id = ?``;
without these indexes both read the whole table, which grows with every container ever
created and not yet purged.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "6b0f8e7c2d41"
down_revision: str | Sequence[str] | None = "3f2b36231bee"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_container_host", "container", ["host"])
    op.create_index("ix_container_project_id", "container", ["project_id"])


def downgrade() -> None:
    op.drop_index("ix_container_project_id", table_name="container")
    op.drop_index("ix_container_host", table_name="container")
