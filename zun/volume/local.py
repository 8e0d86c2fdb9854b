"""Embedded-mode volumes: Docker local volumes and injected files, on the local engine.

Zun's ``mounts`` entries are ``{type, source, destination, size}`` (``type`` defaults to
``volume``). Without Cinder they map to:

* ``volume`` with ``size`` and no ``source``: a new Docker ``local`` volume named
  ``zun-<container uuid>-<n>`` (``n`` is the entry's index), labelled ``zun.managed=true`` and
  ``zun.container.uuid=<uuid>``. It is ``auto_remove``: :func:`release_mounts` deletes it with the
  container. The local driver cannot cap a volume's size, so ``size`` (GiB) is validated and
  recorded (label ``zun.size_gb``) but not enforced.
* ``volume`` with ``source``: the existing Docker volume of that name, mounted read-write and
  never removed by Zun. A volume Zun created for another container is refused (it would vanish
  with that container).
* ``bind``: file injection. ``source`` is the file's content, **base64-encoded** (that is what
  python-zunclient sends for ``--mount type=bind,source=<file>,...``); a bind entry without
  ``source`` injects an empty file. The content is written to
  ``<state_dir>/volumes/<container uuid>/<n>-<file name>`` and bind-mounted read-only at
  ``destination``. Invalid base64 gives ``Base64Exception`` (400).

:func:`prepare_mounts` returns the Docker mounts and one record per entry, holding the columns
of the ``volume`` and ``volume_mapping`` tables; :func:`release_mounts` takes those records
(or the stored ``volume`` rows) back. ``connection_info`` (JSON) says what to release:
``{"type": "volume", "name": ...}`` or ``{"type": "bind", "path": <path relative to
state_dir>}``; ``contents`` keeps the base64 content so a lost file can be written again.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import re
import shutil
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.types import Mount

from zun.common import exception

LOG = logging.getLogger(__name__)

LABEL_MANAGED = "zun.managed"
LABEL_CONTAINER = "zun.container.uuid"
LABEL_SIZE = "zun.size_gb"
# A named volume a project may mount: Zun labels the volumes it makes, an operator labels the
# ones it hands to a project (docker volume create --label zun.project_id=<project> ...).
LABEL_PROJECT = "zun.project_id"
VOLUME_PROVIDER = "local"
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9_.-]")

__all__ = [
    "LABEL_CONTAINER",
    "LABEL_MANAGED",
    "LABEL_SIZE",
    "VOLUME_PROVIDER",
    "decode_contents",
    "docker_mounts_for",
    "prepare_mounts",
    "release_container_volumes",
    "release_mounts",
    "volume_name",
]


def volume_name(container_uuid: str, index: int) -> str:
    return f"zun-{container_uuid}-{index}"


def _container_dir(state_dir: str | os.PathLike[str], container_uuid: str) -> Path:
    return Path(state_dir) / "volumes" / container_uuid


def _invalid(index: int, why: str) -> exception.Invalid:
    return exception.Invalid(message=f"Invalid mount #{index}: {why}")


def _parse_size(index: int, size: Any) -> int | None:
    if size is None or size == "":
        return None
    if isinstance(size, bool):
        raise _invalid(index, f"size {size!r} is not a positive integer (GiB).")
    try:
        value = int(str(size).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise _invalid(index, f"size {size!r} is not a positive integer (GiB).")
    return value


def _validate(mounts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Check every entry before anything is created; returns normalised copies."""
    result: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, mount in enumerate(mounts):
        kind = mount.get("type") or "volume"
        if kind not in ("volume", "bind"):
            raise _invalid(index, f"type {kind!r} is not one of volume, bind.")
        dest = mount.get("destination")
        if not isinstance(dest, str) or not dest.startswith("/"):
            raise _invalid(index, f"destination {dest!r} is not an absolute path.")
        dest = os.path.normpath(dest)
        if dest == "/":
            raise _invalid(index, "destination cannot be the root directory.")
        if dest in seen:
            raise _invalid(index, f"destination {dest} is used twice.")
        seen.add(dest)
        source = mount.get("source")
        size = _parse_size(index, mount.get("size"))
        if kind == "volume" and not source and size is None:
            raise _invalid(index, "a volume needs a source (existing volume) or a size.")
        result.append({"type": kind, "source": source, "destination": dest, "size": size})
    return result


