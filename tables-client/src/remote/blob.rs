//! `RemoteBlobStore`: the [`BlobStore`] seam over the Blob service's REST API, for
//! Azure Storage and Azurite.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use reqwest::header::{
    HeaderName, HeaderValue, CONTENT_LENGTH, ETAG, IF_NONE_MATCH, LAST_MODIFIED,
};
use reqwest::Method;
use tables_core::blob::wire::{
    blob_path, block_id, block_list_body, container_path, list_blobs_query, parse_blob_list,
    parse_content_range, parse_http_date, range_header,
};
use tables_core::blob::{validate_blob_address, validate_container_name};
use tables_core::{
    BlobCondition, BlobData, BlobPage, BlobProperties, BlobStore, Error, ErrorKind,
    ListBlobsOptions, Result,
};
use tracing::Instrument;

use super::builder::{transport_setters, TransportConfig};
use super::connection::ConnectionString;
use super::diagnose::Needs;
use super::transport::{Request, Response, Service, Transport};

/// The largest blob [`RemoteBlobStore`] writes in one request by default; larger ones
/// go up in blocks.
pub const DEFAULT_SINGLE_PUT_LIMIT: usize = 4 * 1024 * 1024;
/// The block size of a blob written in blocks, by default.
pub const DEFAULT_BLOCK_SIZE: usize = 4 * 1024 * 1024;
/// The service's largest block (4,000 MiB).
const MAX_BLOCK_SIZE: usize = 4000 * 1024 * 1024;
/// The service's largest single Put Blob (5,000 MiB).
const MAX_SINGLE_PUT: usize = 5000 * 1024 * 1024;
/// The most blocks one blob may have.
const MAX_BLOCKS: usize = 50_000;
/// Blocks of one blob in flight at once.
const BLOCKS_IN_FLIGHT: usize = 4;

static X_MS_BLOB_TYPE: HeaderName = HeaderName::from_static("x-ms-blob-type");
static X_MS_RANGE: HeaderName = HeaderName::from_static("x-ms-range");

/// The Blob service of a storage account, over HTTPS: the blob companion of a
/// [`RemoteEngine`](super::RemoteEngine), for the design guide's patterns that store
/// large values beside the table.
///
/// Built from the same connection string as the engine
/// ([`RemoteBlobStore::from_connection_string`]: `BlobEndpoint`, the account's
/// `https://{account}.blob.{suffix}`, or the development storage's port 10000) or with
/// a [`RemoteBlobStoreBuilder`]. It signs with the account key (the Blob service's
/// SharedKey, which covers every `x-ms-` header and the query; a key given as
/// SharedKeyLite signs the same way), an account or container SAS
/// ([`ContainerSasBuilder`](super::ContainerSasBuilder)), or a bearer token; it retries transient failures under the same
/// [`RetryPolicy`](super::RetryPolicy) as the engine, and a write that may have applied
/// says so ([`Error::may_have_applied`]). Blobs up to
/// [`RemoteBlobStoreBuilder::single_put_limit`] go up in one request; larger ones in
/// blocks under a per-upload id, committed by one Put Block List under the write's
/// condition, so a reader never sees a half-written blob and two uploads to one name
/// never mix their blocks.
///
/// ```
/// use tables_client::remote::RemoteBlobStore;
///
/// let store = RemoteBlobStore::from_connection_string("UseDevelopmentStorage=true")?;
/// assert_eq!(store.endpoint(), "http://127.0.0.1:10000/devstoreaccount1");
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Clone)]
pub struct RemoteBlobStore {
    inner: Arc<Inner>,
}

struct Inner {
    transport: Transport,
    single_put_limit: usize,
    block_size: usize,
}

impl fmt::Debug for RemoteBlobStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transport = &self.inner.transport;
        f.debug_struct("RemoteBlobStore")
            .field("endpoint", &transport.endpoint.base())
            .field("account", &transport.endpoint.account())
            .field("credential", &transport.credential)
            .field("retry", &transport.retry)
            .field("request_timeout", &transport.request_timeout)
            .field("single_put_limit", &self.inner.single_put_limit)
            .field("block_size", &self.inner.block_size)
            .finish()
    }
}

