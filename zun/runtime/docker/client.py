"""The docker-py client and the translation of its errors into Zun's exceptions.

Callers recognise a missing engine object by ``exc.code == 404`` (see :func:`is_not_found`),
never by searching the message text.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any

import docker
import docker.errors
import docker.tls
import requests.exceptions

from zun.common import exception
from zun.conf import CONF

LOG = logging.getLogger(__name__)


def make_client(api_url: str | None = None, timeout: int | None = None) -> docker.APIClient:
    """A low-level client for ``[docker]/api_url`` with the API version negotiated.

    TLS is used for a ``tcp://`` URL when ``[docker]/cert_file`` and ``key_file`` are set.
    """
    url = api_url or CONF.docker.api_url
    if timeout is None:
        timeout = int(CONF.docker.default_timeout)
    tls: docker.tls.TLSConfig | bool = False
    cert_file = CONF.docker.cert_file
    key_file = CONF.docker.key_file
    if url.startswith(("tcp://", "https://")) and cert_file and key_file:
        insecure = bool(CONF.docker.api_insecure)
        ca_file = CONF.docker.ca_file
        tls = docker.tls.TLSConfig(
            client_cert=(cert_file, key_file),
            ca_cert=None if insecure else ca_file,
            verify=False if insecure else (ca_file or True),
        )
    with translate_errors():
        return docker.APIClient(base_url=url, version="auto", timeout=timeout, tls=tls)


def engine_explanation(exc: docker.errors.APIError) -> str:
    """The engine's own words for an error (its JSON ``message``), else the HTTP text."""
    explanation = exc.explanation
    if isinstance(explanation, bytes):
        explanation = explanation.decode("utf-8", "replace")
    return str(explanation or exc)


def _unavailable(reason: str) -> exception.EngineUnavailable:
    host = CONF.host or socket.gethostname()
    return exception.EngineUnavailable(host=host, reason=reason)


def to_zun_exception(exc: Exception) -> exception.ZunException:
    """404 -> DockerError(code=404); 409 -> Conflict; 400 -> DockerError(code=400) (the
    engine refused what the client asked for); no engine to talk to -> EngineUnavailable
    (503); anything else -> DockerError (500)."""
    if isinstance(exc, docker.errors.APIError):
        reason = engine_explanation(exc)
        status = exc.status_code
        if status == 404:
            return exception.DockerError(error_msg=reason, code=404)
        if status == 409:
            return exception.Conflict(message=reason)
        if status == 400:
            return exception.DockerError(error_msg=reason, code=400)
        return exception.DockerError(error_msg=reason)
    if isinstance(exc, requests.exceptions.Timeout):
        return exception.DockerError(error_msg=f"the engine did not answer in time ({exc})")
    if isinstance(exc, requests.exceptions.ConnectionError) or (
        isinstance(exc, docker.errors.DockerException)
        and "Error while fetching server API version" in str(exc)
    ):
        return _unavailable("the engine refused the connection or its socket is missing")
    return exception.DockerError(error_msg=str(exc))


def refused_by_engine(exc: exception.ZunException, *markers: str) -> exception.ZunException:
    """``exc`` as a 400 when the engine's 500 message starts with one of ``markers``: the
    engine reports some refusals of the client's input (a ``ps`` option, a tar it cannot
    extract, a path too long) as its own errors."""
    text = str(exc)
    if getattr(exc, "code", None) == 500 and any(m in text for m in markers):
        return exception.DockerError(
            error_msg=text.removeprefix("Docker internal error: ").rstrip("."), code=400
        )
    return exc


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise docker-py and transport errors as Zun exceptions (the cause is chained)."""
    try:
        yield
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise to_zun_exception(exc) from exc


def is_not_found(exc: BaseException) -> bool:
    """True for an engine 404 (an absent container, image or exec), by status code."""
    if isinstance(exc, exception.ZunException):
        return getattr(exc, "code", None) == 404
    if isinstance(exc, docker.errors.APIError):
        return exc.status_code == 404
    return False


def call(func: Any, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` with errors translated."""
    with translate_errors():
        return func(*args, **kwargs)
