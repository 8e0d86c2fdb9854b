"""Node side of the image resource: pull, delete and search, on ``zun-compute.<host>``.

* ``image_pull`` (cast) pulls the row's ``repo:tag`` into this node's engine (policy
  ``always``: the user asked for a pull), with the credentials :mod:`zun.image.service`
  chooses for the caller's project and the image's domain; then records the engine's image
  id and size. A failed pull removes the row again (so the same repo and tag can be
  pulled again; the API answered 202 long before) and logs why. With ``image_driver``
  glance (the API found the image with the user's token) the node finds it again with zun's
  service credentials as the row's project may see it, downloads it and ``docker load``s it;
  the row then takes the ``repo:tag`` the archive carried, as the original.
* ``image_delete`` (cast) removes the image from the engine, then the row; an engine that
  refuses (the image is in use) keeps both, and logs why. A Glance row without a tag (its
  archive's name belongs to another row, or it had none) owns only an engine id: that is
  removed when nothing else uses it, and the row goes in any case.
* ``image_search`` (call) lists the matching repositories of a v2 registry: the one named in
  the term (``127.0.0.1:5000/busybox``), else ``[docker]/default_registry``.

Credentials are handed to docker-py or the registry client only, never logged.
"""

from __future__ import annotations

import logging
from typing import Any

from oslo_db import exception as db_exc

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.conf import CONF
from zun.db import engine
from zun.db.queries import images as image_q
from zun.image import docker_driver
from zun.image import registry as registry_search
from zun.image.service import ImageService, domain_of
from zun.runtime.contract import ContainerRuntime
from zun.runtime.docker.driver import DockerDriver

LOG = logging.getLogger(__name__)


class ImageEndpoint:
    def __init__(self, host: str, driver: ContainerRuntime | None = None) -> None:
        self.host = host
        self._driver = driver
        self.images = ImageService(host, lambda: self.client)

    @property
    def client(self) -> Any:
        """The engine handle the image driver takes."""
        if self._driver is None:
            self._driver = DockerDriver()
        return self._driver.client

    def image_pull(
        self, context: RequestContext, image_uuid: str, image_driver: str | None = None
    ) -> None:
        with engine.transaction(readonly=True) as session:
            row = image_q.get_by_uuid(session, image_uuid)
        if row is None or not row.repo:
            LOG.warning("Image %s to pull is gone", image_uuid)
            return
        glance = (image_driver or consts.IMAGE_DRIVER_DOCKER) == consts.IMAGE_DRIVER_GLANCE
        try:
            if glance:
                info = self.images.pull_glance_row(row.project_id, row.repo)
            else:
                info = self.images.pull_row(context.project_id, row.repo, row.tag)
        except Exception as exc:
            LOG.error(
                "Pulling image %s (%s:%s) failed: %s; removing its record",
                image_uuid,
                row.repo,
                row.tag,
                exc,
            )
            with engine.transaction() as session:
                image_q.delete(session, image_uuid)
            return
        values = {
            "image_id": info["image_id"],
            "size": None if info.get("size") is None else str(info["size"]),
        }
        if glance and info.get("repo"):
            # As the original: the row takes the repository and tag the archive carried.
            renamed = {**values, "repo": info["repo"], "tag": info.get("tag") or ""}
            try:
                with engine.transaction() as session:
                    image_q.update(session, image_uuid, renamed)
                values = {}
            except db_exc.DBDuplicateEntry:
                # Another row of this host already holds that repo:tag (pulled before): this
                # one keeps the Glance name it was asked by, with the engine's id and size.
                LOG.info(
                    "Image %s: %s:%s already has a row on %s; keeping the Glance name %s",
                    image_uuid,
                    info["repo"],
                    info.get("tag"),
                    self.host,
                    row.repo,
                )
        if values:
            with engine.transaction() as session:
                image_q.update(session, image_uuid, values)
        LOG.info("Image %s pulled as %s", image_uuid, info["image_id"])

    def image_delete(self, context: RequestContext, image_uuid: str) -> None:
        with engine.transaction(readonly=True) as session:
            row = image_q.get_by_uuid(session, image_uuid)
        if row is None:
            return
        if not row.tag and row.image_id:
            # A Glance pull kept under its Glance name: the row owns no engine name, only an
            # id, which other names or rows may share. Removed if nothing else uses it; the
            # row goes either way (it could never be deleted otherwise).
            try:
                docker_driver.delete_image(self.client, row.image_id)
            except exception.ZunException as exc:
                LOG.info(
                    "Image %s: the engine keeps %s (%s); removing the record only",
                    image_uuid,
                    row.image_id,
                    exc,
                )
        else:
            ref = docker_driver.image_ref(row.repo or "", row.tag)
            try:
                docker_driver.delete_image(self.client, ref)
            except exception.ZunException as exc:
                LOG.error("Deleting image %s (%s) failed: %s", image_uuid, ref, exc)
                return
        with engine.transaction() as session:
            image_q.delete(session, image_uuid)

    def image_search(
        self,
        context: RequestContext,
        image: str,
        image_driver: str | None = None,
        exact_match: bool = False,
    ) -> list[dict[str, Any]]:
        driver = image_driver or CONF.default_image_driver
        if driver == consts.IMAGE_DRIVER_GLANCE:
            # zun-api answers these itself, with the user's token (their visibility).
            raise exception.Invalid(
                message="Image search with the glance driver is answered by zun-api, not by a node."
            )
        domain = domain_of(image) or CONF.docker.default_registry
        if not domain:
            raise exception.Invalid(
                message="No registry to search: name it in the image (registry/name) or set "
                "[docker]/default_registry."
            )
        auth = self.images.credentials(context.project_id, domain)
        return registry_search.search_image(image, domain, auth, exact_match=bool(exact_match))


def build_endpoint(host: str) -> ImageEndpoint:
    return ImageEndpoint(host)
