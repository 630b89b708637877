//! [`MemBlobStore`]: the blob service's rules, in process, beside [`crate::MemEngine`].

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use tables_core::blob::{validate_blob_address, validate_container_name};
use tables_core::{
    BlobCondition, BlobData, BlobPage, BlobProperties, BlobStore, DateTime, Error, ErrorKind,
    ListBlobsOptions, Origin, Result,
};

use crate::clock::Clock;
use crate::faults::{CallKind, Faults};

/// Blobs per listing page when the caller names no size (the service's default).
const DEFAULT_LIST_PAGE: u32 = 5000;

/// What starts every marker this store hands out, so a marker from elsewhere is
/// refused rather than misread.
const MARKER_PREFIX: &str = "mem1!";

/// One stored blob. The bytes are shared with readers of whole blobs until the
/// next write replaces them.
#[derive(Debug, Clone)]
struct Stored {
    data: Arc<Vec<u8>>,
    etag: String,
    last_modified: DateTime,
}

impl Stored {
    fn properties(&self, name: &str) -> BlobProperties {
        BlobProperties::new(name, self.data.len() as u64, self.etag.clone())
            .with_last_modified(self.last_modified)
    }
}

type Containers = BTreeMap<String, BTreeMap<String, Stored>>;

#[derive(Debug, Default)]
struct Inner {
    containers: Mutex<Containers>,
    clock: Clock,
    faults: Faults,
}

/// An in-memory blob store with the blob service's rules: containers must exist,
/// names follow the service's naming rules, every write gets a new ETag, writes
/// and deletes honour their conditions with the service's error codes, listings
/// page in name order. The same fault injection as [`crate::MemEngine`]
/// ([`MemBlobStore::faults`], call kinds `PutBlob`, `GetBlob`, ...). Cloning is
/// cheap and shares the store.
///
/// ```
/// use tables_core::{BlobCondition, BlobStore, ErrorKind};
/// use tables_mem::MemBlobStore;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> tables_core::Result<()> {
/// let blobs = MemBlobStore::new();
/// blobs.create_container("photos").await?;
/// let put = blobs.put_blob("photos", "e1.jpg", b"jpeg".to_vec(), &BlobCondition::Absent).await?;
/// // A second write asking for a new name fails: the name is taken.
/// let again = blobs.put_blob("photos", "e1.jpg", vec![], &BlobCondition::Absent).await;
/// assert_eq!(again.unwrap_err().kind(), ErrorKind::BlobAlreadyExists);
/// let got = blobs.get_blob("photos", "e1.jpg").await?.unwrap();
/// assert_eq!((got.data, got.properties.etag), (b"jpeg".to_vec(), put.etag));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemBlobStore {
    inner: Arc<Inner>,
}

impl MemBlobStore {
    /// A new, empty store.
    pub fn new() -> MemBlobStore {
        MemBlobStore::default()
    }

    /// The fault-injection controls and call counters of this store (shared by its
    /// clones). See [`Faults`].
    pub fn faults(&self) -> &Faults {
        &self.inner.faults
    }

    fn containers(&self) -> std::sync::MutexGuard<'_, Containers> {
        self.inner
            .containers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn new_etag(&self) -> (String, DateTime) {
        let at = self.inner.clock.next();
        (format!("\"0x{:016X}\"", at.ticks()), at)
    }
}

/// The service's answer for `kind` (its status and code, which [`Error::new`]
/// sets), as the store's decision.
fn refuse(kind: ErrorKind, message: String) -> Error {
    Error::new(kind, message).with_origin(Origin::Service)
}

fn no_container(container: &str) -> Error {
    refuse(
        ErrorKind::ContainerNotFound,
        format!("the container {container:?} does not exist; create it first"),
    )
}

fn blobs_of<'a>(containers: &'a Containers, name: &str) -> Result<&'a BTreeMap<String, Stored>> {
    containers.get(name).ok_or_else(|| no_container(name))
}

