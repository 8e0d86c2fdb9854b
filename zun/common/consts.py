"""Constants shared by the API and the nodes.

The status strings are part of the public contract: clients (python-zunclient, Heat, Skyline)
compare them case-sensitively, so they stay in Title Case exactly as Zun spells them.
"""

from __future__ import annotations

# Container statuses (also used for capsules).
CREATING = "Creating"
CREATED = "Created"
RUNNING = "Running"
STOPPED = "Stopped"
PAUSED = "Paused"
RESTARTING = "Restarting"
DELETING = "Deleting"
DELETED = "Deleted"
ERROR = "Error"
UNKNOWN = "Unknown"
DEAD = "Dead"
REBUILDING = "Rebuilding"

CONTAINER_STATUSES: tuple[str, ...] = (
    ERROR,
    RUNNING,
    STOPPED,
    PAUSED,
    UNKNOWN,
    CREATING,
    CREATED,
    DELETED,
    DELETING,
    REBUILDING,
    DEAD,
    RESTARTING,
)

# Capsule phases: defined by Zun but never exposed by its API (capsules use the statuses above).
CAPSULE_PENDING = "Pending"
CAPSULE_RUNNING = "Running"
CAPSULE_SUCCEEDED = "Succeeded"
CAPSULE_FAILED = "Failed"
CAPSULE_UNKNOWN = "Unknown"
CAPSULE_STATUSES: tuple[str, ...] = (
    CAPSULE_PENDING,
    CAPSULE_RUNNING,
    CAPSULE_SUCCEEDED,
    CAPSULE_FAILED,
    CAPSULE_UNKNOWN,
)

# Task states: set by the node for the duration of an operation.
IMAGE_PULLING = "image_pulling"
CONTAINER_CREATING = "container_creating"
CONTAINER_STARTING = "container_starting"
CONTAINER_DELETING = "container_deleting"
CONTAINER_STOPPING = "container_stopping"
CONTAINER_REBOOTING = "container_rebooting"
CONTAINER_PAUSING = "container_pausing"
CONTAINER_UNPAUSING = "container_unpausing"
CONTAINER_KILLING = "container_killing"
SG_ADDING = "sg_adding"
SG_REMOVING = "sg_removing"
NETWORK_ATTACHING = "network_attaching"
NETWORK_DETACHING = "network_detaching"
CONTAINER_REBUILDING = "container_rebuilding"
# Ours: resize_container and commit also hold the container while they run.
CONTAINER_RESIZING = "container_resizing"
CONTAINER_COMMITTING = "container_committing"

TASK_STATES: tuple[str, ...] = (
    IMAGE_PULLING,
    CONTAINER_CREATING,
    CONTAINER_STARTING,
    CONTAINER_DELETING,
    CONTAINER_STOPPING,
    CONTAINER_REBOOTING,
    CONTAINER_PAUSING,
    CONTAINER_UNPAUSING,
    CONTAINER_KILLING,
    SG_ADDING,
    SG_REMOVING,
    NETWORK_ATTACHING,
    NETWORK_DETACHING,
    CONTAINER_REBUILDING,
    CONTAINER_RESIZING,
    CONTAINER_COMMITTING,
)

# Rows of the ``container`` table are of four kinds (column ``container_type``).
TYPE_ANY = -1
TYPE_CONTAINER = 0
TYPE_CAPSULE = 1
TYPE_CAPSULE_CONTAINER = 2
TYPE_CAPSULE_INIT_CONTAINER = 3

# Image pull policies. The API accepts the capitalised spellings too; the node only honours the
# lower-case ones (an unknown value means "do not pull", as in Zun).
IMAGE_PULL_POLICY_ALWAYS = "always"
IMAGE_PULL_POLICY_IFNOTPRESENT = "ifnotpresent"
IMAGE_PULL_POLICY_NEVER = "never"
IMAGE_PULL_POLICIES: tuple[str, ...] = (
    IMAGE_PULL_POLICY_NEVER,
    IMAGE_PULL_POLICY_ALWAYS,
    IMAGE_PULL_POLICY_IFNOTPRESENT,
)
IMAGE_PULL_POLICIES_API: tuple[str, ...] = (
    "never",
    "always",
    "ifnotpresent",
    "Never",
    "Always",
    "IfNotPresent",
)
DEFAULT_IMAGE_PULL_POLICY = IMAGE_PULL_POLICY_ALWAYS

# Image drivers.
IMAGE_DRIVER_DOCKER = "docker"
IMAGE_DRIVER_GLANCE = "glance"

# Restart policies Docker understands.
RESTART_POLICY_NAMES: tuple[str, ...] = ("no", "on-failure", "always", "unless-stopped")

# CPU policies.
CPU_POLICY_SHARED = "shared"
CPU_POLICY_DEDICATED = "dedicated"

DEFAULT_QUOTA_CLASS_NAME = "default"

# Labels that mark an engine container as ours.
LABEL_CONTAINER_UUID = "zun.container.uuid"
LABEL_MANAGED = "zun.managed"
# Capabilities an admin adds to one container (comma separated); the API lets only callers
# allowed by ``container:create:cap_add`` set it.
LABEL_CAP_ADD = "zun.cap_add"
ENGINE_NAME_PREFIX = "zun-"
