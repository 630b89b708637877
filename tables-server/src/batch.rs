//! Entity group transactions: `POST /$batch` with a multipart/mixed body holding
//! one changeset, answered `202` with one part per operation, or a single part for
//! the operation that failed (its index at the start of the message), as the
//! service answers.

use hyper::header;
use tables_core::odata::batch::{parse_batch_request, BatchSubRequest};
use tables_core::odata::path::ResourcePath;
use tables_core::odata::response::{
    encode_batch_response, encode_entity, encode_error, BatchPart, BatchResponse, Metadata,
    Resource,
};
use tables_core::{Engine, WriteOp};

use crate::context::Call;
use crate::entities::{allow_write, inserted_entity, inserted_json, not_found, write_op};
use crate::reply::{preference, Failure, Preference, Reply};
use crate::request::{Request, SECONDARY_SUFFIX};

/// What one operation of the changeset asks of its answer (its write goes to the
/// engine with the others).
struct Answering {
    content_id: Option<String>,
    preference: Preference,
    /// The operation's own JSON metadata level (its Accept), else the batch's.
    metadata: Metadata,
}

impl From<BatchResponse> for Reply {
    fn from(response: BatchResponse) -> Reply {
        Reply {
            status: 202,
            headers: vec![(header::CONTENT_TYPE, response.content_type.into())],
            body: response.body.into(),
        }
    }
}

pub(crate) async fn submit(call: &Call<'_>) -> Result<Reply, Failure> {
    let request = call.request;
    let content_type = request.header(header::CONTENT_TYPE).unwrap_or_default();
    let parts = parse_batch_request(content_type, &request.body).map_err(|err| {
        Failure::invalid_input(format!(
            "the $batch body is not a multipart/mixed batch: {}",
            err.message()
        ))
    })?;
    if parts.is_empty() {
        return Err(Failure::invalid_input("the $batch body holds no operation"));
    }
    let batch_id = uuid::Uuid::new_v4().to_string();
    // The answer to a batch is multipart whatever its Accept says: the legacy
    // storage SDKs send `application/atom+xml,application/xml` there and name JSON
    // in each operation's own Accept, which sets that part's metadata level.
    let metadata = call.metadata().unwrap_or(Metadata::Minimal);
    if parts.len() == 1 && parts[0].method == "GET" {
        let metadata = part_metadata(&parts[0], metadata);
        return query(call, &parts[0], &batch_id, metadata).await;
    }
    let changeset_id = uuid::Uuid::new_v4().to_string();
    let answer = |parts: Vec<BatchPart>| -> Reply {
        encode_batch_response(&batch_id, Some(&changeset_id), &parts).into()
    };
    let mut table: Option<String> = None;
    let mut ops = Vec::with_capacity(parts.len());
    let mut answering = Vec::with_capacity(parts.len());
    for (index, part) in parts.iter().enumerate() {
        match operation(call, part, &mut table, metadata) {
            Ok((op, asks)) => {
                ops.push(op);
                answering.push(asks);
            }
            Err(failure) => return Ok(answer(vec![failed_part(index, part, &failure)])),
        }
    }
    let table = table.unwrap_or_default();
    let outcomes = match call.account.engine.submit_batch(&table, &ops).await {
        Ok(outcomes) => outcomes,
        Err(err) => {
            let index = err.batch_index().unwrap_or(0).min(parts.len() - 1);
            let failure = Failure::from_error(&err);
            return Ok(answer(vec![failed_part(index, &parts[index], &failure)]));
        }
    };
    let here = Resource {
        base_url: &call.target.base_url,
        account: call.target.account,
        table: &table,
    };
    let parts = ops
        .iter()
        .zip(answering)
        .zip(outcomes)
        .map(|((op, asks), outcome)| {
            let mut headers = Vec::with_capacity(5);
            if let Some(id) = asks.content_id {
                headers.push(("Content-ID".to_owned(), id));
            }
            headers.push(("DataServiceVersion".to_owned(), "3.0;".to_owned()));
            if let Some(etag) = &outcome.etag {
                headers.push(("ETag".to_owned(), etag.as_str().to_owned()));
            }
            if let WriteOp::Insert(entity) = op {
                let url = here.entity_url(&entity.key());
                headers.push(("Location".to_owned(), url.clone()));
                headers.push(("DataServiceId".to_owned(), url));
            }
            let (status, body) = match op {
                WriteOp::Insert(entity) if !asks.preference.no_content() => {
                    headers.push((
                        "Content-Type".to_owned(),
                        asks.metadata.content_type().to_owned(),
                    ));
                    (201, inserted_json(entity, &outcome, asks.metadata, &here))
                }
                _ => (204, Vec::new()),
            };
            if let (WriteOp::Insert(_), Some(applied)) = (op, asks.preference.applied()) {
                headers.push(("Preference-Applied".to_owned(), applied.to_owned()));
            }
            BatchPart {
                status,
                headers,
                body,
            }
        })
        .collect();
    Ok(answer(parts))
}

