//! The blob-store seam: what the typed layer needs of a blob service beside the
//! table, for the design guide's patterns that outgrow an entity (large values,
//! long index lists, long series, log data): containers, and in them blobs put,
//! read whole or by range, deleted and listed by prefix, each with an ETag.
//!
//! [`BlobStore`] is to blobs what [`crate::Engine`] is to tables: the seam the
//! typed layer's blob-backed patterns are to be built on, and nothing else. The in-memory store (`tables_mem::MemBlobStore`)
//! implements it with the service's rules and codes, `tables_client::remote::RemoteBlobStore`
//! speaks the Blob service's REST API, and `tables_mem::FaultInjector`
//! gives any store the same fault injection; the blob conformance suite
//! (`tables_tests::blob_suite!`) holds every store to the same behaviour.
//!
//! Names are checked here, once, before anything is sent or stored
//! ([`validate_container_name`], [`validate_blob_name`]), with the rules of the
//! service documentation: <https://learn.microsoft.com/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata>.

mod reference;
pub mod wire;

pub use reference::{lazy_blob_encoded, lazy_blob_slot, BlobReference, LazyBlob};

use std::fmt;

use async_trait::async_trait;

use crate::datetime::DateTime;
use crate::error::{Error, ErrorKind, Result};

/// The longest blob name the service accepts, in characters.
pub const MAX_BLOB_NAME_CHARS: usize = 1024;

/// The most blobs one [`BlobStore::list_blobs`] page holds (the service's limit for
/// `maxresults`).
pub const MAX_LIST_RESULTS: u32 = 5000;

/// What a stored blob is: its name, size and version.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlobProperties {
    /// The blob's name in its container.
    pub name: String,
    /// Its length in bytes.
    pub size: u64,
    /// Its version: changes on every write; a condition for the next one.
    pub etag: String,
    /// When it was last written, as the store says.
    pub last_modified: Option<DateTime>,
}

impl BlobProperties {
    /// Properties of a blob `name` of `size` bytes at version `etag`.
    pub fn new(name: impl Into<String>, size: u64, etag: impl Into<String>) -> BlobProperties {
        BlobProperties {
            name: name.into(),
            size,
            etag: etag.into(),
            last_modified: None,
        }
    }

    /// Sets when the blob was last written.
    #[must_use]
    pub fn with_last_modified(mut self, at: DateTime) -> BlobProperties {
        self.last_modified = Some(at);
        self
    }
}

/// A blob read whole, or a part of one read by range.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlobData {
    /// The whole blob's properties (its full size, not the part's).
    pub properties: BlobProperties,
    /// Where the bytes start in the blob.
    pub offset: u64,
    /// The bytes read.
    pub data: Vec<u8>,
}

impl BlobData {
    /// `data` read at `offset` of the blob `properties` describes.
    pub fn new(properties: BlobProperties, offset: u64, data: Vec<u8>) -> BlobData {
        BlobData {
            properties,
            offset,
            data,
        }
    }
}

impl fmt::Debug for BlobData {
    // The bytes may be anything, a secret included: their length only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlobData")
            .field("properties", &self.properties)
            .field("offset", &self.offset)
            .field("len", &self.data.len())
            .finish()
    }
}

/// The condition a blob write or delete is under.
// Not `#[non_exhaustive]`: every store must handle every condition, and a wildcard
// arm would hide a new one from them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BlobCondition {
    /// None: write or delete whatever is there.
    #[default]
    Any,
    /// Only if no blob of that name exists (`If-None-Match: *`); otherwise
    /// [`ErrorKind::BlobAlreadyExists`]. The way to write a new, unique name.
    Absent,
    /// Only if the blob is at this version (`If-Match`); otherwise
    /// [`ErrorKind::PreconditionFailed`] (or [`ErrorKind::BlobNotFound`] when it is gone).
    Etag(String),
}

