"""Registry addressing rules of the v2 search client."""

from __future__ import annotations

import pytest

from zun.image import docker_driver, registry


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("localhost:5000", "http://localhost:5000"),
        ("[::1]:5000", "http://[::1]:5000"),
        ("registry.example.com", "https://registry.example.com"),
        ("10.0.0.1:5000", "https://10.0.0.1:5000"),
        ("http://reg.local:5000/", "http://reg.local:5000"),
    ],
)
def test_base_url(given: str, expected: str) -> None:
    assert registry.base_url(given) == expected


def test_image_ref() -> None:
    assert docker_driver.image_ref("busybox", "latest") == "busybox:latest"
    assert docker_driver.image_ref("busybox", "") == "busybox"
    assert docker_driver.image_ref("busybox@sha256:" + "a" * 64, "latest") == (
        "busybox@sha256:" + "a" * 64
    )
