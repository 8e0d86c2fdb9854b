"""Images in the node's Docker engine: inspect, pull, delete (the policy is zun.image.service's).

Registry credentials are handed to docker-py only (it sends them in the ``X-Registry-Auth``
header); they are never logged, stored or put in an exception message here.
"""

from __future__ import annotations

import logging
from typing import Any

import docker

from zun.common import exception
from zun.runtime.docker.client import call, engine_explanation, is_not_found

LOG = logging.getLogger(__name__)


def image_ref(repo: str, tag: str | None) -> str:
    """``repo:tag``; a digest reference or an empty tag keeps ``repo`` as it is."""
    if not tag or "@" in repo:
        return repo
    return f"{repo}:{tag}"


def inspect_image(client: docker.APIClient, ref: str) -> dict[str, Any] | None:
    """The engine's image document, or None when the engine does not have ``ref``."""
    try:
        return call(client.inspect_image, ref)
    except exception.ZunException as exc:
        if is_not_found(exc):
            return None
        raise


def pull(
    client: docker.APIClient,
    repo: str,
    tag: str | None,
    registry_auth: dict[str, str] | None = None,
) -> None:
    """Pull ``repo:tag`` from its registry (the pull policy is the caller's).

    A registry that does not have the image raises ImageNotFound with the engine's reason;
    other failures raise DockerError with the engine's reason. ``registry_auth`` is
    docker-py's ``auth_config`` (``username``, ``password``, optional ``serveraddress``).
    """
    ref = image_ref(repo, tag)
    LOG.info("Pulling image %s (%s)", ref, "with credentials" if registry_auth else "anonymous")
    try:
        progress = call(
            client.pull,
            repo,
            tag=tag or None,
            stream=True,
            decode=True,
            auth_config=registry_auth or None,
        )
        for event in call(list, progress):
            if event.get("error"):
                detail = event.get("errorDetail") or {}
                raise exception.DockerError(
                    error_msg=f"pulling {ref} failed: {detail.get('message') or event['error']}"
                )
    except exception.ZunException as exc:
        if is_not_found(exc):
            cause = exc.__cause__
            reason = (
                engine_explanation(cause) if isinstance(cause, docker.errors.APIError) else str(exc)
            )
            raise exception.ImageNotFound(
                message=f"Image {ref} could not be found: {reason}"
            ) from exc
        raise


def delete_image(client: docker.APIClient, ref: str, force: bool = False) -> bool:
    """Remove an image from the node; False when it was not there."""
    try:
        call(client.remove_image, ref, force=force)
    except exception.ZunException as exc:
        if is_not_found(exc):
            return False
        raise
    return True


def list_images(client: docker.APIClient) -> list[dict[str, Any]]:
    """The engine's image rows (``Id``, ``RepoTags``, ``Size``...)."""
    return call(client.images)
