"""The container view's keys and their order in an answer, pinned: the view derives them from
the query's columns (``VIEW_KEYS`` = ``VIEW_COLUMNS`` with ``registry_id``), so reordering or
adding a column would otherwise change every container answer's bytes unnoticed (the spec
suite compares parsed JSON, which ignores the order)."""

from __future__ import annotations

import json

from unit.api.apptesting import ApiClient, Seed

from zun.api.views import containers as views
from zun.db.queries import containers as container_q

# The view's keys (an admin sees them all), the order of VIEW_KEYS.
VIEW_KEYS = (
    "uuid",
    "name",
    "image",
    "project_id",
    "user_id",
    "command",
    "entrypoint",
    "status",
    "status_reason",
    "status_detail",
    "task_state",
    "cpu",
    "memory",
    "disk",
    "cpu_policy",
    "environment",
    "labels",
    "workdir",
    "hostname",
    "ports",
    "addresses",
    "restart_policy",
    "interactive",
    "tty",
    "auto_remove",
    "auto_heal",
    "image_driver",
    "security_groups",
    "healthcheck",
    "registry_id",
    "created_at",
    "updated_at",
    "host",
    "image_pull_policy",
    "privileged",
    "runtime",
)
# Their order in an answer (the view puts the keys shown as they are first, then those with
# a default for an empty value, then the dates, each group in VIEW_KEYS' order); ``links``
# follows on a show.
ANSWER_KEYS = (
    "uuid",
    "name",
    "image",
    "project_id",
    "user_id",
    "status",
    "status_reason",
    "status_detail",
    "task_state",
    "cpu",
    "memory",
    "workdir",
    "hostname",
    "interactive",
    "tty",
    "auto_remove",
    "auto_heal",
    "image_driver",
    "registry_id",
    "host",
    "image_pull_policy",
    "privileged",
    "runtime",
    "command",
    "entrypoint",
    "disk",
    "cpu_policy",
    "environment",
    "labels",
    "ports",
    "addresses",
    "restart_policy",
    "security_groups",
    "healthcheck",
    "created_at",
    "updated_at",
)


def test_view_keys_are_the_query_columns_and_registry_id() -> None:
    assert views.VIEW_KEYS == VIEW_KEYS
    assert [k for k in views.VIEW_KEYS if k != "registry_id"] == list(container_q.VIEW_COLUMNS)


def test_show_and_list_answer_the_keys_in_that_order(api: ApiClient, seed: Seed) -> None:
    uuid = seed.container(status="Running").uuid
    admin = api.as_admin().at("latest")
    shown = admin.get(f"/v1/containers/{uuid}")
    assert shown.status == 200, shown
    assert list(json.loads(shown.body)) == [*ANSWER_KEYS, "links"]
    listed = admin.get("/v1/containers?all_projects=1")
    assert listed.status == 200, listed
    (item,) = json.loads(listed.body)["containers"]  # the list's own encoder
    assert list(item) == list(ANSWER_KEYS)
