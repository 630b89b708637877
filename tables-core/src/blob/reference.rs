//! What a row stores for a blob field: a reference to its blob, and the lazy
//! handle a `#[entity(blob, lazy)]` field reads as.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::BlobStore;
use crate::entity::{DynamicEntity, EntityKey};
use crate::error::{Error, ErrorKind, Origin, Result};
use crate::model::Property;
use crate::sealed::{value_from_plain_bytes, BLOB_REF_MAGIC};
use crate::value::Value;

/// Where a blob field's value lives: the blob's container, name, size and version
/// when its row was written. A row stores it as an `Edm.Binary` of
/// [`BLOB_REF_MAGIC`] and this JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobReference {
    /// The container.
    #[serde(rename = "c")]
    pub container: String,
    /// The blob's name.
    #[serde(rename = "n")]
    pub name: String,
    /// Its size in bytes.
    #[serde(rename = "s")]
    pub size: u64,
    /// Its ETag when written.
    #[serde(rename = "e")]
    pub etag: String,
    /// Reads leave it unfetched (an `#[entity(blob, lazy)]` field).
    #[serde(rename = "l", default, skip_serializing_if = "std::ops::Not::not")]
    pub lazy: bool,
}

impl BlobReference {
    /// The stored value.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidValue`] if it can't be serialised (it always can).
    pub fn to_value(&self) -> Result<Value> {
        let json = serde_json::to_vec(self)
            .map_err(|e| Error::local(ErrorKind::InvalidValue, format!("a blob reference: {e}")))?;
        let mut bytes = Vec::with_capacity(BLOB_REF_MAGIC.len() + json.len());
        bytes.extend_from_slice(BLOB_REF_MAGIC);
        bytes.extend_from_slice(&json);
        Ok(Value::Binary(bytes))
    }

    /// The reference property `property` of the row `key` stores; `None` when the
    /// value is not a reference.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] for a damaged reference.
    pub fn from_value(
        key: &EntityKey,
        property: &str,
        value: &Value,
    ) -> Result<Option<BlobReference>> {
        let Value::Binary(bytes) = value else {
            return Ok(None);
        };
        let Some(json) = bytes.strip_prefix(&BLOB_REF_MAGIC[..]) else {
            return Ok(None);
        };
        serde_json::from_slice(json).map(Some).map_err(|e| {
            Error::new(
                ErrorKind::Decode,
                format!("property `{property}` of {key} holds a damaged blob reference: {e}"),
            )
            .with_entity_key(key.clone())
            .with_property(property)
        })
    }

    /// Reads the blob's value, checking it is the version and size the row
    /// recorded.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::BlobNotFound`] when the blob is gone or was changed outside
    /// the client; the store's errors; [`ErrorKind::Encryption`] for content no
    /// value was written as.
    pub async fn read_value(&self, store: &dyn BlobStore) -> Result<Value> {
        value_from_plain_bytes(&self.read_content(store).await?)
    }

    /// Reads the blob's content (the value's type tag and bytes), checking it is
    /// the version and size the row recorded.
    ///
    /// # Errors
    ///
    /// As [`BlobReference::read_value`], but the content is not decoded.
    pub async fn read_content(&self, store: &dyn BlobStore) -> Result<Vec<u8>> {
        let missing = || {
            Error::new(
                ErrorKind::BlobNotFound,
                format!(
                    "the blob {}/{} is missing or was changed outside this client",
                    self.container, self.name
                ),
            )
            .with_origin(Origin::Service)
        };
        let blob = store
            .get_blob_range(
                &self.container,
                &self.name,
                0,
                self.size.max(1),
                Some(&self.etag),
            )
            .await
            .map_err(|e| {
                if e.kind() == ErrorKind::PreconditionFailed {
                    missing()
                } else {
                    e
                }
            })?
            .ok_or_else(missing)?;
        if blob.data.len() as u64 != self.size {
            return Err(missing());
        }
        Ok(blob.data)
    }
}

/// An `#[entity(blob, lazy)]` field: a value kept in a blob that reads leave
/// unfetched. A read gives a handle ([`LazyBlob::reference`], with the blob's
/// size); [`LazyBlob::fetch`] reads the value when it is wanted. Writing the entity
/// back with the handle untouched keeps the blob (nothing is uploaded);
/// [`LazyBlob::new`] gives a new value, uploaded by the next write.
///
/// ```
/// use tables_core::blob::LazyBlob;
///
/// let photo = LazyBlob::new(vec![1u8, 2, 3]);
/// assert_eq!(photo.value(), Some(&vec![1, 2, 3]));
/// assert!(photo.reference().is_none());
/// ```
#[derive(Clone, PartialEq)]
pub struct LazyBlob<T> {
    state: Lazy<T>,
}

