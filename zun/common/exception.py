"""Zun's exceptions.

The public error ``code`` of an API error is derived from the class name (see
:func:`convert_excp_to_err_code`), so a class here must never be renamed: clients match on the
derived strings. Message templates and HTTP codes follow the original service's contract
(``tests/contract/vectors.json`` lists Zun's classes and codes); only the classes this service
raises, and their bases, are defined.
"""

from __future__ import annotations

import logging
import re
from typing import Any

LOG = logging.getLogger(__name__)

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]{2,}(?=[A-Z][a-z]|\d|\W|$)|\d+")


def convert_excp_to_err_code(excp_name: str) -> str:
    """Kebab-case words of a class name: ``ContainerNotFound`` -> ``container-not-found``."""
    return "-".join(w.lower() for w in _WORDS.findall(excp_name))


class ZunException(Exception):
    """Base class; ``message`` is a %-template filled from the keyword arguments."""

    message = "An unknown exception occurred."
    code = 500

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        self.kwargs = kwargs
        if "code" in kwargs:
            self.code = kwargs["code"]
        if message is None:
            try:
                message = self.message % kwargs
            except (KeyError, TypeError, ValueError):
                # A template whose keys do not match still yields a readable message.
                LOG.debug(
                    "Message template of %s did not match %s", type(self).__name__, sorted(kwargs)
                )
                message = self.message
        elif not isinstance(message, str):
            message = str(message)
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message

    def format_message(self) -> str:
        return self.message

    @property
    def error_code(self) -> str:
        return convert_excp_to_err_code(type(self).__name__)


class NotFound(ZunException):
    message = "Resource could not be found."
    code = 404


class ObjectNotFound(ZunException):
    message = "The %(name)s %(id)s could not be found."
    code = 500


class ObjectNotUnique(ZunException):
    message = "The %(name)s already exists."
    code = 500


class ResourceNotFound(ObjectNotFound):
    message = "The %(name)s resource %(id)s could not be found."
    code = 404


class ResourceExists(ObjectNotUnique):
    message = "The %(name)s resource already exists."
    code = 409


class AuthorizationFailure(ZunException):
    message = "%(client)s connection failed. %(message)s"
    code = 500


class Invalid(ZunException):
    message = "Unacceptable parameters."
    code = 400


class InvalidValue(Invalid):
    message = "Received value '%(value)s' is invalid for type %(type)s."
    code = 400


class ValidationError(Invalid):
    message = "%(detail)s"
    code = 400


class SchemaValidationError(ValidationError):
    message = "%(detail)s"
    code = 400


class InvalidUUID(Invalid):
    message = "Expected a uuid but received %(uuid)s."
    code = 400


class HTTPNotFound(ResourceNotFound):
    message = "The %(name)s resource %(id)s could not be found."
    code = 404


class Conflict(ZunException):
    message = "Conflict."
    code = 409


class InvalidParameterValue(Invalid):
    message = "%(err)s"
    code = 400


class InvalidParamInVersion(Invalid):
    message = (
        "Invalid param %(param)s because current request version is %(req_version)s. "
        "%(param)s is only supported from version %(min_version)s"
    )
    code = 400


class InvalidQuotaValue(Invalid):
    message = "Change would make usage less than 0 for the following resources: %(unders)s"
    code = 400


class NotAuthorized(ZunException):
    message = "Not authorized."
    code = 403


class PolicyNotAuthorized(NotAuthorized):
    message = "Policy doesn't allow %(action)s to be performed."
    code = 403


class ContainerNotFound(HTTPNotFound):
    message = "Container %(container)s could not be found."
    code = 404


class ContainerHostNotUp(ZunException):
    message = "Container %(container)s host %(host)s is not up."
    code = 500


class ComputeNodeNotFound(HTTPNotFound):
    message = "Compute node %(compute_node)s could not be found."
    code = 404


class NetworkNotFound(HTTPNotFound):
    message = "Neutron network %(network)s could not be found."
    code = 404


class RegistryNotFound(HTTPNotFound):
    message = "Registry %(registry)s could not be found."
    code = 404


class NetworkAlreadyExists(ResourceExists):
    message = "A network with %(field)s %(value)s already exists."
    code = 409


class PortNotFound(HTTPNotFound):
    message = "Neutron port %(port)s could not be found."
    code = 404


class PortNotUsable(Invalid):
    message = "Port %(port)s not usable for the container."
    code = 400


class PortInUse(Invalid):
    message = "Port %(port)s is still in use."
    code = 400


class PortBindingFailed(Invalid):
    message = "Binding failed for port %(port)s, please check neutron logs for more information."
    code = 400


class VolumeNotFound(HTTPNotFound):
    message = "Volume %(volume)s could not be found."
    code = 404


class ImageNotFound(Invalid):
    message = "Image %(image)s could not be found."
    code = 400


