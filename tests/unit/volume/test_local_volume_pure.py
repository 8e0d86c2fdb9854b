"""Pure parts of the local volume driver: names and injected-content decoding."""

from __future__ import annotations

import base64

import pytest

from zun.common import exception
from zun.volume import local


def test_volume_name_follows_the_container_and_index():
    assert local.volume_name("0f6c8d3e-1111-2222-3333-444455556666", 2) == (
        "zun-0f6c8d3e-1111-2222-3333-444455556666-2"
    )


def test_decode_contents_accepts_what_zunclient_and_base64_tools_send():
    data = bytes(range(256)) * 3
    encoded = base64.b64encode(data).decode()
    assert local.decode_contents(encoded) == data
    wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76)) + "\n"
    assert local.decode_contents(wrapped) == data
    assert local.decode_contents("") == b""
    assert local.decode_contents(None) == b""


@pytest.mark.parametrize("bad", ["hello", "not base64!", "aGk=x", "%%%%"])
def test_decode_contents_rejects_non_base64(bad):
    with pytest.raises(exception.Base64Exception) as err:
        local.decode_contents(bad)
    assert err.value.code == 400
