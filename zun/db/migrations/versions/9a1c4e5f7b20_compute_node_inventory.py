"""Each node's own allocation ratios and reserves on its compute_node row.

Revision ID: 9a1c4e5f7b20
Revises: 6b0f8e7c2d41

Zun keeps these in Placement, where each node writes its inventory (allocation_ratio,
reserved) from its own zun.conf. Without Placement the row is the inventory: zun-compute
writes ``[compute]/*_allocation_ratio`` and ``reserved_host_*`` here with the rest of its
facts, and the claims in zun-api read them from the row. NULL (a node that has not reported
them yet, or a database written by Zun) falls back to zun-api's own settings.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9a1c4e5f7b20"
down_revision: str | Sequence[str] | None = "6b0f8e7c2d41"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RATIOS = ("cpu_allocation_ratio", "ram_allocation_ratio", "disk_allocation_ratio")
RESERVES = ("reserved_host_cpus", "reserved_host_memory_mb", "reserved_host_disk_mb")


def upgrade() -> None:
    with op.batch_alter_table("compute_node") as batch:
        for name in RATIOS:
            batch.add_column(sa.Column(name, sa.Float(), nullable=True))
        for name in RESERVES:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("compute_node") as batch:
        for name in reversed(RATIOS + RESERVES):
            batch.drop_column(name)