class OperationNotSupported(ZunException):
    message = "The operation is not supported."
    code = 500


class ZunServiceNotFound(HTTPNotFound):
    message = "Zun service %(binary)s on host %(host)s could not be found."
    code = 404


class ContainerAlreadyExists(ResourceExists):
    message = "A container with %(field)s %(value)s already exists."
    code = 409


class ImageAlreadyExists(ResourceExists):
    message = "An image with tag %(tag)s and repo %(repo)s already exists."
    code = 409


class RegistryAlreadyExists(ResourceExists):
    message = "A registry with %(field)s %(value)s already exists."
    code = 409


class VolumeNotUsable(Invalid):
    message = "Volume %(volume)s not usable for the container."
    code = 400


class InvalidStateException(ZunException):
    message = "Cannot %(action)s container %(id)s in %(actual_state)s state"
    code = 409


class DockerError(ZunException):
    message = "Docker internal error: %(error_msg)s."
    code = 500


class EngineUnavailable(DockerError):
    # Added by the rewrite: the node is up but its engine does not answer (stopped,
    # restarting); a 503 the client can retry, with a message written for it.
    message = "The container engine of host %(host)s is not answering: %(reason)s"
    code = 503
    public_message = True


class NoValidHost(ZunException):
    message = "No valid host was found. %(reason)s"
    code = 500


class NoInteractiveFlag(Invalid):
    message = "%(msg)s"
    code = 400


class SchedulerHostFilterNotFound(NotFound):
    message = "Scheduler Host Filter %(filter_name)s could not be found."
    code = 404


class ConnectionFailed(ZunException):
    message = "Failed to connect to remote host"
    code = 500


class InvalidCapsuleTemplate(ZunException):
    message = "Invalid capsule template: %(reason)s."
    code = 500


class FailedParseStringToJson(ZunException):
    message = "Failed parse string to json: %(reason)s."
    code = 500


class VolumeCreateFailed(Invalid):
    message = "Volume Creation failed: %(creation_failed)s"
    code = 400


class VolumeDeleteFailed(Invalid):
    message = "Volume Deletion failed: %(deletion_failed)s"
    code = 400


class SecurityGroupCannotBeApplied(Invalid):
    message = "Security groups cannot apply to the container."
    code = 400


class SecurityGroupCannotBeRemoved(Invalid):
    message = "Security groups cannot be removed from the container."
    code = 400


class OverQuota(ZunException):
    message = "Quota exceeded for resources: %(overs)s"
    code = 403


class Base64Exception(Invalid):
    message = "Invalid Base 64 file data"
    code = 400


class InvalidEncryptionKey(ZunException):
    message = "Can not decrypt data with the auth_encryption_key in zun config."
    code = 500


class InvalidReference(ZunException):
    message = "invalid reference"
    code = 500


class ReferenceInvalidFormat(InvalidReference):
    message = "invalid reference format"
    code = 500


class NameEmpty(InvalidReference):
    message = "repository name must have at least one component"
    code = 500


class NameTooLong(InvalidReference):
    message = "repository name must not be more than %(length_max)s characters"
    code = 500


class RequestedHostNotFound(NotFound):
    message = "Requested host %(host)s could not be found."
    code = 404


# Added by the rewrite: the original answered a 500 for both.
class ImageFormatNotSupported(Invalid):
    message = (
        "Image %(image)s is not a Docker image (its container_format is "
        "%(container_format)s); Zun runs only Glance images with container_format docker."
    )
    code = 400


class TokenRefused(ZunException):
    """Keystone refused the request's token when zun-api used it toward another service (it
    expired or was revoked after keystonemiddleware accepted it, or no middleware checked it)."""

    message = "Keystone refused the request's token: %(reason)s"
    code = 401


class NeutronUnavailable(ZunException):
    # Added by the rewrite: Neutron (or the Keystone in front of it) does not answer; a 503
    # the client can retry, never the generic 500.
    message = "The network service (Neutron) is unavailable: %(reason)s"
    code = 503
    public_message = True


class ExternalNetworkAttachForbidden(NotAuthorized):
    message = "It is not allowed to create an interface on external network %(network_uuid)s"
    code = 403


class GlanceUnavailable(ZunException):
    message = "The image service (Glance) is unavailable: %(reason)s"
    code = 503
    # Clients get the reason (and the request id), not the generic 500 text.
    public_message = True


# Added by the rewrite ([scheduler]/use_placement): a clear 503 the client can retry.
class PlacementUnavailable(ZunException):
    message = "The placement service is unavailable: %(reason)s"
    code = 503
    public_message = True


def status_reason(exc: BaseException) -> str:
    """A container's ``status_reason`` for ``exc``: Zun's message (with the engine's words),
    else the class and text of an unexpected error."""
    if isinstance(exc, ZunException):
        return str(exc.message)
    return f"{type(exc).__name__}: {exc}"
