"""Images from Glance on a node (``image_driver = glance``): find, download, ``docker load``.

The archive is kept as ``[glance]/images_directory/<glance id>.tar``; with a pull policy other
than ``always`` an archive already there whose checksum still matches Glance's is loaded again
instead of downloaded. The engine reference to run is whatever ``docker load`` reports: the
``repository:tag`` stored in the archive, else the image id.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import docker
import docker.errors

from zun.common import exception
from zun.image.glance_client import GlanceClient, GlanceImage

_LOADED_TAG = "Loaded image: "
_LOADED_ID = "Loaded image ID: "


def pull_image(
    client: docker.APIClient,
    glance: GlanceClient,
    ident: str,
    directory: str,
    policy: str = "always",
    for_project: str | None = None,
) -> dict[str, Any]:
    """Find ``ident`` in Glance (as ``for_project`` may see it, when given) and load it into
    the engine; what was loaded.

    Returns ``{"image": glance name, "glance_id", "path", "ref": engine reference,
    "downloaded": bool}``.
    """
    image = glance.find(ident, for_project=for_project)
    path = os.path.join(directory, f"{image.id}.tar")
    downloaded = False
    if policy == "always" or not _archive_matches(path, image):
        path = glance.download(image, directory)
        downloaded = True
    ref = load_archive(client, path, image)
    return {
        "image": image.name,
        "glance_id": image.id,
        "path": path,
        "ref": ref,
        "downloaded": downloaded,
    }


def load_archive(client: docker.APIClient, path: str, image: GlanceImage) -> str:
    """``docker load`` the archive; the engine reference of the loaded image."""
    try:
        with open(path, "rb") as data:
            events = list(client.load_image(data))
    except docker.errors.APIError as exc:
        raise _not_docker(image, exc.explanation or str(exc)) from exc
    loaded: list[str] = []
    for event in events:
        if isinstance(event, bytes | str):  # older engines answer raw JSON lines
            event = json.loads(event)
        if event.get("error"):
            raise _not_docker(image, event["error"])
        stream = (event.get("stream") or "").strip()
        for prefix in (_LOADED_TAG, _LOADED_ID):
            if stream.startswith(prefix):
                loaded.append(stream[len(prefix) :].strip())
    if not loaded:
        raise _not_docker(image, "the engine loaded no image from it")
    return loaded[0]


def _not_docker(image: GlanceImage, why: str) -> exception.ImageFormatNotSupported:
    return exception.ImageFormatNotSupported(
        f"The data of Glance image {image.name or image.id} is not a Docker image archive "
        f"(docker save): {why}"
    )


def _archive_matches(path: str, image: GlanceImage) -> bool:
    if not os.path.isfile(path):
        return False
    if image.hash_algo and image.hash_value and image.hash_algo in hashlib.algorithms_available:
        digest, want = hashlib.new(image.hash_algo), image.hash_value
    elif image.checksum:
        digest, want = hashlib.md5(usedforsecurity=False), image.checksum
    else:
        return False
    with open(path, "rb") as data:
        while chunk := data.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest() == want
