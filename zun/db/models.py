"""SQLAlchemy models of Zun's tables.

One class per table of ``tests/contract/db-schema-mariadb.sql`` (Zun's schema at alembic head
``3f2b36231bee``); ``alembic_version`` is left to Alembic. Names, types, lengths, nullability,
server defaults and keys follow that dump, so the same model serves an existing Zun database.
The migrations in :mod:`zun.db.migrations` create the same schema and are the authority for
DDL: create tables through :func:`zun.db.migration.upgrade`, not ``metadata.create_all``.

Datetimes are naive UTC. Relationships never lazy-load by surprise (``raise_on_sql``): say
what to load with ``selectinload``/``joinedload``, which keeps list paths free of N+1 queries.
"""

from __future__ import annotations

import datetime
from typing import Any

import sqlalchemy as sa
from oslo_utils import timeutils
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from zun.db.types import JSONDict, JSONList, JSONText, medium_text

# Zun created every table as InnoDB/utf8 (utf8mb3 on MariaDB 10.11); a fresh database gets the
# same so that index sizes and collation behave exactly like an upgraded one.
TABLE_ARGS: dict[str, Any] = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb3"}


def _utcnow() -> datetime.datetime:
    return timeutils.utcnow()


class Base(DeclarativeBase):
    def as_dict(self) -> dict[str, Any]:
        """Column values by attribute name (relationships left out)."""
        return {c.key: getattr(self, c.key) for c in sa.inspect(self).mapper.column_attrs}


class TimestampMixin:
    # Zun's tables start with these two columns; sort_order keeps that in generated DDL.
    created_at: Mapped[datetime.datetime | None] = mapped_column(
        sa.DateTime, default=_utcnow, sort_order=-2
    )
    updated_at: Mapped[datetime.datetime | None] = mapped_column(
        sa.DateTime, onupdate=_utcnow, sort_order=-1
    )