#[derive(Clone, PartialEq)]
enum Lazy<T> {
    /// A value to write, or one fetched.
    Value(T),
    /// The blob a row refers to, not fetched.
    Stored(BlobReference),
}

impl<T: fmt::Debug> fmt::Debug for LazyBlob<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            Lazy::Value(value) => f.debug_tuple("LazyBlob::Value").field(value).finish(),
            Lazy::Stored(reference) => f
                .debug_struct("LazyBlob::Stored")
                .field(
                    "blob",
                    &format_args!("{}/{}", reference.container, reference.name),
                )
                .field("size", &reference.size)
                .finish(),
        }
    }
}

impl<T> LazyBlob<T> {
    /// A new value, uploaded to a blob of its own by the next write.
    pub fn new(value: T) -> LazyBlob<T> {
        LazyBlob {
            state: Lazy::Value(value),
        }
    }

    /// The value, when this handle holds one (new, or given by
    /// [`LazyBlob::fetch`]'s caller); `None` for a blob not fetched.
    pub fn value(&self) -> Option<&T> {
        match &self.state {
            Lazy::Value(value) => Some(value),
            Lazy::Stored(_) => None,
        }
    }

    /// The blob a read row refers to; `None` for a new value.
    pub fn reference(&self) -> Option<&BlobReference> {
        match &self.state {
            Lazy::Value(_) => None,
            Lazy::Stored(reference) => Some(reference),
        }
    }

    /// The size in bytes of the stored value (a binary's length, a text's UTF-8
    /// length), without fetching it; `None` for a new value.
    pub fn stored_size(&self) -> Option<u64> {
        // The blob holds a one-byte type tag, then the value's bytes.
        self.reference().map(|r| r.size.saturating_sub(1))
    }
}

impl<T: Property + Clone> LazyBlob<T> {
    /// The value: the one held, or the blob's, read from `store` (the store the
    /// client writes blobs to), checked against the version its row recorded.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::BlobNotFound`] when the blob is gone or was changed outside the
    /// client; the store's errors; the type's decoding error.
    pub async fn fetch(&self, store: &dyn BlobStore) -> Result<T> {
        match &self.state {
            Lazy::Value(value) => Ok(value.clone()),
            Lazy::Stored(reference) => T::from_value(Some(reference.read_value(store).await?)),
        }
    }
}

impl<T> From<T> for LazyBlob<T> {
    fn from(value: T) -> LazyBlob<T> {
        LazyBlob::new(value)
    }
}

/// A `LazyBlob` field's stored value: a new value held for the client's blob layer
/// (marked lazy), or the reference it was read with, unchanged.
///
/// # Errors
///
/// The value's encoding error.
#[doc(hidden)]
pub fn lazy_blob_encoded<T: Property>(field: &LazyBlob<T>) -> Result<Option<Value>> {
    match &field.state {
        Lazy::Value(value) => Ok(value.to_value()?.map(|v| crate::sealed::hold_lazy(&v))),
        Lazy::Stored(reference) => reference.to_value().map(Some),
    }
}

/// A `LazyBlob` field read from its property: the handle of the reference stored,
/// or the value when the blob layer fetched it (a reference written before the
/// field was lazy).
///
/// # Errors
///
/// [`ErrorKind::Decode`] for a missing property or one that holds neither.
#[doc(hidden)]
pub fn lazy_blob_slot<T: Property>(
    slot: Option<Value>,
    entity: &DynamicEntity,
    field: &'static str,
    property: &'static str,
) -> Result<LazyBlob<T>> {
    let key = entity.key();
    let bad = |why: &str| {
        Error::new(
            ErrorKind::Decode,
            format!("field `{field}` (property `{property}`) of {key} {why}"),
        )
        .with_entity_key(key.clone())
        .with_property(property)
    };
    let Some(value) = slot else {
        return Err(bad(
            "is missing: a lazy blob field needs its blob reference",
        ));
    };
    if let Some(reference) = BlobReference::from_value(&key, property, &value)? {
        return Ok(LazyBlob {
            state: Lazy::Stored(reference),
        });
    }
    if let Some(held) = crate::sealed::unhold(&value) {
        return Ok(LazyBlob::new(T::from_value(Some(held?))?));
    }
    Err(bad(&format!(
        "holds a plain {} where a blob reference belongs (written by a program that did not \
         use the blob store)",
        value.edm_type()
    )))
}
