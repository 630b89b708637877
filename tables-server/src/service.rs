//! The XML APIs: table ACLs (stored access policies) and the account's service
//! properties and stats.

use std::time::SystemTime;

use tables_core::service::acl::{decode_table_acl, encode_table_acl};
use tables_core::service::properties::{
    decode_service_properties, encode_service_properties, encode_service_stats,
};
use tables_core::{error_code as code, Engine, QuerySpec};

use crate::access::Scope;
use crate::context::Call;
use crate::reply::{Failure, Reply};

/// Answers `404 TableNotFound` unless the table exists.
async fn existing(call: &Call<'_>, table: &str) -> Result<(), Failure> {
    let probe = QuerySpec {
        top: Some(1),
        ..QuerySpec::default()
    };
    call.account.engine.query(table, &probe, None).await?;
    Ok(())
}

/// `GET /<table>?comp=acl`: the table's stored access policies.
pub(crate) async fn get_acl(call: &Call<'_>, table: &str) -> Result<Reply, Failure> {
    call.access.allow_key_only("reading a table's ACL")?;
    existing(call, table).await?;
    let policies = call
        .account
        .acls()
        .get(&table.to_ascii_lowercase())
        .cloned()
        .unwrap_or_default();
    let mut body = Vec::with_capacity(64 + policies.len() * 200);
    encode_table_acl(&policies, &mut body);
    Ok(Reply::xml(200, body))
}

/// `PUT /<table>?comp=acl`: replaces the table's stored access policies (an
/// empty body removes them all, revoking every SAS that names one).
pub(crate) async fn set_acl(call: &Call<'_>, table: &str) -> Result<Reply, Failure> {
    call.access.allow_key_only("setting a table's ACL")?;
    let policies = decode_table_acl(&call.request.body)?;
    existing(call, table).await?;
    call.account.set_acl(table, policies);
    Ok(Reply::empty(204))
}

/// `GET /?restype=service&comp=properties`.
pub(crate) fn get_properties(call: &Call<'_>) -> Result<Reply, Failure> {
    call.access
        .allow(Scope::Service, "r", "reading the service properties")?;
    let mut body = Vec::with_capacity(1024);
    encode_service_properties(&call.account.properties(), &mut body);
    Ok(Reply::xml(200, body))
}

/// `PUT /?restype=service&comp=properties`: replaces the parts the body holds.
pub(crate) fn set_properties(call: &Call<'_>) -> Result<Reply, Failure> {
    call.access
        .allow(Scope::Service, "w", "setting the service properties")?;
    let update = decode_service_properties(&call.request.body)?;
    call.account
        .change_properties(|properties| properties.apply(update));
    Ok(Reply::empty(202))
}

/// `GET /?restype=service&comp=stats`: replication is always live and in sync.
///
/// # Errors
///
/// `400 InvalidQueryParameterValue` when asked of the primary location: as on
/// Azure, only the secondary (`<account>-secondary`) serves the stats.
pub(crate) fn stats(call: &Call<'_>) -> Result<Reply, Failure> {
    call.access
        .allow(Scope::Service, "r", "reading the service stats")?;
    if !call.target.secondary {
        return Err(Failure::new(
            400,
            code::INVALID_QUERY_PARAMETER_VALUE,
            "Value for one of the query parameters specified in the request URI is invalid. \
             The service stats are served only by the secondary location: address the \
             account as `<account>-secondary` (the official SDKs do so for their \
             statistics call).",
        ));
    }
    let mut body = Vec::with_capacity(256);
    encode_service_stats(SystemTime::now(), &mut body);
    Ok(Reply::xml(200, body))
}
