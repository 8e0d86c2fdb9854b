"""Glance's image API (v2) as Zun uses it: find a Docker image by name or id, search, download.

Every call goes through a keystoneauth session: the user's own (their token, so Glance applies
its visibility rules: another project's private image is simply not there) or the service's
(``[keystone_auth]``). The endpoint comes from the catalog, filtered by ``[glance_client]``
(``region_name``, ``endpoint_type``); the requests to Glance use that group's TLS options
(``ca_file``, ``cert_file``, ``key_file``, ``insecure``), Keystone keeps ``[keystone_auth]``'s.

Failures are Zun exceptions with a clear code: Glance unreachable or answering 5xx is
``GlanceUnavailable`` (503); an image that is not a Docker image ``ImageFormatNotSupported``
(400); no match ``ImageNotFound`` (400, as the original); several matches for a name
``Conflict`` (409); Keystone refusing the user's token ``TokenRefused`` (401), refusing zun's
own credentials ``GlanceUnavailable``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
from oslo_config import cfg

from zun.common import exception, service_catalog

DOCKER_FORMAT = "docker"
_CHUNK = 1024 * 1024


# Interface names of [glance_client]/endpoint_type (publicURL...) as keystoneauth wants them.
@dataclass(frozen=True)
class GlanceImage:
    id: str
    name: str
    container_format: str | None
    disk_format: str | None
    size: int | None
    checksum: str | None
    hash_algo: str | None
    hash_value: str | None
    status: str
    owner: str | None = None
    visibility: str | None = None
    tags: list[str] = field(default_factory=list)
    # Glance's own view of the image, as image search returns it.
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_api(cls, body: dict[str, Any]) -> GlanceImage:
        return cls(
            id=body["id"],
            name=body.get("name") or "",
            container_format=body.get("container_format"),
            disk_format=body.get("disk_format"),
            size=body.get("size"),
            checksum=body.get("checksum"),
            hash_algo=body.get("os_hash_algo"),
            hash_value=body.get("os_hash_value"),
            status=body.get("status", ""),
            owner=body.get("owner"),
            visibility=body.get("visibility"),
            tags=list(body.get("tags") or []),
            raw=dict(body),
        )

    @property
    def is_docker(self) -> bool:
        return self.container_format == DOCKER_FORMAT


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def for_request(context: Any, conf: Any = None) -> GlanceClient:
    """The client zun-api uses for a request: the user's token, zun.conf's [glance_client]."""
    if conf is None:
        from zun.conf import CONF as conf
    return GlanceClient(user_session(conf, context), conf, as_user=True)


def for_service(conf: Any = None) -> GlanceClient:
    """The client a node uses: zun's own credentials ([keystone_auth]), since user tokens never
    reach the nodes. Lookups then pass ``for_project`` to keep the user's visibility."""
    if conf is None:
        from zun.conf import CONF as conf
    try:
        return GlanceClient(service_session(conf), conf)
    except ks_exc.ClientException as exc:
        raise exception.GlanceUnavailable(
            reason=f"zun's service credentials ([keystone_auth]) are unusable: {exc}"
        ) from exc


def _auth_url(conf: Any) -> str:
    # auth_url is an option of the auth plugin, which keystoneauth registers only when it loads
    # the plugin; registering the same definitions first is harmless.
    auth_type = conf.keystone_auth.auth_type or "password"
    conf.register_opts(ks_loading.get_auth_plugin_conf_options(auth_type), group="keystone_auth")
    url = conf.keystone_auth.auth_url
    if not url:
        # keystonemiddleware registers [keystone_authtoken] only in zun-api.
        try:
            url = conf.keystone_authtoken.www_authenticate_uri
        except cfg.NoSuchOptError:
            url = None
    if not url:
        raise exception.GlanceUnavailable(
            reason="no Keystone address to find Glance: set [keystone_auth]/auth_url"
        )
    return url


def user_session(conf: Any, context: Any) -> ks_session.Session:
    """A session acting as the request's user, with their token, in their project."""
    if not getattr(context, "auth_token", None):
        raise exception.Invalid(
            message="image_driver glance needs the user's Keystone token: the request carries "
            "none ([api]/auth_strategy = keystone, or an X-Auth-Token header)."
        )
    auth = v3.Token(
        auth_url=_auth_url(conf), token=context.auth_token, project_id=context.project_id
    )
    return ks_loading.load_session_from_conf_options(conf, "keystone_auth", auth=auth)


