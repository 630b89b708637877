//! From a request to an answer: the account, credentials, the resource, then the
//! operation on the account's engine.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hyper::header;
use tables_core::odata::path::ResourcePath;
use tables_core::odata::response::Metadata;
use tables_core::service::acl::SignedIdentifier;
use tables_core::service::properties::ServiceProperties;
use tables_core::Engine as _;
use tables_mem::MemEngine;

use crate::account::Account;
use crate::auth::{self, Access};
use crate::persist::{Journal, Restored, SnapshotWriter};
use crate::reply::{Failure, Reply};
use crate::request::{Request, Target};
use crate::{batch, cors, entities, service, tables};

/// What the server serves: each account with its own engine.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) accounts: HashMap<String, AccountState>,
    /// The fault rules (none unless asked for).
    pub(crate) faults: std::sync::Arc<crate::faults::Faults>,
    /// Whether `/_faults` answers (`--fault-control`).
    pub(crate) fault_control: bool,
    /// What clients may hold.
    pub(crate) limits: crate::limits::Limits,
    /// The request body bytes held now, against `limits.max_buffered_bytes`.
    pub(crate) budget: Arc<crate::limits::Budget>,
    /// The certificate served over HTTPS (`--cert`, `--key`); `None`: plain HTTP.
    pub(crate) tls: Option<crate::tls::Tls>,
}

/// One account: its keys, its data, its tables' stored access policies and its
/// service properties, and the journal that keeps them when the server has a data
/// directory.
#[derive(Debug)]
pub(crate) struct AccountState {
    pub(crate) account: Account,
    pub(crate) engine: MemEngine,
    /// Each table's stored access policies, by lowercased table name.
    acls: Arc<Mutex<HashMap<String, Vec<SignedIdentifier>>>>,
    properties: Arc<Mutex<ServiceProperties>>,
    pub(crate) journal: Option<Arc<Journal>>,
    /// How bearer tokens are accepted (`--oauth`); `None`: they are refused.
    pub(crate) oauth: Option<Arc<crate::oauth::OAuth>>,
}

impl AccountState {
    /// An account kept in memory only.
    pub(crate) fn new(account: Account, engine: MemEngine) -> AccountState {
        AccountState::restored(account, engine, Restored::default(), None)
    }

    /// An account whose engine, ACLs and properties were restored from its journal.
    pub(crate) fn restored(
        account: Account,
        engine: MemEngine,
        restored: Restored,
        journal: Option<Arc<Journal>>,
    ) -> AccountState {
        AccountState {
            account,
            engine,
            acls: Arc::new(Mutex::new(restored.acls)),
            properties: Arc::new(Mutex::new(restored.properties)),
            journal,
            oauth: None,
        }
    }

    /// Starts the journal, if any, with this account's state as its snapshot source.
    pub(crate) fn start_journal(&self) -> std::io::Result<()> {
        let Some(journal) = &self.journal else {
            return Ok(());
        };
        let (engine, acls, properties) = (
            self.engine.clone(),
            Arc::clone(&self.acls),
            Arc::clone(&self.properties),
        );
        journal.start(Box::new(move |out: &mut SnapshotWriter| {
            out.properties(&properties.lock().unwrap_or_else(PoisonError::into_inner));
            out.engine(&engine);
            let acls = acls.lock().unwrap_or_else(PoisonError::into_inner);
            for (table, identifiers) in acls.iter() {
                out.acl(table, identifiers);
            }
        }))
    }

    /// Sets (or, with none, removes) a table's stored access policies, journaled.
    pub(crate) fn set_acl(&self, table: &str, identifiers: Vec<SignedIdentifier>) {
        let table = table.to_ascii_lowercase();
        let mut acls = self.acls();
        if let Some(journal) = &self.journal {
            journal.record_acl(&table, &identifiers);
        }
        if identifiers.is_empty() {
            acls.remove(&table);
        } else {
            acls.insert(table, identifiers);
        }
    }

