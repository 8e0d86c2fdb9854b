"""What the DockerDriver engine tests share: the label and id of this test run."""

from __future__ import annotations

import uuid

RUN_LABEL = "zun.test.run"
RUN_ID = uuid.uuid4().hex[:12]
