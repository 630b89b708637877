//! The blob companion of a table: the [`BlobStore`] seam and its types (from
//! `tables-core`), and reading a blob as a stream of chunks ([`blob_chunks`]).
//!
//! Stores: the in-memory `tables_client::mem::MemBlobStore` (feature `mem`) and the
//! Blob service's [`RemoteBlobStore`](crate::remote::RemoteBlobStore).

mod stream;

pub use stream::blob_chunks;
pub use tables_core::blob::*;