class Container(TimestampMixin, Base):
    """A container; a capsule is a row with ``container_type`` 1 and its members point to it."""

    __tablename__ = "container"
    __table_args__ = (
        sa.UniqueConstraint("uuid", name="uniq_container0uuid"),
        sa.Index("registry_id", "registry_id"),
        sa.Index("ix_container_container_type", "container_type"),
        sa.Index("capsule_id", "capsule_id"),
        # Added by revision 6b0f8e7c2d41 (not in Zun): per-host sync and project listing.
        sa.Index("ix_container_host", "host"),
        sa.Index("ix_container_project_id", "project_id"),
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    uuid: Mapped[str | None] = mapped_column(sa.String(36))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    image: Mapped[str | None] = mapped_column(sa.String(255))
    command: Mapped[list[str] | None] = mapped_column(JSONList())
    status: Mapped[str | None] = mapped_column(sa.String(20))
    environment: Mapped[dict[str, str] | None] = mapped_column(JSONDict())
    container_id: Mapped[str | None] = mapped_column(sa.String(255))
    memory: Mapped[str | None] = mapped_column(sa.String(255))
    task_state: Mapped[str | None] = mapped_column(sa.String(20))
    cpu: Mapped[float | None] = mapped_column(sa.Float)
    workdir: Mapped[str | None] = mapped_column(sa.String(255))
    ports: Mapped[list[Any] | None] = mapped_column(JSONList())
    hostname: Mapped[str | None] = mapped_column(sa.String(255))
    labels: Mapped[dict[str, str] | None] = mapped_column(JSONDict())
    status_reason: Mapped[str | None] = mapped_column(sa.Text)
    image_pull_policy: Mapped[str | None] = mapped_column(sa.Text)
    addresses: Mapped[dict[str, Any] | None] = mapped_column(JSONDict())
    host: Mapped[str | None] = mapped_column(sa.String(255))
    restart_policy: Mapped[dict[str, Any] | None] = mapped_column(JSONDict())
    status_detail: Mapped[str | None] = mapped_column(sa.String(50))
    image_driver: Mapped[str | None] = mapped_column(sa.Text)
    interactive: Mapped[bool | None] = mapped_column(sa.Boolean)
    websocket_url: Mapped[str | None] = mapped_column(sa.String(255))
    websocket_token: Mapped[str | None] = mapped_column(sa.String(255))
    security_groups: Mapped[list[str] | None] = mapped_column(JSONList())
    auto_remove: Mapped[bool | None] = mapped_column(sa.Boolean)
    runtime: Mapped[str | None] = mapped_column(sa.String(32))
    disk: Mapped[int | None] = mapped_column(sa.Integer)
    auto_heal: Mapped[bool | None] = mapped_column(sa.Boolean)
    capsule_id: Mapped[int | None] = mapped_column(
        sa.Integer, sa.ForeignKey("container.id", name="container_ibfk_2", ondelete="CASCADE")
    )
    started_at: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime)
    privileged: Mapped[bool | None] = mapped_column(sa.Boolean)
    healthcheck: Mapped[dict[str, Any] | None] = mapped_column(JSONDict())
    exposed_ports: Mapped[dict[str, Any] | None] = mapped_column(JSONDict())
    cpu_policy: Mapped[str | None] = mapped_column(sa.String(255))
    cpuset: Mapped[dict[str, Any] | None] = mapped_column(JSONDict())
    registry_id: Mapped[int | None] = mapped_column(
        sa.Integer, sa.ForeignKey("registry.id", name="container_ibfk_1")
    )
    container_type: Mapped[int | None] = mapped_column(
        sa.Integer, server_default=sa.text("0"), default=0
    )
    tty: Mapped[bool | None] = mapped_column(sa.Boolean)
    annotations: Mapped[dict[str, str] | None] = mapped_column(JSONDict(medium=True))
    cni_metadata: Mapped[dict[str, Any] | None] = mapped_column(JSONDict(medium=True))
    entrypoint: Mapped[list[str] | None] = mapped_column(JSONList())

    # Not called `registry`: DeclarativeBase reserves that name for the class registry.
    image_registry: Mapped[Registry | None] = relationship(lazy="raise_on_sql")
    capsule: Mapped[Container | None] = relationship(
        remote_side=[id], back_populates="members", lazy="raise_on_sql"
    )
    members: Mapped[list[Container]] = relationship(
        back_populates="capsule", lazy="raise_on_sql", passive_deletes=True
    )


class ContainerAction(TimestampMixin, Base):
    __tablename__ = "container_actions"
    __table_args__ = (
        sa.Index("request_id_idx", "request_id"),
        sa.Index("container_uuid_idx", "container_uuid"),
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    action: Mapped[str | None] = mapped_column(sa.String(255))
    container_uuid: Mapped[str] = mapped_column(
        sa.String(36),
        sa.ForeignKey("container.uuid", name="container_actions_ibfk_1", ondelete="CASCADE"),
    )
    request_id: Mapped[str | None] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    start_time: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime)
    finish_time: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime)
    message: Mapped[str | None] = mapped_column(sa.String(255))

    events: Mapped[list[ContainerActionEvent]] = relationship(
        back_populates="action", lazy="raise_on_sql", passive_deletes=True
    )


class ContainerActionEvent(TimestampMixin, Base):
    __tablename__ = "container_actions_events"
    __table_args__ = (sa.Index("action_id", "action_id"), TABLE_ARGS)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    event: Mapped[str | None] = mapped_column(sa.String(255))
    action_id: Mapped[int] = mapped_column(
        sa.Integer,
        sa.ForeignKey(
            "container_actions.id", name="container_actions_events_ibfk_1", ondelete="CASCADE"
        ),
    )
    start_time: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime)
    finish_time: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime)
    result: Mapped[str | None] = mapped_column(sa.String(255))
    traceback: Mapped[str | None] = mapped_column(sa.Text)
    details: Mapped[str | None] = mapped_column(sa.Text)

    action: Mapped[ContainerAction] = relationship(back_populates="events", lazy="raise_on_sql")