impl BlobCondition {
    /// Checks that the condition can guard a delete: [`BlobCondition::Absent`]
    /// can't (there is nothing to delete when it holds).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for [`BlobCondition::Absent`].
    pub fn check_delete(&self) -> Result<()> {
        match self {
            BlobCondition::Absent => Err(Error::local(
                ErrorKind::InvalidInput,
                "BlobCondition::Absent is not a delete condition (a blob that is absent has \
                 nothing to delete): delete under Any or an ETag",
            )),
            BlobCondition::Any | BlobCondition::Etag(_) => Ok(()),
        }
    }
}

/// What [`BlobStore::list_blobs`] lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListBlobsOptions {
    /// Only names that start with this.
    pub prefix: Option<String>,
    /// Where to resume: a previous page's [`BlobPage::next_marker`].
    pub marker: Option<String>,
    /// At most this many blobs per page (1 to [`MAX_LIST_RESULTS`]; the store's
    /// default when `None`).
    pub max_results: Option<u32>,
}

impl ListBlobsOptions {
    /// Lists the names that start with `prefix`.
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> ListBlobsOptions {
        self.prefix = Some(prefix.into());
        self
    }

    /// Resumes after a previous page.
    #[must_use]
    pub fn with_marker(mut self, marker: Option<String>) -> ListBlobsOptions {
        self.marker = marker;
        self
    }

    /// At most `max` blobs per page.
    #[must_use]
    pub fn with_max_results(mut self, max: u32) -> ListBlobsOptions {
        self.max_results = Some(max);
        self
    }

    /// Checks the page size.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidQuery`] when `max_results` is 0 or over [`MAX_LIST_RESULTS`].
    pub fn validate(&self) -> Result<()> {
        match self.max_results {
            Some(max) if max == 0 || max > MAX_LIST_RESULTS => Err(Error::new(
                ErrorKind::InvalidQuery,
                format!("max_results {max} is outside 1..={MAX_LIST_RESULTS}, the blob service's page limit"),
            )),
            _ => Ok(()),
        }
    }
}

/// One page of a blob listing, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlobPage {
    /// The blobs of this page.
    pub blobs: Vec<BlobProperties>,
    /// Where the next page starts; `None` on the last page.
    pub next_marker: Option<String>,
}

impl BlobPage {
    /// A page of `blobs`, followed by more from `next_marker`.
    pub fn new(blobs: Vec<BlobProperties>, next_marker: Option<String>) -> BlobPage {
        BlobPage { blobs, next_marker }
    }
}

/// A blob service: containers of blobs with ETags.
///
/// Every method checks its names first ([`validate_container_name`],
/// [`validate_blob_name`]) and writes nothing when they are bad. Errors carry the
/// service's status and code ([`Error::service_code`]); one that
/// [may have applied](Error::may_have_applied) says so, as table writes do.
#[async_trait]
pub trait BlobStore: Send + Sync + fmt::Debug {
    /// Creates a container.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ContainerAlreadyExists`]; [`ErrorKind::InvalidBlobName`].
    async fn create_container(&self, container: &str) -> Result<()>;

    /// Deletes a container and every blob in it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ContainerNotFound`]; [`ErrorKind::InvalidBlobName`].
    async fn delete_container(&self, container: &str) -> Result<()>;

    /// Writes the blob `name` whole, under `condition`, and returns its new
    /// properties.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ContainerNotFound`]; [`ErrorKind::BlobAlreadyExists`] or
    /// [`ErrorKind::PreconditionFailed`] when the condition fails;
    /// [`ErrorKind::InvalidBlobName`].
    async fn put_blob(
        &self,
        container: &str,
        name: &str,
        data: Vec<u8>,
        condition: &BlobCondition,
    ) -> Result<BlobProperties>;

    /// Reads the blob `name` whole; `None` when there is none.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ContainerNotFound`]; [`ErrorKind::InvalidBlobName`].
    async fn get_blob(&self, container: &str, name: &str) -> Result<Option<BlobData>>;

