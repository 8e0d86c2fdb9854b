"""Turn a Tempest run's subunit v2 stream (stdin) into a JSON summary (stdout).

Run with the Tempest venv's python (it has python-subunit and testtools):

    stestr last --subunit | venv/bin/python results.py > results.json

Output: {"tests": {test_id: {"status": ..., "reason": ...}}, "counts": {status: n}}. A test id
loses its "[id-...,tags]" suffix; a class whose setUpClass raised a skip (or failed) appears as
"setUpClass (module.Class)", which is how unittest reports it. Statuses are subunit's: success,
fail, skip (xfail and uxsuccess do not occur in the Zun plugin).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from typing import Any

import subunit
import testtools

_SUFFIX = re.compile(r"\[[^\]]*\]$")


def _text(details: dict[str, Any], name: str, limit: int = 4000) -> str:
    content = details.get(name)
    if content is None:
        return ""
    try:
        text = "".join(content.iter_text())
    except Exception:  # a binary attachment: not needed for the summary
        return ""
    return text[-limit:]


def main() -> int:
    tests: dict[str, dict[str, str]] = {}

    def on_test(test: dict[str, Any]) -> None:
        status = test["status"]
        if status in ("exists", "inprogress"):
            return
        test_id = _SUFFIX.sub("", test["id"])
        details = test.get("details") or {}
        reason = _text(details, "reason") or _text(details, "traceback")
        tests[test_id] = {"status": status, "reason": reason}

    stream = subunit.ByteStreamToStreamResult(sys.stdin.buffer, non_subunit_name="stdout")
    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    try:
        stream.run(result)
    finally:
        result.stopTestRun()
    counts = Counter(t["status"] for t in tests.values())
    json.dump({"tests": dict(sorted(tests.items())), "counts": dict(counts)}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
