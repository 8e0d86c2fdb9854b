"""The local OpenStack of scripts/openstack-services.sh, as the tests see it.

Tests marked ``openstack`` run only when asked for (``-m openstack``, or an ``-m`` expression
naming it): starting Keystone, Neutron, OVS, Placement and Glance is too heavy for the default
run (docs/testing.md). ``scripts/run-tests.sh -m openstack`` starts them first.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "scripts" / "openstack-services.sh"
MARKER = "openstack"


@dataclass
class OpenStackCloud:
    """Credentials of the running local OpenStack (the ``env`` output of the script)."""

    env: dict[str, str]
    _sessions: dict[tuple[str, str], Any] = field(default_factory=dict)

    @property
    def auth_url(self) -> str:
        return self.env["OS_AUTH_URL"]

    def session(self, username: str = "", password: str = "", project: str = "") -> Any:
        """A keystoneauth session; the admin's unless other credentials are given."""
        from keystoneauth1 import session as ks_session
        from keystoneauth1.identity import v3

        username = username or self.env["OS_USERNAME"]
        project = project or self.env["OS_PROJECT_NAME"]
        key = (username, project)
        if key not in self._sessions:
            auth = v3.Password(
                auth_url=self.auth_url,
                username=username,
                password=password or self.env["OS_PASSWORD"],
                project_name=project,
                user_domain_name="Default",
                project_domain_name="Default",
            )
            self._sessions[key] = ks_session.Session(auth=auth)
        return self._sessions[key]


def script(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def parse_env(text: str) -> dict[str, str]:
    env = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            name, value = line[len("export ") :].split("=", 1)
            env[name] = value
    return env


def running_cloud() -> OpenStackCloud | None:
    """The cloud if every service of the script is up, else None."""
    if script("status", timeout=60).returncode != 0:
        return None
    return OpenStackCloud(parse_env(script("env", timeout=60).stdout))


@dataclass
class Account:
    """A Keystone user with the member role in a project of its own (made by a test)."""

    username: str
    password: str
    project_name: str
    project_id: str
    user_id: str


def make_account(cloud: OpenStackCloud, prefix: str) -> Account:
    import secrets
    import uuid

    sess = cloud.session()
    ks = cloud.auth_url.rstrip("/")
    suffix = uuid.uuid4().hex[:8]
    project = sess.post(
        f"{ks}/projects", json={"project": {"name": f"{prefix}-{suffix}", "domain_id": "default"}}
    ).json()["project"]
    password = secrets.token_urlsafe(12)
    user = sess.post(
        f"{ks}/users",
        json={
            "user": {
                "name": f"{prefix}-{suffix}",
                "domain_id": "default",
                "password": password,
                "default_project_id": project["id"],
            }
        },
    ).json()["user"]
    role = sess.get(f"{ks}/roles", params={"name": "member"}).json()["roles"][0]
    sess.put(f"{ks}/projects/{project['id']}/users/{user['id']}/roles/{role['id']}")
    return Account(user["name"], password, project["name"], project["id"], user["id"])


def delete_account(cloud: OpenStackCloud, account: Account) -> None:
    sess = cloud.session()
    ks = cloud.auth_url.rstrip("/")
    sess.delete(f"{ks}/users/{account.user_id}", raise_exc=False)
    sess.delete(f"{ks}/projects/{account.project_id}", raise_exc=False)


def zun_conf_sections(*names: str) -> dict[str, dict[str, str]]:
    """Sections of the script's ``zun-conf`` output (e.g. ``keystone_auth``), as dicts."""
    wanted = set(names)
    out: dict[str, dict[str, str]] = {}
    section: str | None = None
    for line in script("zun-conf", timeout=60).stdout.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if section in wanted and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            out.setdefault(section, {})[key.strip()] = value.strip()
    return out


class PlacementAdmin:
    """Placement as the cloud's admin sees it (tests check it directly, not through Zun)."""

    HEADERS = {"OpenStack-API-Version": "placement 1.38"}

    def __init__(self, cloud: OpenStackCloud) -> None:
        self.sess = cloud.session()
        self.url = self.sess.get_endpoint(
            service_type="placement", interface="public", region_name="RegionOne"
        ).rstrip("/")

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        resp = self.sess.request(
            self.url + path, method, json=body, headers=self.HEADERS, raise_exc=False
        )
        return resp.status_code, (resp.json() if resp.content else None)

    def get(self, path: str) -> Any:
        status, body = self.call("GET", path)
        assert status == 200, (path, status, body)
        return body

    def providers_named(self, name: str) -> list[dict[str, Any]]:
        return self.get(f"/resource_providers?name={name}")["resource_providers"]

    def allocations(self, consumer: str) -> dict[str, Any]:
        """``{"allocations": {rp: {"resources": ...}}, "consumer_type": ...}``."""
        return self.get(f"/allocations/{consumer}")

    def on_provider(self, rp: str) -> dict[str, Any]:
        return self.get(f"/resource_providers/{rp}/allocations")["allocations"]