def decode_contents(content: str | None) -> bytes:
    """Bytes of a bind mount's base64 ``source`` (whitespace ignored); ``Base64Exception``."""
    if not content:
        return b""
    try:
        # Wrapped base64 (as `base64` prints it) is fine; other stray characters are not.
        return base64.b64decode("".join(content.split()), validate=True)
    except (binascii.Error, ValueError) as err:
        raise exception.Base64Exception() from err


def _record(
    container_uuid: str,
    destination: str,
    connection_info: dict[str, Any],
    auto_remove: bool,
    contents: str | None,
    project_id: str | None,
    user_id: str | None,
    host: str | None,
) -> dict[str, Any]:
    return {
        "volume": {
            "uuid": str(uuidlib.uuid4()),
            "project_id": project_id,
            "user_id": user_id,
            "cinder_volume_id": None,
            "volume_provider": VOLUME_PROVIDER,
            "connection_info": json.dumps(connection_info, sort_keys=True),
            "host": host,
            "auto_remove": auto_remove,
            "contents": contents,
        },
        "volume_mapping": {
            "uuid": str(uuidlib.uuid4()),
            "project_id": project_id,
            "user_id": user_id,
            "container_uuid": container_uuid,
            "container_path": destination,
        },
    }


def _create_volume(
    client: docker.DockerClient,
    container_uuid: str,
    index: int,
    size: int | None,
    project_id: str | None = None,
) -> str:
    name = volume_name(container_uuid, index)
    labels = {LABEL_MANAGED: "true", LABEL_CONTAINER: container_uuid}
    if project_id:
        labels[LABEL_PROJECT] = project_id
    if size is not None:
        labels[LABEL_SIZE] = str(size)
    try:
        vol = client.volumes.create(name=name, driver="local", labels=labels)
    except docker.errors.APIError as err:
        raise exception.VolumeCreateFailed(creation_failed=str(err.explanation or err)) from err
    # Docker hands back an existing volume of the same name: only ours may be reused.
    if (vol.attrs.get("Labels") or {}).get(LABEL_CONTAINER) != container_uuid:
        raise exception.VolumeCreateFailed(
            creation_failed=f"a volume named {name} already exists and is not this container's"
        )
    return name


def usable_volume(
    client: docker.DockerClient, name: str, project_id: str | None, owner_uuid: str
) -> str:
    """The existing named volume ``name`` if a container or capsule of ``project_id`` (whose
    uuid is ``owner_uuid``) may mount it; the one ownership check of both paths.

    The volume must carry ``zun.project_id=<project_id>``: Zun labels the volumes it makes,
    an operator labels one to hand it to a project. Any other volume (unlabelled: the host's,
    an operator's bind volume of a host directory; another project's) is "not found", so a
    project learns nothing about volumes that are not its own. A volume that goes with
    another container or capsule (``zun.container.uuid``) is not usable.
    """
    try:
        vol = client.volumes.get(name)
    except docker.errors.NotFound as err:
        raise exception.VolumeNotFound(volume=name) from err
    except docker.errors.APIError as err:
        raise exception.DockerError(error_msg=str(err.explanation or err)) from err
    labels = vol.attrs.get("Labels") or {}
    if not project_id or labels.get(LABEL_PROJECT) != project_id:
        raise exception.VolumeNotFound(volume=name)
    owner = labels.get(LABEL_CONTAINER)
    if owner and owner != owner_uuid:
        raise exception.VolumeNotUsable(volume=name)
    return vol.name