fn blobs_of_mut<'a>(
    containers: &'a mut Containers,
    name: &str,
) -> Result<&'a mut BTreeMap<String, Stored>> {
    containers.get_mut(name).ok_or_else(|| no_container(name))
}

/// Checks an ETag condition against the stored blob.
fn check_etag(container: &str, name: &str, stored: Option<&Stored>, etag: &str) -> Result<()> {
    match stored {
        None => Err(refuse(
            ErrorKind::BlobNotFound,
            format!("the blob {container}/{name} does not exist (the write was conditional on version {etag})"),
        )),
        Some(stored) if stored.etag != etag => Err(refuse(
            ErrorKind::PreconditionFailed,
            format!(
                "the blob {container}/{name} is at version {}, not {etag}: it changed since it was read",
                stored.etag
            ),
        )
        .with_service_code(tables_core::error_code::CONDITION_NOT_MET)),
        Some(_) => Ok(()),
    }
}

#[async_trait]
impl BlobStore for MemBlobStore {
    async fn create_container(&self, container: &str) -> Result<()> {
        validate_container_name(container)?;
        let ticket = self.inner.faults.enter(CallKind::CreateContainer).await?;
        let result = {
            let mut containers = self.containers();
            if containers.contains_key(container) {
                Err(refuse(
                    ErrorKind::ContainerAlreadyExists,
                    format!("the container {container:?} already exists"),
                ))
            } else {
                containers.insert(container.to_owned(), BTreeMap::new());
                Ok(())
            }
        };
        ticket.finish(result)
    }

    async fn delete_container(&self, container: &str) -> Result<()> {
        validate_container_name(container)?;
        let ticket = self.inner.faults.enter(CallKind::DeleteContainer).await?;
        let result = self
            .containers()
            .remove(container)
            .map(|_| ())
            .ok_or_else(|| no_container(container));
        ticket.finish(result)
    }

    async fn put_blob(
        &self,
        container: &str,
        name: &str,
        data: Vec<u8>,
        condition: &BlobCondition,
    ) -> Result<BlobProperties> {
        validate_blob_address(container, name)?;
        let ticket = self.inner.faults.enter(CallKind::PutBlob).await?;
        let result = (|| {
            let mut containers = self.containers();
            let blobs = blobs_of_mut(&mut containers, container)?;
            match condition {
                BlobCondition::Any => {}
                BlobCondition::Absent => {
                    if blobs.contains_key(name) {
                        return Err(refuse(
                            ErrorKind::BlobAlreadyExists,
                            format!("the blob {container}/{name} already exists"),
                        ));
                    }
                }
                BlobCondition::Etag(etag) => check_etag(container, name, blobs.get(name), etag)?,
            }
            let (etag, last_modified) = self.new_etag();
            let stored = Stored {
                data: Arc::new(data),
                etag,
                last_modified,
            };
            let properties = stored.properties(name);
            blobs.insert(name.to_owned(), stored);
            Ok(properties)
        })();
        ticket.finish(result)
    }

    async fn get_blob(&self, container: &str, name: &str) -> Result<Option<BlobData>> {
        validate_blob_address(container, name)?;
        let ticket = self.inner.faults.enter(CallKind::GetBlob).await?;
        let found = (|| {
            let containers = self.containers();
            Ok(blobs_of(&containers, container)?.get(name).cloned())
        })();
        // The copy for the caller is made outside the lock.
        let result = found.map(|stored: Option<Stored>| {
            stored.map(|s| BlobData::new(s.properties(name), 0, s.data.as_ref().clone()))
        });
        ticket.finish(result)
    }

    async fn get_blob_range(
        &self,
        container: &str,
        name: &str,
        offset: u64,
        len: u64,
        etag: Option<&str>,
    ) -> Result<Option<BlobData>> {
        validate_blob_address(container, name)?;
        let ticket = self.inner.faults.enter(CallKind::GetBlob).await?;
        let found = (|| {
            let containers = self.containers();
            let stored = blobs_of(&containers, container)?.get(name).cloned();
            if let (Some(etag), Some(_)) = (etag, &stored) {
                check_etag(container, name, stored.as_ref(), etag)?;
            }
            Ok(stored)
        })();
        let result = found.map(|stored: Option<Stored>| {
            stored.map(|s| {
                let size = s.data.len() as u64;
                let start = offset.min(size);
                let end = offset.saturating_add(len).min(size);
                // Both bounds are at most the blob's length, which is a usize.
                let part = s.data[start as usize..end as usize].to_vec();
                BlobData::new(s.properties(name), start, part)
            })
        });
        ticket.finish(result)
    }