    /// Reads at most `len` bytes of the blob `name` from `offset` (fewer at its end,
    /// none at or past it), only if it is at version `etag` when given, so the
    /// parts of one streamed read come from one version; `None` when there is no
    /// blob.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ContainerNotFound`]; [`ErrorKind::PreconditionFailed`] when the
    /// blob changed; [`ErrorKind::InvalidBlobName`].
    async fn get_blob_range(
        &self,
        container: &str,
        name: &str,
        offset: u64,
        len: u64,
        etag: Option<&str>,
    ) -> Result<Option<BlobData>>;

    /// Reads the properties of the blob `name`; `None` when there is none.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ContainerNotFound`]; [`ErrorKind::InvalidBlobName`].
    async fn blob_properties(&self, container: &str, name: &str) -> Result<Option<BlobProperties>>;

    /// Deletes the blob `name` under `condition` ([`BlobCondition::Absent`] is not a
    /// delete condition). Returns `false` when there was no blob (under
    /// [`BlobCondition::Any`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ContainerNotFound`]; [`ErrorKind::PreconditionFailed`] or
    /// [`ErrorKind::BlobNotFound`] when an ETag condition fails;
    /// [`ErrorKind::InvalidInput`] for [`BlobCondition::Absent`];
    /// [`ErrorKind::InvalidBlobName`].
    async fn delete_blob(
        &self,
        container: &str,
        name: &str,
        condition: &BlobCondition,
    ) -> Result<bool>;

    /// One page of the blobs of `container`, in name order.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ContainerNotFound`]; [`ErrorKind::InvalidQuery`] for a bad page
    /// size; [`ErrorKind::InvalidContinuationToken`] for a marker no listing gave.
    async fn list_blobs(&self, container: &str, options: &ListBlobsOptions) -> Result<BlobPage>;
}

macro_rules! forward_blob_store {
    ($($wrapper:ty),*) => {$(
        #[async_trait]
        impl<S: BlobStore + ?Sized> BlobStore for $wrapper {
            async fn create_container(&self, container: &str) -> Result<()> {
                (**self).create_container(container).await
            }
            async fn delete_container(&self, container: &str) -> Result<()> {
                (**self).delete_container(container).await
            }
            async fn put_blob(
                &self,
                container: &str,
                name: &str,
                data: Vec<u8>,
                condition: &BlobCondition,
            ) -> Result<BlobProperties> {
                (**self).put_blob(container, name, data, condition).await
            }
            async fn get_blob(&self, container: &str, name: &str) -> Result<Option<BlobData>> {
                (**self).get_blob(container, name).await
            }
            async fn get_blob_range(
                &self,
                container: &str,
                name: &str,
                offset: u64,
                len: u64,
                etag: Option<&str>,
            ) -> Result<Option<BlobData>> {
                (**self).get_blob_range(container, name, offset, len, etag).await
            }
            async fn blob_properties(
                &self,
                container: &str,
                name: &str,
            ) -> Result<Option<BlobProperties>> {
                (**self).blob_properties(container, name).await
            }
            async fn delete_blob(
                &self,
                container: &str,
                name: &str,
                condition: &BlobCondition,
            ) -> Result<bool> {
                (**self).delete_blob(container, name, condition).await
            }
            async fn list_blobs(
                &self,
                container: &str,
                options: &ListBlobsOptions,
            ) -> Result<BlobPage> {
                (**self).list_blobs(container, options).await
            }
        }
    )*};
}

forward_blob_store!(std::sync::Arc<S>, Box<S>);

