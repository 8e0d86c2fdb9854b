"""Encryption of secrets kept in the database (registry passwords), compatible with Zun.

The Fernet key is derived from ``[DEFAULT]/auth_encryption_key`` exactly as Zun derives it, so
a database written by Zun stays readable and the other way round:

* take the first 32 characters of the configured key;
* base64-encode their UTF-8 bytes (standard alphabet) and use the result as the Fernet key.

The default key (``notgood but just long enough i t``) is 32 characters long. A key whose first
32 characters are not 32 bytes (shorter, or with multi-byte characters) gives no valid Fernet
key: that is reported as :class:`InvalidEncryptionKey`, never with the key in the message.
"""

from __future__ import annotations

import base64

from cryptography import fernet

from zun.common import exception
from zun.conf import CONF

KEY_CHARS = 32

InvalidEncryptionKey = exception.InvalidEncryptionKey


def _configured_key() -> str:
    return str(CONF.auth_encryption_key or "")


def fernet_key(encryption_key: str | None = None) -> bytes:
    """The Fernet key (urlsafe-decodable base64 of 32 bytes) for ``encryption_key``."""
    key = _configured_key() if encryption_key is None else encryption_key
    return base64.b64encode(key[:KEY_CHARS].encode("utf-8"))


def _cipher(encryption_key: str | None) -> fernet.Fernet:
    try:
        return fernet.Fernet(fernet_key(encryption_key))
    except ValueError:
        # Fernet refuses keys that do not decode to 32 bytes; the key itself stays unsaid.
        raise InvalidEncryptionKey() from None


def encrypt(data: str, encryption_key: str | None = None) -> str:
    """A Fernet token (text) for ``data``."""
    return _cipher(encryption_key).encrypt(data.encode("utf-8")).decode("ascii")


def decrypt(data: str, encryption_key: str | None = None) -> str:
    """The clear text of a token made by :func:`encrypt` (or by Zun with the same key).

    Raises :class:`InvalidEncryptionKey` when the token was made with another key or is
    damaged.
    """
    try:
        return _cipher(encryption_key).decrypt(data.encode("utf-8")).decode("utf-8")
    except (fernet.InvalidToken, UnicodeError):
        raise InvalidEncryptionKey() from None
