"""Zun's exceptions.

The public error ``code`` of an API error is derived from the class name (see
:func:`convert_excp_to_err_code`), so a class here must never be renamed: clients match on the
derived strings. Message templates and HTTP codes follow the original service's contract.
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
                LOG.debug("Message template of %s did not match %s", type(self).__name__,
                          sorted(kwargs))
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
    message = 'The %(name)s %(id)s could not be found.'
    code = 500

class ObjectNotUnique(ZunException):
    message = 'The %(name)s already exists.'
    code = 500

class ObjectActionError(ZunException):
    message = 'Object action %(action)s failed because: %(reason)s'
    code = 500

class ResourceNotFound(ObjectNotFound):
    message = 'The %(name)s resource %(id)s could not be found.'
    code = 404

class ResourceExists(ObjectNotUnique):
    message = 'The %(name)s resource already exists.'
    code = 409

class AuthorizationFailure(ZunException):
    message = '%(client)s connection failed. %(message)s'
    code = 500

class UnsupportedObjectError(ZunException):
    message = 'Unsupported object type %(objtype)s'
    code = 500

class IncompatibleObjectVersion(ZunException):
    message = 'Version %(objver)s of %(objname)s is not supported'
    code = 500

class OrphanedObjectError(ZunException):
    message = 'Cannot call %(method)s on orphaned %(objtype)s object'
    code = 500

class Invalid(ZunException):
    message = 'Unacceptable parameters.'
    code = 400

class InvalidValue(Invalid):
    message = "Received value '%(value)s' is invalid for type %(type)s."
    code = 400

class ValidationError(Invalid):
    message = '%(detail)s'
    code = 400

class SchemaValidationError(ValidationError):
    message = '%(detail)s'
    code = 400

class InvalidUUID(Invalid):
    message = 'Expected a uuid but received %(uuid)s.'
    code = 400

class InvalidName(Invalid):
    message = 'Expected a name but received %(uuid)s.'
    code = 400

class InvalidDiscoveryURL(Invalid):
    message = (
        "Received invalid discovery URL '%(discovery_url)s' for discovery endpoint "
        "'%(discovery_endpoint)s'."
    )
    code = 400

class GetDiscoveryUrlFailed(ZunException):
    message = "Failed to get discovery url from '%(discovery_endpoint)s'."
    code = 500

class InvalidUuidOrName(Invalid):
    message = 'Expected a name or uuid but received %(uuid)s.'
    code = 400

class InvalidIdentity(Invalid):
    message = 'Expected an uuid or int but received %(identity)s.'
    code = 400

class InvalidCsr(Invalid):
    message = 'Received invalid csr %(csr)s.'
    code = 400

class HTTPNotFound(ResourceNotFound):
    message = 'The %(name)s resource %(id)s could not be found.'
    code = 404

class Conflict(ZunException):
    message = 'Conflict.'
    code = 409

class ConflictOptions(Conflict):
    message = 'Conflicting options.'
    code = 409

class InvalidState(Conflict):
    message = 'Invalid resource state.'
    code = 409

class InvalidParameterValue(Invalid):
    message = '%(err)s'
    code = 400

class InvalidParamInVersion(Invalid):
    message = (
        'Invalid param %(param)s because current request version is %(req_version)s. '
        '%(param)s is only supported from version %(min_version)s'
    )
    code = 400

class InvalidQuotaValue(Invalid):
    message = 'Change would make usage less than 0 for the following resources: %(unders)s'
    code = 400

class InvalidQuotaMethodUsage(Invalid):
    message = 'Wrong quota method %(method)s used on resource %(res)s'
    code = 400

class PatchError(Invalid):
    message = "Couldn't apply patch '%(patch)s'. Reason: %(reason)s"
    code = 400

class NotAuthorized(ZunException):
    message = 'Not authorized.'
    code = 403

class ConfigInvalid(ZunException):
    message = 'Invalid configuration file. %(error_msg)s'
    code = 500

class PolicyNotAuthorized(NotAuthorized):
    message = "Policy doesn't allow %(action)s to be performed."
    code = 403

class ContainerNotFound(HTTPNotFound):
    message = 'Container %(container)s could not be found.'
    code = 404

class ContainerHostNotUp(ZunException):
    message = 'Container %(container)s host %(host)s is not up.'
    code = 500

class ComputeNodeNotFound(HTTPNotFound):
    message = 'Compute node %(compute_node)s could not be found.'
    code = 404

class NetworkNotFound(HTTPNotFound):
    message = 'Neutron network %(network)s could not be found.'
    code = 404

class RegistryNotFound(HTTPNotFound):
    message = 'Registry %(registry)s could not be found.'
    code = 404

class NetworkAlreadyExists(ResourceExists):
    message = 'A network with %(field)s %(value)s already exists.'
    code = 409

class PortNotFound(HTTPNotFound):
    message = 'Neutron port %(port)s could not be found.'
    code = 404

class VolumeMappingNotFound(HTTPNotFound):
    message = 'Volume mapping %(volume_mapping)s could not be found.'
    code = 404

class VolumeNotFound(HTTPNotFound):
    message = 'Volume %(volume)s could not be found.'
    code = 404

class ImageNotFound(Invalid):
    message = 'Image %(image)s could not be found.'
    code = 400

class OperationNotSupported(ZunException):
    message = 'The operation is not supported.'
    code = 500

class ZunServiceNotFound(HTTPNotFound):
    message = 'Zun service %(binary)s on host %(host)s could not be found.'
    code = 404

class ResourceClassNotFound(HTTPNotFound):
    message = 'Resource class %(resource_class)s could not be found.'
    code = 404

class InventoryNotFound(HTTPNotFound):
    message = 'Inventory %(inventory)s could not be found.'
    code = 404

class AllocationNotFound(HTTPNotFound):
    message = 'Allocation %(allocation)s could not be found.'
    code = 404

class ContainerAlreadyExists(ResourceExists):
    message = 'A container with %(field)s %(value)s already exists.'
    code = 409

class ExecInstanceAlreadyExists(ResourceExists):
    message = 'An exec instance with exec_id %(exec_id)s already exists in container.'
    code = 409

class ComputeNodeAlreadyExists(ResourceExists):
    message = 'A compute node with %(field)s %(value)s already exists.'
    code = 409

class ImageAlreadyExists(ResourceExists):
    message = 'An image with tag %(tag)s and repo %(repo)s already exists.'
    code = 409

class ZunServiceAlreadyExists(ResourceExists):
    message = 'Service %(binary)s on host %(host)s already exists.'
    code = 409

class ResourceProviderAlreadyExists(ResourceExists):
    message = 'A resource provider with %(field)s %(value)s already exists.'
    code = 409

class ResourceClassAlreadyExists(ResourceExists):
    message = 'A resource class with %(field)s %(value)s already exists.'
    code = 409

class VolumeMappingAlreadyExists(ResourceExists):
    message = 'A volume mapping with %(field)s %(value)s already exists.'
    code = 409

class VolumeAlreadyExists(ResourceExists):
    message = 'A volume with %(field)s %(value)s already exists.'
    code = 409

class RegistryAlreadyExists(ResourceExists):
    message = 'A registry with %(field)s %(value)s already exists.'
    code = 409

class PortNotUsable(Invalid):
    message = 'Port %(port)s not usable for the container.'
    code = 400

class PortInUse(Invalid):
    message = 'Port %(port)s is still in use.'
    code = 400

class VolumeNotUsable(Invalid):
    message = 'Volume %(volume)s not usable for the container.'
    code = 400

class VolumeInUse(Invalid):
    message = 'Volume %(volume)s is still in use.'
    code = 400

class PortBindingFailed(Invalid):
    message = 'Binding failed for port %(port)s, please check neutron logs for more information.'
    code = 400

class UniqueConstraintViolated(ResourceExists):
    message = 'A resource with %(fields)s violates unique constraint.'
    code = 409

class InvalidStateException(ZunException):
    message = 'Cannot %(action)s container %(id)s in %(actual_state)s state'
    code = 409

class DockerError(ZunException):
    message = 'Docker internal error: %(error_msg)s.'
    code = 500

class PollTimeOut(ZunException):
    message = 'Polling request timed out.'
    code = 500

class ServerInError(ZunException):
    message = 'Went to status %(resource_status)s due to "%(status_reason)s"'
    code = 500

class ServerUnknownStatus(ZunException):
    message = '%(result)s - Unknown status %(resource_status)s due to "%(status_reason)s"'
    code = 500

class EntityNotFound(ZunException):
    message = 'The %(entity)s (%(name)s) could not be found.'
    code = 500

class CommandError(ZunException):
    message = 'The command: %(cmd)s failed on the system, due to %(error)s'
    code = 500

class NoValidHost(ZunException):
    message = 'No valid host was found. %(reason)s'
    code = 500

class NoInteractiveFlag(Invalid):
    message = '%(msg)s'
    code = 400

class CPUPinningUnknown(ZunException):
    message = 'CPU set to pin %(requested)s must be a subset of known CPU set %(cpuset)s'
    code = 500

class CPUUnpinningUnknown(Invalid):
    message = 'CPU set to unpin %(requested)s must be a subset of known CPU set %(cpuset)s'
    code = 400

class CPUPinningInvalid(Invalid):
    message = 'CPU set to pin %(requested)s must be a subset of free CPU set %(free)s'
    code = 400

class CPUUnpinningInvalid(Invalid):
    message = 'CPU set to unpin %(requested)s must be a subset of pinned CPU set %(pinned)s'
    code = 400

class SchedulerHostFilterNotFound(NotFound):
    message = 'Scheduler Host Filter %(filter_name)s could not be found.'
    code = 404

class ClassNotFound(NotFound):
    message = 'Class %(class_name)s could not be found: %(exception)s'
    code = 404

class ApiVersionsIntersect(ZunException):
    message = 'Version of %(name)s %(min_ver)s %(max_ver)s intersects with another versions.'
    code = 500

class ConnectionFailed(ZunException):
    message = 'Failed to connect to remote host'
    code = 500

class SocketException(ZunException):
    message = 'Socket exceptions'
    code = 500

class InvalidWebsocketUrl(ZunException):
    message = 'Websocket Url invalid'
    code = 500

class InvalidWebsocketToken(ZunException):
    message = 'Websocket token is invalid'
    code = 500

class ResourcesUnavailable(ZunException):
    message = 'Insufficient compute resources: %(reason)s.'
    code = 500

class MakeFileSystemException(ZunException):
    message = 'Unexpected error while make file system'
    code = 500

class MountException(ZunException):
    message = 'Unexpected error while mount device'
    code = 500

class UnmountException(ZunException):
    message = 'Unexpected error while do umount'
    code = 500

class FileNotFound(ZunException):
    message = 'The expected file not exist'
    code = 500

class PciConfigInvalidWhitelist(ZunException):
    message = 'Invalid PCI devices Whitelist config %(reason)s'
    code = 500

class PciDeviceWrongAddressFormat(ZunException):
    message = 'The PCI address %(address)s has an incorrect format.'
    code = 500

class PciDeviceInvalidDeviceName(ZunException):
    message = (
        'Invalid PCI Whitelist: The PCI whitelist can specify devname or address, but not '
        'both'
    )
    code = 500

class PciDeviceNotFoundById(NotFound):
    message = 'PCI device %(id)s not found'
    code = 404

class PciDeviceNotFound(NotFound):
    message = 'PCI Device %(node_id)s:%(address)s not found.'
    code = 404

class PciDevicePoolEmpty(ZunException):
    message = 'Attempt to consume PCI device %(compute_node_uuid)s:%(address)s from empty pool'
    code = 500

class CapsuleAlreadyExists(ResourceExists):
    message = 'A capsule with %(field)s %(value)s already exists.'
    code = 409

class CapsuleNotFound(HTTPNotFound):
    message = 'Capsule %(capsule)s could not be found.'
    code = 404

class InvalidCapsuleTemplate(ZunException):
    message = 'Invalid capsule template: %(reason)s.'
    code = 500

class FailedParseStringToJson(ZunException):
    message = 'Failed parse string to json: %(reason)s.'
    code = 500

class ExternalNetworkAttachForbidden(NotAuthorized):
    message = 'It is not allowed to create an interface on external network %(network_uuid)s'
    code = 403

class PciDeviceInvalidStatus(Invalid):
    message = 'PCI device %(compute_node_id)s:%(address)s is %(status)s instead of %(hopestatus)s'
    code = 400

class PciDeviceVFInvalidStatus(Invalid):
    message = 'Not all Virtual Functions of PF %(compute_node_id)s:%(address)s are free.'
    code = 400

class PciDevicePFInvalidStatus(Invalid):
    message = (
        'Physical Function %(compute_node_id)s:%(address)s, related to VF '
        '%(compute_node_id)s:%(vf_address)s is %(status)s instead of %(hopestatus)s'
    )
    code = 400

class PciDeviceInvalidOwner(Invalid):
    message = (
        'PCI device %(compute_node_id)s:%(address)s is owned by %(owner)s instead of '
        '%(hopeowner)s'
    )
    code = 400

class VolumeCreateFailed(Invalid):
    message = 'Volume Creation failed: %(creation_failed)s'
    code = 400

class VolumeDeleteFailed(Invalid):
    message = 'Volume Deletion failed: %(deletion_failed)s'
    code = 400

class SecurityGroupCannotBeApplied(Invalid):
    message = 'Security groups cannot apply to the container.'
    code = 400

class SecurityGroupCannotBeRemoved(Invalid):
    message = 'Security groups cannot be removed from the container.'
    code = 400

class ContainerActionNotFound(ZunException):
    message = 'Action for request_id %(request_id)s on container %(container_uuid)s not fount'
    code = 500

class ContainerActionEventNotFound(ZunException):
    message = 'Event %(event)s not found for action id %(action_id)s'
    code = 500

class OverQuota(ZunException):
    message = 'Quota exceeded for resources: %(overs)s'
    code = 403

class QuotaNotFound(NotFound):
    message = 'Quota could not be found.'
    code = 404

class QuotaUsageNotFound(NotFound):
    message = 'Quota usage could not be found'
    code = 404

class ProjectQuotaNotFound(QuotaNotFound):
    message = 'Quota for project %(project_id)s could not be found.'
    code = 404

class QuotaAlreadyExists(ZunException):
    message = 'Quota already exists for project %(project_id)s, resource %(resource)s.'
    code = 500

class QuotaClassNotFound(QuotaNotFound):
    message = 'Quota class %(class_name)s could not be found.'
    code = 404

class QuotaResourceUnknown(QuotaNotFound):
    message = 'Unknow quota resources %(unknown)s.'
    code = 404

class Base64Exception(Invalid):
    message = 'Invalid Base 64 file data'
    code = 400

class InvalidEncryptionKey(ZunException):
    message = 'Can not decrypt data with the auth_encryption_key in zun config.'
    code = 500

class InvalidReference(ZunException):
    message = 'invalid reference'
    code = 500

class ReferenceInvalidFormat(InvalidReference):
    message = 'invalid reference format'
    code = 500

class NameEmpty(InvalidReference):
    message = 'repository name must have at least one component'
    code = 500

class NameTooLong(InvalidReference):
    message = 'repository name must not be more than %(length_max)s characters'
    code = 500

class ResourceProviderInUse(ZunException):
    message = 'Resource provider has allocations.'
    code = 500

class ResourceProviderRetrievalFailed(ZunException):
    message = 'Failed to get resource provider with UUID %(uuid)s'
    code = 500

class ResourceProviderAggregateRetrievalFailed(ZunException):
    message = 'Failed to get aggregates for resource provider with UUID %(uuid)s'
    code = 500

class ResourceProviderTraitRetrievalFailed(ZunException):
    message = 'Failed to get traits for resource provider with UUID %(uuid)s'
    code = 500

class ResourceProviderCreationFailed(ZunException):
    message = 'Failed to create resource provider %(name)s'
    code = 500

class ResourceProviderDeletionFailed(ZunException):
    message = 'Failed to delete resource provider %(uuid)s'
    code = 500

class ResourceProviderUpdateFailed(ZunException):
    message = 'Failed to update resource provider via URL %(url)s: %(error)s'
    code = 500

class ResourceProviderNotFound(NotFound):
    message = 'No such resource provider %(name_or_uuid)s.'
    code = 404

class ResourceProviderSyncFailed(ZunException):
    message = (
        'Failed to synchronize the placement service with resource provider information '
        'supplied by the compute host.'
    )
    code = 500

class PlacementAPIConnectFailure(ZunException):
    message = 'Unable to communicate with the Placement API.'
    code = 500

class PlacementAPIConflict(ZunException):
    message = (
        'A conflict was encountered attempting to invoke the placement API at URL '
        '%(url)s: %(error)s'
    )
    code = 500

class ResourceProviderUpdateConflict(PlacementAPIConflict):
    message = (
        'A conflict was encountered attempting to update resource provider %(uuid)s '
        '(generation %(generation)d): %(error)s'
    )
    code = 500

class InvalidResourceClass(Invalid):
    message = "Resource class '%(resource_class)s' invalid."
    code = 400

class InvalidResourceAmount(Invalid):
    message = "Resource amounts must be integers. Received '%(amount)s'."
    code = 400

class InvalidInventory(Invalid):
    message = (
        "Inventory for '%(resource_class)s' on resource provider '%(resource_provider)s' "
        'invalid.'
    )
    code = 400

class InventoryInUse(InvalidInventory):
    message = (
        "Inventory for '%(resource_class)s' on resource provider '%(resource_provider)s' "
        'invalid.'
    )
    code = 400

class UsagesRetrievalFailed(ZunException):
    message = "Failed to retrieve usages for project '%(project_id)s' and user '%(user_id)s'."
    code = 500

class AllocationUpdateFailed(ZunException):
    message = 'Failed to update allocations for consumer %(consumer_uuid)s. Error: %(error)s'
    code = 500

class ConsumerAllocationRetrievalFailed(ZunException):
    message = 'Failed to retrieve allocations for consumer %(consumer_uuid)s: %(error)s'
    code = 500

class TraitRetrievalFailed(ZunException):
    message = 'Failed to get traits for resource provider with UUID %(uuid)s'
    code = 500

class TraitCreationFailed(ZunException):
    message = 'Failed to create trait %(name)s: %(error)s'
    code = 500

class AllocationMoveFailed(ZunException):
    message = (
        'Failed to move allocations from consumer %(source_consumer)s to consumer '
        '%(target_consumer)s. Error: %(error)s'
    )
    code = 500

class ResourceProviderAllocationRetrievalFailed(ZunException):
    message = 'Failed to retrieve allocations for resource provider %(rp_uuid)s: %(error)s'
    code = 500

class ComputeHostNotFound(NotFound):
    message = 'Compute host %(host)s could not be found.'
    code = 404

class RequestedHostNotFound(NotFound):
    message = 'Requested host %(host)s could not be found.'
    code = 404

class CNIError(ZunException):
    message = 'An unknown exception occurred.'
    code = 500

class ResourceNotReady(CNIError):
    message = 'Resource not ready: %(resource)s'
    code = 500

# Added by the rewrite: the original answered a 500 for both.
class ImageFormatNotSupported(Invalid):
    message = ('Image %(image)s is not a Docker image (its container_format is '
               '%(container_format)s); Zun runs only Glance images with container_format docker.')
    code = 400

class GlanceUnavailable(ZunException):
    message = 'The image service (Glance) is unavailable: %(reason)s'
    code = 503
    # Clients get the reason (and the request id), not the generic 500 text.
    public_message = True



def status_reason(exc: BaseException) -> str:
    """A container's ``status_reason`` for ``exc``: Zun's message (with the engine's words),
    else the class and text of an unexpected error."""
    if isinstance(exc, ZunException):
        return str(exc.message)
    return f"{type(exc).__name__}: {exc}"
