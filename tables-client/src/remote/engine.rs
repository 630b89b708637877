//! `RemoteEngine`: the [`Engine`] trait over the Table service's REST protocol.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use reqwest::Method;
use tables_core::key::validate_table_name;
use tables_core::odata::{self, batch, header, path};
use tables_core::{
    validate_batch, ContinuationToken, DynamicEntity, ETag, Engine, EngineCapabilities, EntityKey,
    Error, ErrorKind, Filter, FilterDialect, ListTablesOptions, Page, QuerySpec, Result,
    ServiceKind, TablePage, WriteMode, WriteOp, WriteOutcome,
};
use tracing::Instrument;

use super::builder::{transport_setters, TransportConfig};
use super::connection::ConnectionString;
use super::credential::Credential;
use super::diagnose::Needs;
use super::sas::TableSasPermissions;
use super::transport::{Request, Response, Service, Transport, JSON};
use tables_core::auth::SasKeyRange;

/// The Table service over HTTPS: Azure Storage, the Cosmos DB Table API, or Azurite.
///
/// Built from a connection string ([`RemoteEngine::from_connection_string`]) or a
/// [`RemoteEngineBuilder`]. Every call validates its input with `tables-core`'s rules
/// before anything is sent, signs the request (SharedKey, SharedKeyLite, a SAS token or
/// a bearer token), retries transient failures under a [`RetryPolicy`](super::RetryPolicy), and reports
/// the service's answers with the same [`ErrorKind`]s as the in-memory engine.
/// Clones share one connection pool.
///
/// ```
/// use tables_client::remote::RemoteEngine;
///
/// let engine = RemoteEngine::from_connection_string("UseDevelopmentStorage=true")?;
/// assert_eq!(engine.account(), "devstoreaccount1");
/// assert_eq!(engine.endpoint(), "http://127.0.0.1:10002/devstoreaccount1");
/// // Secrets never show up in Debug output.
/// assert!(!format!("{engine:?}").contains("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq"));
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Clone)]
pub struct RemoteEngine {
    inner: Arc<Inner>,
}

struct Inner {
    transport: Transport,
    guard: Option<SasKeyRange>,
    capabilities: EngineCapabilities,
}

impl fmt::Debug for RemoteEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transport = &self.inner.transport;
        f.debug_struct("RemoteEngine")
            .field("endpoint", &transport.endpoint.base())
            .field("account", &transport.endpoint.account())
            .field("credential", &transport.credential)
            .field("retry", &transport.retry)
            .field("request_timeout", &transport.request_timeout)
            .finish()
    }
}

/// Builds a [`RemoteEngine`].
///
/// ```
/// use std::time::Duration;
/// use tables_client::remote::{AccountKey, Credential, RemoteEngine, RetryPolicy};
///
/// let key = AccountKey::new(
///     "devstoreaccount1",
///     "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
/// )?;
/// let engine = RemoteEngine::builder("http://127.0.0.1:10002/devstoreaccount1")
///     .credential(Credential::SharedKey(key))
///     .retry_policy(RetryPolicy::default().with_max_retries(2))
///     .request_timeout(Duration::from_secs(10))
///     .build()?;
/// assert_eq!(engine.account(), "devstoreaccount1");
/// # Ok::<(), tables_client::Error>(())
/// ```
#[derive(Debug)]
pub struct RemoteEngineBuilder {
    config: TransportConfig,
    service: Option<ServiceKind>,
}

impl RemoteEngine {
    /// A builder for the account at `endpoint`: `https://{account}.table.core.windows.net`
    /// (host-style) or `http://127.0.0.1:10002/{account}` (path-style, for emulators and
    /// IP endpoints).
    pub fn builder(endpoint: impl Into<String>) -> RemoteEngineBuilder {
        RemoteEngineBuilder {
            config: TransportConfig::new(endpoint.into()),
            service: None,
        }
    }

    /// A builder preset from a connection string (endpoint, account and credential),
    /// for changing the retry policy or timeouts before building.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for a malformed connection string (the message
    /// lists the accepted forms and never repeats a key or signature).
    pub fn builder_from_connection_string(connection_string: &str) -> Result<RemoteEngineBuilder> {
        Ok(RemoteEngine::builder_from(&ConnectionString::parse(
            connection_string,
        )?))
    }