def _write_bind_file(
    state_dir: str | os.PathLike[str],
    container_uuid: str,
    index: int,
    destination: str,
    data: bytes,
) -> str:
    """Write injected content; returns its path relative to ``state_dir``."""
    directory = _container_dir(state_dir, container_uuid)
    # 0700: the content may be a secret; dockerd (root) still binds the file itself.
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    base = _UNSAFE_FILE_CHARS.sub("_", os.path.basename(destination)) or "file"
    path = directory / f"{index}-{base}"
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        # Containers may run as any user: the file is readable by all, its directory is not.
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        _rmdir_if_empty(directory)
        raise
    return str(path.relative_to(state_dir))


def _rmdir_if_empty(directory: Path) -> None:
    try:
        directory.rmdir()
    except OSError:
        pass  # not empty (other injected files) or already gone


def prepare_mounts(
    client: docker.DockerClient,
    container_uuid: str,
    mounts: Sequence[Mapping[str, Any]] | None,
    state_dir: str | os.PathLike[str],
    *,
    project_id: str | None = None,
    user_id: str | None = None,
    host: str | None = None,
) -> tuple[list[Mount], list[dict[str, Any]]]:
    """Create what ``mounts`` needs; return ``(docker_mounts, records)``.

    ``docker_mounts`` go to ``containers.create(mounts=...)``. ``records`` has one dict per
    entry: ``{"volume": <volume row columns>, "volume_mapping": <volume_mapping row columns>}``
    (the caller sets ``volume_mapping.volume_id`` from the stored volume row). On any failure,
    everything created so far is released before the error is raised: no orphan is left.
    """
    if not container_uuid or not _SAFE_ID.match(container_uuid):
        raise exception.InvalidUUID(uuid=container_uuid)
    entries = _validate(mounts or [])
    docker_mounts: list[Mount] = []
    records: list[dict[str, Any]] = []
    try:
        for index, entry in enumerate(entries):
            dest = entry["destination"]
            if entry["type"] == "bind":
                data = decode_contents(entry["source"])
                rel = _write_bind_file(state_dir, container_uuid, index, dest, data)
                info = {"type": "bind", "path": rel, "read_only": True}
                records.append(
                    _record(
                        container_uuid,
                        dest,
                        info,
                        True,
                        entry["source"] or "",
                        project_id,
                        user_id,
                        host,
                    )
                )
                docker_mounts.append(
                    Mount(dest, str(Path(state_dir) / rel), type="bind", read_only=True)
                )
            elif entry["source"]:
                name = usable_volume(client, entry["source"], project_id, container_uuid)
                info = {"type": "volume", "name": name, "read_only": False}
                records.append(
                    _record(container_uuid, dest, info, False, None, project_id, user_id, host)
                )
                docker_mounts.append(Mount(dest, name, type="volume"))
            else:
                name = _create_volume(client, container_uuid, index, entry["size"], project_id)
                info = {"type": "volume", "name": name, "read_only": False, "size": entry["size"]}
                records.append(
                    _record(container_uuid, dest, info, True, None, project_id, user_id, host)
                )
                docker_mounts.append(Mount(dest, name, type="volume"))
    except BaseException:
        try:
            release_mounts(client, records, state_dir)
        except Exception:  # the original error matters more than a cleanup failure
            LOG.exception("Cleanup after a failed prepare_mounts of %s", container_uuid)
        raise
    return docker_mounts, records


def _volume_row(record: Mapping[str, Any]) -> Mapping[str, Any]:
    return record.get("volume", record)


def _connection_info(row: Mapping[str, Any]) -> dict[str, Any]:
    info = row.get("connection_info")
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except ValueError:
            return {}
    return dict(info or {})


def _inside(state_dir: str | os.PathLike[str], rel: str) -> Path | None:
    """Resolve a stored relative path, refusing anything outside ``<state_dir>/volumes``."""
    root = (Path(state_dir) / "volumes").resolve()
    path = (Path(state_dir) / rel).resolve()
    return path if path.is_relative_to(root) and path != root else None