/// Checks a container name: 3 to 63 characters, lowercase ASCII letters, digits
/// and single hyphens, starting and ending with a letter or digit.
///
/// # Errors
///
/// [`ErrorKind::InvalidBlobName`], saying which rule the name breaks.
pub fn validate_container_name(name: &str) -> Result<()> {
    let broken = if !(3..=63).contains(&name.len()) {
        Some(format!(
            "is {} characters long; 3 to 63 are allowed",
            name.len()
        ))
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        Some(format!(
            "contains {c:?}; only lowercase letters, digits and hyphens are allowed"
        ))
    } else if name.starts_with('-') || name.ends_with('-') {
        Some("starts or ends with a hyphen".to_owned())
    } else if name.contains("--") {
        Some("has two hyphens in a row".to_owned())
    } else {
        None
    };
    name_verdict("container name", name, broken)
}

/// Checks a blob name: 1 to [`MAX_BLOB_NAME_CHARS`] characters, no control
/// character, not ending with `.` or `/` (the service's advice, which this SDK
/// enforces: such names don't survive every client's URL handling).
///
/// # Errors
///
/// [`ErrorKind::InvalidBlobName`], saying which rule the name breaks.
pub fn validate_blob_name(name: &str) -> Result<()> {
    let chars = name.chars().count();
    let broken = if chars == 0 || chars > MAX_BLOB_NAME_CHARS {
        Some(format!(
            "is {chars} characters long; 1 to {MAX_BLOB_NAME_CHARS} are allowed"
        ))
    } else if let Some(c) = name.chars().find(|c| c.is_control()) {
        Some(format!("contains the control character {c:?}"))
    } else if name.ends_with('.') || name.ends_with('/') {
        Some("ends with '.' or '/'".to_owned())
    } else {
        None
    };
    name_verdict("blob name", name, broken)
}

/// `Ok` when no rule is `broken`; otherwise the error naming the rule.
fn name_verdict(what: &str, name: &str, broken: Option<String>) -> Result<()> {
    match broken {
        None => Ok(()),
        Some(why) => Err(Error::new(
            ErrorKind::InvalidBlobName,
            format!("the {what} {name:?} {why} (the blob service's naming rules)"),
        )),
    }
}

/// Checks a container name and a blob name (see [`validate_container_name`] and
/// [`validate_blob_name`]).
///
/// # Errors
///
/// [`ErrorKind::InvalidBlobName`].
pub fn validate_blob_address(container: &str, name: &str) -> Result<()> {
    validate_container_name(container)?;
    validate_blob_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_names_follow_the_service_rules() {
        for good in ["abc", "photos-2024", "a1b", &"x".repeat(63)] {
            assert!(validate_container_name(good).is_ok(), "{good}");
        }
        for bad in [
            "ab",
            "Photos",
            "a_b",
            "-ab",
            "ab-",
            "a--b",
            &"x".repeat(64),
            "añb",
        ] {
            let err = validate_container_name(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidBlobName, "{bad}");
        }
    }

    #[test]
    fn blob_names_follow_the_service_rules() {
        for good in ["a", "photos/2024/x.jpg", "名前", &"é".repeat(1024)] {
            assert!(validate_blob_name(good).is_ok(), "{good}");
        }
        for bad in ["", "a.", "a/", "a\nb", &"é".repeat(1025)] {
            let err = validate_blob_name(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidBlobName, "{bad:?}");
        }
    }

    #[test]
    fn page_sizes_are_checked() {
        assert!(ListBlobsOptions::default().validate().is_ok());
        assert!(ListBlobsOptions::default()
            .with_max_results(5000)
            .validate()
            .is_ok());
        for bad in [0, 5001] {
            let err = ListBlobsOptions::default()
                .with_max_results(bad)
                .validate()
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidQuery);
        }
    }

    #[test]
    fn blob_data_debug_shows_no_bytes() {
        let data = BlobData::new(BlobProperties::new("k", 6, "e"), 0, b"secret".to_vec());
        let shown = format!("{data:?}");
        assert!(!shown.contains("115"), "{shown}");
        assert!(shown.contains("len: 6"), "{shown}");
    }
}