    /// A builder preset from a parsed connection string (endpoint, account and
    /// credential).
    ///
    /// ```
    /// use tables_client::remote::{ConnectionString, RemoteEngine};
    ///
    /// let parsed: ConnectionString = "UseDevelopmentStorage=true".parse()?;
    /// let engine = RemoteEngine::builder_from(&parsed).build()?;
    /// assert_eq!(engine.endpoint(), parsed.endpoint());
    /// # Ok::<(), tables_client::Error>(())
    /// ```
    pub fn builder_from(parsed: &ConnectionString) -> RemoteEngineBuilder {
        RemoteEngineBuilder {
            service: None,
            config: TransportConfig::from_connection_string(parsed.endpoint(), parsed),
        }
    }

    /// An engine for the account a connection string names:
    /// `UseDevelopmentStorage=true`; `DefaultEndpointsProtocol=https;AccountName=..;AccountKey=..[;EndpointSuffix=..]`;
    /// any of those with `TableEndpoint=..`; or `TableEndpoint=..;SharedAccessSignature=..`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for a malformed connection string or endpoint (plain
    /// HTTP is accepted only for loopback hosts and the development storage).
    pub fn from_connection_string(connection_string: &str) -> Result<RemoteEngine> {
        RemoteEngine::builder_from_connection_string(connection_string)?.build()
    }

    /// The account URL requests go to, without a trailing slash.
    pub fn endpoint(&self) -> &str {
        self.inner.transport.endpoint.base()
    }

    /// The storage account name.
    pub fn account(&self) -> &str {
        self.inner.transport.endpoint.account()
    }

    fn transport(&self) -> &Transport {
        &self.inner.transport
    }

    /// How the server compares values of different types, for a filter whose text
    /// depends on it (one with typed comparisons): the Table service's rule on Azure
    /// and Cosmos hosts; elsewhere (an emulator) what its answers' `Server` header
    /// says, asked once with a one-row table listing if nothing has answered yet.
    async fn filter_dialect(&self, filter: Option<&Filter>) -> FilterDialect {
        let transport = self.transport();
        if !filter.is_some_and(Filter::has_read_comparisons) || transport.endpoint.is_service() {
            return FilterDialect::Typed;
        }
        if let Some(dialect) = transport.server.dialect() {
            return dialect;
        }
        let mut probe = Request::new(Method::GET, path::TABLES.to_owned());
        probe.query = "$top=1".to_owned();
        let op = Op::new("QueryTables", "Tables").needs(Needs::TableLevel);
        // Any answer names the server, an error answer too.
        let _ = self.send(op, probe).await;
        transport.server.dialect().unwrap_or_default()
    }

    /// Sends one page of a query (its spec checked, narrowed to a SAS's key range,
    /// its filter in the server's dialect) and returns the answer undecoded.
    async fn query_response(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation_token: Option<&ContinuationToken>,
    ) -> Result<Response> {
        validate_table_name(table)?;
        spec.validate()?;
        let plan = tables_core::QueryPlan::of(spec.filter.as_ref());
        let narrowed = match &self.inner.guard {
            Some(guard) => {
                guard.check_query(&plan)?;
                guard.narrow(spec, &plan)
            }
            None => None,
        };
        let spec = narrowed.as_ref().unwrap_or(spec);
        let select = spec.select.as_deref().map(select_with_system);
        // Typed comparisons in the form the server evaluates exactly.
        let filter = match self.filter_dialect(spec.filter.as_ref()).await {
            FilterDialect::Typed => None,
            dialect => spec.filter.as_ref().map(|f| f.expand(dialect)),
        };
        let mut req = Request::new(Method::GET, path::entities_path(table));
        req.query = odata::entity_query_string(
            filter.as_ref().or(spec.filter.as_ref()),
            select.as_deref(),
            spec.top,
            continuation_token,
        );
        let op = Op::new("QueryEntities", table).partition(plan.partition_key().unwrap_or(""));
        self.send(op, req).await
    }

