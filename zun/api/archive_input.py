"""The tar a client sends to ``put_archive``, checked before it reaches the engine.

The engine answered data that is not a tar, or a tar it refuses to extract (a link that climbs
out of the target directory, a file written through a link of the same archive), with a 500.
Those archives are refused here with a 400 that says why.
"""

from __future__ import annotations

import io
import posixpath
import tarfile

from zun.common import exception


class BadArchive(exception.Invalid):
    message = "The archive cannot be extracted: %(reason)s"
    code = 400


def _escapes(name: str) -> bool:
    """Whether ``name`` (relative to the target directory) climbs above it."""
    normal = posixpath.normpath(name)
    return normal == ".." or normal.startswith("../")


def check_tar(data: bytes) -> None:
    """400 :class:`BadArchive` unless ``data`` is a tar the engine can extract safely."""
    if not data:
        raise BadArchive(reason="it is empty")
    links: set[str] = set()
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            for member in archive:
                name = posixpath.normpath(member.name.lstrip("/"))
                if _escapes(name):
                    raise BadArchive(reason=f"{member.name!r} is outside the target directory")
                parents = name.split("/")[:-1]
                for depth in range(1, len(parents) + 1):
                    if "/".join(parents[:depth]) in links:
                        raise BadArchive(
                            reason=f"{member.name!r} is written through the "
                            "link " + "/".join(parents[:depth])
                        )
                if member.issym() or member.islnk():
                    # An absolute symlink is resolved inside the container's own filesystem,
                    # as the engine does; a relative one must stay below the target.
                    target = member.linkname
                    if member.issym() and not target.startswith("/"):
                        target = posixpath.join(posixpath.dirname(name), target)
                    elif member.islnk():
                        target = target.lstrip("/")
                    if not target.startswith("/") and _escapes(target):
                        raise BadArchive(
                            reason=f"the link {member.name!r} points outside the "
                            f"target directory ({member.linkname!r})"
                        )
                    links.add(name)
    except tarfile.TarError:
        raise BadArchive(reason="it is not a tar archive (plain, gzip, bzip2 or xz)") from None
