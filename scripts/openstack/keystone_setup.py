"""Keystone contents of the local OpenStack (scripts/openstack-services.sh), made idempotently.

Run with the services venv's python and the admin OS_* environment:
  keystone_setup.py --password PW --endpoint network=http://127.0.0.1:9696 ...
      the `service` project, the `service` role, one user per service (neutron, placement,
      glance, zun, kuryr) with admin + service roles in it, and a service with public/internal/admin
      endpoints per --endpoint (TYPE=URL)
  keystone_setup.py --endpoints-only --endpoint container=http://127.0.0.1:20701/v1
      only the services and endpoints (no users, no password change): how scripts/tempest.sh
      adds the `container` endpoint of its zun-api
  keystone_setup.py --check-ovs-agent
      exit 0 when Neutron lists an alive Open vSwitch agent, 1 otherwise
"""

from __future__ import annotations

import argparse
import sys

import openstack

SERVICE_NAMES = {
    "network": "neutron",
    "placement": "placement",
    "image": "glance",
    "container": "zun",
}
USERS = ("neutron", "placement", "glance", "zun", "kuryr")
INTERFACES = ("public", "internal", "admin")


def ensure(find, create, name: str, **attrs):
    found = find(name, ignore_missing=True, **{k: v for k, v in attrs.items() if k == "domain_id"})
    return found if found is not None else create(name=name, **attrs)


def setup(conn: openstack.connection.Connection, password: str, endpoints: list[str]) -> None:
    setup_users(conn, password)
    setup_endpoints(conn, endpoints)


def setup_users(conn: openstack.connection.Connection, password: str) -> None:
    ident = conn.identity
    domain = ident.find_domain("default", ignore_missing=False)
    project = ensure(ident.find_project, ident.create_project, "service", domain_id=domain.id)
    roles = [ident.find_role("admin", ignore_missing=False)]
    roles.append(ensure(ident.find_role, ident.create_role, "service"))
    for name in USERS:
        user = ident.find_user(name, domain_id=domain.id, ignore_missing=True)
        if user is None:
            user = ident.create_user(name=name, password=password, domain_id=domain.id)
        else:
            # The secrets file is the truth: a reinstalled state dir may carry a new password.
            ident.update_user(user, password=password)
        for role in roles:
            ident.assign_project_role_to_user(project, user, role)


def setup_endpoints(conn: openstack.connection.Connection, endpoints: list[str]) -> None:
    ident = conn.identity
    region = "RegionOne"
    for spec in endpoints:
        stype, url = spec.split("=", 1)
        service = next(iter(ident.services(type=stype)), None)
        if service is None:
            service = ident.create_service(name=SERVICE_NAMES[stype], type=stype, is_enabled=True)
        existing = {e.interface: e for e in ident.endpoints(service_id=service.id)}
        for iface in INTERFACES:
            ep = existing.get(iface)
            if ep is None:
                ident.create_endpoint(
                    service_id=service.id, interface=iface, url=url, region_id=region
                )
            elif ep.url != url:
                ident.update_endpoint(ep, url=url)


def ovs_agent_alive(conn: openstack.connection.Connection) -> bool:
    agents = list(conn.network.agents(agent_type="Open vSwitch agent"))
    return any(a.is_alive for a in agents)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--password")
    parser.add_argument("--endpoint", action="append", default=[])
    parser.add_argument("--endpoints-only", action="store_true")
    parser.add_argument("--check-ovs-agent", action="store_true")
    args = parser.parse_args()
    conn = openstack.connect()
    if args.check_ovs_agent:
        return 0 if ovs_agent_alive(conn) else 1
    if args.endpoints_only:
        setup_endpoints(conn, args.endpoint)
    else:
        setup(conn, args.password, args.endpoint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
