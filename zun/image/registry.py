"""Image search against a Docker Registry HTTP API v2 (``/v2/_catalog``, ``/v2/<name>/tags/list``).

Docker Hub's search is out of reach of a private cloud, so Zun's image search is served by the
registry the deployment uses. Basic auth and the registry token flow (``WWW-Authenticate:
Bearer``) are both handled. The password is only ever put in an ``Authorization`` header.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from zun.common import exception

LOG = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10
MAX_CATALOG_PAGES = 100
_CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')


def base_url(registry: str) -> str:
    """``https://host[:port]`` for a registry given as host or URL; plain HTTP is assumed only
    for loopback hosts (as the Docker engine itself allows them without TLS)."""
    if "://" in registry:
        return registry.rstrip("/")
    host = registry.rstrip("/")
    hostname = urlsplit("//" + host).hostname or host
    loopback = hostname == "localhost"
    try:
        loopback = loopback or ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        pass
    return ("http://" if loopback else "https://") + host


class RegistryClient:
    """A small read-only client of one v2 registry."""

    def __init__(
        self,
        registry: str,
        username: str | None = None,
        password: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        verify: bool | str = True,
    ) -> None:
        self.base = base_url(registry)
        self.domain = urlsplit(self.base).netloc
        self._basic = (username, password) if username else None
        self._timeout = timeout
        self._verify = verify
        self._session = requests.Session()
        self._tokens: dict[str, str] = {}

    def _token(self, challenge: str) -> str:
        params = dict(_CHALLENGE_PARAM.findall(challenge))
        realm = params.pop("realm", None)
        if not realm:
            raise exception.ZunException(
                message=f"Registry {self.domain} sent an unusable authentication challenge."
            )
        key = f"{realm} {params.get('scope', '')}"
        if key not in self._tokens:
            response = self._session.get(
                realm, params=params, auth=self._basic, timeout=self._timeout, verify=self._verify
            )
            if response.status_code in (401, 403):
                raise exception.NotAuthorized(
                    message=f"Registry {self.domain} refused the credentials."
                )
            response.raise_for_status()
            body = response.json()
            self._tokens[key] = body.get("token") or body.get("access_token") or ""
        return self._tokens[key]

    def get(self, path_or_url: str, params: dict[str, Any] | None = None) -> requests.Response:
        url = (
            urljoin(self.base + "/", path_or_url.lstrip("/"))
            if "://" not in path_or_url
            else path_or_url
        )
        try:
            response = self._session.get(
                url, params=params, auth=self._basic, timeout=self._timeout, verify=self._verify
            )
            challenge = response.headers.get("WWW-Authenticate", "")
            if response.status_code == 401 and challenge.lower().startswith("bearer"):
                token = self._token(challenge)
                response = self._session.get(
                    url,
                    params=params,
                    timeout=self._timeout,
                    verify=self._verify,
                    headers={"Authorization": f"Bearer {token}"},
                )
        except requests.RequestException as exc:
            raise exception.ConnectionFailed(
                message=f"Registry {self.domain} is unreachable: {type(exc).__name__}"
            ) from exc
        if response.status_code in (401, 403):
            raise exception.NotAuthorized(
                message=f"Registry {self.domain} refused the request (HTTP {response.status_code})."
            )
        return response

    def catalog(self, page_size: int = 100) -> list[str]:
        """Every repository name, following the ``Link: rel=next`` pages (bounded)."""
        names: list[str] = []
        url: str | None = "/v2/_catalog"
        params: dict[str, Any] | None = {"n": page_size}
        for _ in range(MAX_CATALOG_PAGES):
            if url is None:
                break
            response = self.get(url, params)
            self._check(response, "list repositories")
            names.extend(response.json().get("repositories") or [])
            next_link = response.links.get("next", {}).get("url")
            url, params = (next_link, None) if next_link else (None, None)
        return names

    def tags(self, name: str) -> list[str]:
        """Tags of repository ``name``; empty when the registry does not know it."""
        response = self.get(f"/v2/{name}/tags/list")
        if response.status_code == 404:
            return []
        self._check(response, f"list the tags of {name}")
        return response.json().get("tags") or []

    def _check(self, response: requests.Response, what: str) -> None:
        if response.status_code >= 400:
            raise exception.ZunException(
                message=f"Registry {self.domain} could not {what}: HTTP {response.status_code}"
            )


def search_image(
    term: str,
    registry: str,
    auth: dict[str, str] | None = None,
    exact_match: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    verify: bool | str = True,
) -> list[dict[str, Any]]:
    """Repositories of ``registry`` matching ``term`` (substring, or equal with
    ``exact_match``), in Docker Hub's search shape plus their ``tags``::

        {"name": "<registry>/<repo>", "description": "", "is_official": False,
         "is_automated": False, "star_count": 0, "tags": [...]}

    ``term`` may carry the registry's domain and a tag (both ignored for matching).
    ``auth``: ``{"username", "password"}``.
    """
    auth = auth or {}
    client = RegistryClient(
        registry, auth.get("username"), auth.get("password"), timeout=timeout, verify=verify
    )
    wanted = term
    if wanted.startswith(client.domain + "/"):
        wanted = wanted[len(client.domain) + 1 :]
    wanted = wanted.split("@", 1)[0]
    last = wanted.rsplit("/", 1)[-1]
    if ":" in last:
        wanted = wanted[: len(wanted) - len(last)] + last.split(":", 1)[0]
    names = client.catalog()
    matches = [n for n in names if (n == wanted if exact_match else wanted in n)]
    LOG.debug(
        "Registry %s: %d of %d repositories match %r",
        client.domain,
        len(matches),
        len(names),
        wanted,
    )
    return [
        {
            "name": f"{client.domain}/{name}",
            "description": "",
            "is_official": False,
            "is_automated": False,
            "star_count": 0,
            "tags": client.tags(name),
        }
        for name in matches
    ]
