//! `tables-core`: the vocabulary of the `tables` SDK for Azure Table storage.
//!
//! No I/O lives here: entities ([`DynamicEntity`], [`Value`], [`EdmType`],
//! [`DateTime`]), key validation and key encodings ([`key`]), size accounting
//! ([`size`]), filters ([`Filter`], [`col`]), queries ([`QuerySpec`],
//! [`ContinuationToken`], [`Page`]), writes ([`WriteOp`], [`IfMatch`],
//! [`validate_batch`]), the error model ([`Error`], [`ErrorKind`]) and the
//! [`Engine`] trait every storage engine implements.

pub mod auth;
pub mod blob;
mod capabilities;
mod convert;
mod datetime;
mod engine;
mod entity;
mod entity_key;
mod error;
pub mod filter;
pub mod key;
pub mod model;
pub mod odata;
mod properties;
mod query;
pub mod sealed;
pub mod service;
pub mod size;
mod utf16;
mod value;
pub mod wide;
mod write;

pub use blob::{BlobCondition, BlobData, BlobPage, BlobProperties, BlobStore, ListBlobsOptions};
pub use capabilities::{
    EngineCapabilities, ServiceKind, COSMOS_MAX_BATCH_BYTES, COSMOS_MAX_PAGE_SIZE,
    COSMOS_MAX_ROW_KEY_BYTES,
};
pub use datetime::DateTime;
pub use engine::{Engine, JsonPage, LayerReconcileReport};
pub use entity::{DynamicEntity, ETag, EntityKey};
pub use error::code as error_code;
pub use error::{AuthHint, Error, ErrorKind, Origin, Result, UniqueViolation};
pub use filter::{col, CmpOp, Column, Filter, FilterDialect, QueryPlan, ReadComparison};
pub use model::{
    Contains, Entity, EntityUnion, FilterFor, IndexKey, Key, KeyOf, KeyRange, Property, Row,
    TruncateToTicks, TypedColumn, TypedFilter,
};
pub use query::{
    validate_select, ContinuationToken, ListTablesOptions, Page, QuerySpec, TablePage,
    MAX_PAGE_SIZE,
};
pub use value::{EdmType, Value};
pub use write::{
    validate_batch, validate_batch_before_layout, IfMatch, PendingUpkeep, WriteMode, WriteOp,
    WriteOutcome, MAX_BATCH_BYTES, MAX_BATCH_OPERATIONS,
};

#[doc(hidden)]
pub mod __private {
    //! What generated code reaches for; not a public API.
    pub use crate::blob::{lazy_blob_encoded, lazy_blob_slot};
    pub use crate::model::__private::*;
    pub use crate::model::{
        Contains, CopyIndex, EncryptedColumn, Entity, EntitySchema, EntityUnion, FilterFor,
        Filterable, IndexCopy, IndexEntry, IndexKey, IndexKind, IndexOf, IndexPartition,
        IndexSchema, Key, KeyDate, KeyInt, KeyRange, KeyText, KeyTime, ListIndex, OtherProperties,
        Property, PropertySchema, Reads, Row, SeriesColumn, StoredAs, Tag, TagValue, TextRange,
        TruncateToTicks, TypedColumn, TypedFilter, RESERVED_PROPERTIES,
    };
    pub use crate::{
        DateTime, DynamicEntity, EdmType, EntityKey, Error, ErrorKind, Filter, Result, Value,
    };
    pub use async_trait::async_trait;
    pub use serde_json;
    pub use std::ops::{Bound, RangeBounds};
    pub use std::sync::Arc;
    pub use uuid::Uuid;
}
