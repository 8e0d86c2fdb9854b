"""What every RPC endpoint of a node holds: its host, a lazily made runtime, the state directory
and a job pool keyed by container UUID (one action at a time per container)."""

from __future__ import annotations

from pathlib import Path

from zun.compute.keyed_executor import KeyedExecutor
from zun.conf import CONF
from zun.runtime.contract import ContainerRuntime
from zun.runtime.docker.driver import DockerDriver

DEFAULT_MAX_WORKERS = 32


class NodePlumbing:
    """The host, runtime, state directory and job pool of one endpoint."""

    def __init__(
        self,
        host: str,
        driver: ContainerRuntime | None,
        state_dir: str | Path | None,
        max_workers: int | None,
        pool_name: str,
    ) -> None:
        self.host = host
        self._driver = driver
        self._state_dir = Path(state_dir) if state_dir else None
        self.workers = KeyedExecutor(max_workers or DEFAULT_MAX_WORKERS, pool_name)

    @property
    def driver(self) -> ContainerRuntime:
        # Made on first use, so an agent starts (and reports the engine down) without one.
        if self._driver is None:
            self._driver = DockerDriver()
        return self._driver

    @property
    def state_dir(self) -> Path:
        if self._state_dir is None:
            self._state_dir = Path(CONF.state_path or "/var/lib/zun")
        return self._state_dir

    def cleanup_host(self) -> None:
        self.workers.shutdown(wait=True)
        if self._driver is not None:
            self._driver.close()
