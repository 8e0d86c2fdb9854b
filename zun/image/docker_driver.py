"""Images in the node's Docker engine: pull by policy, inspect, delete.

Registry credentials are handed to docker-py only (it sends them in the ``X-Registry-Auth``
header); they are never logged, stored or put in an exception message here.
"""

from __future__ import annotations

import logging
from typing import Any

import docker

from zun.common import exception, utils
from zun.runtime.docker.client import call, engine_explanation, is_not_found

LOG = logging.getLogger(__name__)


def image_ref(repo: str, tag: str | None) -> str:
    """``repo:tag``; a digest reference or an empty tag keeps ``repo`` as it is."""
    if not tag or "@" in repo:
        return repo
    return f"{repo}:{tag}"


def _summary(info: dict[str, Any], repo: str, tag: str | None, pulled: bool) -> dict[str, Any]:
    return {"image_id": info["Id"], "repo": repo, "tag": tag, "size": info.get("Size"),
            "pulled": pulled}


def inspect_image(client: docker.APIClient, ref: str) -> dict[str, Any] | None:
    """The engine's image document, or None when the engine does not have ``ref``."""
    try:
        return call(client.inspect_image, ref)
    except exception.ZunException as exc:
        if is_not_found(exc):
            return None
        raise


def pull_image(client: docker.APIClient, repo: str, tag: str | None = "latest",
               pull_policy: str | None = None,
               registry_auth: dict[str, str] | None = None) -> dict[str, Any]:
    """Make ``repo:tag`` present on the node as ``pull_policy`` says, and describe it.

    Policies: ``always`` pulls, ``ifnotpresent`` pulls when absent, ``never`` (and any other
    value) never pulls; an absent image that is not pulled raises ImageNotFound. A registry
    that does not have the image raises ImageNotFound with the engine's reason; other pull
    failures raise DockerError with the engine's reason. ``registry_auth`` is docker-py's
    ``auth_config`` (``username``, ``password``, optional ``serveraddress``).

    Returns ``{"image_id", "repo", "tag", "size", "pulled"}``.
    """
    ref = image_ref(repo, tag)
    policy = utils.get_image_pull_policy(pull_policy, tag)
    present = inspect_image(client, ref)
    if not utils.should_pull_image(policy, present is not None):
        if present is None:
            raise exception.ImageNotFound(
                message=f"Image {ref} is not present on this node and the image pull "
                        f"policy '{policy}' does not allow pulling it.")
        return _summary(present, repo, tag, pulled=False)

    LOG.info("Pulling image %s (policy %s, %s)", ref, policy,
             "with credentials" if registry_auth else "anonymous")
    try:
        progress = call(client.pull, repo, tag=tag or None, stream=True, decode=True,
                        auth_config=registry_auth or None)
        for event in call(list, progress):
            if event.get("error"):
                detail = event.get("errorDetail") or {}
                raise exception.DockerError(
                    error_msg=f"pulling {ref} failed: {detail.get('message') or event['error']}")
    except exception.ZunException as exc:
        if is_not_found(exc):
            cause = exc.__cause__
            reason = (engine_explanation(cause) if isinstance(cause, docker.errors.APIError)
                      else str(exc))
            raise exception.ImageNotFound(
                message=f"Image {ref} could not be found: {reason}") from exc
        raise
    info = inspect_image(client, ref)
    if info is None:
        raise exception.ImageNotFound(message=f"Image {ref} is absent after its pull.")
    return _summary(info, repo, tag, pulled=True)


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