    /// Changes the service properties, journaled.
    pub(crate) fn change_properties(&self, change: impl FnOnce(&mut ServiceProperties)) {
        let mut properties = self.properties();
        change(&mut properties);
        if let Some(journal) = &self.journal {
            journal.record_properties(&properties);
        }
    }

    /// Waits until every change journaled so far is on disk (at once without a
    /// data directory).
    async fn settle(&self) -> Result<(), Failure> {
        match &self.journal {
            None => Ok(()),
            Some(journal) => journal
                .settle()
                .await
                .map_err(|why| Failure::new(500, "InternalError", why)),
        }
    }

    /// The tables' stored access policies (a panic elsewhere leaves them usable:
    /// every change is a single assignment).
    pub(crate) fn acls(&self) -> MutexGuard<'_, HashMap<String, Vec<SignedIdentifier>>> {
        self.acls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The service properties.
    pub(crate) fn properties(&self) -> MutexGuard<'_, ServiceProperties> {
        self.properties
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a handler works with: the account's state, the target, and how to answer.
pub(crate) struct Call<'a> {
    pub(crate) account: &'a AccountState,
    pub(crate) target: &'a Target<'a>,
    pub(crate) request: &'a Request,
    /// What the request's credentials allow.
    pub(crate) access: Access,
}

impl Call<'_> {
    /// The metadata level the request asked for: `$format`, else `Accept` (the first
    /// JSON type it lists; none at all means minimal metadata).
    ///
    /// # Errors
    ///
    /// `415 AtomFormatNotSupported` when the request asks for Atom or XML only.
    pub(crate) fn metadata(&self) -> Result<Metadata, Failure> {
        if let Some(format) = self.request.param("$format") {
            return Metadata::from_media_type(format).ok_or_else(|| atom_refused(format));
        }
        let Some(accept) = self.request.header(header::ACCEPT) else {
            return Ok(Metadata::Minimal);
        };
        // The three exact forms (our client and the JS and Python SDKs send
        // Minimal's), known without parsing: parsing took 1.8k instructions a
        // request, 3% of an insert.
        if let Some(level) = Metadata::ALL.into_iter().find(|l| l.media_type() == accept) {
            return Ok(level);
        }
        let mut refused = None;
        for range in accept.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            let essence = range.split(';').next().unwrap_or_default().trim();
            if essence == "*/*" || essence.eq_ignore_ascii_case("application/*") {
                return Ok(Metadata::Minimal);
            }
            match Metadata::from_media_type(range) {
                Some(level) => return Ok(level),
                None => refused = Some(range),
            }
        }
        match refused {
            Some(range) if range.contains("xml") || range.contains("atom") => {
                Err(atom_refused(range))
            }
            _ => Ok(Metadata::Minimal),
        }
    }
}

fn atom_refused(asked: &str) -> Failure {
    Failure::new(
        415,
        "AtomFormatNotSupported",
        format!(
            "the request asks for {asked:?}; the Table service (since version 2015-12-11) and \
             this server answer JSON only: send Accept: application/json;odata=minimalmetadata \
             (or nometadata, fullmetadata)"
        ),
    )
}

/// Answers one request.
pub(crate) async fn handle(state: &State, request: &Request) -> Result<Reply, Failure> {
    let target = request
        .target(|name| state.accounts.contains_key(name))
        .ok_or_else(|| Failure::new(400, "InvalidUri", "the request has no path"))?;
    let account = state.accounts.get(target.account).ok_or_else(|| {
        let mut known: Vec<&str> = state.accounts.keys().map(String::as_str).collect();
        known.sort_unstable();
        Failure::new(
            400,
            "InvalidUri",
            format!(
                "this server has no account {:?} (it serves {}): address it as \
                 http://host:port/<account>/..., or start the server with --account {}:<key>",
                target.account,
                known.join(", "),
                target.account
            ),
        )
    })?;
    let resource = ResourcePath::parse(target.resource).ok_or_else(|| {
        Failure::new(
            400,
            "InvalidUri",
            format!(
                "{:?} is not a resource of the Table service: expected Tables, \
                 Tables('<table>'), <table>(), <table>(PartitionKey='..',RowKey='..') or $batch",
                target.resource
            ),
        )
    })?;
    let method = request.method.as_str();
    let capabilities = account.engine.capabilities();
    if let Some(refused) = not_offered(&capabilities, &resource, request) {
        return Err(refused);
    }
    if method == "OPTIONS" {
        // A browser's CORS preflight carries no credentials.
        return cors::preflight(account, request);
    }
    let access = auth::authenticate(request, account)?;
    let call = Call {
        account,
        target: &target,
        request,
        access,
    };
    let answer = route(&call, &resource).await;
    // Answer only once everything journaled before the answer is durable: the
    // request's own change, and any change it read.
    account.settle().await?;
    answer
}

