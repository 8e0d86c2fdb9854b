"""What the node code may expect of a container runtime (the engine behind one node).

The compute code (``zun.compute``) talks to the engine only through an object of this shape,
as JupyterHub's spawners are driven through ``Spawner``: each call states what it promises
about the engine's state when it returns, and how it fails. The one implementation is
:class:`zun.runtime.docker.driver.DockerDriver`; docker-py is imported by the drivers only
(``zun.runtime``, ``zun.network.docker_network``, ``zun.volume.local``,
``zun.image.docker_driver``), never by ``zun.compute``, ``zun.api`` or ``zun.console``.

Conventions every call keeps:

* ``container`` is a :data:`ContainerRecord`: a ``container`` row, or a dict with its columns
  (``uuid``, ``container_id``, ``image``, ``command``, ``cpu``, ``memory``...). The runtime
  reads it; only :meth:`create` writes back (``container_id``). Persisting is the caller's job.
* The engine object of a record is its ``container_id``, else ``zun-<uuid>`` (found even if
  the id was never saved, e.g. after a crash between create and save).
* Failures are Zun exceptions: a missing engine object is a ``DockerError`` with
  ``code == 404`` (:func:`zun.runtime.docker.client.is_not_found`), a refusal because of the
  object's state a ``Conflict`` with the engine's words, anything else a ``DockerError``. A
  call that raised changed nothing the caller must undo, except where said.
* Calls are synchronous and thread-safe; the caller serialises the actions on one container.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class ContainerRow(Protocol):
    """The columns of a ``container`` row that identify its engine object."""

    uuid: Any
    container_id: Any


ContainerRecord = ContainerRow | Mapping[str, Any]


class ContainerRuntime(Protocol):
    """The engine of one node, as the compute code drives it."""

    # -- plumbing ---------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The engine's low-level client, handed as an opaque handle to the image driver."""

    @property
    def engine(self) -> Any:
        """The engine's object-level client, handed as an opaque handle to the network and
        volume drivers (same connection pool as :attr:`client`)."""

    def close(self) -> None:
        """Release the connection pool; the runtime reconnects on its next call."""

    def engine_ref(self, container: ContainerRecord) -> str:
        """The engine id, else the engine name, of ``container``."""

    # -- lifecycle ---------------------------------------------------------------------------

    def create(
        self,
        container: ContainerRecord,
        image_ref: str,
        networking: dict[str, Any] | None = None,
        binds: list[str] | dict[str, Any] | None = None,
        mounts: list[Any] | None = None,
        extra_host_config: dict[str, Any] | None = None,
    ) -> str:
        """A new engine container, created and not started, on every network of
        ``networking``; returns its id, also stored in ``container.container_id``. On failure
        nothing is left (a half-connected container is removed)."""

    def start(self, container: ContainerRecord) -> None:
        """Running when it returns (or exited already, for a short command)."""

    def stop(self, container: ContainerRecord, timeout: int | str | None = None) -> None:
        """Not running when it returns: SIGTERM, then SIGKILL after ``timeout`` seconds."""

    def reboot(self, container: ContainerRecord, timeout: int | str | None = None) -> None:
        """Stopped as :meth:`stop` does, then running again."""

    def pause(self, container: ContainerRecord) -> None:
        """Its processes frozen when it returns."""

    def unpause(self, container: ContainerRecord) -> None:
        """Its processes thawed when it returns."""

    def kill(self, container: ContainerRecord, signal: str | int | None = None) -> None:
        """``signal`` (None: SIGKILL) sent; the process may still be ending when it returns
        (see :meth:`wait_stopped`)."""

    def wait_stopped(self, container: ContainerRecord, timeout: float) -> int | None:
        """Blocks until the container is not running, at most ``timeout`` seconds; its exit
        code, or None when it still runs (nothing is killed)."""

    def delete(self, container: ContainerRecord, force: bool = False) -> bool:
        """Gone from the engine, with its anonymous volumes, when it returns; False when it
        was gone already (not an error for a delete)."""

    # -- state -------------------------------------------------------------------------------

    def inspect(self, container: ContainerRecord) -> dict[str, Any]:
        """The engine's full description (``Id``, ``State``, ``NetworkSettings``...)."""

    def list_zun_containers(self, all: bool = True) -> list[dict[str, Any]]:  # noqa: A002
        """Every engine container Zun made on this node (``Id``, ``State``, ``Status``,
        ``Labels``, ``Created``); reads only."""

    def list_labelled(self, label: str, value: str) -> list[dict[str, Any]]:
        """The engine containers (running or not) labelled ``label=value``; reads only."""

    # -- I/O and resources -------------------------------------------------------------------

    def logs(
        self,
        container: ContainerRecord,
        stdout: bool = True,
        stderr: bool = True,
        timestamps: bool = False,
        tail: str | int | None = "all",
        since: Any = None,
    ) -> str: ...

    def execute(
        self, container: ContainerRecord, command: list[str] | str, interactive: bool = False
    ) -> dict[str, Any]:
        """Runs ``command`` to its end (bounded by ``[docker]/execute_timeout``):
        ``{"output", "exit_code"}``."""

    def execute_create(
        self, container: ContainerRecord, command: list[str] | str, interactive: bool = False
    ) -> str:
        """An exec instance, created and not started (the console proxy starts it)."""

    def execute_resize(
        self, exec_id: str, height: int | str | None, width: int | str | None
    ) -> None: ...

    def resize(
        self, container: ContainerRecord, height: int | str | None, width: int | str | None
    ) -> None: ...

    def top(self, container: ContainerRecord, ps_args: str | None = None) -> dict[str, Any]: ...

    def get_archive(
        self, container: ContainerRecord, path: str
    ) -> tuple[bytes, dict[str, Any]]: ...

    def put_archive(self, container: ContainerRecord, path: str, data: bytes) -> None: ...

    def stats(self, container: ContainerRecord) -> dict[str, Any]: ...

    def update(
        self,
        container: ContainerRecord,
        cpu: float | str | None = None,
        memory: str | int | None = None,
    ) -> None:
        """The new limits apply to the running container when it returns."""

    def commit(self, container: ContainerRecord, repository: str, tag: str | None = None) -> str:
        """A new image ``repository[:tag]`` of the container's file system; its id. Never
        replaces an image the engine already has under that name (``Conflict``), and leaves
        no image behind when it fails."""

    def image_size(self, image_id: str) -> int | None:
        """The size in bytes of a local image."""

    def remove_image(self, image_id: str) -> None:
        """Remove a local image (one a failed commit made); an absent one is no error."""

    # -- node inventory ----------------------------------------------------------------------

    def host_info(self) -> dict[str, Any]: ...

    def disk_usage(self, docker_root_dir: str | None = None) -> dict[str, int]: ...