class ExecInstance(TimestampMixin, Base):
    __tablename__ = "exec_instance"
    __table_args__ = (
        sa.UniqueConstraint(
            "container_id", "exec_id", name="uniq_exec_instance0container_id_exec_id"
        ),
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    container_id: Mapped[int] = mapped_column(
        sa.Integer,
        sa.ForeignKey("container.id", name="exec_instance_ibfk_1", ondelete="CASCADE"),
    )
    exec_id: Mapped[str] = mapped_column(sa.String(255))
    token: Mapped[str | None] = mapped_column(sa.String(255))
    url: Mapped[str | None] = mapped_column(sa.String(255))


class ZunService(Base):
    __tablename__ = "zun_service"
    __table_args__ = (
        sa.UniqueConstraint("host", "binary", name="uniq_zun_service0host0binary"),
        TABLE_ARGS,
    )

    # Zun put id before the timestamps in this table; column order is kept for the dump's sake.
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    created_at: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime, default=_utcnow)
    updated_at: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime, onupdate=_utcnow)
    report_count: Mapped[int] = mapped_column(sa.Integer, default=0)
    host: Mapped[str | None] = mapped_column(sa.String(255))
    binary: Mapped[str | None] = mapped_column(sa.String(255))
    disabled: Mapped[bool | None] = mapped_column(sa.Boolean, default=False)
    disabled_reason: Mapped[str | None] = mapped_column(sa.String(255))
    last_seen_up: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime)
    forced_down: Mapped[bool | None] = mapped_column(sa.Boolean, default=False)
    availability_zone: Mapped[str | None] = mapped_column(sa.String(255))


class ComputeNode(TimestampMixin, Base):
    __tablename__ = "compute_node"
    __table_args__ = (sa.UniqueConstraint("rp_uuid", name="uniq_compute_node0rp_uuid"), TABLE_ARGS)

    uuid: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    hostname: Mapped[str] = mapped_column(sa.String(255))
    numa_topology: Mapped[dict[str, Any] | None] = mapped_column(JSONDict())
    mem_total: Mapped[int] = mapped_column(sa.Integer, default=0)
    mem_free: Mapped[int] = mapped_column(sa.Integer, default=0)
    mem_available: Mapped[int] = mapped_column(sa.Integer, default=0)
    total_containers: Mapped[int] = mapped_column(sa.Integer, default=0)
    running_containers: Mapped[int] = mapped_column(sa.Integer, default=0)
    paused_containers: Mapped[int] = mapped_column(sa.Integer, default=0)
    stopped_containers: Mapped[int] = mapped_column(sa.Integer, default=0)
    cpus: Mapped[int] = mapped_column(sa.Integer, default=0)
    cpu_used: Mapped[float] = mapped_column(sa.Float, default=0.0)
    architecture: Mapped[str | None] = mapped_column(sa.String(32))
    os_type: Mapped[str | None] = mapped_column(sa.String(32))
    os: Mapped[str | None] = mapped_column(sa.String(64))
    kernel_version: Mapped[str | None] = mapped_column(sa.String(128))
    labels: Mapped[dict[str, str] | None] = mapped_column(JSONDict())
    mem_used: Mapped[int] = mapped_column(sa.Integer, default=0)
    pci_stats: Mapped[Any] = mapped_column(JSONText(), nullable=True)
    disk_total: Mapped[int] = mapped_column(sa.Integer, default=0)
    disk_used: Mapped[int] = mapped_column(sa.Integer, default=0)
    disk_quota_supported: Mapped[bool] = mapped_column(
        sa.Boolean, server_default=sa.false(), default=False
    )
    runtimes: Mapped[list[str] | None] = mapped_column(JSONList())
    enable_cpu_pinning: Mapped[bool] = mapped_column(
        sa.Boolean, server_default=sa.false(), default=False
    )
    rp_uuid: Mapped[str] = mapped_column(sa.String(36))
    # Not in Zun's schema (revision 9a1c4e5f7b20): the node's own inventory settings, which
    # Zun keeps in Placement. NULL falls back to zun-api's [compute] options.
    cpu_allocation_ratio: Mapped[float | None] = mapped_column(sa.Float, nullable=True)
    ram_allocation_ratio: Mapped[float | None] = mapped_column(sa.Float, nullable=True)
    disk_allocation_ratio: Mapped[float | None] = mapped_column(sa.Float, nullable=True)
    reserved_host_cpus: Mapped[int | None] = mapped_column(sa.Integer, nullable=True)
    reserved_host_memory_mb: Mapped[int | None] = mapped_column(sa.Integer, nullable=True)
    reserved_host_disk_mb: Mapped[int | None] = mapped_column(sa.Integer, nullable=True)


