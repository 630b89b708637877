//! The service's error codes (`x-ms-error-code`, and `odata.error.code` in a body)
//! that this SDK reads or, in the in-memory engine, answers with. Names follow the
//! codes; the lists are in the service documentation:
//! <https://learn.microsoft.com/rest/api/storageservices/table-service-error-codes>
//! and <https://learn.microsoft.com/rest/api/storageservices/common-rest-api-error-codes>;
//! the blob codes in <https://learn.microsoft.com/rest/api/storageservices/blob-service-error-codes>.

/// `AtomFormatNotSupported`.
pub const ATOM_FORMAT_NOT_SUPPORTED: &str = "AtomFormatNotSupported";
/// `AuthenticationFailed`.
pub const AUTHENTICATION_FAILED: &str = "AuthenticationFailed";
/// `AuthorizationFailure`.
pub const AUTHORIZATION_FAILURE: &str = "AuthorizationFailure";
/// `AuthorizationPermissionMismatch`.
pub const AUTHORIZATION_PERMISSION_MISMATCH: &str = "AuthorizationPermissionMismatch";
/// `BlobAlreadyExists`.
pub const BLOB_ALREADY_EXISTS: &str = "BlobAlreadyExists";
/// `BlobNotFound`.
pub const BLOB_NOT_FOUND: &str = "BlobNotFound";
/// `CommandsInBatchActOnDifferentPartitions`.
pub const COMMANDS_IN_BATCH_ACT_ON_DIFFERENT_PARTITIONS: &str =
    "CommandsInBatchActOnDifferentPartitions";
/// `ConditionNotMet`.
pub const CONDITION_NOT_MET: &str = "ConditionNotMet";
/// `ContainerAlreadyExists`.
pub const CONTAINER_ALREADY_EXISTS: &str = "ContainerAlreadyExists";
/// `ContainerNotFound`.
pub const CONTAINER_NOT_FOUND: &str = "ContainerNotFound";
/// `DuplicatePropertiesSpecified`.
pub const DUPLICATE_PROPERTIES_SPECIFIED: &str = "DuplicatePropertiesSpecified";
/// `EntityAlreadyExists`.
pub const ENTITY_ALREADY_EXISTS: &str = "EntityAlreadyExists";
/// `EntityNotFound`.
pub const ENTITY_NOT_FOUND: &str = "EntityNotFound";
/// `EntityTooLarge`.
pub const ENTITY_TOO_LARGE: &str = "EntityTooLarge";
/// `HostInformationNotPresent`.
pub const HOST_INFORMATION_NOT_PRESENT: &str = "HostInformationNotPresent";
/// `InternalError`.
pub const INTERNAL_ERROR: &str = "InternalError";
/// `InvalidDuplicateRow`.
pub const INVALID_DUPLICATE_ROW: &str = "InvalidDuplicateRow";
/// `InvalidHeaderValue`.
pub const INVALID_HEADER_VALUE: &str = "InvalidHeaderValue";
/// `InvalidInput`.
pub const INVALID_INPUT: &str = "InvalidInput";
/// `InvalidOperation`.
pub const INVALID_OPERATION: &str = "InvalidOperation";
/// `InvalidRange`: a range read starting past the blob's end.
pub const INVALID_RANGE: &str = "InvalidRange";
/// `InvalidQueryParameterValue`.
pub const INVALID_QUERY_PARAMETER_VALUE: &str = "InvalidQueryParameterValue";
/// `InvalidResourceName`.
pub const INVALID_RESOURCE_NAME: &str = "InvalidResourceName";
/// `InvalidValueType`.
pub const INVALID_VALUE_TYPE: &str = "InvalidValueType";
/// `JsonFormatNotSupported`.
pub const JSON_FORMAT_NOT_SUPPORTED: &str = "JsonFormatNotSupported";
/// `KeyValueTooLarge`.
pub const KEY_VALUE_TOO_LARGE: &str = "KeyValueTooLarge";
/// `MethodNotAllowed`.
pub const METHOD_NOT_ALLOWED: &str = "MethodNotAllowed";
/// `NotImplemented`.
pub const NOT_IMPLEMENTED: &str = "NotImplemented";
/// `OperationTimedOut`.
pub const OPERATION_TIMED_OUT: &str = "OperationTimedOut";
/// `OutOfRangeInput`.
pub const OUT_OF_RANGE_INPUT: &str = "OutOfRangeInput";
/// `PropertiesNeedValue`.
pub const PROPERTIES_NEED_VALUE: &str = "PropertiesNeedValue";
/// `PropertyNameInvalid`.
pub const PROPERTY_NAME_INVALID: &str = "PropertyNameInvalid";
/// `PropertyNameTooLong`.
pub const PROPERTY_NAME_TOO_LONG: &str = "PropertyNameTooLong";
/// `PropertyValueTooLarge`.
pub const PROPERTY_VALUE_TOO_LARGE: &str = "PropertyValueTooLarge";
/// `RequestBodyTooLarge`.
pub const REQUEST_BODY_TOO_LARGE: &str = "RequestBodyTooLarge";
/// `ResourceNotFound`.
pub const RESOURCE_NOT_FOUND: &str = "ResourceNotFound";
/// `TooManyRequests`: Cosmos DB's answer (`429`) when a request-rate budget is spent.
pub const TOO_MANY_REQUESTS: &str = "TooManyRequests";
/// `ServerBusy`.
pub const SERVER_BUSY: &str = "ServerBusy";
/// `TableAlreadyExists`.
pub const TABLE_ALREADY_EXISTS: &str = "TableAlreadyExists";
/// `TableBeingDeleted`.
pub const TABLE_BEING_DELETED: &str = "TableBeingDeleted";
/// `TableNotFound`.
pub const TABLE_NOT_FOUND: &str = "TableNotFound";
/// `TooManyProperties`.
pub const TOO_MANY_PROPERTIES: &str = "TooManyProperties";
/// `UpdateConditionNotSatisfied`.
pub const UPDATE_CONDITION_NOT_SATISFIED: &str = "UpdateConditionNotSatisfied";
/// `XMethodIncorrectCount`.
pub const X_METHOD_INCORRECT_COUNT: &str = "XMethodIncorrectCount";
/// `XMethodIncorrectValue`.
pub const X_METHOD_INCORRECT_VALUE: &str = "XMethodIncorrectValue";
/// `XMethodNotUsingPost`.
pub const X_METHOD_NOT_USING_POST: &str = "XMethodNotUsingPost";
