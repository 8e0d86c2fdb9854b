"""The node's image service: the one owner of image pulls for containers, capsules and the
image endpoint.

* names and policy: :mod:`zun.image.policy` (``(repo, tag)``, effective policy, pull or not);
* credentials, ONE rule (:meth:`ImageService.credentials`): the registry a container names
  (``registry_id``), else the caller's project's newest registry whose domain is the image's
  domain, else ``[docker]/default_registry_*`` when the image's domain is that registry;
  otherwise anonymous. Registry passwords are decrypted here only, handed to docker-py, never
  logged;
* the pull (:func:`ensure_present`): the image is inspected once, pulled when the policy says
  so, and inspected once more after a pull (for its id and size);
* the ``image`` row of (repo, tag, host), written only when the image behind it changed;
* ``image_driver`` glance: the image is fetched from Glance with zun's service credentials,
  as the container's project may see it, and ``docker load``-ed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zun.common import consts, crypt, exception
from zun.conf import CONF
from zun.db import engine
from zun.db.queries import node as node_q
from zun.db.queries import registries as registry_q
from zun.image import docker_driver, glance_client, glance_driver, reference
from zun.image.policy import effective_policy, parse_image_name, should_pull

LOG = logging.getLogger(__name__)

_UNKNOWN: Any = object()
Auth = dict[str, str] | Callable[[], dict[str, str] | None] | None


def domain_of(image: str) -> str:
    """The registry domain of an image reference ('' for none, or for an invalid one)."""
    try:
        return reference.parse(image).split_hostname()[0]
    except exception.ZunException:
        return ""


def split_loaded_ref(ref: str) -> tuple[str | None, str | None]:
    """``(repo, tag)`` of what ``docker load`` reported; ``(None, None)`` for a bare image id
    (an archive saved from an id carries no name)."""
    if ref.startswith("sha256:") or "@" in ref:
        return None, None
    repo, sep, tag = ref.rpartition(":")
    if not sep or "/" in tag:  # no tag, or the colon was a registry port
        return ref, None
    return repo, tag


def _summary(info: dict[str, Any], repo: str, tag: str | None, pulled: bool) -> dict[str, Any]:
    return {
        "image_id": info["Id"],
        "repo": repo,
        "tag": tag,
        "size": info.get("Size"),
        "pulled": pulled,
    }


def ensure_present(
    client: Any,
    repo: str,
    tag: str | None = "latest",
    pull_policy: str | None = None,
    registry_auth: Auth = None,
    on_pull: Callable[[], None] | None = None,
    present: dict[str, Any] | None = _UNKNOWN,
) -> dict[str, Any]:
    """Make ``repo:tag`` present on the node as ``pull_policy`` says, and describe it.

    ``always`` pulls, ``ifnotpresent`` pulls when absent, ``never`` (and any other value)
    never pulls; an absent image that is not pulled raises ImageNotFound. ``on_pull`` runs
    just before an actual pull; ``present`` is the caller's inspection, when it made one.
    ``registry_auth`` is docker-py's ``auth_config``, or a function giving it, called only
    when a pull happens.

    Returns ``{"image_id", "repo", "tag", "size", "pulled"}``.
    """
    ref = docker_driver.image_ref(repo, tag)
    policy = effective_policy(pull_policy)
    if present is _UNKNOWN:
        present = docker_driver.inspect_image(client, ref)
    if not should_pull(policy, present is not None):
        if present is None:
            raise exception.ImageNotFound(
                message=f"Image {ref} is not present on this node and the image pull "
                f"policy '{policy}' does not allow pulling it."
            )
        return _summary(present, repo, tag, pulled=False)
    if on_pull is not None:
        on_pull()
    auth = registry_auth() if callable(registry_auth) else registry_auth
    docker_driver.pull(client, repo, tag, auth)
    info = docker_driver.inspect_image(client, ref)
    if info is None:
        raise exception.ImageNotFound(message=f"Image {ref} is absent after its pull.")
    return _summary(info, repo, tag, pulled=True)


class ImageService:
    """Image pulls of one node; ``client`` gives the runtime's engine handle."""

    def __init__(self, host: str, client: Callable[[], Any]) -> None:
        self.host = host
        self._client = client
        self._known: dict[tuple[str, str | None], str] = {}
        self._lock = threading.Lock()

    # --- credentials --------------------------------------------------------------------------

    @staticmethod
    def credentials(
        project_id: str | None, domain: str, registry: Any = None
    ) -> dict[str, str] | None:
        """docker-py's ``auth_config`` for ``domain`` (see the module's rule); ``registry``:
        the one the container names, if any."""
        if registry is None and domain:
            with engine.transaction(readonly=True) as session:
                registry = registry_q.find_for_domain(session, project_id, domain)
        if registry is not None:
            if not registry.username:
                return None
            # A wrong key raises InvalidEncryptionKey, whose message never holds the secret.
            password = crypt.decrypt(registry.password) if registry.password else None
            return {
                "username": registry.username,
                "password": password or "",
                "serveraddress": registry.domain,
            }
        default = CONF.docker.default_registry
        user = CONF.docker.default_registry_username
        if default and user and domain == default:
            password = CONF.docker.default_registry_password or ""
            return {"username": user, "password": password, "serveraddress": default}
        return None

    # --- pulls --------------------------------------------------------------------------------

    def inspect(self, ref: str) -> dict[str, Any] | None:
        return docker_driver.inspect_image(self._client(), ref)

    def pull_for(
        self,
        image: str,
        *,
        policy: str | None,
        project_id: str | None,
        user_id: str | None,
        registry: Any = None,
        driver_name: str | None = None,
        on_pull: Callable[[], None] | None = None,
        present: dict[str, Any] | None = _UNKNOWN,
    ) -> str:
        """Make ``image`` present for a container or capsule as ``policy`` says, record its
        row, and return the engine reference to create from."""
        driver_name = driver_name or CONF.default_image_driver
        if driver_name == consts.IMAGE_DRIVER_GLANCE:
            return self._pull_from_glance(image, policy, project_id, on_pull)
        if driver_name != consts.IMAGE_DRIVER_DOCKER:
            raise exception.OperationNotSupported(
                message=f"Image driver {driver_name} is not available on host {self.host}; "
                "use image_driver docker."
            )
        repo, tag = parse_image_name(image, driver_name, registry=registry)
        info = ensure_present(
            self._client(),
            repo,
            tag,
            policy,
            lambda: self.credentials(project_id, domain_of(repo), registry),
            on_pull,
            present,
        )
        self.record(repo, tag, info, project_id, user_id)
        return docker_driver.image_ref(repo, tag)

    def _pull_from_glance(
        self,
        image: str,
        policy: str | None,
        project_id: str | None,
        on_pull: Callable[[], None] | None,
    ) -> str:
        """Download the Glance image with zun's service credentials, as ``project_id`` may see
        it (the API already found it with the user's token), and ``docker load`` it."""
        if on_pull is not None:
            on_pull()
        directory = CONF.glance.images_directory or str(Path(CONF.state_path) / "images")
        pulled = glance_driver.pull_image(
            self._client(),
            glance_client.for_service(),
            image,
            directory,
            effective_policy(policy),
            for_project=project_id,
        )
        return pulled["ref"]

    def pull_glance_row(self, project_id: str | None, ident: str) -> dict[str, Any]:
        """An explicit pull (the image endpoint) from Glance: always downloaded, as
        ``project_id`` may see the image, and ``docker load``-ed.

        Returns ``{"image_id", "size", "repo", "tag"}``: the engine's id and size, and the
        ``repo:tag`` the archive carried (the original records these), or ``repo`` and ``tag``
        None when the archive had no tag (only an image id)."""
        directory = CONF.glance.images_directory or str(Path(CONF.state_path) / "images")
        client = self._client()
        pulled = glance_driver.pull_image(
            client,
            glance_client.for_service(),
            ident,
            directory,
            consts.IMAGE_PULL_POLICY_ALWAYS,
            for_project=project_id,
        )
        info = docker_driver.inspect_image(client, pulled["ref"])
        if info is None:
            raise exception.ImageNotFound(
                message=f"Image {pulled['ref']} loaded from Glance is absent from the engine."
            )
        repo, tag = split_loaded_ref(pulled["ref"])
        return {"image_id": info["Id"], "size": info.get("Size"), "repo": repo, "tag": tag}

    def pull_row(self, project_id: str | None, repo: str, tag: str | None) -> dict[str, Any]:
        """An explicit pull (the image endpoint): always from the registry."""
        return ensure_present(
            self._client(),
            repo,
            tag or "latest",
            consts.IMAGE_PULL_POLICY_ALWAYS,
            lambda: self.credentials(project_id, domain_of(repo)),
        )

    # --- the image row ------------------------------------------------------------------------

    def record(
        self,
        repo: str,
        tag: str | None,
        info: dict[str, Any],
        project_id: str | None,
        user_id: str | None,
    ) -> None:
        """Write the node's row of (repo, tag) only when the image behind it changed: a create
        on the hot path usually finds the row already right and writes nothing."""
        key = (repo, tag)
        with self._lock:
            if self._known.get(key) == info["image_id"]:
                return
        with engine.transaction() as session:
            node_q.record_image(
                session,
                repo=repo,
                tag=tag,
                host=self.host,
                image_id=info["image_id"],
                size=info.get("size"),
                project_id=project_id,
                user_id=user_id,
            )
        with self._lock:
            self._known[key] = info["image_id"]