class Image(TimestampMixin, Base):
    __tablename__ = "image"
    __table_args__ = (
        sa.UniqueConstraint("repo", "tag", "host", name="uniq_image0repotaghost"),
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    uuid: Mapped[str | None] = mapped_column(sa.String(36))
    image_id: Mapped[str | None] = mapped_column(sa.String(255))
    repo: Mapped[str | None] = mapped_column(sa.String(255))
    tag: Mapped[str | None] = mapped_column(sa.String(255))
    size: Mapped[str | None] = mapped_column(sa.String(255))
    host: Mapped[str | None] = mapped_column(sa.String(255))


class Network(TimestampMixin, Base):
    __tablename__ = "network"
    __table_args__ = (
        sa.UniqueConstraint("uuid", name="uniq_network0uuid"),
        sa.UniqueConstraint("neutron_net_id", "host", name="uniq_network0neutron_net_id_host"),
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    uuid: Mapped[str | None] = mapped_column(sa.String(36))
    network_id: Mapped[str | None] = mapped_column(sa.String(255))
    neutron_net_id: Mapped[str | None] = mapped_column(sa.String(255))
    host: Mapped[str | None] = mapped_column(sa.String(255))


class PciDevice(Base):
    __tablename__ = "pci_device"
    __table_args__ = (
        sa.UniqueConstraint(
            "compute_node_uuid", "address", name="uniq_pci_device0compute_node_uuid0address"
        ),
        sa.Index("ix_pci_device_compute_node_uuid", "compute_node_uuid"),
        sa.Index("ix_pci_device_container_uuid", "container_uuid"),
        sa.Index("ix_pci_device_compute_node_uuid_parent_addr", "compute_node_uuid", "parent_addr"),
        TABLE_ARGS,
    )

    # Column order as in Zun: this table has its timestamps in the middle.
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    uuid: Mapped[str | None] = mapped_column(sa.String(36))
    compute_node_uuid: Mapped[str] = mapped_column(
        sa.String(36), sa.ForeignKey("compute_node.uuid", name="pci_device_ibfk_1")
    )
    address: Mapped[str] = mapped_column(sa.String(12))
    vendor_id: Mapped[str] = mapped_column(sa.String(4))
    product_id: Mapped[str] = mapped_column(sa.String(4))
    dev_type: Mapped[str] = mapped_column(sa.String(8))
    dev_id: Mapped[str | None] = mapped_column(sa.String(255))
    label: Mapped[str] = mapped_column(sa.String(255))
    status: Mapped[str] = mapped_column(sa.String(36))
    extra_info: Mapped[Any] = mapped_column(JSONText(), nullable=True)
    container_uuid: Mapped[str | None] = mapped_column(sa.String(36))
    numa_node: Mapped[int | None] = mapped_column(sa.Integer)
    parent_addr: Mapped[str | None] = mapped_column(sa.String(12))
    created_at: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime, default=_utcnow)
    updated_at: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime, onupdate=_utcnow)
    request_id: Mapped[str | None] = mapped_column(sa.String(36))