/// What the service the account plays does not offer: Cosmos DB for Table serves
/// no service properties, statistics, CORS preflight or table ACLs (its FAQ), and
/// answers them `405 MethodNotAllowed` (recorded for Set Table Service Properties
/// in the official Python SDK's Cosmos test recordings; the same answer is assumed
/// for the others, docs/service-behaviour.md).
fn not_offered(
    capabilities: &tables_core::EngineCapabilities,
    resource: &ResourcePath,
    request: &Request,
) -> Option<Failure> {
    let comp = request.param("comp");
    let service_call = request.param("restype") == Some("service");
    let what = match resource {
        _ if request.method.as_str() == "OPTIONS" && !capabilities.cors => "CORS preflight",
        ResourcePath::Service if service_call && comp == Some("properties") => {
            (!capabilities.service_properties).then_some("Table service properties")?
        }
        ResourcePath::Service if service_call && comp == Some("stats") => {
            (!capabilities.service_stats).then_some("Table service statistics")?
        }
        ResourcePath::Entities(_) if comp == Some("acl") => {
            (!capabilities.table_acls).then_some("table ACLs")?
        }
        _ => return None,
    };
    Some(Failure::new(
        405,
        tables_core::error_code::METHOD_NOT_ALLOWED,
        format!(
            "The requested operation is not supported. ({what} are not offered by {}, the \
             service this server plays)",
            capabilities.service
        ),
    ))
}

async fn route(call: &Call<'_>, resource: &ResourcePath) -> Result<Reply, Failure> {
    let (request, method) = (call.request, call.request.method.as_str());
    let comp = request.param("comp");
    let service_call = request.param("restype") == Some("service");
    match (resource, method) {
        (ResourcePath::Service, "GET") if service_call && comp == Some("properties") => {
            service::get_properties(call)
        }
        (ResourcePath::Service, "PUT") if service_call && comp == Some("properties") => {
            service::set_properties(call)
        }
        (ResourcePath::Service, "GET") if service_call && comp == Some("stats") => {
            service::stats(call)
        }
        (ResourcePath::Entities(table), "GET" | "HEAD") if comp == Some("acl") => {
            service::get_acl(call, table).await
        }
        (ResourcePath::Entities(table), "PUT") if comp == Some("acl") => {
            service::set_acl(call, table).await
        }
        (ResourcePath::Tables, "GET") => tables::query(call).await,
        (ResourcePath::Tables, "POST") => tables::create(call).await,
        (ResourcePath::Table(name), "GET") => tables::get(call, name).await,
        (ResourcePath::Table(name), "DELETE") => tables::delete(call, name).await,
        (ResourcePath::Entities(table), "GET") => entities::query(call, table).await,
        (ResourcePath::Entities(table), "POST") => entities::insert(call, table).await,
        (ResourcePath::Entity(table, key), "GET") => entities::get(call, table, key).await,
        (ResourcePath::Entity(table, key), "PUT" | "MERGE" | "PATCH" | "DELETE") => {
            entities::write(call, table, key).await
        }
        (ResourcePath::Batch, "POST") => batch::submit(call).await,
        (_, method) => Err(Failure::new(
            405,
            "UnsupportedHttpVerb",
            format!(
                "{method} is not supported on {:?}; see the Table service REST reference for \
                 the operations on each resource",
                call.target.resource
            ),
        )),
    }
}
