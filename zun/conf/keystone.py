"""[keystone_auth]: the service credentials zun uses to call other services.

The options are keystoneauth1's. Load the credentials with
``keystoneauth1.loading.load_auth_from_conf_options(CONF, 'keystone_auth')`` and
``load_session_from_conf_options``; do not register the auth options again with
``register_auth_conf_options``: ours carry Zun's default auth_type (password)
in the option itself, so that it survives ``CONF.reset()``, and a second
definition with keystoneauth1's default would clash.

The plugin options (username, password, ...) are listed for the sample but
registered by keystoneauth1 itself when the credentials are loaded, because their
definitions depend on auth_type. Zun registered the session options (cafile,
insecure, timeout, ...) without listing them; the rewrite lists them too.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from zun.conf import _group

GROUP = cfg.OptGroup(
    "keystone_auth",
    title="Service credentials",
    help="Credentials of the zun service user, used for Neutron, Cinder, Glance and "
    "Placement calls.",
)

DEFAULT_AUTH_TYPE = "password"


def _auth_opts() -> list[cfg.Opt]:
    opts = ks_loading.get_auth_common_conf_options()  # fresh copies on every call
    cfg.set_defaults(opts, auth_type=DEFAULT_AUTH_TYPE)
    return opts


def register_opts(conf: cfg.ConfigOpts) -> None:
    _group.register(conf, GROUP, _auth_opts())
    ks_loading.register_session_conf_options(conf, GROUP.name)


def list_opts() -> dict[str, list[cfg.Opt]]:
    plugin = ks_loading.get_auth_plugin_conf_options(DEFAULT_AUTH_TYPE)
    return {GROUP.name: ks_loading.get_session_conf_options() + _auth_opts() + plugin}
