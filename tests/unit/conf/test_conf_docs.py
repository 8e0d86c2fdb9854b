"""docs/configuration.md lists every option zun.conf registers, each with an "acted on" state."""

from __future__ import annotations

import re
from pathlib import Path

from zun.conf import opts as zun_opts

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
STATES = {
    "yes",
    "not yet",
    "never",
    "see issue",
    "accepted, not acted on in the embedded mode",
}
ROW = re.compile(r"^\| `\[(\w+)\]` \| `(\w+)` \| (\w+) \| (.*?) \| (.*?) \| (.*) \|$")


def _documented() -> dict[tuple[str, str], str]:
    rows = {}
    for line in DOC.read_text().splitlines():
        match = ROW.match(line)
        if match:
            rows[(match.group(1), match.group(2))] = match.group(5)
    return rows


def test_every_listed_option_is_documented_once() -> None:
    listed = {(group, opt.dest) for group, opts in zun_opts.list_opts() for opt in opts}
    documented = _documented()
    assert set(documented) == listed


def test_acted_on_column_uses_the_known_states() -> None:
    assert set(_documented().values()) <= STATES