def service_session(conf: Any) -> ks_session.Session:
    """A session with zun's own credentials ([keystone_auth])."""
    auth = ks_loading.load_auth_from_conf_options(conf, "keystone_auth")
    return ks_loading.load_session_from_conf_options(conf, "keystone_auth", auth=auth)


class GlanceClient:
    def __init__(
        self,
        session: ks_session.Session,
        conf: Any = None,
        endpoint: str | None = None,
        as_user: bool = False,
    ) -> None:
        self._session = session
        self._conf = conf
        self._endpoint = endpoint.rstrip("/") if endpoint else None
        # Whose credentials a Keystone refusal is about: the caller's token (401) or zun's
        # own [keystone_auth] (a deployment fault: 503).
        self._as_user = as_user

    def _auth_refused(self, exc: Exception) -> exception.ZunException:
        status = getattr(exc, "http_status", None)
        if isinstance(status, int) and status >= 500:
            return exception.GlanceUnavailable(reason=f"Keystone answered {status}: {exc}")
        if self._as_user:
            return exception.TokenRefused(reason=str(exc))
        return exception.GlanceUnavailable(
            reason=f"Keystone refused zun's service credentials ([keystone_auth]): {exc}"
        )

    # -- plumbing ----------------------------------------------------------------------------

    def endpoint(self) -> str:
        if self._endpoint is None:
            options: dict[str, Any] = {"service_type": "image"}
            if self._conf is not None:
                group = self._conf.glance_client
                if str(group.api_version or "2").split(".")[0] != "2":
                    raise exception.GlanceUnavailable(
                        reason=f"[glance_client]/api_version {group.api_version} is not "
                        "supported: Zun speaks the Glance image API v2"
                    )
                options["interface"] = service_catalog.interface(group.endpoint_type)
                options["region_name"] = group.region_name
            try:
                url = self._session.get_endpoint(**options)
            except ks_exc.ConnectionError as exc:
                raise _unavailable(exc) from exc
            except (ks_exc.HttpError, ks_exc.AuthorizationFailure) as exc:
                raise self._auth_refused(exc) from exc
            except ks_exc.EndpointNotFound as exc:
                raise exception.GlanceUnavailable(
                    reason="no image endpoint in the service catalog"
                ) from exc
            if not url:
                raise exception.GlanceUnavailable(reason="no image endpoint in the service catalog")
            self._endpoint = url.rstrip("/")
        return self._endpoint

    def _tls(self) -> dict[str, Any]:
        """``verify``/``cert`` of [glance_client] for the requests to Glance.

        The session's own TLS settings ([keystone_auth]) are Keystone's; keystoneauth lets a
        request override them, so Glance gets its own CA, client certificate and ``insecure``
        as in the original's glanceclient."""
        if self._conf is None:
            return {}
        return service_catalog.tls_options(self._conf.glance_client)

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        kwargs.setdefault("raise_exc", False)
        for name, value in self._tls().items():
            kwargs.setdefault(name, value)
        try:
            resp = self._session.request(self.endpoint() + path, method, **kwargs)
        except ks_exc.ConnectionError as exc:
            raise _unavailable(exc) from exc
        except (ks_exc.HttpError, ks_exc.AuthorizationFailure) as exc:
            # raise_exc=False: only the authentication step (Keystone) raises these.
            raise self._auth_refused(exc) from exc
        if resp.status_code >= 500:
            raise exception.GlanceUnavailable(
                reason=f"Glance answered {resp.status_code} to {method} {path}"
            )
        return resp

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        resp = self._request(method, path, **kwargs)
        if resp.status_code >= 400:
            raise exception.ZunException(
                f"Glance refused {method} {path}: {resp.status_code} {resp.text[:200]}"
            )
        return resp.json()

    # -- lookups -----------------------------------------------------------------------------

    def get(self, image_id: str) -> GlanceImage | None:
        """The image with this id if the caller may see it, else None."""
        resp = self._request("GET", f"/v2/images/{image_id}")
        if resp.status_code == 404:
            return None
        if resp.status_code >= 400:
            raise exception.ZunException(f"Glance refused GET image {image_id}: {resp.status_code}")
        return GlanceImage.from_api(resp.json())

    def images(self, **filters: str) -> Iterator[GlanceImage]:
        """Every image the caller may see that matches the Glance filters, page by page."""
        path = "/v2/images"
        params: dict[str, Any] | None = {"limit": 100, **filters}
        while path:
            body = self._json("GET", path, params=params)
            yield from (GlanceImage.from_api(i) for i in body.get("images", []))
            # "next" is a path with the query (marker included) relative to the endpoint.
            path, params = body.get("next") or "", None

    def visible_to(self, image: GlanceImage, project_id: str, listed: bool = False) -> bool:
        """Glance's visibility rule for a project, for a caller (the service) that sees all.

        A shared image is there for a member project by id whatever its membership status,
        but in a listing (a lookup by name) only once accepted: what the project's own token
        gets from Glance, so that the node agrees with zun-api's lookup."""
        if image.owner == project_id or image.visibility in ("public", "community"):
            return True
        if image.visibility == "shared":
            resp = self._request("GET", f"/v2/images/{image.id}/members/{project_id}")
            if resp.status_code != 200:
                return False
            return not listed or resp.json().get("status") == "accepted"
        return False

    def find(self, ident: str, for_project: str | None = None) -> GlanceImage:
        """The one Docker image named or identified by ``ident``.

        ``for_project``: with service credentials, only what that project may see counts."""
        if _is_uuid(ident):
            image = self.get(ident)
            if image is None or (for_project and not self.visible_to(image, for_project)):
                raise exception.ImageNotFound(image=ident)
            matches = [image]
        else:
            matches = list(self.images(name=ident))
            if for_project:
                matches = [i for i in matches if self.visible_to(i, for_project, listed=True)]
            if not matches:
                raise exception.ImageNotFound(image=ident)
            docker = [i for i in matches if i.is_docker]
            if len(docker) > 1:
                raise exception.Conflict(
                    f"Multiple images exist with same name {ident}. Please use the image "
                    "id instead."
                )
            matches = docker or matches
        image = matches[0]
        if not image.is_docker:
            raise exception.ImageFormatNotSupported(
                image=ident, container_format=image.container_format
            )
        return image

    def search(self, term: str, exact: bool = False) -> list[GlanceImage]:
        """Docker images whose name is, or contains, ``term``."""
        found = self.images(container_format=DOCKER_FORMAT)
        if exact:
            return [i for i in found if i.name == term]
        return [i for i in found if term in i.name]

    # -- data --------------------------------------------------------------------------------

    def download(self, image: GlanceImage, directory: str) -> str:
        """Write the image's data to ``<directory>/<id>.tar`` and return the path.

        The data is checked against Glance's multihash (else its md5 checksum) before the file
        takes its final name, so a cut download never passes for an image.
        """
        os.makedirs(directory, exist_ok=True)
        final = os.path.join(directory, f"{image.id}.tar")
        resp = self._request("GET", f"/v2/images/{image.id}/file", stream=True)
        if resp.status_code == 404:
            raise exception.ImageNotFound(image=image.id)
        if resp.status_code == 204 or resp.status_code >= 400:
            raise exception.ZunException(
                f"Glance has no data for image {image.id} ({resp.status_code})."
            )
        digest = _digest(image)
        fd, partial = tempfile.mkstemp(prefix=f".{image.id}.", dir=directory)
        try:
            with os.fdopen(fd, "wb") as out:
                try:
                    for chunk in resp.iter_content(_CHUNK):
                        out.write(chunk)
                        if digest is not None:
                            digest.update(chunk)
                except OSError as exc:  # the connection broke mid-stream
                    raise _unavailable(exc) from exc
            if digest is not None and digest.hexdigest() != _expected(image):
                raise exception.ZunException(
                    f"The data of Glance image {image.id} does not match its checksum."
                )
            os.replace(partial, final)
        except BaseException:
            if os.path.exists(partial):
                os.unlink(partial)
            raise
        finally:
            resp.close()
        return final


def _digest(image: GlanceImage) -> Any:
    if image.hash_algo and image.hash_value and image.hash_algo in hashlib.algorithms_available:
        return hashlib.new(image.hash_algo)
    if image.checksum:
        return hashlib.md5(usedforsecurity=False)
    return None


def _expected(image: GlanceImage) -> str | None:
    if image.hash_algo and image.hash_value and image.hash_algo in hashlib.algorithms_available:
        return image.hash_value
    return image.checksum


def _unavailable(exc: Exception) -> exception.GlanceUnavailable:
    if isinstance(exc, ks_exc.SSLError):
        return exception.GlanceUnavailable(
            reason="the TLS handshake with Glance failed (see [glance_client]/ca_file, "
            f"cert_file, key_file, insecure): {exc}"
        )
    return exception.GlanceUnavailable(reason=f"Glance cannot be reached: {exc}")
