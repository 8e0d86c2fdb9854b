"""Does the node's container engine answer? The heartbeat asks before every beat.

A dedicated client with a short timeout and a fixed API version: the driver's client
negotiates its version on creation (a request that would hang on a dead engine) and waits
``[docker]/default_timeout`` (60 s), far too long for a heartbeat.
"""

from __future__ import annotations

import docker
import docker.errors
import requests.exceptions

from zun.conf import CONF

# /_ping is served under any API version; this one is old enough for every engine we run on.
_PING_VERSION = "1.25"


def probe(api_url: str | None = None, timeout: float | None = None) -> str | None:
    """None when the engine answers its ping in time, else why not (one short sentence)."""
    url = api_url or CONF.docker.api_url
    if timeout is None:
        timeout = float(CONF.compute.engine_probe_timeout)
    try:
        client = docker.APIClient(base_url=url, version=_PING_VERSION, timeout=timeout)
    except docker.errors.DockerException as exc:
        return f"the container engine at {url} cannot be reached: {exc}"
    try:
        client.ping()
    except requests.exceptions.Timeout:
        return f"the container engine at {url} did not answer within {timeout:g} s"
    except (requests.exceptions.RequestException, docker.errors.DockerException, OSError) as exc:
        return f"the container engine at {url} does not answer: {_short(exc)}"
    finally:
        client.close()
    return None


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def engine_failure(exc: BaseException, api_url: str | None = None) -> bool:
    """Whether ``exc`` (raised by a call to the engine) is the engine's fault, not the
    request's: the engine could not be reached or did not answer (anywhere in the cause
    chain), or it does not answer a ping now."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, requests.exceptions.ConnectionError | requests.exceptions.Timeout):
            return True
        seen = seen.__cause__ or seen.__context__
    return probe(api_url) is not None
