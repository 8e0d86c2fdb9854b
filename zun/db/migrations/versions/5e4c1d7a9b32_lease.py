"""A table of leases: one process at a time does what a lease names.

Revision ID: 5e4c1d7a9b32
Revises: 9a1c4e5f7b20

Not in Zun (it had a conductor-free API too, but no node monitor). ``zun_lease`` holds one row
per lease: who holds it and until when. The API's node monitor takes the lease
``node-monitor`` before each pass, so that of all the API processes (``[api] workers``) on all
API hosts, one moves stuck creates at a time; a holder that dies loses it when it expires.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5e4c1d7a9b32"
down_revision: str | Sequence[str] | None = "9a1c4e5f7b20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "zun_lease",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("holder", sa.String(255), nullable=True),
        sa.Column("expires_at", sa.DateTime(), nullable=True),
        mysql_engine="InnoDB",
        mysql_charset="utf8mb3",
    )


def downgrade() -> None:
    op.drop_table("zun_lease")