    /// Sends a request inside a span that follows OpenTelemetry's database client
    /// conventions. A missing table is named in the error.
    async fn send(&self, op: Op<'_>, mut request: Request) -> Result<Response> {
        request.operation = op.name;
        op.table.clone_into(&mut request.table);
        request.needs = op.needs;
        let endpoint = &self.transport().endpoint;
        let span = tracing::info_span!(
            "tables.request",
            otel.kind = "client",
            db.system.name = "azure.table",
            db.namespace = endpoint.account(),
            db.collection.name = op.table,
            db.operation.name = op.name,
            tables.partition_key = op.partition_key,
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
            .transport()
            .send(&request)
            .instrument(span.clone())
            .await;
        if let Err(error) = &outcome {
            span.record("error.type", tracing::field::debug(error.kind()));
        }
        outcome.map_err(|e| name_missing_table(e, op.table))
    }

    fn check_key(&self, key: &EntityKey) -> Result<()> {
        self.inner.capabilities.check_key(key)?;
        match &self.inner.guard {
            Some(guard) => guard.check_key(key),
            None => Ok(()),
        }
    }
}

transport_setters!(RemoteEngineBuilder);

impl RemoteEngineBuilder {
    /// The service the endpoint is, when its host doesn't say: an emulator that
    /// plays Cosmos DB for Table (`tables-server --profile cosmos`, the Cosmos DB
    /// emulator). Hosts `*.table.cosmos.azure.com` and `*.table.cosmosdb.azure.com`
    /// are Cosmos DB for Table without it, and every other host Azure Storage's
    /// Table service. The engine's [`Engine::capabilities`] follow from it, and with
    /// them what the typed client does about unordered results and the stricter
    /// limits.
    ///
    /// ```
    /// use tables_client::remote::RemoteEngine;
    /// use tables_client::{Engine, ServiceKind};
    ///
    /// let engine = RemoteEngine::builder("http://127.0.0.1:10002/devstoreaccount1")
    ///     .service(ServiceKind::CosmosTable)
    ///     .build()?;
    /// assert!(!engine.capabilities().ordered_results);
    /// # Ok::<(), tables_client::Error>(())
    /// ```
    pub fn service(mut self, service: ServiceKind) -> RemoteEngineBuilder {
        self.service = Some(service);
        self
    }

    /// Builds the engine.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an endpoint that is not a URL, has no account,
    /// or uses plain HTTP to a non-loopback host without [`RemoteEngineBuilder::allow_http`];
    /// [`ErrorKind::Transport`] if the HTTP client cannot be set up.
    pub fn build(self) -> Result<RemoteEngine> {
        let guard = match &self.config.credential {
            Credential::Sas(token) => SasKeyRange::from_sas(token),
            _ => None,
        };
        let transport = self.config.build(Service::Table)?;
        let service = self.service.unwrap_or(if transport.endpoint.is_cosmos() {
            ServiceKind::CosmosTable
        } else {
            ServiceKind::AzureStorage
        });
        Ok(RemoteEngine {
            inner: Arc::new(Inner {
                transport,
                guard,
                capabilities: EngineCapabilities::of(service),
            }),
        })
    }
}

/// What a request is, for its span and its errors.
#[derive(Clone, Copy)]
struct Op<'a> {
    name: &'static str,
    table: &'a str,
    partition_key: &'a str,
    /// What it needs from a SAS (reading, unless set).
    needs: Needs,
}

impl<'a> Op<'a> {
    fn new(name: &'static str, table: &'a str) -> Op<'a> {
        Op {
            name,
            table,
            partition_key: "",
            needs: Needs::READ,
        }
    }

    fn partition(mut self, partition_key: &'a str) -> Op<'a> {
        self.partition_key = partition_key;
        self
    }

    fn needs(mut self, needs: Needs) -> Op<'a> {
        self.needs = needs;
        self
    }
}

/// The SAS permissions a write needs: `a` to insert, `u` to replace or merge, both
/// for an upsert, `d` to delete (docs/protocol.md §3.3).
fn write_needs(op: &WriteOp) -> TableSasPermissions {
    let (add, update, delete) = match op {
        WriteOp::Insert(_) => (true, false, false),
        WriteOp::Replace { .. } | WriteOp::Merge { .. } => (false, true, false),
        WriteOp::UpsertReplace(_) | WriteOp::UpsertMerge(_) => (true, true, false),
        WriteOp::Delete { .. } => (false, false, true),
    };
    TableSasPermissions {
        read: false,
        add,
        update,
        delete,
    }
}

