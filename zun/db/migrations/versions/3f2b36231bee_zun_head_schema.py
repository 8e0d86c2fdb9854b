"""Zun's whole schema as of its last migration.

Revision ID: 3f2b36231bee
Revises: (none)

This revision carries the id of Zun's own head, so a database built by Zun is already here
and only our later revisions run on it. On a new database it creates the schema described by
tests/contract/db-schema-mariadb.sql. This file is frozen: change the schema in a new
revision, never here.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "3f2b36231bee"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE_OPTS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb3"}

# Creation order respects the foreign keys; downgrade drops in reverse.
TABLES = [
    "zun_service",
    "registry",
    "container",
    "container_actions",
    "container_actions_events",
    "exec_instance",
    "compute_node",
    "pci_device",
    "image",
    "network",
    "quota_classes",
    "quotas",
    "quota_usages",
    "resource_class",
    "resource_provider",
    "inventory",
    "allocation",
    "volume",
    "volume_mapping",
]


def _medium_text() -> sa.types.TypeEngine:
    return sa.Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")


def _timestamps() -> list[sa.Column]:
    return [sa.Column("created_at", sa.DateTime), sa.Column("updated_at", sa.DateTime)]


def _id() -> sa.Column:
    return sa.Column("id", sa.Integer, primary_key=True, autoincrement=True)


def _str(name: str, length: int, nullable: bool = True) -> sa.Column:
    return sa.Column(name, sa.String(length), nullable=nullable)


def _int(name: str, nullable: bool = True) -> sa.Column:
    return sa.Column(name, sa.Integer, nullable=nullable)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name

    op.create_table(
        "zun_service",
        _id(),
        *_timestamps(),
        _int("report_count", nullable=False),
        _str("host", 255),
        _str("binary", 255),
        sa.Column("disabled", sa.Boolean),
        _str("disabled_reason", 255),
        sa.Column("last_seen_up", sa.DateTime),
        sa.Column("forced_down", sa.Boolean),
        _str("availability_zone", 255),
        sa.UniqueConstraint("host", "binary", name="uniq_zun_service0host0binary"),
        **TABLE_OPTS,
    )

    op.create_table(
        "registry",
        *_timestamps(),
        _id(),
        _str("project_id", 255),
        _str("user_id", 255),
        _str("uuid", 36),
        _str("name", 255),
        _str("domain", 255, nullable=False),
        _str("username", 255),
        _str("password", 255),
        sa.UniqueConstraint("uuid", name="uniq_registry0uuid"),
        **TABLE_OPTS,
    )

    op.create_table(
        "container",
        *_timestamps(),
        _id(),
        _str("project_id", 255),
        _str("user_id", 255),
        _str("uuid", 36),
        _str("name", 255),
        _str("image", 255),
        sa.Column("command", sa.Text),
        _str("status", 20),
        sa.Column("environment", sa.Text),
        _str("container_id", 255),
        _str("memory", 255),
        _str("task_state", 20),
        sa.Column("cpu", sa.Float),
        _str("workdir", 255),
        sa.Column("ports", sa.Text),
        _str("hostname", 255),
        sa.Column("labels", sa.Text),
        sa.Column("status_reason", sa.Text),
        sa.Column("image_pull_policy", sa.Text),
        sa.Column("addresses", sa.Text),
        _str("host", 255),
        sa.Column("restart_policy", sa.Text),
        _str("status_detail", 50),
        sa.Column("image_driver", sa.Text),
        sa.Column("interactive", sa.Boolean),
        _str("websocket_url", 255),
        _str("websocket_token", 255),
        sa.Column("security_groups", sa.Text),
        sa.Column("auto_remove", sa.Boolean),
        _str("runtime", 32),
        _int("disk"),
        sa.Column("auto_heal", sa.Boolean),
        _int("capsule_id"),
        sa.Column("started_at", sa.DateTime),
        sa.Column("privileged", sa.Boolean),
        sa.Column("healthcheck", sa.Text),
        sa.Column("exposed_ports", sa.Text),
        _str("cpu_policy", 255),
        sa.Column("cpuset", sa.Text),
        _int("registry_id"),
        sa.Column("container_type", sa.Integer, server_default=sa.text("0")),
        sa.Column("tty", sa.Boolean),
        sa.Column("annotations", _medium_text()),
        sa.Column("cni_metadata", _medium_text()),
        sa.Column("entrypoint", sa.Text),
        sa.UniqueConstraint("uuid", name="uniq_container0uuid"),
        sa.ForeignKeyConstraint(["registry_id"], ["registry.id"], name="container_ibfk_1"),
        sa.ForeignKeyConstraint(
            ["capsule_id"], ["container.id"], name="container_ibfk_2", ondelete="CASCADE"
        ),
        # Named like the keys MariaDB made for Zun's unnamed foreign keys; creating them
        # replaces the index InnoDB adds for a foreign key by itself.
        sa.Index("registry_id", "registry_id"),
        sa.Index("ix_container_container_type", "container_type"),
        sa.Index("capsule_id", "capsule_id"),
        **TABLE_OPTS,
    )

    op.create_table(
        "container_actions",
        *_timestamps(),
        _id(),
        _str("action", 255),
        _str("container_uuid", 36, nullable=False),
        _str("request_id", 255),
        _str("user_id", 255),
        _str("project_id", 255),
        sa.Column("start_time", sa.DateTime),
        sa.Column("finish_time", sa.DateTime),
        _str("message", 255),
        sa.ForeignKeyConstraint(
            ["container_uuid"],
            ["container.uuid"],
            name="container_actions_ibfk_1",
            ondelete="CASCADE",
        ),
        sa.Index("request_id_idx", "request_id"),
        sa.Index("container_uuid_idx", "container_uuid"),
        **TABLE_OPTS,
    )

    op.create_table(
        "container_actions_events",
        *_timestamps(),
        _id(),
        _str("event", 255),
        _int("action_id", nullable=False),
        sa.Column("start_time", sa.DateTime),
        sa.Column("finish_time", sa.DateTime),
        _str("result", 255),
        sa.Column("traceback", sa.Text),
        sa.Column("details", sa.Text),
        sa.ForeignKeyConstraint(
            ["action_id"],
            ["container_actions.id"],
            name="container_actions_events_ibfk_1",
            ondelete="CASCADE",
        ),
        sa.Index("action_id", "action_id"),
        **TABLE_OPTS,
    )

    op.create_table(
        "exec_instance",
        *_timestamps(),
        _id(),
        _int("container_id", nullable=False),
        _str("exec_id", 255, nullable=False),
        _str("token", 255),
        _str("url", 255),
        sa.UniqueConstraint(
            "container_id", "exec_id", name="uniq_exec_instance0container_id_exec_id"
        ),
        sa.ForeignKeyConstraint(
            ["container_id"], ["container.id"], name="exec_instance_ibfk_1", ondelete="CASCADE"
        ),
        **TABLE_OPTS,
    )

    op.create_table(
        "compute_node",
        *_timestamps(),
        sa.Column("uuid", sa.String(36), primary_key=True),
        _str("hostname", 255, nullable=False),
        sa.Column("numa_topology", sa.Text),
        _int("mem_total", nullable=False),
        _int("mem_free", nullable=False),
        _int("mem_available", nullable=False),
        _int("total_containers", nullable=False),
        _int("running_containers", nullable=False),
        _int("paused_containers", nullable=False),
        _int("stopped_containers", nullable=False),
        _int("cpus", nullable=False),
        sa.Column("cpu_used", sa.Float, nullable=False),
        _str("architecture", 32),
        _str("os_type", 32),
        _str("os", 64),
        _str("kernel_version", 128),
        sa.Column("labels", sa.Text),
        _int("mem_used", nullable=False),
        sa.Column("pci_stats", sa.Text),
        _int("disk_total", nullable=False),
        _int("disk_used", nullable=False),
        sa.Column("disk_quota_supported", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("runtimes", sa.Text),
        sa.Column("enable_cpu_pinning", sa.Boolean, nullable=False, server_default=sa.false()),
        _str("rp_uuid", 36, nullable=False),
        sa.UniqueConstraint("rp_uuid", name="uniq_compute_node0rp_uuid"),
        **TABLE_OPTS,
    )

    op.create_table(
        "pci_device",
        _id(),
        _str("uuid", 36),
        _str("compute_node_uuid", 36, nullable=False),
        _str("address", 12, nullable=False),
        _str("vendor_id", 4, nullable=False),
        _str("product_id", 4, nullable=False),
        _str("dev_type", 8, nullable=False),
        _str("dev_id", 255),
        _str("label", 255, nullable=False),
        _str("status", 36, nullable=False),
        sa.Column("extra_info", sa.Text),
        _str("container_uuid", 36),
        _int("numa_node"),
        _str("parent_addr", 12),
        *_timestamps(),
        _str("request_id", 36),
        sa.UniqueConstraint(
            "compute_node_uuid", "address", name="uniq_pci_device0compute_node_uuid0address"
        ),
        sa.ForeignKeyConstraint(
            ["compute_node_uuid"], ["compute_node.uuid"], name="pci_device_ibfk_1"
        ),
        sa.Index("ix_pci_device_compute_node_uuid", "compute_node_uuid"),
        sa.Index("ix_pci_device_container_uuid", "container_uuid"),
        sa.Index("ix_pci_device_compute_node_uuid_parent_addr", "compute_node_uuid", "parent_addr"),
        **TABLE_OPTS,
    )

    op.create_table(
        "image",
        *_timestamps(),
        _id(),
        _str("project_id", 255),
        _str("user_id", 255),
        _str("uuid", 36),
        _str("image_id", 255),
        _str("repo", 255),
        _str("tag", 255),
        _str("size", 255),
        _str("host", 255),
        sa.UniqueConstraint("repo", "tag", "host", name="uniq_image0repotaghost"),
        **TABLE_OPTS,
    )

    op.create_table(
        "network",
        *_timestamps(),
        _id(),
        _str("project_id", 255),
        _str("user_id", 255),
        _str("name", 255),
        _str("uuid", 36),
        _str("network_id", 255),
        _str("neutron_net_id", 255),
        _str("host", 255),
        sa.UniqueConstraint("uuid", name="uniq_network0uuid"),
        sa.UniqueConstraint("neutron_net_id", "host", name="uniq_network0neutron_net_id_host"),
        **TABLE_OPTS,
    )

    op.create_table(
        "quota_classes",
        *_timestamps(),
        _id(),
        _str("class_name", 255),
        _str("resource", 255),
        _int("hard_limit"),
        sa.Index("quota_classes_class_name_idx", "class_name"),
        **TABLE_OPTS,
    )

    op.create_table(
        "quotas",
        *_timestamps(),
        _id(),
        _str("project_id", 255),
        _str("resource", 255, nullable=False),
        _int("hard_limit"),
        sa.Index("ix_quotas_project_id", "project_id"),
        **TABLE_OPTS,
    )

    # Zun's table has no primary key; kept as is so both databases look the same.
    op.create_table(
        "quota_usages",
        *_timestamps(),
        sa.Column("id", sa.Integer, nullable=False, autoincrement=False),
        _str("project_id", 255),
        _str("resource", 255, nullable=False),
        _int("in_use", nullable=False),
        _int("reserved", nullable=False),
        _int("until_refresh"),
        sa.Index("ix_quota_usages_project_id", "project_id"),
        **TABLE_OPTS,
    )

    op.create_table(
        "resource_class",
        *_timestamps(),
        _id(),
        _str("name", 255, nullable=False),
        _str("uuid", 36, nullable=False),
        sa.UniqueConstraint("uuid", name="uniq_resource_class0uuid"),
        **TABLE_OPTS,
    )

    op.create_table(
        "resource_provider",
        *_timestamps(),
        _id(),
        _str("uuid", 36, nullable=False),
        _str("name", 255, nullable=False),
        _str("root_provider", 36, nullable=False),
        _str("parent_provider", 36),
        _int("can_host"),
        sa.UniqueConstraint("uuid", name="uniq_resource_provider0uuid"),
        **TABLE_OPTS,
    )

    op.create_table(
        "inventory",
        *_timestamps(),
        _id(),
        _int("resource_provider_id", nullable=False),
        _int("resource_class_id", nullable=False),
        _int("total", nullable=False),
        _int("reserved", nullable=False),
        _int("min_unit", nullable=False),
        _int("max_unit", nullable=False),
        _int("step_size", nullable=False),
        sa.Column("allocation_ratio", sa.Float, nullable=False),
        _int("is_nested", nullable=False),
        sa.Column("blob", sa.Text),
        sa.UniqueConstraint(
            "resource_provider_id",
            "resource_class_id",
            name="uniq_inventory0resource_provider_resource_class",
        ),
        sa.Index("inventory_resource_class_id_idx", "resource_class_id"),
        sa.Index(
            "inventory_resource_provider_resource_class_idx",
            "resource_provider_id",
            "resource_class_id",
        ),
        sa.Index("inventory_resource_provider_id_idx", "resource_provider_id"),
        **TABLE_OPTS,
    )

    op.create_table(
        "allocation",
        *_timestamps(),
        _id(),
        _int("resource_provider_id", nullable=False),
        _str("consumer_id", 36, nullable=False),
        _int("resource_class_id", nullable=False),
        _int("used", nullable=False),
        _int("is_nested", nullable=False),
        sa.Column("blob", sa.Text),
        sa.Index("allocation_consumer_id_idx", "consumer_id"),
        sa.Index("allocation_resource_class_id_idx", "resource_class_id"),
        sa.Index(
            "allocation_resource_provider_class_used_idx",
            "resource_provider_id",
            "resource_class_id",
            "used",
        ),
        **TABLE_OPTS,
    )

    op.create_table(
        "volume",
        *_timestamps(),
        _id(),
        _str("uuid", 36, nullable=False),
        _str("project_id", 255),
        _str("user_id", 255),
        _str("cinder_volume_id", 36),
        _str("volume_provider", 36, nullable=False),
        sa.Column("connection_info", _medium_text()),
        _str("host", 255),
        sa.Column("auto_remove", sa.Boolean),
        sa.Column("contents", _medium_text()),
        sa.UniqueConstraint("uuid", name="uniq_volume0uuid"),
        **TABLE_OPTS,
    )

    # Zun named this key like the volume table's. Only MySQL/MariaDB scope key names per
    # table; PostgreSQL would refuse the second one, so it gets a name of its own there.
    mapping_uuid_key = "uniq_volume_mapping0uuid" if dialect == "postgresql" else "uniq_volume0uuid"
    op.create_table(
        "volume_mapping",
        *_timestamps(),
        _id(),
        _str("uuid", 36, nullable=False),
        _str("project_id", 255),
        _str("user_id", 255),
        _str("container_uuid", 36),
        _str("container_path", 255),
        _int("volume_id", nullable=False),
        sa.UniqueConstraint("uuid", name=mapping_uuid_key),
        sa.ForeignKeyConstraint(
            ["container_uuid"], ["container.uuid"], name="volume_mapping_ibfk_1"
        ),
        sa.ForeignKeyConstraint(
            ["volume_id"], ["volume.id"], name="volume_mapping_ibfk_2", ondelete="CASCADE"
        ),
        sa.Index("container_uuid", "container_uuid"),
        sa.Index("volume_id", "volume_id"),
        **TABLE_OPTS,
    )


def downgrade() -> None:
    for table in reversed(TABLES):
        op.drop_table(table)
