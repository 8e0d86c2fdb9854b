"""Which network driver this process uses: ``[network]/driver``.

``docker`` (the default here) is the embedded per-project Docker bridges
(:mod:`zun.network.docker_network`); ``kuryr`` is the original's Neutron networking through the
kuryr-libnetwork Docker plugin (:mod:`zun.network.kuryr_network`, :mod:`zun.network.neutron`).
"""

from __future__ import annotations

KURYR = "kuryr"


def kuryr_enabled(conf: object = None) -> bool:
    if conf is None:
        from zun.conf import CONF

        conf = CONF
    return bool(conf.network.driver == KURYR)  # type: ignore[attr-defined]


def plugin_name(conf: object = None) -> str:
    """The Docker network (and IPAM) driver name of kuryr-libnetwork, ``[network]/driver_name``."""
    if conf is None:
        from zun.conf import CONF

        conf = CONF
    return str(conf.network.driver_name)  # type: ignore[attr-defined]
