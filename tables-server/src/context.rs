//! What every request handler works with: the server's accounts and their state
//! (keys, engine, stored access policies, service properties, journal), and the
//! call being answered. The dispatcher (`handle`) and the handlers (`tables`,
//! `entities`, `batch`, `service`, `cors`, ...) both depend on this module, never
//! on each other's internals.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hyper::header;
use tables_core::odata::response::Metadata;
use tables_core::service::acl::SignedIdentifier;
use tables_core::service::properties::ServiceProperties;
use tables_mem::MemEngine;

use crate::access::Access;
use crate::account::Account;
use crate::persist::{Journal, Restored, SnapshotWriter};
use crate::reply::Failure;
use crate::request::{Request, Target};

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
    pub(crate) async fn settle(&self) -> Result<(), Failure> {
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
        negotiate(
            self.request.param("$format"),
            self.request.header(header::ACCEPT),
        )
    }
}

/// The JSON metadata level a request (or a batch's operation) asks for: its
/// `$format`, else its `Accept` (minimal when neither names one); XML or Atom is
/// refused with `415 AtomFormatNotSupported`.
pub(crate) fn negotiate(format: Option<&str>, accept: Option<&str>) -> Result<Metadata, Failure> {
    if let Some(format) = format {
        return Metadata::from_media_type(format).ok_or_else(|| atom_refused(format));
    }
    let Some(accept) = accept else {
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
        Some(range) if range.contains("xml") || range.contains("atom") => Err(atom_refused(range)),
        _ => Ok(Metadata::Minimal),
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
