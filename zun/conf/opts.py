"""Entry point of oslo-config-generator (namespace ``zun.conf``)."""

from oslo_config import cfg

from zun.conf import OPTION_MODULES


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """Every option of the zun.conf namespace, as [(group name, [opts])].

    Library groups are left to their owners' namespaces (oslo.db,
    keystonemiddleware.auth_token, oslo.messaging, oslo.log, ...), except
    [database]/mysql_engine and [ssl], which Zun has always listed itself.
    """
    grouped: dict[str, list[cfg.Opt]] = {}
    for module in OPTION_MODULES:
        for group, opts in module.list_opts().items():
            grouped.setdefault(group, []).extend(opts)
    return list(grouped.items())
