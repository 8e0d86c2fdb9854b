"""The models describe Zun's 19 tables under the class names the rest of the code uses."""

from __future__ import annotations

import sqlalchemy as sa

from zun.db import models

TABLES = {
    "Allocation": "allocation",
    "ComputeNode": "compute_node",
    "Container": "container",
    "ContainerAction": "container_actions",
    "ContainerActionEvent": "container_actions_events",
    "ExecInstance": "exec_instance",
    "Image": "image",
    "Inventory": "inventory",
    "Network": "network",
    "PciDevice": "pci_device",
    "QuotaClass": "quota_classes",
    "QuotaUsage": "quota_usages",
    "Quota": "quotas",
    "Registry": "registry",
    "ResourceClass": "resource_class",
    "ResourceProvider": "resource_provider",
    "Volume": "volume",
    "VolumeMapping": "volume_mapping",
    "ZunService": "zun_service",
    "Lease": "zun_lease",  # not in Zun (revision 5e4c1d7a9b32)
}


def test_one_class_per_table() -> None:
    assert {name: getattr(models, name).__table__.name for name in TABLES} == TABLES
    assert set(models.Base.metadata.tables) == set(TABLES.values())


def test_quota_usages_has_no_primary_key_but_maps_by_id() -> None:
    table = models.QuotaUsage.__table__
    assert list(table.primary_key.columns) == []
    assert [c.name for c in sa.inspect(models.QuotaUsage).primary_key] == ["id"]


def test_every_table_is_innodb_utf8mb3_on_mysql() -> None:
    for table in models.Base.metadata.tables.values():
        assert table.kwargs["mysql_engine"] == "InnoDB", table.name
        assert table.kwargs["mysql_charset"] == "utf8mb3", table.name


def test_timestamps_are_naive_utc() -> None:
    now = models._utcnow()
    assert now.tzinfo is None
