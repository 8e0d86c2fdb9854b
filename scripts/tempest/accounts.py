"""Tempest's pre-provisioned accounts for scripts/tempest.sh, made idempotently in the local cloud.

Run with the services venv's python (openstacksdk) and the admin OS_* environment:

    accounts.py --out accounts.yaml --cidr-prefix 10.231

Why pre-provisioned accounts rather than Tempest's dynamic credentials: the plugin's tests
need a network in the primary project (test_run_container_with_port looks for one; with the
kuryr driver every container without `nets` takes its project's network), and dynamic
credentials only make such a network together with a router, which needs Neutron's L3 plugin
(the local Neutron runs ML2 without it). So two accounts of our own, each with a project
network and subnet:

    zun-tempest-primary   role member, in project zun-tempest-primary
    zun-tempest-admin     role admin,  in project zun-tempest-admin

Their passwords are new at each run (written only into the accounts file, mode 600). Networks
`zun-tempest-net` (subnet <prefix>.<n>.0/24) stay between runs. Prints one line per account:
`<project id> <network id>`.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys

import openstack

ACCOUNTS = (("zun-tempest-primary", "member", 1), ("zun-tempest-admin", "admin", 2))
NETWORK = "zun-tempest-net"


def ensure_account(
    conn: openstack.connection.Connection, name: str, role: str, password: str
) -> str:
    ident = conn.identity
    domain = ident.find_domain("default", ignore_missing=False)
    project = ident.find_project(name, domain_id=domain.id, ignore_missing=True)
    if project is None:
        project = ident.create_project(
            name=name, domain_id=domain.id, description="scripts/tempest.sh"
        )
    user = ident.find_user(name, domain_id=domain.id, ignore_missing=True)
    if user is None:
        user = ident.create_user(
            name=name, password=password, domain_id=domain.id, default_project_id=project.id
        )
    else:
        ident.update_user(user, password=password)
    ident.assign_project_role_to_user(project, user, ident.find_role(role, ignore_missing=False))
    return project.id


def ensure_network(conn: openstack.connection.Connection, project_id: str, cidr: str) -> str:
    net = conn.network.find_network(NETWORK, project_id=project_id, ignore_missing=True)
    if net is None:
        net = conn.network.create_network(name=NETWORK, project_id=project_id)
    if not list(conn.network.subnets(network_id=net.id)):
        conn.network.create_subnet(
            name=NETWORK, network_id=net.id, project_id=project_id, ip_version=4, cidr=cidr
        )
    return str(net.id)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--cidr-prefix", default="10.231")
    args = parser.parse_args()
    conn = openstack.connect()
    lines = []
    for name, role, index in ACCOUNTS:
        password = secrets.token_urlsafe(18)
        project_id = ensure_account(conn, name, role, password)
        net_id = ensure_network(conn, project_id, f"{args.cidr_prefix}.{index}.0/24")
        print(project_id, net_id)
        lines += [
            f"- username: '{name}'",
            f"  project_name: '{name}'",
            f"  password: '{password}'",
            "  domain_name: 'Default'",
            "  roles:",
            f"  - '{role}'",
        ]
    fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