def _remove_volume(client: docker.DockerClient, name: str) -> str | None:
    """Remove a Zun-made volume; returns an error text when it could not be removed."""
    try:
        vol = client.volumes.get(name)
        if (vol.attrs.get("Labels") or {}).get(LABEL_MANAGED) != "true":
            LOG.warning("Not removing volume %s: it was not created by Zun", name)
            return None
        vol.remove()
    except docker.errors.NotFound:
        return None
    except docker.errors.APIError as err:
        return f"{name}: {err.explanation or err}"
    return None


def _remove_file(state_dir: str | os.PathLike[str], rel: str) -> None:
    path = _inside(state_dir, rel)
    if path is None:
        LOG.warning("Not removing %s: outside %s/volumes", rel, state_dir)
        return
    path.unlink(missing_ok=True)
    _rmdir_if_empty(path.parent)


def release_mounts(
    client: docker.DockerClient,
    records: Iterable[Mapping[str, Any]],
    state_dir: str | os.PathLike[str],
) -> None:
    """Remove what Zun created for these records; leave user-named volumes alone.

    Accepts the records of :func:`prepare_mounts` or bare ``volume`` rows. Idempotent: a volume
    or file already gone is fine. Raises ``VolumeDeleteFailed`` (after trying every record)
    only when Docker refuses to remove a volume, e.g. while a container still uses it.
    """
    failures: list[str] = []
    for record in records:
        row = _volume_row(record)
        if not row.get("auto_remove"):
            continue
        info = _connection_info(row)
        if info.get("type") == "volume" and info.get("name"):
            error = _remove_volume(client, info["name"])
            if error:
                failures.append(error)
        elif info.get("type") == "bind" and info.get("path"):
            _remove_file(state_dir, info["path"])
    if failures:
        raise exception.VolumeDeleteFailed(deletion_failed="; ".join(failures))


def release_container_volumes(
    client: docker.DockerClient, container_uuid: str, state_dir: str | os.PathLike[str]
) -> None:
    """Sweep by label and directory: every volume Zun made for the container and its files.

    For when records were lost (e.g. a crash before they were stored). Raises
    ``VolumeDeleteFailed`` if Docker refuses to remove a volume.
    """
    if not container_uuid or not _SAFE_ID.match(container_uuid):
        raise exception.InvalidUUID(uuid=container_uuid)
    failures = []
    vols = client.volumes.list(filters={"label": f"{LABEL_CONTAINER}={container_uuid}"})
    for vol in vols:
        error = _remove_volume(client, vol.name)
        if error:
            failures.append(error)
    shutil.rmtree(_container_dir(state_dir, container_uuid), ignore_errors=True)
    if failures:
        raise exception.VolumeDeleteFailed(deletion_failed="; ".join(failures))


def docker_mounts_for(
    client: docker.DockerClient,
    records: Iterable[Mapping[str, Any]],
    state_dir: str | os.PathLike[str],
) -> list[Mount]:
    """Docker mounts for stored records, e.g. to rebuild a container or after a node restart.

    Each record needs its volume row and ``container_path`` (a :func:`prepare_mounts` record,
    or ``{"volume": row, "volume_mapping": mapping}`` from the DB). An injected file that is
    missing (state dir wiped) is written again from ``contents``; a missing volume gives
    ``VolumeNotFound``.
    """
    result: list[Mount] = []
    for record in records:
        row = _volume_row(record)
        dest = (record.get("volume_mapping") or {}).get("container_path")
        info = _connection_info(row)
        if not dest:
            raise exception.Invalid(message="A volume record has no container_path.")
        if info.get("type") == "bind":
            path = _inside(state_dir, info.get("path") or "")
            if path is None:
                raise exception.Invalid(message=f"Bad injected file path {info.get('path')!r}.")
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                path.write_bytes(decode_contents(row.get("contents")))
                os.chmod(path, 0o644)
            result.append(Mount(dest, str(path), type="bind", read_only=True))
        else:
            name = info.get("name") or ""
            try:
                client.volumes.get(name)
            except docker.errors.NotFound as err:
                raise exception.VolumeNotFound(volume=name) from err
            result.append(Mount(dest, name, type="volume"))
    return result


