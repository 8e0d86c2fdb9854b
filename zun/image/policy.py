"""Image names and the pull policy, as the nodes apply them (the one place for both rules).

* :func:`parse_image_name`: ``(repo, tag)`` of a reference as the node pulls it.
* :func:`effective_policy`: the policy a pull follows: the given one in lower case, else
  ``always`` (Zun's default, whatever the tag).
* :func:`should_pull`: ``always`` pulls, ``ifnotpresent`` pulls an absent image, anything else
  (``never``, a wrong spelling) never pulls.
"""

from __future__ import annotations

from typing import Any

from zun.common import consts
from zun.conf import CONF
from zun.image import reference

_UNSET: Any = object()


def effective_policy(image_pull_policy: str | None) -> str:
    return (image_pull_policy or "").lower() or consts.DEFAULT_IMAGE_PULL_POLICY


def should_pull(image_pull_policy: str | None, present: bool) -> bool:
    """Only the lower-case spellings count, as on Zun's nodes (see :func:`effective_policy`)."""
    if image_pull_policy == consts.IMAGE_PULL_POLICY_ALWAYS:
        return True
    if image_pull_policy == consts.IMAGE_PULL_POLICY_IFNOTPRESENT:
        return not present
    return False


def parse_image_name(
    image: str,
    driver: str | None = None,
    registry: Any = None,
    default_registry: str | None = _UNSET,
) -> tuple[str, str]:
    """``(repo, tag)`` of an image reference, as the node pulls it.

    Glance images get an empty tag. Otherwise the tag defaults to ``latest``, the digest is
    dropped, and a name without a domain is prefixed with the registry's domain (``registry``:
    an object with ``domain`` or the domain string), else ``[docker]/default_registry``
    (``default_registry`` overrides the option). Invalid references raise
    :class:`exception.InvalidReference` subclasses.
    """
    parsed = reference.parse(image)
    repo = parsed.name
    if driver is None:
        driver = CONF.default_image_driver
    if driver == consts.IMAGE_DRIVER_GLANCE:
        return repo, ""
    tag = parsed.tag or "latest"
    domain, _ = parsed.split_hostname()
    if not domain:
        registry_domain = getattr(registry, "domain", registry)
        if default_registry is _UNSET:
            default_registry = CONF.docker.default_registry
        prefix = registry_domain or default_registry
        if prefix:
            repo = f"{prefix}/{repo}"
    return repo, tag
