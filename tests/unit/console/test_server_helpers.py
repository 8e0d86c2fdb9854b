"""Pure helpers of the console proxy: UTF-8 framing for python-zunclient, the Origin rule."""

from __future__ import annotations

import pytest

from zun.console.relay import Target, TicketBook
from zun.console.server import origin_allowed, utf8_split


@pytest.mark.parametrize("text", ["plain", "é", "€uro", "𝄞 clef", "mixé€𝄞"])
def test_utf8_split_never_cuts_a_character(text: str) -> None:
    data = text.encode()
    for cut in range(len(data) + 1):
        head, tail = utf8_split(data[:cut])
        head.decode("utf-8")  # python-zunclient decodes every frame on its own
        assert head + tail == data[:cut]
        assert len(tail) <= 3


def test_utf8_split_lets_invalid_bytes_through() -> None:
    # Not UTF-8 at all: nothing is held back forever.
    assert utf8_split(b"\xff\xfe") == (b"\xff\xfe", b"")
    assert utf8_split(b"ab\x80\x80\x80\x80") == (b"ab\x80\x80\x80\x80", b"")


BASE = "ws://proxy.example:6784/"


@pytest.mark.parametrize(
    "origin,host,allowed,expected",
    [
        (None, "proxy.example:6784", [], None),
        ("http://proxy.example:6784", "proxy.example:6784", [], None),
        ("http://127.0.0.1:6784", "127.0.0.1:6784", [], None),  # as the client addressed it
        ("http://evil.example", "proxy.example:6784", [], "origin evil.example is not allowed"),
        ("http://ui.example", "proxy.example:6784", ["ui.example"], None),
        (
            "https://proxy.example",
            "proxy.example",
            [],
            "origin scheme https does not match the proxy's (http)",
        ),
        ("null", "proxy.example", [], "origin null is not a URL"),
    ],
)
def test_origin_rule(
    origin: str | None, host: str, allowed: list[str], expected: str | None
) -> None:
    assert origin_allowed(origin, host, BASE, allowed) == expected


def test_wss_proxy_wants_https_origins() -> None:
    base = "wss://proxy.example/"
    assert origin_allowed("https://proxy.example", None, base, []) is None
    assert (
        origin_allowed("http://proxy.example", None, base, [])
        == "origin scheme http does not match the proxy's (https)"
    )


def test_tickets_are_single_use_and_unguessable() -> None:
    book = TicketBook(ttl=60)
    first, second = book.issue(Target("a")), book.issue(Target("b", "e"))
    assert first != second and len(first) >= 40
    assert book.take("guess") is None
    assert book.take(second) == Target("b", "e")
    assert book.take(second) is None
    assert book.take(first) == Target("a")