# --- capsule volumes ------------------------------------------------------------------------
# A capsule template's volume is either a new local volume named with a fresh UUID (so that,
# when it outlives the capsule, it can be named by ``volumeID`` later) or an existing one.

LABEL_CAPSULE = "zun.capsule.uuid"


def volume_mount(target: str, name: str, read_only: bool = False) -> Mount:
    """The Docker mount of the named volume ``name`` at ``target``."""
    return Mount(target, name, type="volume", read_only=read_only)


def create_capsule_volume(
    client: docker.DockerClient,
    capsule_uuid: str,
    project_id: str | None,
    size: Any,
    auto_remove: bool,
) -> str:
    """A new local volume for a capsule; ``auto_remove`` makes it go with the capsule (the
    container label is what :func:`release_container_volumes` sweeps)."""
    name = str(uuidlib.uuid4())
    labels = {
        LABEL_MANAGED: "true",
        LABEL_CAPSULE: capsule_uuid,
        LABEL_PROJECT: project_id or "",
        LABEL_SIZE: str(size),
    }
    if auto_remove:
        labels[LABEL_CONTAINER] = capsule_uuid
    try:
        client.volumes.create(name=name, driver="local", labels=labels)
    except docker.errors.APIError as err:
        raise exception.VolumeCreateFailed(creation_failed=str(err.explanation or err)) from err
    return name


def remove_capsule_volumes(client: docker.DockerClient, capsule_uuid: str) -> None:
    """Remove every volume made for the capsule, kept or not (a failed create); raises a
    ``DockerError`` if the engine cannot list them."""
    try:
        vols = client.volumes.list(filters={"label": f"{LABEL_CAPSULE}={capsule_uuid}"})
        for vol in vols:
            try:
                vol.remove()
            except docker.errors.NotFound:
                pass
    except docker.errors.APIError as err:
        raise exception.DockerError(error_msg=str(err.explanation or err)) from err


def prepare_capsule_mounts(
    client: docker.DockerClient, capsule: Any, requests: Sequence[Mapping[str, Any]], host: str
) -> tuple[dict[str, list[Mount]], list[dict[str, Any]]]:
    """The mounts of a capsule's volumes by member UUID, and the records to store (one
    ``volume`` and one ``volume_mapping`` row each, as :func:`prepare_mounts` gives)."""
    mounts: dict[str, list[Mount]] = {}
    records: list[dict[str, Any]] = []
    for request in requests:
        if request.get("size"):
            name = create_capsule_volume(
                client,
                capsule.uuid,
                capsule.project_id,
                request["size"],
                bool(request.get("auto_remove")),
            )
        else:
            name = usable_volume(
                client, str(request.get("volume_id")), capsule.project_id, capsule.uuid
            )
        paths = [m["mount_path"] for m in request.get("mounts") or []]
        for mount in request.get("mounts") or []:
            mounts.setdefault(mount["container_uuid"], []).append(
                volume_mount(mount["mount_path"], name, bool(mount.get("read_only")))
            )
        owned = bool(request.get("size")) and bool(request.get("auto_remove"))
        records.append(
            {
                "volume": {
                    "uuid": str(uuidlib.uuid4()),
                    "project_id": capsule.project_id,
                    "user_id": capsule.user_id,
                    "cinder_volume_id": None,
                    "volume_provider": VOLUME_PROVIDER,
                    "connection_info": json.dumps(
                        {"type": "volume", "name": name, "read_only": False}, sort_keys=True
                    ),
                    "host": host,
                    "auto_remove": owned,
                    "contents": None,
                },
                "volume_mapping": {
                    "uuid": str(uuidlib.uuid4()),
                    "project_id": capsule.project_id,
                    "user_id": capsule.user_id,
                    "container_uuid": capsule.uuid,
                    "container_path": paths[0] if paths else None,
                },
            }
        )
    return mounts, records
