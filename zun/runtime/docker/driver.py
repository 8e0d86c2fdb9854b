"""The Docker engine driver of a node: one container row in, one engine call out.

It implements :class:`zun.runtime.contract.ContainerRuntime`. ``container`` arguments
(:data:`~zun.runtime.contract.ContainerRecord`) are rows or dicts with the columns of the
``container`` table (``uuid``, ``container_id``, ``image``, ``command``, ``cpu``,
``memory``...). The driver reads them and, in :meth:`DockerDriver.show` and
:meth:`DockerDriver.apply_state` only, writes the status fields back; persisting is the
caller's job.

Errors are Zun exceptions (see :mod:`zun.runtime.docker.client`): an engine 404 is a
``DockerError`` with ``code == 404`` (test with :func:`is_not_found`), a 409 a ``Conflict``
carrying the engine's explanation, anything else a ``DockerError``.

Renaming is not here: in Zun a rename only changes the row (the engine name is ``zun-<uuid>``).
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import shlex
import shutil
import threading
from typing import Any

import docker
import requests.exceptions

from zun.common import consts, exception
from zun.conf import CONF
from zun.runtime.contract import ContainerRecord
from zun.runtime.docker import spec as spec_mod
from zun.runtime.docker import stats as stats_mod
from zun.runtime.docker.client import (
    call,
    is_not_found,
    make_client,
    refused_by_engine,
    to_zun_exception,
    translate_errors,
)
from zun.runtime.docker.status import StatusFields, map_docker_state

LOG = logging.getLogger(__name__)

REASON_NOT_IN_ENGINE = "container is missing in the Docker engine"

__all__ = ["DockerDriver", "is_not_found"]


def _get(container: ContainerRecord, name: str) -> Any:
    return spec_mod.field_getter(container)(name)


def _set(container: ContainerRecord, name: str, value: Any) -> None:
    if isinstance(container, dict):
        container[name] = value
    else:
        setattr(container, name, value)


def _none_if_unset(value: Any) -> Any:
    """An empty optional is an unset one (the API turned python-zunclient's ``'None'`` into
    None already: zun.api.common.optional)."""
    return None if value in (None, "") else value


def _signal_arg(signal: str | int | None) -> str | int | None:
    signal = _none_if_unset(signal)
    if signal is None:
        return None  # Docker's default: SIGKILL
    if isinstance(signal, int) or str(signal).isdigit():
        return int(signal)
    name = str(signal).upper()
    return name if name.startswith("SIG") else "SIG" + name


def _since_arg(since: Any) -> Any:
    """Epoch seconds, a datetime, or Zun's ``YYYY-MM-DD HH:MM:SS,mmm`` (UTC)."""
    since = _none_if_unset(since)
    if since is None or isinstance(since, int | float | datetime.datetime):
        return since
    text = str(since).strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        raise exception.InvalidValue(value=since, type="since") from None


def _tail_arg(tail: Any) -> str | int:
    tail = _none_if_unset(tail)
    if tail is None or tail == "all":
        return "all"
    try:
        return int(tail)
    except (TypeError, ValueError):
        raise exception.InvalidValue(value=tail, type="tail") from None