class QuotaClass(TimestampMixin, Base):
    __tablename__ = "quota_classes"
    __table_args__ = (sa.Index("quota_classes_class_name_idx", "class_name"), TABLE_ARGS)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    class_name: Mapped[str | None] = mapped_column(sa.String(255))
    resource: Mapped[str | None] = mapped_column(sa.String(255))
    hard_limit: Mapped[int | None] = mapped_column(sa.Integer)


class Quota(TimestampMixin, Base):
    __tablename__ = "quotas"
    __table_args__ = (sa.Index("ix_quotas_project_id", "project_id"), TABLE_ARGS)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    resource: Mapped[str] = mapped_column(sa.String(255))
    hard_limit: Mapped[int | None] = mapped_column(sa.Integer)


# Zun created quota_usages without a primary key (``id`` is NOT NULL, not auto-increment).
# The table keeps that shape; the mapper treats ``id`` as the identity, so callers must
# supply it on insert (e.g. max(id) + 1 inside the same transaction).
_quota_usages = sa.Table(
    "quota_usages",
    Base.metadata,
    sa.Column("created_at", sa.DateTime, default=_utcnow),
    sa.Column("updated_at", sa.DateTime, onupdate=_utcnow),
    sa.Column("id", sa.Integer, nullable=False, autoincrement=False),
    sa.Column("project_id", sa.String(255)),
    sa.Column("resource", sa.String(255), nullable=False),
    sa.Column("in_use", sa.Integer, nullable=False),
    sa.Column("reserved", sa.Integer, nullable=False),
    sa.Column("until_refresh", sa.Integer),
    sa.Index("ix_quota_usages_project_id", "project_id"),
    **TABLE_ARGS,
)


class QuotaUsage(Base):
    __table__ = _quota_usages
    __mapper_args__ = {"primary_key": [_quota_usages.c.id]}

    created_at: Mapped[datetime.datetime | None]
    updated_at: Mapped[datetime.datetime | None]
    id: Mapped[int]
    project_id: Mapped[str | None]
    resource: Mapped[str]
    in_use: Mapped[int]
    reserved: Mapped[int]
    until_refresh: Mapped[int | None]


class Registry(TimestampMixin, Base):
    __tablename__ = "registry"
    __table_args__ = (sa.UniqueConstraint("uuid", name="uniq_registry0uuid"), TABLE_ARGS)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    uuid: Mapped[str | None] = mapped_column(sa.String(36))
    name: Mapped[str | None] = mapped_column(sa.String(255))
    domain: Mapped[str] = mapped_column(sa.String(255))
    username: Mapped[str | None] = mapped_column(sa.String(255))
    # Holds the Fernet-encrypted password, never the clear text.
    password: Mapped[str | None] = mapped_column(sa.String(255))


class ResourceClass(TimestampMixin, Base):
    __tablename__ = "resource_class"
    __table_args__ = (sa.UniqueConstraint("uuid", name="uniq_resource_class0uuid"), TABLE_ARGS)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255))
    uuid: Mapped[str] = mapped_column(sa.String(36))


