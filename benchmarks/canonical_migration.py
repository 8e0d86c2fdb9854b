"""How long revision 8d2e6f1a4c57 (canonical JSON texts) takes on a large container table.

    python benchmarks/canonical_migration.py [--rows 100000]

On a throwaway MariaDB database (127.0.0.1:3306, root): the schema at the revision before,
``--rows`` containers whose JSON columns are written as Zun wrote them (``json.dumps``
defaults: ``", "`` and ``": "``, so every row changes), then the upgrade to head, timed
(wall clock and this process's CPU), and a check that every text is canonical afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import list_latency as base  # noqa: E402

BEFORE = "5e4c1d7a9b32"
ZUN_JSON = {
    "command": ["sleep", "3600"],
    "environment": {"A": "1", "B": "two"},
    "labels": {"app": "bench", "tier": "web"},
    "ports": [80],
    "addresses": {
        "zun-net": [
            {"addr": "10.0.0.2", "version": 4, "port": "p" * 36, "preserve_on_delete": False}
        ]
    },
    "restart_policy": {"Name": "no", "MaximumRetryCount": "0"},
    "security_groups": ["default"],
}


def seed(raw: object, rows: int) -> None:
    columns = ", ".join(ZUN_JSON)
    with raw.cursor() as cur:  # type: ignore[attr-defined]
        cur.execute(
            f"INSERT INTO container (uuid, name, project_id, user_id, container_type, {columns})"
            f" VALUES (UUID(), 'c', 'p', 'u', 0, {', '.join(['%s'] * len(ZUN_JSON))})",
            [json.dumps(v) for v in ZUN_JSON.values()],
        )
        count = 1
        while count < rows:
            batch = min(count, rows - count)
            cur.execute(
                f"INSERT INTO container (uuid, name, project_id, user_id, container_type,"
                f" {columns}) SELECT UUID(), name, project_id, user_id, container_type,"
                f" {columns} FROM container LIMIT {batch}"
            )
            count += batch
    raw.commit()  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args(argv)
    from zun.conf import CONF

    CONF([], project="zun", default_config_files=[], default_config_dirs=[])
    from zun.db import engine, migration

    name = base.create_database()
    url = f"{base.ADMIN_URL}/{name}"
    try:
        migration.upgrade(BEFORE, url=url)
        raw = base._raw_connection(name)
        seed(raw, args.rows)
        load = os.getloadavg()[0]
        wall, cpu = time.monotonic(), time.process_time()
        migration.upgrade(url=url)
        wall, cpu = time.monotonic() - wall, time.process_time() - cpu
        with raw.cursor() as cur:
            cur.execute(f"SELECT {', '.join(ZUN_JSON)} FROM container")
            texts = [text for row in cur.fetchall() for text in row]
        raw.close()
        assert all(t == json.dumps(json.loads(t), separators=(",", ":")) for t in texts)
        print(
            f"{args.rows} rows of Zun's JSON texts made canonical in {wall:.1f} s "
            f"({cpu:.1f} s CPU of this process; load average {load:.1f})"
        )
        return 0
    finally:
        engine.dispose()
        base.drop_database(name)


if __name__ == "__main__":
    sys.exit(main())