def _decode(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data


class DockerDriver:
    """Drive the node's Docker engine for Zun containers."""

    def __init__(
        self,
        client: docker.APIClient | None = None,
        api_url: str | None = None,
        timeout: int | None = None,
    ) -> None:
        self._api_url = api_url
        self._timeout = timeout
        self._client = client
        self._engine: docker.DockerClient | None = None

    # -- plumbing ---------------------------------------------------------------------------

    @property
    def client(self) -> docker.APIClient:
        if self._client is None:
            self._client = make_client(self._api_url, self._timeout)
        return self._client

    @property
    def engine(self) -> docker.DockerClient:
        """docker-py's object-level client over the same connection pool (for the network
        and volume drivers)."""
        if self._engine is None or self._engine.api is not self.client:
            engine = docker.DockerClient.__new__(docker.DockerClient)
            engine.api = self.client  # DockerClient's only state; no second connection pool
            self._engine = engine
        return self._engine

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = None
        self._engine = None

    @staticmethod
    def engine_ref(container: ContainerRecord) -> str:
        """The engine id of ``container``, else its engine name (found even if the id was
        never saved, e.g. after a crash between create and save)."""
        return _get(container, "container_id") or spec_mod.engine_name(_get(container, "uuid"))

    # -- lifecycle --------------------------------------------------------------------------

    def create(
        self,
        container: ContainerRecord,
        image_ref: str,
        networking: dict[str, Any] | None = None,
        binds: list[str] | dict[str, Any] | None = None,
        mounts: list[Any] | None = None,
        extra_host_config: dict[str, Any] | None = None,
    ) -> str:
        """Create the engine container ``zun-<uuid>``; returns its id and stores it in
        ``container.container_id``. Extra networks of ``networking`` are connected before
        returning; on a failure there the half-made container is removed.
        ``extra_host_config`` overrides host settings (a capsule's shared namespaces)."""
        spec = spec_mod.build_create_spec(container, image_ref, networking, binds, mounts)
        client = self.client
        LOG.info("Creating engine container %s from %s", spec.create["name"], image_ref)
        with translate_errors():
            host_config = client.create_host_config(
                **{**spec.host_config, **(extra_host_config or {})}
            )
            networking_config = None
            if spec.first_endpoint:
                name, endpoint = spec.first_endpoint
                networking_config = client.create_networking_config(
                    {name: client.create_endpoint_config(**endpoint)}
                )
            created = client.create_container(
                host_config=host_config, networking_config=networking_config, **spec.create
            )
        container_id = created["Id"]
        try:
            for network, endpoint in spec.extra_endpoints.items():
                call(client.connect_container_to_network, container_id, network, **endpoint)
        except exception.ZunException:
            self._remove_quietly(container_id)
            raise
        _set(container, "container_id", container_id)
        return container_id

    def _remove_quietly(self, container_id: str) -> None:
        try:
            call(self.client.remove_container, container_id, force=True)
        except exception.ZunException as exc:
            LOG.warning("Could not remove engine container %s: %s", container_id, exc)

    def start(self, container: ContainerRecord) -> None:
        call(self.client.start, self.engine_ref(container))

    def stop(self, container: ContainerRecord, timeout: int | str | None = None) -> None:
        """Stop, letting the process ``timeout`` seconds (engine default 10) after SIGTERM."""
        timeout = _none_if_unset(timeout)
        kwargs = {} if timeout is None else {"timeout": int(timeout)}
        # docker-py lengthens its HTTP timeout by the grace period itself.
        call(self.client.stop, self.engine_ref(container), **kwargs)

    def reboot(self, container: ContainerRecord, timeout: int | str | None = None) -> None:
        """Restart (stop with ``timeout``, then start)."""
        timeout = _none_if_unset(timeout)
        kwargs = {} if timeout is None else {"timeout": int(timeout)}
        call(self.client.restart, self.engine_ref(container), **kwargs)

    restart = reboot

    def pause(self, container: ContainerRecord) -> None:
        call(self.client.pause, self.engine_ref(container))

    def unpause(self, container: ContainerRecord) -> None:
        call(self.client.unpause, self.engine_ref(container))

    def kill(self, container: ContainerRecord, signal: str | int | None = None) -> None:
        """Send ``signal`` (name with or without SIG, number, or None for SIGKILL)."""
        sig = _signal_arg(signal)
        kwargs = {} if sig is None else {"signal": sig}
        call(self.client.kill, self.engine_ref(container), **kwargs)

    def wait_stopped(self, container: ContainerRecord, timeout: float) -> int | None:
        """The exit code once the container is not running, None if it still runs after
        ``timeout`` seconds; other engine errors raise as usual."""
        try:
            result = self.client.wait(
                self.engine_ref(container), timeout=timeout, condition="not-running"
            )
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            return None
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise to_zun_exception(exc) from exc
        return result.get("StatusCode")

    def delete(self, container: ContainerRecord, force: bool = False) -> bool:
        """Remove the engine container (and its anonymous volumes). Returns False when it was
        already gone, which is not an error for a delete."""
        try:
            call(
                self.client.remove_container, self.engine_ref(container), v=True, force=bool(force)
            )
        except exception.ZunException as exc:
            if is_not_found(exc):
                return False
            raise
        return True

    # -- state ------------------------------------------------------------------------------

    def inspect(self, container: ContainerRecord) -> dict[str, Any]:
        return call(self.client.inspect_container, self.engine_ref(container))

    def apply_state(
        self, container: ContainerRecord, state: dict[str, Any] | str | None, force: bool = False
    ) -> StatusFields:
        """Write the status fields mapped from Docker's ``state`` into ``container``."""
        fields = map_docker_state(
            state,
            status=_get(container, "status"),
            status_reason=_get(container, "status_reason"),
            status_detail=_get(container, "status_detail"),
            task_state=_get(container, "task_state"),
            force=force,
        )
        _set(container, "status", fields.status)
        _set(container, "status_reason", fields.status_reason)
        _set(container, "status_detail", fields.status_detail)
        return fields

    def show(self, container: ContainerRecord, force: bool = False) -> Any:
        """Refresh ``container``'s status fields (and a missing ``container_id``) from the
        engine. A container the engine no longer has becomes ``Deleted`` if it was
        auto-removed, else ``Error``; rows being deleted, or busy without ``force``, are left
        alone."""
        try:
            info = self.inspect(container)
        except exception.ZunException as exc:
            if not is_not_found(exc):
                raise
            self._mark_missing(container, force)
            return container
        if not _get(container, "container_id"):
            _set(container, "container_id", info["Id"])
        self.apply_state(container, info.get("State"), force=force)
        return container

    @staticmethod
    def _mark_missing(container: ContainerRecord, force: bool) -> None:
        if _get(container, "task_state") and not force:
            return
        if _get(container, "status") in (consts.DELETING, consts.DELETED):
            return
        if _get(container, "auto_remove"):
            _set(container, "status", consts.DELETED)
            _set(container, "status_reason", None)
        else:
            _set(container, "status", consts.ERROR)
            _set(container, "status_reason", REASON_NOT_IN_ENGINE)
        _set(container, "status_detail", None)

    def list_zun_containers(self, all: bool = True) -> list[dict[str, Any]]:  # noqa: A002
        """Engine list rows of Zun's containers (label ``zun.managed=true``).

        Each row has ``Id``, ``Names``, ``State`` (a string for :func:`map_docker_state`),
        ``Status`` and ``Labels`` (``Labels['zun.container.uuid']`` is the row's uuid).
        """
        return call(
            self.client.containers, all=all, filters={"label": f"{consts.LABEL_MANAGED}=true"}
        )

    def list_labelled(self, label: str, value: str) -> list[dict[str, Any]]:
        """Engine list rows (running or not) of the containers labelled ``label=value``."""
        return call(self.client.containers, all=True, filters={"label": f"{label}={value}"})

    # -- I/O --------------------------------------------------------------------------------

    def logs(
        self,
        container: ContainerRecord,
        stdout: bool = True,
        stderr: bool = True,
        timestamps: bool = False,
        tail: str | int | None = "all",
        since: Any = None,
    ) -> str:
        """The container's log as text (``tail``: ``'all'`` or a number of lines; ``since``:
        epoch seconds, datetime, or ``YYYY-MM-DD HH:MM:SS,mmm`` in UTC)."""
        data = call(
            self.client.logs,
            self.engine_ref(container),
            stdout=bool(stdout),
            stderr=bool(stderr),
            timestamps=bool(timestamps),
            tail=_tail_arg(tail),
            since=_since_arg(since),
        )
        return _decode(data)

    def execute_create(
        self, container: ContainerRecord, command: list[str] | str, interactive: bool = False
    ) -> str:
        """Create an exec instance; interactive ones get a TTY and stdin. Returns its id."""
        argv = spec_mod.as_argv(command) or []
        created = call(
            self.client.exec_create,
            self.engine_ref(container),
            argv,
            stdin=bool(interactive),
            tty=bool(interactive),
        )
        return created["Id"]

    def execute_run(
        self, exec_id: str, command: Any = None, timeout: int | None = None
    ) -> dict[str, Any]:
        """Run a non-interactive exec to completion within ``timeout`` seconds
        (``[docker]/execute_timeout``, 5). Returns ``{"output": str, "exit_code": int}``;
        past the deadline raises Conflict "Timeout on executing command: ..." (the process
        itself keeps running in the container: Docker cannot stop an exec)."""
        if timeout is None:
            timeout = int(CONF.docker.execute_timeout)
        stream = call(self.client.exec_start, exec_id, stream=True)
        chunks: list[bytes] = []
        failure: list[BaseException] = []

        def drain() -> None:
            try:
                for chunk in stream:
                    chunks.append(chunk)
            except Exception as exc:  # handed to the caller below
                failure.append(exc)

        # docker-py disables the socket timeout on exec streams, so the deadline is kept here
        # and enforced by shutting the stream's socket, which ends the reader.
        reader = threading.Thread(target=drain, name=f"exec-{exec_id[:12]}", daemon=True)
        reader.start()
        reader.join(timeout)
        if reader.is_alive():
            with contextlib.suppress(Exception):
                stream.close()
            reader.join(1)
            shown = command if isinstance(command, str) or command is None else shlex.join(command)
            raise exception.Conflict(message=f"Timeout on executing command: {shown}")
        if failure:
            with translate_errors():
                raise failure[0]
        exit_code = call(self.client.exec_inspect, exec_id).get("ExitCode")
        return {"output": _decode(b"".join(chunks)), "exit_code": exit_code}

    def execute(
        self,
        container: ContainerRecord,
        command: list[str] | str,
        interactive: bool = False,
        timeout: int | None = None,
    ) -> dict[str, Any]:
        """``{"exec_id", "output", "exit_code"}``: interactive gives only the id (to attach
        through the console proxy), non-interactive runs it (see :meth:`execute_run`)."""
        exec_id = self.execute_create(container, command, interactive)
        if interactive:
            return {"exec_id": exec_id, "output": None, "exit_code": None}
        result = self.execute_run(exec_id, command, timeout=timeout)
        return {"exec_id": exec_id, **result}

    def execute_inspect(self, exec_id: str) -> dict[str, Any]:
        return call(self.client.exec_inspect, exec_id)

    def execute_resize(
        self, exec_id: str, height: int | str | None, width: int | str | None
    ) -> None:
        call(
            self.client.exec_resize, exec_id, height=_int_or_none(height), width=_int_or_none(width)
        )

    def resize(
        self, container: ContainerRecord, height: int | str | None, width: int | str | None
    ) -> None:
        """Resize the container's TTY."""
        call(
            self.client.resize,
            self.engine_ref(container),
            height=_int_or_none(height),
            width=_int_or_none(width),
        )

    def top(self, container: ContainerRecord, ps_args: str | None = None) -> dict[str, Any]:
        """``{"Titles": [...], "Processes": [[...], ...]}``."""
        ps_args = _none_if_unset(ps_args)
        try:
            return call(self.client.top, self.engine_ref(container), ps_args=ps_args)
        except exception.ZunException as exc:
            raise refused_by_engine(exc, "ps: ") from exc

    def get_archive(self, container: ContainerRecord, path: str) -> tuple[bytes, dict[str, Any]]:
        """``(tar bytes, stat)`` of ``path``; stat has ``name``, ``size``, ``mode``,
        ``mtime`` and ``linkTarget`` as Docker reports them."""
        try:
            with translate_errors():
                stream, stat = self.client.get_archive(self.engine_ref(container), path)
                data = b"".join(stream)
        except exception.ZunException as exc:
            raise refused_by_engine(exc, "file name too long", "not a directory") from exc
        return data, stat

    def put_archive(self, container: ContainerRecord, path: str, data: bytes) -> None:
        """Extract the tar ``data`` into directory ``path`` of the container."""
        try:
            done = call(self.client.put_archive, self.engine_ref(container), path, data)
        except exception.ZunException as exc:
            raise refused_by_engine(
                exc, "Error processing tar file", "file name too long", "not a directory"
            ) from exc
        if not done:
            raise exception.DockerError(error_msg=f"could not extract the archive into {path}")

    def stats(self, container: ContainerRecord) -> dict[str, Any]:
        """One sample in Zun's ``stats`` shape (see :func:`stats.summarize`)."""
        raw = call(self.client.stats, self.engine_ref(container), decode=False, stream=False)
        return stats_mod.summarize(_get(container, "name"), raw)

    def commit(self, container: ContainerRecord, repository: str, tag: str | None = None) -> str:
        """Snapshot the container into image ``repository[:tag]``; returns the image id.

        ``docker commit`` would move the name off whatever image had it (an image another
        project or the node runs): the name is refused if the engine has it, and the snapshot
        is made unnamed, then named, and removed again if naming it fails.
        """
        tag = _none_if_unset(tag) or "latest"
        name = f"{repository}:{tag}"
        try:
            call(self.client.inspect_image, name)
        except exception.ZunException as exc:
            if not is_not_found(exc):
                raise
        else:
            raise exception.Conflict(
                message=f"Image {name} already exists on this node: a commit never replaces "
                "an image."
            )
        image_id = call(self.client.commit, self.engine_ref(container))["Id"]
        try:
            call(self.client.tag, image_id, repository, tag)
        except Exception:
            self.remove_image(image_id)
            raise
        return image_id

    def remove_image(self, image_id: str) -> None:
        try:
            call(self.client.remove_image, image_id, force=True)
        except exception.ZunException as exc:
            if not is_not_found(exc):
                LOG.warning("Could not remove image %s: %s", image_id, exc)

    def image_size(self, image_id: str) -> int | None:
        return call(self.client.inspect_image, image_id).get("Size")

    def update(
        self,
        container: ContainerRecord,
        cpu: float | str | None = None,
        memory: str | int | None = None,
    ) -> None:
        """Apply new CPU (cores) and/or memory (MiB, or with a unit) limits live.

        CPU goes as NanoCpus, as at create (docker-py has no parameter for it, hence the raw
        call). Swap keeps Docker's default of twice the memory, so a raise is never refused
        for being above the previous swap limit.
        """
        body: dict[str, Any] = {}
        nanos = spec_mod.nano_cpus(cpu)
        if nanos:
            body["NanoCpus"] = nanos
        mem = spec_mod.memory_bytes(memory)
        if mem:
            body["Memory"] = mem
            body["MemorySwap"] = mem * 2
        if not body:
            return
        client = self.client
        with translate_errors():
            url = client._url("/containers/{0}/update", self.engine_ref(container))
            response = client._post_json(url, data=body)
            client._raise_for_status(response)

    # -- networks ---------------------------------------------------------------------------

    def connect_network(self, container: ContainerRecord, network: str, **endpoint: Any) -> None:
        """Attach a network (``ipv4_address``, ``ipv6_address``, ``aliases``...)."""
        call(
            self.client.connect_container_to_network,
            self.engine_ref(container),
            network,
            **endpoint,
        )

    def disconnect_network(
        self, container: ContainerRecord, network: str, force: bool = False
    ) -> None:
        call(
            self.client.disconnect_container_from_network,
            self.engine_ref(container),
            network,
            force=force,
        )

    # -- node inventory ---------------------------------------------------------------------

    def host_info(self) -> dict[str, Any]:
        """What ``compute_node`` needs from ``docker info``: container counts, ``cpus``,
        ``mem_total`` (MiB), ``architecture``, ``os_type``, ``os``, ``kernel_version``,
        ``labels`` (dict), ``runtimes`` (sorted names), ``docker_root_dir``."""
        info = call(self.client.info)
        labels = {}
        for item in info.get("Labels") or []:
            key, _, value = item.partition("=")
            labels[key] = value
        return {
            "total_containers": info.get("Containers", 0),
            "running_containers": info.get("ContainersRunning", 0),
            "paused_containers": info.get("ContainersPaused", 0),
            "stopped_containers": info.get("ContainersStopped", 0),
            "cpus": info.get("NCPU", 0),
            "mem_total": int(info.get("MemTotal", 0)) >> 20,
            "architecture": info.get("Architecture"),
            "os_type": info.get("OSType"),
            "os": info.get("OperatingSystem"),
            "kernel_version": info.get("KernelVersion"),
            "labels": labels,
            "runtimes": sorted(info.get("Runtimes") or {}),
            "docker_root_dir": info.get("DockerRootDir"),
        }

    def disk_usage(self, docker_root_dir: str | None = None) -> dict[str, int]:
        """``{"disk_total", "disk_used"}`` in GiB of the filesystem holding the engine's
        data root (only meaningful for a local engine; zeros when it is not visible)."""
        path = (
            docker_root_dir
            or self.host_info().get("docker_root_dir")
            or CONF.docker.docker_data_root
        )
        try:
            usage = shutil.disk_usage(path)
        except OSError:
            return {"disk_total": 0, "disk_used": 0}
        return {"disk_total": usage.total >> 30, "disk_used": usage.used >> 30}


def host_memory(meminfo_path: str = "/proc/meminfo") -> dict[str, int]:
    """``{"mem_total", "mem_free", "mem_available", "mem_used"}`` of this host in MiB."""
    values: dict[str, int] = {}
    with open(meminfo_path) as meminfo:
        for line in meminfo:
            key, _, rest = line.partition(":")
            parts = rest.split()
            if parts:
                values[key] = int(parts[0])  # KiB
    total = values.get("MemTotal", 0) >> 10
    free = values.get("MemFree", 0) >> 10
    available = values.get("MemAvailable", values.get("MemFree", 0)) >> 10
    return {
        "mem_total": total,
        "mem_free": free,
        "mem_available": available,
        "mem_used": total - available,
    }


def _int_or_none(value: int | str | None) -> int | None:
    value = _none_if_unset(value)
    return None if value is None else int(value)