class ResourceProvider(TimestampMixin, Base):
    __tablename__ = "resource_provider"
    __table_args__ = (
        sa.UniqueConstraint("uuid", name="uniq_resource_provider0uuid"),
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(sa.String(36))
    name: Mapped[str] = mapped_column(sa.String(255))
    root_provider: Mapped[str] = mapped_column(sa.String(36))
    parent_provider: Mapped[str | None] = mapped_column(sa.String(36))
    can_host: Mapped[int | None] = mapped_column(sa.Integer)


class Inventory(TimestampMixin, Base):
    __tablename__ = "inventory"
    __table_args__ = (
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
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    resource_provider_id: Mapped[int] = mapped_column(sa.Integer)
    resource_class_id: Mapped[int] = mapped_column(sa.Integer)
    total: Mapped[int] = mapped_column(sa.Integer)
    reserved: Mapped[int] = mapped_column(sa.Integer)
    min_unit: Mapped[int] = mapped_column(sa.Integer)
    max_unit: Mapped[int] = mapped_column(sa.Integer)
    step_size: Mapped[int] = mapped_column(sa.Integer)
    allocation_ratio: Mapped[float] = mapped_column(sa.Float)
    is_nested: Mapped[int] = mapped_column(sa.Integer)
    blob: Mapped[Any] = mapped_column(JSONText(), nullable=True)


class Allocation(TimestampMixin, Base):
    __tablename__ = "allocation"
    __table_args__ = (
        sa.Index("allocation_consumer_id_idx", "consumer_id"),
        sa.Index("allocation_resource_class_id_idx", "resource_class_id"),
        sa.Index(
            "allocation_resource_provider_class_used_idx",
            "resource_provider_id",
            "resource_class_id",
            "used",
        ),
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    resource_provider_id: Mapped[int] = mapped_column(sa.Integer)
    consumer_id: Mapped[str] = mapped_column(sa.String(36))
    resource_class_id: Mapped[int] = mapped_column(sa.Integer)
    used: Mapped[int] = mapped_column(sa.Integer)
    is_nested: Mapped[int] = mapped_column(sa.Integer)
    blob: Mapped[Any] = mapped_column(JSONText(), nullable=True)


class Volume(TimestampMixin, Base):
    __tablename__ = "volume"
    __table_args__ = (sa.UniqueConstraint("uuid", name="uniq_volume0uuid"), TABLE_ARGS)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(sa.String(36))
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    cinder_volume_id: Mapped[str | None] = mapped_column(sa.String(36))
    volume_provider: Mapped[str] = mapped_column(sa.String(36))
    connection_info: Mapped[str | None] = mapped_column(medium_text())
    host: Mapped[str | None] = mapped_column(sa.String(255))
    auto_remove: Mapped[bool | None] = mapped_column(sa.Boolean)
    contents: Mapped[str | None] = mapped_column(medium_text())


class VolumeMapping(TimestampMixin, Base):
    __tablename__ = "volume_mapping"
    __table_args__ = (
        # Zun reused the volume table's constraint name here. MariaDB scopes key names per
        # table; PostgreSQL does not, so there the migration names it
        # uniq_volume_mapping0uuid (see VOLUME_MAPPING_UUID_KEY_PG).
        sa.UniqueConstraint("uuid", name="uniq_volume0uuid"),
        sa.Index("container_uuid", "container_uuid"),
        sa.Index("volume_id", "volume_id"),
        TABLE_ARGS,
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(sa.String(36))
    project_id: Mapped[str | None] = mapped_column(sa.String(255))
    user_id: Mapped[str | None] = mapped_column(sa.String(255))
    container_uuid: Mapped[str | None] = mapped_column(
        sa.String(36), sa.ForeignKey("container.uuid", name="volume_mapping_ibfk_1")
    )
    container_path: Mapped[str | None] = mapped_column(sa.String(255))
    volume_id: Mapped[int] = mapped_column(
        sa.Integer,
        sa.ForeignKey("volume.id", name="volume_mapping_ibfk_2", ondelete="CASCADE"),
    )

    # A mapping is always shown with its volume's fields, so load it in the same query.
    volume: Mapped[Volume] = relationship(lazy="joined", innerjoin=True)


VOLUME_MAPPING_UUID_KEY_PG = "uniq_volume_mapping0uuid"


class Lease(Base):
    """Not in Zun's schema (revision 5e4c1d7a9b32): a named lease with an expiry, held by one
    process at a time (the API's node monitor: one pass at a time across all API processes
    and hosts)."""

    __tablename__ = "zun_lease"
    __table_args__ = (TABLE_ARGS,)

    name: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    holder: Mapped[str | None] = mapped_column(sa.String(255))
    expires_at: Mapped[datetime.datetime | None] = mapped_column(sa.DateTime)