/// Builds a [`RemoteBlobStore`].
///
/// ```
/// use tables_client::remote::{AccountKey, Credential, RemoteBlobStore, DEVELOPMENT_ACCOUNT_KEY};
///
/// let key = AccountKey::new("devstoreaccount1", DEVELOPMENT_ACCOUNT_KEY)?;
/// let store = RemoteBlobStore::builder("http://127.0.0.1:10000/devstoreaccount1")
///     .credential(Credential::SharedKey(key))
///     .single_put_limit(1024 * 1024)
///     .block_size(1024 * 1024)
///     .build()?;
/// assert_eq!(store.account(), "devstoreaccount1");
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug)]
pub struct RemoteBlobStoreBuilder {
    config: TransportConfig,
    single_put_limit: usize,
    block_size: usize,
}

impl RemoteBlobStore {
    /// A builder for the account's blob endpoint: `https://{account}.blob.core.windows.net`
    /// (host-style) or `http://127.0.0.1:10000/{account}` (path-style, for emulators).
    pub fn builder(endpoint: impl Into<String>) -> RemoteBlobStoreBuilder {
        RemoteBlobStoreBuilder::with_config(TransportConfig::new(endpoint.into()))
    }

    /// A builder preset from a parsed connection string: its blob endpoint, account
    /// and credential.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] when the connection string names no blob endpoint
    /// (a `TableEndpoint` without `AccountName` or `BlobEndpoint`).
    pub fn builder_from(parsed: &ConnectionString) -> Result<RemoteBlobStoreBuilder> {
        let Some(endpoint) = parsed.blob_endpoint() else {
            return Err(Error::local(
                ErrorKind::InvalidInput,
                "the connection string names no blob endpoint: add BlobEndpoint=.. (or \
                 AccountName=.., for the account's Azure endpoint)",
            ));
        };
        Ok(RemoteBlobStoreBuilder::with_config(
            TransportConfig::from_connection_string(endpoint, parsed),
        ))
    }

    /// The blob store of the account a connection string names (see
    /// [`ConnectionString`] for the forms and how the blob endpoint is found).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for a malformed connection string or one without a
    /// blob endpoint.
    pub fn from_connection_string(connection_string: &str) -> Result<RemoteBlobStore> {
        RemoteBlobStore::builder_from(&ConnectionString::parse(connection_string)?)?.build()
    }

    /// The account's blob URL requests go to, without a trailing slash.
    pub fn endpoint(&self) -> &str {
        self.inner.transport.endpoint.base()
    }

    /// The storage account name.
    pub fn account(&self) -> &str {
        self.inner.transport.endpoint.account()
    }