/// The service's `TableNotFound` does not say which table; the request does.
fn name_missing_table(error: Error, table: &str) -> Error {
    if error.kind() != ErrorKind::TableNotFound || error.table().is_some() {
        return error;
    }
    let said = error.message();
    // The advice once: a server that gives it already (tables-server) is quoted as is.
    let message = if said.contains("create_table") {
        format!("the table {table:?} does not exist (the service said: {said})")
    } else {
        format!(
            "the table {table:?} does not exist (the service said: {said}); create it first \
             with create_table"
        )
    };
    error.with_message(message).with_table(table)
}

/// A MERGE request: the MERGE verb, or on the Cosmos DB Table API a POST tunnelling
/// it through `X-HTTP-Method`, as the official SDKs send it there.
fn merge_request(cosmos: bool, path: String) -> Request {
    if cosmos {
        let mut req = Request::new(Method::POST, path);
        req.tunnelled_method = Some("MERGE");
        return req;
    }
    // "MERGE" is a valid token, so this cannot fail; fall back on PATCH, which the
    // service treats the same way, rather than panic.
    Request::new(Method::from_bytes(b"MERGE").unwrap_or(Method::PATCH), path)
}

/// The outcome of a single write from its answer: the ETag header, and the
/// timestamp the ETag encodes (or, for a 201 with a body, the body's).
fn write_outcome(response: &Response) -> WriteOutcome {
    let etag = response.header(header::ETAG).map(ETag::new);
    let mut timestamp = etag.as_ref().and_then(ETag::timestamp);
    if timestamp.is_none() && !response.body.is_empty() {
        // The write was applied: a body that cannot be read only costs the timestamp,
        // never the success (a retried insert would conflict).
        timestamp = odata::decode_entity(&response.body)
            .ok()
            .and_then(|e| e.timestamp);
    }
    let mut outcome = WriteOutcome::new(etag, timestamp);
    outcome.attempts = response.attempts;
    outcome
}

/// `$select` as sent: the caller's properties plus the keys and Timestamp, which the
/// engine contract always returns.
fn select_with_system(select: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(select.len() + 3);
    for system in ["PartitionKey", "RowKey", "Timestamp"] {
        if !select.iter().any(|s| s == system) {
            out.push(system.to_owned());
        }
    }
    out.extend(select.iter().cloned());
    out
}

/// The next-page token of an entity query.
fn continuation(response: &Response) -> Option<ContinuationToken> {
    odata::continuation::entity_token_from_headers(|name| response.header(name))
}

#[async_trait::async_trait]
impl Engine for RemoteEngine {
    fn capabilities(&self) -> EngineCapabilities {
        self.inner.capabilities
    }

