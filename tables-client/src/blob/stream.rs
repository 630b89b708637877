//! A blob read in chunks, all from one version.

use futures::Stream;
use tables_core::blob::{BlobData, BlobStore};
use tables_core::{Error, ErrorKind, Result};

/// Reads the blob `name` as a stream of chunks of at most `chunk_size` bytes, in
/// order, without holding the whole blob in memory.
///
/// The first chunk fixes the version: every later chunk is read under its ETag, so
/// the chunks never mix two versions of the blob. If the blob is replaced or
/// deleted while the stream is read, the next item is an error
/// ([`ErrorKind::PreconditionFailed`] or [`ErrorKind::BlobNotFound`]) and the stream
/// ends; a missing blob is a [`ErrorKind::BlobNotFound`] first item. An empty blob
/// gives one empty chunk (its properties). A chunk size of 0 is an
/// [`ErrorKind::InvalidInput`] first item.
///
/// ```
/// use futures::TryStreamExt;
/// use tables_client::blob::{blob_chunks, BlobCondition, BlobStore};
/// use tables_client::mem::MemBlobStore;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemBlobStore::new();
/// store.create_container("photos").await?;
/// store.put_blob("photos", "ann.jpg", vec![7; 10_000], &BlobCondition::Absent).await?;
/// let chunks: Vec<_> = blob_chunks(&store, "photos", "ann.jpg", 4096).try_collect().await?;
/// assert_eq!(chunks.iter().map(|c| c.data.len()).collect::<Vec<_>>(), [4096, 4096, 1808]);
/// assert!(chunks.iter().all(|c| c.properties.etag == chunks[0].properties.etag));
/// # Ok::<(), tables_client::Error>(())
/// # }).unwrap();
/// ```
pub fn blob_chunks<'a, S: BlobStore + ?Sized>(
    store: &'a S,
    container: &'a str,
    name: &'a str,
    chunk_size: u64,
) -> impl Stream<Item = Result<BlobData>> + Send + 'a {
    // (next offset, the version read, done)
    let start: (u64, Option<String>, bool) = (0, None, false);
    futures::stream::try_unfold(start, move |(offset, etag, done)| async move {
        if done {
            return Ok(None);
        }
        if chunk_size == 0 {
            return Err(Error::local(
                ErrorKind::InvalidInput,
                "blob_chunks: the chunk size is 0; give at least 1 byte",
            ));
        }
        let chunk = store
            .get_blob_range(container, name, offset, chunk_size, etag.as_deref())
            .await?
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::BlobNotFound,
                    format!("the blob {name:?} in {container:?} does not exist (or was deleted while read)"),
                )
            })?;
        let next = offset + chunk.data.len() as u64;
        let done = chunk.data.is_empty() || next >= chunk.properties.size;
        if offset > 0 && chunk.data.is_empty() {
            return Ok(None);
        }
        let version = Some(chunk.properties.etag.clone());
        Ok(Some((chunk, (next, version, done))))
    })
}