    /// Sends a request inside a `tables.blob_request` span.
    async fn send(
        &self,
        operation: &'static str,
        container: &str,
        mut request: Request,
    ) -> Result<Response> {
        request.operation = operation;
        request.needs = Needs::Blob;
        let endpoint = &self.inner.transport.endpoint;
        let span = tracing::info_span!(
            "tables.blob_request",
            otel.kind = "client",
            az.namespace = "Microsoft.Storage",
            tables.container = container,
            tables.operation = operation,
            server.address = endpoint.host(),
            server.port = endpoint.port(),
            http.request.method = request.method.as_str(),
            http.request.body.size = request.body.as_ref().map_or(0, Bytes::len),
            http.response.status_code = tracing::field::Empty,
            http.request.resend_count = tracing::field::Empty,
            az.service_request_id = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let outcome = self
            .inner
            .transport
            .send(&request)
            .instrument(span.clone())
            .await;
        if let Err(error) = &outcome {
            span.record("error.type", tracing::field::debug(error.kind()));
        }
        outcome
    }

    /// One Put Blob of the whole `data`.
    async fn put_single(
        &self,
        container: &str,
        name: &str,
        data: Bytes,
        condition: &BlobCondition,
    ) -> Result<Response> {
        let mut request = Request::new(Method::PUT, blob_path(container, name));
        request.content_type = Some("application/octet-stream".into());
        request.headers.push((
            X_MS_BLOB_TYPE.clone(),
            HeaderValue::from_static("BlockBlob"),
        ));
        request.body = Some(data);
        apply_condition(&mut request, condition);
        self.send("PutBlob", container, request).await
    }

    /// Put Block for each `block_size` slice of `data` under a fresh upload id, then
    /// one Put Block List under `condition`: the blob appears whole or not at all.
    async fn put_blocks(
        &self,
        container: &str,
        name: &str,
        data: Bytes,
        condition: &BlobCondition,
    ) -> Result<Response> {
        let block_size = self.inner.block_size;
        let count = data.len().div_ceil(block_size);
        if count > MAX_BLOCKS {
            return Err(Error::local(
                ErrorKind::RequestTooLarge,
                format!(
                    "a blob of {} bytes needs {count} blocks of {block_size} bytes; the service \
                     allows {MAX_BLOCKS}: raise RemoteBlobStoreBuilder::block_size",
                    data.len()
                ),
            ));
        }
        let upload = fastrand::u128(..);
        let ids: Vec<String> = (0..count).map(|index| block_id(upload, index)).collect();
        let path = blob_path(container, name);
        let blocks: Vec<Request> = ids
            .iter()
            .enumerate()
            .map(|(index, id)| {
                let start = index * block_size;
                let end = (start + block_size).min(data.len());
                let mut request = Request::new(Method::PUT, path.clone());
                request.query = format!(
                    "comp=block&blockid={}",
                    percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC)
                );
                request.content_type = Some("application/octet-stream".into());
                request.body = Some(data.slice(start..end));
                // The same block under the same id again changes nothing.
                request.replay_safe = true;
                request
            })
            .collect();
        futures::stream::iter(blocks)
            .map(|request| self.send("PutBlock", container, request))
            .buffer_unordered(BLOCKS_IN_FLIGHT)
            .try_for_each(|_| async { Ok(()) })
            .await?;
        let mut request = Request::new(Method::PUT, path);
        request.query = "comp=blocklist".to_owned();
        request.content_type = Some("application/xml".into());
        request.body = Some(Bytes::from(block_list_body(&ids)));
        apply_condition(&mut request, condition);
        self.send("PutBlockList", container, request).await
    }

    /// A read of no bytes at `offset`: the blob's properties (under `etag`), no data.
    async fn empty_read(
        &self,
        container: &str,
        name: &str,
        offset: u64,
        etag: Option<&str>,
    ) -> Result<Option<BlobData>> {
        let mut request = Request::new(Method::HEAD, blob_path(container, name));
        request.if_match = etag.map(str::to_owned);
        absent_blob(self.send("GetBlobProperties", container, request).await)?
            .map(|r| {
                RemoteBlobStore::properties(name, &r).map(|p| BlobData::new(p, offset, Vec::new()))
            })
            .transpose()
    }

    /// The properties of a blob from an answer's headers; `size` when the answer
    /// does not give the whole size (a range's does, in `Content-Range`).
    fn properties(name: &str, response: &Response) -> Result<BlobProperties> {
        let etag = response
            .header(ETAG.as_str())
            .ok_or_else(|| missing_header("ETag"))?;
        let size = match response
            .header("content-range")
            .and_then(parse_content_range)
        {
            Some((_, _, total)) => total,
            None => response
                .header(CONTENT_LENGTH.as_str())
                .and_then(|v| v.parse().ok())
                .unwrap_or(response.body.len() as u64),
        };
        let properties = BlobProperties::new(name, size, etag);
        Ok(
            match response
                .header(LAST_MODIFIED.as_str())
                .and_then(parse_http_date)
            {
                Some(at) => properties.with_last_modified(at),
                None => properties,
            },
        )
    }
}

/// A success answer without a header the protocol promises.
fn missing_header(name: &str) -> Error {
    Error::new(
        ErrorKind::Decode,
        format!("the blob service's answer has no {name} header"),
    )
}

/// `If-Match` or `If-None-Match: *` for a write's condition; whether a repeated
/// delivery is harmless follows from it.
fn apply_condition(request: &mut Request, condition: &BlobCondition) {
    match condition {
        // Another client's write between two deliveries would be overwritten.
        BlobCondition::Any => request.replay_safe = false,
        BlobCondition::Absent => {
            request
                .headers
                .push((IF_NONE_MATCH, HeaderValue::from_static("*")));
            request.replay_safe = true;
        }
        BlobCondition::Etag(etag) => {
            request.if_match = Some(etag.clone());
            request.replay_safe = true;
        }
    }
}