    async fn create_table(&self, table: &str) -> Result<()> {
        validate_table_name(table)?;
        let mut req = Request::new(Method::POST, path::TABLES.to_owned());
        req.content_type = Some(Cow::Borrowed(JSON));
        req.prefer_no_content = true;
        req.body = Some(Bytes::from(odata::create_table_body(table)));
        let op = Op::new("CreateTable", table).needs(Needs::TableLevel);
        self.send(op, req).await?;
        Ok(())
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        validate_table_name(table)?;
        let req = Request::new(Method::DELETE, odata::table_resource_path(table));
        let op = Op::new("DeleteTable", table).needs(Needs::TableLevel);
        match self.send(op, req).await {
            Ok(_) => Ok(()),
            // The service answers a missing table with 404 ResourceNotFound here.
            Err(e) if e.status() == Some(404) => Err(name_missing_table(
                e.with_kind(ErrorKind::TableNotFound),
                table,
            )),
            Err(e) => Err(e),
        }
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        options.validate()?;
        let mut req = Request::new(Method::GET, path::TABLES.to_owned());
        req.query = odata::table_query_string(options);
        let op = Op::new("QueryTables", "Tables").needs(Needs::TableLevel);
        let response = self.send(op, req).await?;
        let names = odata::decode_table_names(&response.body)?;
        let continuation =
            odata::continuation::table_token_from_headers(|name| response.header(name));
        Ok(TablePage {
            names,
            continuation,
        })
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        validate_table_name(table)?;
        self.check_key(key)?;
        let select = match select {
            Some(select) => {
                tables_core::validate_select(select)?;
                Some(select_with_system(select))
            }
            None => None,
        };
        let mut req = Request::new(Method::GET, odata::entity_path(table, key));
        req.query = odata::entity_query_string(None, select.as_deref(), None, None);
        let op = Op::new("GetEntity", table).partition(&key.partition_key);
        match self.send(op, req).await {
            Ok(response) => Ok(Some(odata::decode_entity(&response.body)?)),
            Err(e) if e.kind() == ErrorKind::EntityNotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation_token: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        let response = self.query_response(table, spec, continuation_token).await?;
        let items = odata::decode_entity_page(&response.body)?;
        Ok(Page {
            items,
            continuation: continuation(&response),
        })
    }

    async fn query_json(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation_token: Option<&ContinuationToken>,
    ) -> Result<Option<tables_core::JsonPage>> {
        let response = self.query_response(table, spec, continuation_token).await?;
        let next = continuation(&response);
        // The body's own buffer when nothing else holds it (no copy of the page).
        Ok(Some(tables_core::JsonPage::new(
            Vec::from(response.body),
            next,
        )))
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        validate_table_name(table)?;
        tables_core::sealed::refuse_sealed(op.entity())?;
        op.validate()?;
        let key = op.key();
        self.check_key(&key)?;
        let cosmos = self.inner.capabilities.service == ServiceKind::CosmosTable;
        let (method, path) = path::write_target(table, op);
        let mut req = match method {
            "MERGE" => merge_request(cosmos, path),
            "PUT" => Request::new(Method::PUT, path),
            "DELETE" => Request::new(Method::DELETE, path),
            _ => Request::new(Method::POST, path),
        };
        req.prefer_no_content = op.mode() == WriteMode::Insert;
        let name = path::operation_name(op.mode());
        req.if_match = op.if_match().map(|m| m.header_value().to_owned());
        req.replay_safe = op.is_replay_safe();
        if let Some(entity) = op.entity() {
            let mut body = Vec::with_capacity(256);
            odata::encode_entity(entity, &mut body);
            req.content_type = Some(Cow::Borrowed(JSON));
            req.body = Some(Bytes::from(body));
        }
        let span_op = Op::new(name, table)
            .partition(&key.partition_key)
            .needs(Needs::Entities(write_needs(op)));
        let response = self
            .send(span_op, req)
            .await
            .map_err(|e| e.with_entity_key(key.clone()))?;
        Ok(write_outcome(&response))
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        validate_table_name(table)?;
        tables_core::sealed::refuse_sealed(ops.iter().filter_map(WriteOp::entity))?;
        validate_batch(ops)?;
        for (index, op) in ops.iter().enumerate() {
            self.check_key(&op.key())
                .map_err(|e| e.with_batch_index(index))?;
        }
        let batch_id = uuid::Uuid::new_v4().to_string();
        let changeset_id = uuid::Uuid::new_v4().to_string();
        let encoded = batch::encode_batch(
            self.transport().endpoint.base(),
            table,
            ops,
            &batch_id,
            &changeset_id,
        );
        self.inner
            .capabilities
            .check_batch_bytes(encoded.body.len())?;
        let mut req = Request::new(Method::POST, path::BATCH.to_owned());
        req.content_type = Some(Cow::Owned(encoded.content_type));
        req.body = Some(Bytes::from(encoded.body));
        // Atomic: a second delivery fails as a whole if any operation would.
        req.replay_safe = ops.iter().any(WriteOp::is_replay_safe);
        let partition = ops.first().map_or("", WriteOp::partition_key);
        let needs = ops
            .iter()
            .map(write_needs)
            .fold(TableSasPermissions::default(), |all, one| {
                TableSasPermissions {
                    read: all.read || one.read,
                    add: all.add || one.add,
                    update: all.update || one.update,
                    delete: all.delete || one.delete,
                }
            });
        let op = Op::new("ExecuteBatch", table)
            .partition(partition)
            .needs(Needs::Entities(needs));
        let response = self.send(op, req).await?;
        let content_type = response.header(header::CONTENT_TYPE).unwrap_or_default();
        let mut outcomes = batch::parse_batch_response(content_type, &response.body, ops.len())
            .map_err(|e| {
                let e = name_missing_table(e, table).with_attempts(response.attempts);
                if response.may_have_applied {
                    e.with_may_have_applied()
                } else {
                    e
                }
            })?;
        for outcome in &mut outcomes {
            outcome.attempts = response.attempts;
        }
        Ok(outcomes)
    }
}
