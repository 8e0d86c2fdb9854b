"""Default policy rules: the 82 of the original service, same names and check strings.

An operator's policy.yaml overrides any of them. Descriptions are ours. One rule is added by
the rewrite: ``container:create:cap_add`` (the ``zun.cap_add`` label, admin only).
"""

from __future__ import annotations

from oslo_policy import policy

_ADMIN_OR_OWNER = "is_admin:True or project_id:%(project_id)s"

# (name, check string, [(method, path), ...], description)
_RULES: list[tuple[str, str, list[tuple[str, str]], str]] = [
    ("context_is_admin", "role:admin", [], "Base rule."),
    ("admin_or_owner", _ADMIN_OR_OWNER, [], "Base rule."),
    ("admin_api", "rule:context_is_admin", [], "Base rule."),
    ("deny_everybody", "!", [], "Base rule."),
    (
        "container:create",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers")],
        "Guards POST /v1/containers.",
    ),
    (
        "container:create:runtime",
        "rule:context_is_admin",
        [("POST", "/v1/containers")],
        "Guards POST /v1/containers.",
    ),
    (
        "container:create:privileged",
        "rule:deny_everybody",
        [("POST", "/v1/containers")],
        "Guards POST /v1/containers.",
    ),
    (
        "container:create:cap_add",
        "rule:context_is_admin",
        [("POST", "/v1/containers")],
        "[Added by the rewrite] Setting the label zun.cap_add (capabilities added to the "
        "container beyond [docker]/cap_add).",
    ),
    (
        "container:create:requested_destination",
        "rule:context_is_admin",
        [("POST", "/v1/containers")],
        "Guards POST /v1/containers.",
    ),
    (
        "container:create:image_pull_policy",
        "rule:context_is_admin",
        [("POST", "/v1/containers")],
        "Guards POST /v1/containers.",
    ),
    (
        "container:delete",
        _ADMIN_OR_OWNER,
        [("DELETE", "/v1/containers/{container_ident}")],
        "Guards DELETE /v1/containers/{container_ident}.",
    ),
    (
        "container:delete_all_projects",
        "rule:context_is_admin",
        [("DELETE", "/v1/containers/{container_ident}")],
        "Guards DELETE /v1/containers/{container_ident}.",
    ),
    (
        "container:delete_force",
        "rule:context_is_admin",
        [("DELETE", "/v1/containers/{container_ident}")],
        "Guards DELETE /v1/containers/{container_ident}.",
    ),
    (
        "container:get_one",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/containers/{container_ident}")],
        "Guards GET /v1/containers/{container_ident}.",
    ),
    (
        "container:get_one:host",
        "rule:context_is_admin",
        [
            ("GET", "/v1/containers/{container_ident}"),
            ("GET", "/v1/containers"),
            ("POST", "/v1/containers"),
            ("PATCH", "/v1/containers/{container_ident}"),
        ],
        "Who may see the field or use the filter 'host'.",
    ),
    (
        "container:get_one:image_pull_policy",
        "rule:context_is_admin",
        [
            ("GET", "/v1/containers/{container_ident}"),
            ("GET", "/v1/containers"),
            ("POST", "/v1/containers"),
            ("PATCH", "/v1/containers/{container_ident}"),
        ],
        "Who may see the field or use the filter 'image_pull_policy'.",
    ),
    (
        "container:get_one:privileged",
        "rule:context_is_admin",
        [
            ("GET", "/v1/containers/{container_ident}"),
            ("GET", "/v1/containers"),
            ("POST", "/v1/containers"),
            ("PATCH", "/v1/containers/{container_ident}"),
        ],
        "Who may see the field or use the filter 'privileged'.",
    ),
    (
        "container:get_one:runtime",
        "rule:context_is_admin",
        [
            ("GET", "/v1/containers/{container_ident}"),
            ("GET", "/v1/containers"),
            ("POST", "/v1/containers"),
            ("PATCH", "/v1/containers/{container_ident}"),
        ],
        "Who may see the field or use the filter 'runtime'.",
    ),
    (
        "container:get_one_all_projects",
        "rule:context_is_admin",
        [("GET", "/v1/containers/{container_ident}")],
        "Guards GET /v1/containers/{container_ident}.",
    ),
    (
        "container:get_all",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/containers")],
        "Guards GET /v1/containers.",
    ),
    (
        "container:get_all_all_projects",
        "rule:context_is_admin",
        [("GET", "/v1/containers")],
        "Guards GET /v1/containers.",
    ),
    (
        "container:update",
        _ADMIN_OR_OWNER,
        [("PATCH", "/v1/containers/{container_ident}")],
        "Guards PATCH /v1/containers/{container_ident}.",
    ),
    (
        "container:start",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/start")],
        "Guards POST /v1/containers/{container_ident}/start.",
    ),
    (
        "container:stop",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/stop")],
        "Guards POST /v1/containers/{container_ident}/stop.",
    ),
    (
        "container:reboot",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/reboot")],
        "Guards POST /v1/containers/{container_ident}/reboot.",
    ),
    (
        "container:pause",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/pause")],
        "Guards POST /v1/containers/{container_ident}/pause.",
    ),
    (
        "container:unpause",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/unpause")],
        "Guards POST /v1/containers/{container_ident}/unpause.",
    ),
    (
        "container:logs",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/containers/{container_ident}/logs")],
        "Guards GET /v1/containers/{container_ident}/logs.",
    ),
    (
        "container:execute",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/execute")],
        "Guards POST /v1/containers/{container_ident}/execute.",
    ),
    (
        "container:execute_resize",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/execute_resize")],
        "Guards POST /v1/containers/{container_ident}/execute_resize.",
    ),
    (
        "container:kill",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/kill")],
        "Guards POST /v1/containers/{container_ident}/kill.",
    ),
    (
        "container:rename",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/rename")],
        "Guards POST /v1/containers/{container_ident}/rename.",
    ),
    (
        "container:attach",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/containers/{container_ident}/attach")],
        "Guards GET /v1/containers/{container_ident}/attach.",
    ),
    (
        "container:resize",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/resize")],
        "Guards POST /v1/containers/{container_ident}/resize.",
    ),
    (
        "container:top",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/containers/{container_ident}/top")],
        "Guards GET /v1/containers/{container_ident}/top.",
    ),
    (
        "container:get_archive",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/containers/{container_ident}/get_archive")],
        "Guards GET /v1/containers/{container_ident}/get_archive.",
    ),
    (
        "container:put_archive",
        _ADMIN_OR_OWNER,
        [("PUT", "/v1/containers/{container_ident}/put_archive")],
        "Guards PUT /v1/containers/{container_ident}/put_archive.",
    ),
    (
        "container:stats",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/containers/{container_ident}/stats")],
        "Guards GET /v1/containers/{container_ident}/stats.",
    ),
    (
        "container:commit",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/commit")],
        "Guards POST /v1/containers/{container_ident}/commit.",
    ),
    (
        "container:add_security_group",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/add_security_group")],
        "Guards POST /v1/containers/{container_ident}/add_security_group.",
    ),
    (
        "container:network_detach",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/network_detach")],
        "Guards POST /v1/containers/{container_ident}/network_detach.",
    ),
    (
        "container:network_attach",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/network_attach")],
        "Guards POST /v1/containers/{container_ident}/network_attach.",
    ),
    (
        "container:remove_security_group",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/remove_security_group")],
        "Guards POST /v1/containers/{container_ident}/remove_security_group.",
    ),
    (
        "container:rebuild",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/rebuild")],
        "Guards POST /v1/containers/{container_ident}/rebuild.",
    ),
    (
        "container:resize_container",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/containers/{container_ident}/resize_container")],
        "Guards POST /v1/containers/{container_ident}/resize_container.",
    ),
    ("image:pull", "rule:context_is_admin", [("POST", "/v1/images")], "Guards POST /v1/images."),
    ("image:get_all", "rule:context_is_admin", [("GET", "/v1/images")], "Guards GET /v1/images."),
    (
        "image:get_one",
        "rule:context_is_admin",
        [("GET", "/v1/images/{image_id}")],
        "Guards GET /v1/images/{image_id}.",
    ),
    (
        "image:search",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/images/{image_ident}/search")],
        "Guards GET /v1/images/{image_ident}/search.",
    ),
    (
        "image:delete",
        "rule:context_is_admin",
        [("DELETE", "/v1/images/{image_ident}")],
        "Guards DELETE /v1/images/{image_ident}.",
    ),
    (
        "zun-service:delete",
        "rule:context_is_admin",
        [("DELETE", "/v1/services")],
        "Guards DELETE /v1/services.",
    ),
    (
        "zun-service:disable",
        "rule:context_is_admin",
        [("PUT", "/v1/services/disable")],
        "Guards PUT /v1/services/disable.",
    ),
    (
        "zun-service:enable",
        "rule:context_is_admin",
        [("PUT", "/v1/services/enable")],
        "Guards PUT /v1/services/enable.",
    ),
    (
        "zun-service:force_down",
        "rule:context_is_admin",
        [("PUT", "/v1/services/force_down")],
        "Guards PUT /v1/services/force_down.",
    ),
    (
        "zun-service:get_all",
        "rule:context_is_admin",
        [("GET", "/v1/services")],
        "Guards GET /v1/services.",
    ),
    ("host:get_all", "rule:context_is_admin", [("GET", "/v1/hosts")], "Guards GET /v1/hosts."),
    (
        "host:get",
        "rule:context_is_admin",
        [("GET", "/v1/hosts/{host_ident}")],
        "Guards GET /v1/hosts/{host_ident}.",
    ),
    # Added by the rewrite (microversion 1.41).
    (
        "host:evacuate",
        "rule:context_is_admin",
        [("POST", "/v1/hosts/{host_ident}/evacuate")],
        "Guards POST /v1/hosts/{host_ident}/evacuate (1.41).",
    ),
    (
        "host:purge",
        "rule:context_is_admin",
        [("POST", "/v1/hosts/{host_ident}/purge")],
        "Guards POST /v1/hosts/{host_ident}/purge (1.41).",
    ),
    ("capsule:create", _ADMIN_OR_OWNER, [("POST", "/v1/capsules/")], "Guards POST /v1/capsules/."),
    (
        "capsule:delete",
        _ADMIN_OR_OWNER,
        [("DELETE", "/v1/capsules/{capsule_ident}")],
        "Guards DELETE /v1/capsules/{capsule_ident}.",
    ),
    (
        "capsule:delete_all_projects",
        "rule:context_is_admin",
        [("DELETE", "/v1/capsules/{capsule_ident}")],
        "Guards DELETE /v1/capsules/{capsule_ident}.",
    ),
    (
        "capsule:get",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/capsules/{capsule_ident}")],
        "Guards GET /v1/capsules/{capsule_ident}.",
    ),
    (
        "capsule:get:host",
        "rule:context_is_admin",
        [
            ("GET", "/v1/capsules/{capsule_ident}"),
            ("GET", "/v1/capsules"),
            ("POST", "/v1/capsules"),
        ],
        "Who may see the field or use the filter 'host'.",
    ),
    (
        "capsule:get_one_all_projects",
        "rule:context_is_admin",
        [("GET", "/v1/capsules/{capsule_ident}")],
        "Guards GET /v1/capsules/{capsule_ident}.",
    ),
    ("capsule:get_all", _ADMIN_OR_OWNER, [("GET", "/v1/capsules/")], "Guards GET /v1/capsules/."),
    (
        "capsule:get_all_all_projects",
        "rule:context_is_admin",
        [("GET", "/v1/capsules/")],
        "Guards GET /v1/capsules/.",
    ),
    (
        "network:attach_external_network",
        "role:admin",
        [("POST", "/v1/containers")],
        "Guards POST /v1/containers.",
    ),
    ("network:create", "role:admin", [("POST", "/v1/networks")], "Guards POST /v1/networks."),
    ("network:delete", "role:admin", [("DELETE", "/v1/networks")], "Guards DELETE /v1/networks."),
    (
        "container:actions",
        _ADMIN_OR_OWNER,
        [
            ("GET", "/v1/containers/{container_ident}/container_actions/"),
            ("GET", "/v1/containers/{container_ident}/container_actions/{request_id}"),
        ],
        "Guards GET /v1/containers/{container_ident}/container_actions/ and "
        "GET /v1/containers/{container_ident}/container_actions/{request_id}.",
    ),
    (
        "container:action:events",
        "rule:context_is_admin",
        [("GET", "/v1/containers/{container_ident}/container_actions/{request_id}")],
        "Guards GET /v1/containers/{container_ident}/container_actions/{request_id}.",
    ),
    (
        "availability_zones:get_all",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/availability_zones")],
        "Guards GET /v1/availability_zones.",
    ),
    (
        "quota:update",
        "rule:context_is_admin",
        [("PUT", "/v1/quotas/{project_id}")],
        "Guards PUT /v1/quotas/{project_id}.",
    ),
    (
        "quota:delete",
        "rule:context_is_admin",
        [("DELETE", "/v1/quotas/{project_id}")],
        "Guards DELETE /v1/quotas/{project_id}.",
    ),
    (
        "quota:get",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/quotas/{project_id}")],
        "Guards GET /v1/quotas/{project_id}.",
    ),
    (
        "quota:get_default",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/quotas/defaults")],
        "Guards GET /v1/quotas/defaults.",
    ),
    (
        "quota_class:update",
        "rule:context_is_admin",
        [("PUT", "/v1/quota_classes/{quota_class_name}")],
        "Guards PUT /v1/quota_classes/{quota_class_name}.",
    ),
    (
        "quota_class:get",
        "rule:context_is_admin",
        [("GET", "/v1/quota_classes/{quota_class_name}")],
        "Guards GET /v1/quota_classes/{quota_class_name}.",
    ),
    (
        "registry:create",
        _ADMIN_OR_OWNER,
        [("POST", "/v1/registries")],
        "Guards POST /v1/registries.",
    ),
    (
        "registry:delete",
        _ADMIN_OR_OWNER,
        [("DELETE", "/v1/registries/{registry_ident}")],
        "Guards DELETE /v1/registries/{registry_ident}.",
    ),
    (
        "registry:get_one",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/registries/{registry_ident}")],
        "Guards GET /v1/registries/{registry_ident}.",
    ),
    (
        "registry:get_all",
        _ADMIN_OR_OWNER,
        [("GET", "/v1/registries")],
        "Guards GET /v1/registries.",
    ),
    (
        "registry:get_all_all_projects",
        "rule:context_is_admin",
        [("GET", "/v1/registries")],
        "Guards GET /v1/registries.",
    ),
    (
        "registry:update",
        _ADMIN_OR_OWNER,
        [("PATCH", "/v1/registries/{registry_ident}")],
        "Guards PATCH /v1/registries/{registry_ident}.",
    ),
]


def list_rules() -> list[policy.RuleDefault]:
    """Every default rule, for oslo.policy's enforcer and its sample generator."""
    result: list[policy.RuleDefault] = []
    for name, check_str, operations, description in _RULES:
        if operations:
            result.append(
                policy.DocumentedRuleDefault(
                    name=name,
                    check_str=check_str,
                    description=description,
                    operations=[{"method": m, "path": p} for m, p in operations],
                )
            )
        else:
            result.append(
                policy.RuleDefault(name=name, check_str=check_str, description=description)
            )
    return result