/// `None` for a missing blob, the error for anything else (a missing container
/// included).
fn absent_blob<T>(outcome: Result<T>) -> Result<Option<T>> {
    match outcome {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.kind() == ErrorKind::BlobNotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[async_trait]
impl BlobStore for RemoteBlobStore {
    async fn create_container(&self, container: &str) -> Result<()> {
        validate_container_name(container)?;
        let mut request = Request::new(Method::PUT, container_path(container));
        request.query = "restype=container".to_owned();
        request.body = Some(Bytes::new());
        self.send("CreateContainer", container, request).await?;
        Ok(())
    }

    async fn delete_container(&self, container: &str) -> Result<()> {
        validate_container_name(container)?;
        let mut request = Request::new(Method::DELETE, container_path(container));
        request.query = "restype=container".to_owned();
        self.send("DeleteContainer", container, request).await?;
        Ok(())
    }

    async fn put_blob(
        &self,
        container: &str,
        name: &str,
        data: Vec<u8>,
        condition: &BlobCondition,
    ) -> Result<BlobProperties> {
        validate_blob_address(container, name)?;
        let size = data.len() as u64;
        let data = Bytes::from(data);
        let response = if data.len() <= self.inner.single_put_limit {
            self.put_single(container, name, data, condition).await?
        } else {
            self.put_blocks(container, name, data, condition).await?
        };
        let etag = response
            .header(ETAG.as_str())
            .ok_or_else(|| missing_header("ETag"))?;
        let properties = BlobProperties::new(name, size, etag);
        Ok(
            match response
                .header(LAST_MODIFIED.as_str())
                .and_then(parse_http_date)
            {
                Some(at) => properties.with_last_modified(at),
                None => properties,
            },
        )
    }

    async fn get_blob(&self, container: &str, name: &str) -> Result<Option<BlobData>> {
        validate_blob_address(container, name)?;
        let request = Request::new(Method::GET, blob_path(container, name));
        let Some(response) = absent_blob(self.send("GetBlob", container, request).await)? else {
            return Ok(None);
        };
        let properties = RemoteBlobStore::properties(name, &response)?;
        Ok(Some(BlobData::new(properties, 0, response.body.to_vec())))
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
        if len == 0 {
            return self.empty_read(container, name, offset, etag).await;
        }
        let mut request = Request::new(Method::GET, blob_path(container, name));
        request.if_match = etag.map(str::to_owned);
        let range = HeaderValue::from_str(&range_header(offset, len))
            .map_err(|_| Error::local(ErrorKind::InvalidInput, "a range that is no header"))?;
        request.headers.push((X_MS_RANGE.clone(), range));
        match self.send("GetBlob", container, request).await {
            Ok(response) => {
                let properties = RemoteBlobStore::properties(name, &response)?;
                let mut data = response.body.to_vec();
                // A server that ignored the range sent the whole blob.
                if response.status == 200 {
                    let start = usize::try_from(offset)
                        .unwrap_or(usize::MAX)
                        .min(data.len());
                    let end = usize::try_from(offset.saturating_add(len))
                        .unwrap_or(usize::MAX)
                        .min(data.len());
                    data = data[start..end].to_vec();
                }
                Ok(Some(BlobData::new(properties, offset, data)))
            }
            // At or past the end (an empty blob has no byte to start at).
            Err(e) if e.status() == Some(416) => {
                self.empty_read(container, name, offset, etag).await
            }
            Err(e) if e.kind() == ErrorKind::BlobNotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn blob_properties(&self, container: &str, name: &str) -> Result<Option<BlobProperties>> {
        validate_blob_address(container, name)?;
        let request = Request::new(Method::HEAD, blob_path(container, name));
        absent_blob(self.send("GetBlobProperties", container, request).await)?
            .map(|response| RemoteBlobStore::properties(name, &response))
            .transpose()
    }

    async fn delete_blob(
        &self,
        container: &str,
        name: &str,
        condition: &BlobCondition,
    ) -> Result<bool> {
        validate_blob_address(container, name)?;
        condition.check_delete()?;
        let mut request = Request::new(Method::DELETE, blob_path(container, name));
        apply_condition(&mut request, condition);
        match self.send("DeleteBlob", container, request).await {
            Ok(_) => Ok(true),
            // Nothing to delete, and no earlier attempt may have deleted it.
            Err(e)
                if e.kind() == ErrorKind::BlobNotFound
                    && *condition == BlobCondition::Any
                    && !e.may_have_applied() =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    async fn list_blobs(&self, container: &str, options: &ListBlobsOptions) -> Result<BlobPage> {
        validate_container_name(container)?;
        options.validate()?;
        let mut request = Request::new(Method::GET, container_path(container));
        request.query = list_blobs_query(options);
        let response = self.send("ListBlobs", container, request).await?;
        parse_blob_list(&response.body)
    }
}

transport_setters!(RemoteBlobStoreBuilder);

impl RemoteBlobStoreBuilder {
    fn with_config(config: TransportConfig) -> RemoteBlobStoreBuilder {
        RemoteBlobStoreBuilder {
            config,
            single_put_limit: DEFAULT_SINGLE_PUT_LIMIT,
            block_size: DEFAULT_BLOCK_SIZE,
        }
    }

    /// Blobs of up to this many bytes go up in one request; larger ones in blocks
    /// (default [`DEFAULT_SINGLE_PUT_LIMIT`]; at most 5,000 MiB).
    #[must_use]
    pub fn single_put_limit(mut self, bytes: usize) -> RemoteBlobStoreBuilder {
        self.single_put_limit = bytes;
        self
    }

    /// The size of each block of a blob written in blocks (default
    /// [`DEFAULT_BLOCK_SIZE`]; 1 byte to 4,000 MiB).
    #[must_use]
    pub fn block_size(mut self, bytes: usize) -> RemoteBlobStoreBuilder {
        self.block_size = bytes;
        self
    }

    /// Builds the store.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an endpoint that is not a URL, has no account,
    /// or uses plain HTTP to a non-loopback host without `allow_http`, or a block size
    /// or single-put limit the service does not accept; [`ErrorKind::Transport`] if the
    /// HTTP client cannot be set up.
    pub fn build(self) -> Result<RemoteBlobStore> {
        if self.block_size == 0 || self.block_size > MAX_BLOCK_SIZE {
            return Err(Error::local(
                ErrorKind::InvalidInput,
                format!(
                    "block_size {} is outside 1..={MAX_BLOCK_SIZE} bytes, the service's block sizes",
                    self.block_size
                ),
            ));
        }
        if self.single_put_limit > MAX_SINGLE_PUT {
            return Err(Error::local(
                ErrorKind::InvalidInput,
                format!(
                    "single_put_limit {} is over {MAX_SINGLE_PUT} bytes, the service's largest \
                     single Put Blob",
                    self.single_put_limit
                ),
            ));
        }
        Ok(RemoteBlobStore {
            inner: Arc::new(Inner {
                transport: self.config.build(Service::Blob)?,
                single_put_limit: self.single_put_limit,
                block_size: self.block_size,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::{AccountKey, Credential, DEVELOPMENT_ACCOUNT_KEY};

    #[test]
    fn builders_check_sizes_and_debug_hides_the_key() {
        let key = AccountKey::new("devstoreaccount1", DEVELOPMENT_ACCOUNT_KEY).unwrap();
        let store = RemoteBlobStore::builder("http://127.0.0.1:10000/devstoreaccount1")
            .credential(Credential::SharedKey(key))
            .build()
            .unwrap();
        let shown = format!("{store:?}");
        assert!(!shown.contains(&DEVELOPMENT_ACCOUNT_KEY[..20]), "{shown}");
        assert!(shown.contains("127.0.0.1:10000"), "{shown}");
        for builder in [
            RemoteBlobStore::builder("http://127.0.0.1:10000/a").block_size(0),
            RemoteBlobStore::builder("http://127.0.0.1:10000/a").block_size(MAX_BLOCK_SIZE + 1),
            RemoteBlobStore::builder("http://127.0.0.1:10000/a")
                .single_put_limit(MAX_SINGLE_PUT + 1),
            RemoteBlobStore::builder("http://example.com/a"),
        ] {
            let err = builder.build().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
        }
        let err = RemoteBlobStore::from_connection_string(
            "TableEndpoint=https://a.table.core.windows.net;SharedAccessSignature=sv=2019-02-02&sig=c2ln",
        )
        .unwrap_err();
        assert!(err.message().contains("BlobEndpoint"), "{err}");
    }
}
