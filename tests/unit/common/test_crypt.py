"""zun.common.crypt: Zun's key derivation, round trips, wrong keys."""

from __future__ import annotations

import base64

import pytest
from cryptography.fernet import Fernet

from zun.common import crypt, exception

# Tokens made outside this module, the way Zun makes them: Fernet keyed with the standard
# base64 of the first 32 characters of auth_encryption_key.
ZUN_DEFAULT_KEY_TOKEN = (
    "gAAAAABrDWObRF80nbZ0WKF5xW4SialFDfjIh4-ZpNOvDwL17_pYYsBG6u9SUC9SlnMVJt6Z8JZHBY33MXNUO7yhEIv"
    "463NXO6mpfmlIaqR3Q1jD8rY-6lU="
)
LONG_KEY = "0123456789abcdef0123456789ABCDEF-extra-ignored"
ZUN_LONG_KEY_TOKEN = (
    "gAAAAABrDWObuliNbUV2Wg6nCcNtfCiQpQM7sVUPxB8m2rKJRCE0GijFKRb-dgnQpzSJvlsLhGRKZRj3JlpkyIZxPc"
    "NEYJ8SAQ=="
)


def test_default_key_derivation_is_zuns() -> None:
    assert crypt.fernet_key() == b"bm90Z29vZCBidXQganVzdCBsb25nIGVub3VnaCBpIHQ="
    assert crypt.fernet_key(LONG_KEY) == base64.b64encode(LONG_KEY[:32].encode())


def test_decrypts_a_token_made_the_zun_way() -> None:
    assert crypt.decrypt(ZUN_DEFAULT_KEY_TOKEN) == "s3cret-pässword"
    assert crypt.decrypt(ZUN_LONG_KEY_TOKEN, LONG_KEY) == "registry-pass"
    # Only the first 32 characters count.
    assert crypt.decrypt(ZUN_LONG_KEY_TOKEN, LONG_KEY[:32] + "something else") == "registry-pass"


def test_round_trip_and_zun_can_read_ours() -> None:
    token = crypt.encrypt("hunter2")
    assert token != "hunter2" and "hunter2" not in token
    assert crypt.decrypt(token) == "hunter2"
    zun_side = Fernet(base64.b64encode(b"notgood but just long enough i t"))
    assert zun_side.decrypt(token.encode()) == b"hunter2"


def test_configured_key_is_used() -> None:
    from zun.conf import CONF

    CONF.set_override("auth_encryption_key", LONG_KEY)
    try:
        assert crypt.decrypt(ZUN_LONG_KEY_TOKEN) == "registry-pass"
        # Rows the original wrote under its public default key stay readable...
        assert crypt.decrypt(ZUN_DEFAULT_KEY_TOKEN) == "s3cret-pässword"
        # ...but not under a key given explicitly.
        with pytest.raises(exception.InvalidEncryptionKey):
            crypt.decrypt(ZUN_DEFAULT_KEY_TOKEN, LONG_KEY)
        # Re-encryption moves them to the configured key and leaves current ones alone.
        moved = crypt.reencrypt(ZUN_DEFAULT_KEY_TOKEN, [])
        assert moved is not None and crypt.decrypt(moved, LONG_KEY) == "s3cret-pässword"
        assert crypt.reencrypt(ZUN_LONG_KEY_TOKEN, []) is None
    finally:
        CONF.clear_override("auth_encryption_key")


def test_wrong_key_and_damaged_token() -> None:
    with pytest.raises(exception.InvalidEncryptionKey) as info:
        crypt.decrypt(ZUN_DEFAULT_KEY_TOKEN, LONG_KEY)
    assert info.value.code == 500
    with pytest.raises(exception.InvalidEncryptionKey):
        crypt.decrypt("not-a-token")


@pytest.mark.parametrize("key", ["short", "é" * 32])
def test_unusable_key_is_invalid_encryption_key_without_the_key(key: str) -> None:
    with pytest.raises(exception.InvalidEncryptionKey) as info:
        crypt.encrypt("x", key)
    assert key not in str(info.value)
