"""Zun, the OpenStack Containers service, rewritten."""

import warnings

# oslo.messaging imports oslo.service, which imports eventlet and warns that eventlet is
# deprecated. We never use eventlet (threads and asyncio only), so the warning is noise.
warnings.filterwarnings("ignore", module=r"oslo_service(\..*)?$")