/// Reads one part of the changeset into a write on the batch's one table.
fn operation(
    call: &Call<'_>,
    part: &BatchSubRequest,
    table: &mut Option<String>,
    metadata: Metadata,
) -> Result<(WriteOp, Answering), Failure> {
    let path = sub_request_path(&part.url, call.target.account).ok_or_else(|| {
        Failure::invalid_input(format!(
            "the batch operation's URL {:?} is not an entity URL of account {:?}",
            part.url, call.target.account
        ))
    })?;
    let method = match part.header("x-http-method") {
        Some(tunnelled) if part.method == "POST" => tunnelled.trim().to_owned(),
        _ => part.method.clone(),
    };
    let resource = ResourcePath::parse(&path);
    let (name, op) = match (&resource, method.as_str()) {
        (Some(ResourcePath::Entities(name)), "POST") => {
            (name, WriteOp::Insert(inserted_entity(&part.body)?))
        }
        (Some(ResourcePath::Entity(name, key)), "PUT" | "MERGE" | "PATCH" | "DELETE") => {
            // A delete without If-Match in a batch means any version.
            let if_match = part
                .header("if-match")
                .or((method == "DELETE").then_some("*"));
            (name, write_op(&method, key, if_match, &part.body)?)
        }
        _ => {
            return Err(Failure::invalid_input(format!(
                "{method} {path:?} is not an operation a changeset can hold (insert, update, \
                 merge, upserts and delete; a read must be alone in its batch)"
            )))
        }
    };
    match table {
        Some(first) if !first.eq_ignore_ascii_case(name) => {
            return Err(Failure::invalid_input(format!(
                "the batch operates on tables {first:?} and {name:?}; a batch works on one table"
            )))
        }
        Some(_) => {}
        None => *table = Some(name.clone()),
    }
    allow_write(&call.access, name, &op)?;
    let asks = Answering {
        content_id: part.header("content-id").map(str::to_owned),
        preference: preference(part.header("prefer")),
        metadata: part_metadata(part, metadata),
    };
    Ok((op, asks))
}

/// The JSON metadata level an operation of a batch asks for in its own `Accept`
/// (or `$format`), else the batch's.
fn part_metadata(part: &BatchSubRequest, batch: Metadata) -> Metadata {
    let format = part.url.split_once('?').and_then(|(_, query)| {
        crate::request::parse_query(query)
            .into_iter()
            .find_map(|(name, value)| (name == "$format").then_some(value))
    });
    let accept = part.header("accept");
    if format.is_none() && accept.is_none() {
        return batch;
    }
    // What the operation asks for, read as a request's is; the batch's own when
    // it asks for XML (the legacy SDKs' habit).
    crate::context::negotiate(format.as_deref(), accept).unwrap_or(batch)
}

