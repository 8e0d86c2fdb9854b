"""Order of the nodes that passed the filters: the scheduler claims on them in this order.

``[scheduler]/weigher``:

  spread (default)  least allocated share first. The share of a node is the mean of its
                    CPU and memory shares once the request is placed (used / sellable
                    capacity, ratios and reserves of the node). Among equal shares (plain
                    containers ask for nothing), the node with the fewest containers of the
                    request's project comes first (anti-affinity), then the node with the
                    fewest containers, then a random one (so that a burst of creates seen
                    at once by several API workers spreads as well). Six plain creates on two empty
                    nodes therefore land three and three.
  binpack           most allocated share first, then the most containers: a node is filled
                    before the next is used (what Zun's "first host that fits" does).

Kubernetes' LeastAllocated/MostAllocated scores and Nomad's spread/binpack are the models.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from zun.conf import CONF
from zun.db.queries.compute_nodes import NodeState
from zun.scheduler import inventory
from zun.scheduler.filters import Request


@dataclass(frozen=True)
class Load:
    """Containers on a node: all of them, and those of the requesting project."""

    total: int = 0
    project: int = 0


def allocated_share(node: NodeState, request: Request) -> float:
    cap = inventory.of(node)
    shares = []
    for used, asked, capacity in (
        (node.cpu_used, request.cpu, cap.cpu_capacity),
        (node.mem_used, request.memory_mb, cap.mem_capacity),
    ):
        # A node with no sellable capacity is full whatever it holds.
        shares.append((used + (asked or 0)) / capacity if capacity > 0 else 1.0)
    return sum(shares) / len(shares)


Weigher = Callable[[list[NodeState], Request, Mapping[str, Load]], list[NodeState]]


def spread(nodes: list[NodeState], request: Request, loads: Mapping[str, Load]) -> list[NodeState]:
    # Exact ties go to a random node, not the first by name: a burst of creates handled
    # at once by several API workers (all seeing the same counts) then spreads too.
    tie = {node.hostname: random.random() for node in nodes}

    def key(node: NodeState) -> tuple[float, int, int, float]:
        load = loads.get(node.hostname, Load())
        return (
            round(allocated_share(node, request), 9),
            load.project,
            load.total,
            tie[node.hostname],
        )

    return sorted(nodes, key=key)


def binpack(nodes: list[NodeState], request: Request, loads: Mapping[str, Load]) -> list[NodeState]:
    def key(node: NodeState) -> tuple[float, int, str]:
        load = loads.get(node.hostname, Load())
        return (-round(allocated_share(node, request), 9), -load.total, node.hostname)

    return sorted(nodes, key=key)


WEIGHERS: dict[str, Weigher] = {"spread": spread, "binpack": binpack}


def weigher_name() -> str:
    return str(CONF.scheduler.weigher)


def weigh(nodes: list[NodeState], request: Request, loads: Mapping[str, Load]) -> list[NodeState]:
    return WEIGHERS.get(weigher_name(), spread)(nodes, request, loads)
