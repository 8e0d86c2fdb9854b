"""Docker reference grammar against the original's ``reference_parse`` vectors."""

from __future__ import annotations

import time
from typing import Any

import pytest
from reference import vectors

from zun.common import exception
from zun.image import reference


def _load_vectors() -> dict[str, Any]:
    return vectors()


CASES = _load_vectors()["reference_parse"]["cases"]


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{i}-{c['input']['image'][:60]}") for i, c in enumerate(CASES)]
)
def test_reference_parse(case: dict[str, Any]) -> None:
    image = case["input"]["image"]
    if "error" in case:
        with pytest.raises(exception.InvalidReference) as info:
            reference.parse(image)
        assert type(info.value).__name__ == case["error"]["class"]
        assert str(info.value) == case["error"]["message"]
        return
    parsed = reference.parse(image)
    out = case["output"]
    assert parsed.name == out["name"]
    assert parsed.tag == out["tag"]
    assert parsed.digest == out["digest"]
    assert list(parsed.split_hostname()) == out["split_hostname"]


def test_unsupported_digest_algorithm() -> None:
    with pytest.raises(reference.DigestUnsupported):
        reference.parse("busybox@md5:" + "a" * 32)


def test_long_invalid_name_is_rejected_fast() -> None:
    # A catastrophic-backtracking pattern would take minutes here.
    start = time.monotonic()
    with pytest.raises(exception.ReferenceInvalidFormat):
        reference.parse("a" * 200 + "-" * 50 + "!")
    assert time.monotonic() - start < 1