    async fn blob_properties(&self, container: &str, name: &str) -> Result<Option<BlobProperties>> {
        validate_blob_address(container, name)?;
        let ticket = self.inner.faults.enter(CallKind::GetBlob).await?;
        let result = (|| {
            let containers = self.containers();
            Ok(blobs_of(&containers, container)?
                .get(name)
                .map(|s| s.properties(name)))
        })();
        ticket.finish(result)
    }

    async fn delete_blob(
        &self,
        container: &str,
        name: &str,
        condition: &BlobCondition,
    ) -> Result<bool> {
        validate_blob_address(container, name)?;
        condition.check_delete()?;
        let ticket = self.inner.faults.enter(CallKind::DeleteBlob).await?;
        let result = (|| {
            let mut containers = self.containers();
            let blobs = blobs_of_mut(&mut containers, container)?;
            if let BlobCondition::Etag(etag) = condition {
                check_etag(container, name, blobs.get(name), etag)?;
            }
            Ok(blobs.remove(name).is_some())
        })();
        ticket.finish(result)
    }

    async fn list_blobs(&self, container: &str, options: &ListBlobsOptions) -> Result<BlobPage> {
        validate_container_name(container)?;
        options.validate()?;
        let start = match &options.marker {
            None => None,
            Some(marker) => match marker.strip_prefix(MARKER_PREFIX) {
                Some(name) => Some(name.to_owned()),
                None => {
                    return Err(Error::new(
                        ErrorKind::InvalidContinuationToken,
                        format!("the marker {marker:?} was not made by a listing of this store; pass the next_marker of the previous page"),
                    ))
                }
            },
        };
        let ticket = self.inner.faults.enter(CallKind::ListBlobs).await?;
        let page_size = options.max_results.unwrap_or(DEFAULT_LIST_PAGE) as usize;
        let prefix = options.prefix.as_deref().unwrap_or("");
        let result = (|| {
            let containers = self.containers();
            let blobs = blobs_of(&containers, container)?;
            let from = match &start {
                Some(name) => Bound::Included(name.as_str()),
                None => Bound::Included(prefix),
            };
            let mut matching = blobs
                .range::<str, _>((from, Bound::Unbounded))
                .take_while(|(name, _)| name.starts_with(prefix));
            let page: Vec<BlobProperties> = matching
                .by_ref()
                .take(page_size)
                .map(|(name, stored)| stored.properties(name))
                .collect();
            let next_marker = matching
                .next()
                .map(|(name, _)| format!("{MARKER_PREFIX}{name}"));
            Ok(BlobPage::new(page, next_marker))
        })();
        ticket.finish(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fault;

    #[tokio::test]
    async fn names_are_checked_before_anything_happens() {
        let store = MemBlobStore::new();
        let err = store.create_container("Bad_Name").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidBlobName);
        assert_eq!(err.origin(), Origin::Local);
        assert_eq!(store.faults().calls(), 0, "nothing reached the store");
    }

    #[tokio::test]
    async fn faults_fire_on_blob_calls() {
        let store = MemBlobStore::new();
        store.create_container("c1a").await.unwrap();
        store.faults().inject(
            Fault::fail_after_applying(ErrorKind::Timeout)
                .on(CallKind::PutBlob)
                .nth(1),
        );
        let err = store
            .put_blob("c1a", "b", b"x".to_vec(), &BlobCondition::Any)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout);
        assert!(
            store.get_blob("c1a", "b").await.unwrap().is_some(),
            "applied"
        );
        assert_eq!(store.faults().calls_of(CallKind::PutBlob), 1);
    }
}
