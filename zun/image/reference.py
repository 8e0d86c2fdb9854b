"""Docker image references: ``[domain/]path[:tag][@digest]``.

This follows the grammar of Docker's distribution ``reference`` package as Zun froze it (no
IPv6 domains, no upper-case check of its own: an upper-case name simply does not match).

    reference        := name [ ":" tag ] [ "@" digest ]
    name             := [domain "/"] path-component ["/" path-component]*
    domain           := domain-component ["." domain-component]* [":" port-number]
    domain-component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
    path-component   := [a-z0-9]+ (separator [a-z0-9]+)*
    separator        := [_.] | "__" | "-"*
    tag              := [\\w][\\w.-]{0,127}
    digest           := algorithm ":" hex+   (length checked per algorithm)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zun.common import exception

NAME_TOTAL_LENGTH_MAX = 255

_ALNUM = r"[a-z0-9]+"
# "-"+ rather than the grammar's "-"*: same language (the empty separator adds nothing),
# without the nested-quantifier backtracking that makes a long invalid name slow to reject.
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = _ALNUM + r"(?:" + _SEPARATOR + _ALNUM + r")*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = _DOMAIN_COMPONENT + r"(?:\." + _DOMAIN_COMPONENT + r")*(?::[0-9]+)?"
_NAME = r"(?:" + _DOMAIN + r"/)?" + _PATH_COMPONENT + r"(?:/" + _PATH_COMPONENT + r")*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]+"

_REFERENCE = re.compile(
    r"^(" + _NAME + r")(?::(" + _TAG + r"))?(?:@(" + _DIGEST + r"))?$", re.ASCII
)

# Known digest algorithms and the length of their hex encoding.
_DIGEST_HEX_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}


class DigestInvalidLength(exception.InvalidReference):
    message = "invalid checksum digest length"


class DigestUnsupported(exception.InvalidReference):
    message = "unsupported digest algorithm"


@dataclass(frozen=True)
class Reference:
    """A parsed reference; ``tag`` and ``digest`` are None when absent."""

    name: str
    tag: str | None = None
    digest: str | None = None

    def split_hostname(self) -> tuple[str, str]:
        """``(domain, remainder)``; the domain is ``''`` when the first component is not one.

        A first component counts as a domain only if it has a dot or a colon, or is
        ``localhost``: ``library/busybox`` has none, ``quay.io/x`` does.
        """
        first, sep, rest = self.name.partition("/")
        if not sep or (not any(c in first for c in ".:") and first != "localhost"):
            return "", self.name
        return first, rest


def _validate_digest(digest: str) -> None:
    algorithm, _, hex_part = digest.partition(":")
    expected = _DIGEST_HEX_LENGTHS.get(algorithm)
    if expected is None:
        raise DigestUnsupported()
    if len(hex_part) != expected:
        raise DigestInvalidLength()


def parse(image: str) -> Reference:
    """Parse ``image`` or raise a subclass of :class:`exception.InvalidReference`."""
    match = _REFERENCE.match(image)
    if match is None:
        if image == "":
            raise exception.NameEmpty()
        raise exception.ReferenceInvalidFormat()
    name, tag, digest = match.groups()
    if len(name) > NAME_TOTAL_LENGTH_MAX:
        raise exception.NameTooLong(length_max=NAME_TOTAL_LENGTH_MAX)
    if digest is not None:
        _validate_digest(digest)
    return Reference(name=name, tag=tag, digest=digest)
