//! From a request to an answer: the account, credentials, the resource, then the
//! operation on the account's engine.

use tables_core::odata::header;
use tables_core::odata::path::ResourcePath;
use tables_core::{Engine as _, MAX_BATCH_BYTES};

use crate::auth;
use crate::context::{Call, State};
use crate::reply::{Failure, Reply};
use crate::request::Request;
use crate::{batch, cors, entities, service, tables};

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
    check_request_shape(request)?;
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

/// What the service refuses of any request before reading it: a version it
/// never published, a body over its 4 MiB.
fn check_request_shape(request: &Request) -> Result<(), Failure> {
    if let Some(version) = request.header(header::X_MS_VERSION) {
        if !header::is_service_version(version) {
            // Repeated only when short: a header is the client's, not the log's.
            let version = if version.len() <= crate::limits::MAX_ECHOED_VERSION {
                format!("{version:?}")
            } else {
                format!("of {} bytes", version.len())
            };
            return Err(Failure::new(
                400,
                tables_core::error_code::INVALID_HEADER_VALUE,
                format!(
                    "The value for one of the HTTP headers is not in the correct format. \
                     x-ms-version {version} is not a version of the service's REST API; \
                     send one it published, such as {}",
                    header::API_VERSION
                ),
            ));
        }
    }
    if request.body.len() > MAX_BATCH_BYTES {
        return Err(Failure::new(
            413,
            tables_core::error_code::REQUEST_BODY_TOO_LARGE,
            format!(
                "The request body is too large and exceeds the maximum permissible limit: \
                 it is {} bytes; the service accepts at most 4 MiB ({MAX_BATCH_BYTES} bytes) \
                 in any request, a batch included",
                request.body.len()
            ),
        ));
    }
    Ok(())
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
