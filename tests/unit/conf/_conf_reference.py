"""Reads the option tables of tests/contract/config-options.md (section 3)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from reference import reference_path

_TYPE_RE = re.compile(
    r"^(?P<kind>\w+)"
    r"(?: \[(?P<min>-?[\d.]+)?\.\.(?P<max>-?[\d.]+)?\])?"
    r"(?: \((?P<choices>.*)\))?$"
)


@dataclass(frozen=True)
class RefOption:
    group: str
    name: str
    kind: str
    minimum: str | None
    maximum: str | None
    choices: tuple[str, ...] | None
    default: str | None  # raw text inside the first backticks; None for "(none)"


def reference_file() -> Path:
    return reference_path("config-options.md")


def _unquote(text: str) -> str:
    return "" if text == '""' else text


def load() -> list[RefOption]:
    text = reference_file().read_text()
    section = text.split("## 3. All options of the `zun.conf` namespace", 1)[1]
    options: list[RefOption] = []
    group = None
    for line in section.splitlines():
        heading = re.match(r"^### \[(\w+)\]", line)
        if heading:
            group = heading.group(1)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if group is None or len(cells) < 3 or not cells[0].startswith("`"):
            continue
        match = _TYPE_RE.match(cells[1])
        assert match, f"unparsed type {cells[1]!r}"
        choices = None
        if match.group("choices"):
            choices = tuple(_unquote(c) for c in re.findall(r"`([^`]*)`", match.group("choices")))
        default_cell = cells[2]
        default = None
        if default_cell != "(none)":
            default = _unquote(re.match(r"`([^`]*)`", default_cell).group(1))
        options.append(
            RefOption(
                group=group,
                name=cells[0].strip("`"),
                kind=match.group("kind"),
                minimum=match.group("min"),
                maximum=match.group("max"),
                choices=choices,
                default=default,
            )
        )
    return options
