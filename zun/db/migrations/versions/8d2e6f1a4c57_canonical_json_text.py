"""Rewrite the container table's JSON columns in their canonical form.

Revision ID: 8d2e6f1a4c57
Revises: 5e4c1d7a9b32

Data only. From this revision on, the text stored in a JSON column of ``container`` is the
compact encoding of its value (``json.dumps(value, separators=(",", ":"))``, ASCII escapes),
byte for byte what the API writes for it, so the list view puts the stored text into its
answer without decoding it (zun/api/views/containers.py, zun/db/types.py). Zun wrote these
columns with ``json.dumps`` defaults (``", "`` and ``": "``), very old releases wrote some as
plain strings, and our earlier revisions compact but not always canonical (a dict whose keys
collide once they are strings); each value is decoded as the models read it (text that is not
JSON is that string) and written back encoded, so every reader gets the same value as before.

The encoder is spelled out here rather than imported: a migration must keep doing what it did
when it was written. Downgrade leaves the texts as they are: they are valid JSON that Zun and
our earlier revisions read as the same values.
"""

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "8d2e6f1a4c57"
down_revision: str | Sequence[str] | None = "5e4c1d7a9b32"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    "command",
    "environment",
    "ports",
    "labels",
    "addresses",
    "restart_policy",
    "security_groups",
    "healthcheck",
    "exposed_ports",
    "cpuset",
    "annotations",
    "cni_metadata",
    "entrypoint",
)
BATCH = 1000


def canonical_text(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return json.dumps(value, separators=(",", ":"))


def upgrade() -> None:
    table = sa.table(
        "container", sa.column("id", sa.Integer), *(sa.column(name, sa.Text) for name in COLUMNS)
    )
    # One statement for the rows of a batch that change (executemany), every column bound:
    # an UPDATE per row through SQLAlchemy cost ~0.5 ms of CPU each.
    rewrite = (
        table.update()
        .where(table.c.id == sa.bindparam("row_id"))
        .values({name: sa.bindparam(f"new_{name}") for name in COLUMNS})
    )
    conn = op.get_bind()
    last = None
    while True:
        query = sa.select(table.c.id, *(table.c[name] for name in COLUMNS))
        if last is not None:
            query = query.where(table.c.id > last)
        rows = conn.execute(query.order_by(table.c.id).limit(BATCH)).all()
        changed: list[dict[str, Any]] = []
        for row in rows:
            texts = [canonical_text(text) for text in row[1:]]
            if texts != list(row[1:]):
                params = {f"new_{name}": text for name, text in zip(COLUMNS, texts, strict=True)}
                changed.append({"row_id": row[0], **params})
        if changed:
            conn.execute(rewrite, changed)
        if len(rows) < BATCH:
            return
        last = rows[-1][0]


def downgrade() -> None:
    pass
