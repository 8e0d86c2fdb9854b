"""Registering a module's option group on any ConfigOpts."""

from oslo_config import cfg


def register(conf: cfg.ConfigOpts, group: cfg.OptGroup, opts: list[cfg.Opt]) -> None:
    """Register `opts` under a copy of `group` owned by `conf` alone.

    ConfigOpts.register_group keeps a shallow copy, which shares the group's
    option table with the module-level object: registering the same OptGroup on
    two ConfigOpts would let options added to one (keystoneauth1 adds plugin
    options at load time) appear in the other.
    """
    conf.register_group(cfg.OptGroup(group.name, title=group.title, help=group.help))
    conf.register_opts(opts, group=group.name)
