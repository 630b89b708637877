//! The OData JSON protocol of the Table service, as data: entity bodies, error
//! bodies, resource paths and query strings, and `$batch` multipart bodies.
//!
//! No I/O lives here. The remote engine (in `tables-client`) sends and receives what
//! these functions build and read, so there is one copy of every encoding rule.
//! Every parser returns [`ErrorKind::Decode`](crate::ErrorKind::Decode) for malformed
//! input and never panics.

pub mod batch;
pub mod continuation;
mod entity;
mod error;
pub mod header;
pub mod path;
pub mod response;
mod url;

pub use entity::{
    create_table_body, decode_entity, decode_entity_page, decode_request_entity,
    decode_table_names, encode_entity, encode_stored_entity, entity_page_objects, entity_to_json,
    RequestEntity,
};
pub use error::{parse_error_body, service_error, split_batch_index, ServiceError};
pub use path::{entity_path, table_resource_path};
pub use url::{encode_query_value, entity_query_string, table_query_string};