/// A batch holding one read: its answer directly under the batch boundary.
async fn query(
    call: &Call<'_>,
    part: &BatchSubRequest,
    batch_id: &str,
    metadata: Metadata,
) -> Result<Reply, Failure> {
    let path = sub_request_path(&part.url, call.target.account);
    let answer =
        |part: BatchPart| -> Reply { encode_batch_response(batch_id, None, &[part]).into() };
    let Some(ResourcePath::Entity(table, key)) = path.as_deref().and_then(ResourcePath::parse)
    else {
        let failure = Failure::invalid_input(format!(
            "a read in a batch must get one entity by its keys; {:?} does not name one",
            part.url
        ));
        return Ok(answer(failed_part(0, part, &failure)));
    };
    if let Err(failure) = call
        .access
        .allow_entities(&table, "r", Some(&key), "reading an entity")
    {
        return Ok(answer(failed_part(0, part, &failure)));
    }
    let part_answer = match call.account.engine.get_entity(&table, &key, None).await {
        Ok(Some(entity)) => {
            let here = Resource {
                base_url: &call.target.base_url,
                account: call.target.account,
                table: &table,
            };
            let mut body = Vec::with_capacity(256);
            encode_entity(&entity, metadata, &here, &mut body);
            let mut headers = vec![(
                "Content-Type".to_owned(),
                metadata.content_type().to_owned(),
            )];
            if let Some(etag) = &entity.etag {
                headers.push(("ETag".to_owned(), etag.as_str().to_owned()));
            }
            BatchPart {
                status: 200,
                headers,
                body,
            }
        }
        Ok(None) => failed_part(0, part, &not_found()),
        Err(err) => failed_part(0, part, &Failure::from_error(&err)),
    };
    Ok(answer(part_answer))
}

/// The single part reporting that operation `index` failed: its status, code, and
/// the message prefixed with `<index>:`.
fn failed_part(index: usize, part: &BatchSubRequest, failure: &Failure) -> BatchPart {
    let mut body = Vec::with_capacity(128 + failure.message.len());
    encode_error(
        &failure.code,
        &format!("{index}:{}", failure.message),
        &mut body,
    );
    let mut headers = Vec::with_capacity(3);
    if let Some(id) = part.header("content-id") {
        headers.push(("Content-ID".to_owned(), id.to_owned()));
    }
    headers.push((
        "Content-Type".to_owned(),
        Metadata::Minimal.content_type().to_owned(),
    ));
    headers.push(("x-ms-error-code".to_owned(), failure.code.clone()));
    BatchPart {
        status: failure.status,
        headers,
        body,
    }
}

/// The table a `$batch` request's operations are on (its first operation's, which
/// the others must share), if its body reads as a batch: for fault rules that
/// select by table.
pub(crate) fn table_of(request: &Request, account: &str) -> Option<String> {
    let content_type = request.header(header::CONTENT_TYPE).unwrap_or_default();
    let parts = parse_batch_request(content_type, &request.body).ok()?;
    let path = sub_request_path(&parts.first()?.url, account)?;
    match ResourcePath::parse(&path)? {
        ResourcePath::Entities(table) | ResourcePath::Entity(table, _) => Some(table),
        _ => None,
    }
}

/// The path of a sub-request's URL relative to the account: the URL is absolute
/// (`http://host/acct/t(..)` path-style, `http://acct.table.host/t(..)` host-style)
/// or a path; any query string is dropped.
fn sub_request_path(url: &str, account: &str) -> Option<String> {
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |slash| &rest[slash..]),
        None => url,
    };
    let path = path.split('?').next().unwrap_or_default();
    let path = path.strip_prefix('/').unwrap_or(path);
    for prefix in [account.to_owned(), format!("{account}{SECONDARY_SUFFIX}")] {
        if let Some(rest) = path.strip_prefix(prefix.as_str()) {
            if let Some(rest) = rest.strip_prefix('/') {
                return Some(rest.to_owned());
            }
        }
    }
    Some(path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::sub_request_path;

    #[test]
    fn sub_request_paths() {
        let path = |url: &str| sub_request_path(url, "acct");
        assert_eq!(path("http://127.0.0.1:1/acct/t").as_deref(), Some("t"));
        assert_eq!(
            path("http://acct.table.localhost:1/t(PartitionKey='a',RowKey='b')?sv=1").as_deref(),
            Some("t(PartitionKey='a',RowKey='b')")
        );
        assert_eq!(path("/acct/t").as_deref(), Some("t"));
        assert_eq!(path("http://h/acctx/t").as_deref(), Some("acctx/t"));
    }
}
