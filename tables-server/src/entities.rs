//! Entity operations: query, get, insert, update, merge, upserts and delete.

use hyper::header;
use tables_core::odata::continuation::{
    decode_position, encode_position, NEXT_PARTITION_KEY, NEXT_ROW_KEY,
};
use tables_core::odata::response::{
    encode_entity, encode_entity_page, encode_selected_entity, Metadata, Resource,
};
use tables_core::odata::{decode_request_entity, RequestEntity};
use tables_core::{
    ContinuationToken, DynamicEntity, ETag, Engine, EntityKey, Filter, IfMatch, QueryPlan,
    QuerySpec, WriteOp, WriteOutcome,
};

use crate::access::Access;
use crate::context::Call;
use crate::reply::{names, paging_header, preference, Failure, Reply};
use crate::tables::top;

fn resource<'a>(call: &'a Call<'_>, table: &'a str) -> Resource<'a> {
    Resource {
        base_url: &call.target.base_url,
        account: call.target.account,
        table,
    }
}

/// `GET /<table>()`: `$filter`, `$select`, `$top`, `NextPartitionKey`/`NextRowKey`.
pub(crate) async fn query(call: &Call<'_>, table: &str) -> Result<Reply, Failure> {
    call.access
        .allow_entities(table, "r", None, "querying entities")?;
    let metadata = call.metadata()?;
    let request = call.request;
    let mut spec = QuerySpec::new();
    if let Some(text) = request.query_option("$filter") {
        let filter = Filter::parse(text).map_err(|err| {
            Failure::invalid_input(format!(
                "the query condition specified in the request is invalid: {}",
                err.message()
            ))
        })?;
        spec = spec.filter(filter);
    }
    let select = select(request.query_option("$select"))?;
    if let Some(select) = &select {
        spec = spec.select(select.clone());
    }
    // `$top=0` asks for no rows: Azure answers an empty page (Azurite#1428, from
    // the Storage Explorer team), here with the continuation at the first row
    // that matches, so a client paging on loses nothing (docs/service-behaviour.md).
    let no_rows = request.param("$top").is_some_and(|t| t.trim() == "0")
        && call.account.engine.capabilities().ordered_results;
    if no_rows {
        spec = spec.top(1);
    } else if request.param("$top").is_some() {
        spec = spec.top(top(request.param("$top"))?);
    }
    let continuation = continuation(call)?;
    let range = call.access.key_range();
    if let Some(range) = range {
        // As Azure does: a query of a partition outside the range is refused, any
        // other answers the rows inside the range only.
        let plan = QueryPlan::of(spec.filter.as_ref());
        if let Some(partition_key) = plan
            .partition_key()
            .filter(|pk| range.excludes_partition(pk))
        {
            return Err(Failure::new(
                403,
                "AuthorizationFailure",
                format!(
                    "the query reads partition {partition_key:?}, outside the key range the \
                     SAS grants ({})",
                    range.describe()
                ),
            ));
        }
        if let Some(narrowed) = range.narrow(&spec, &plan) {
            spec = narrowed;
        }
    }
    let mut page = call
        .account
        .engine
        .query(table, &spec, continuation.as_ref())
        .await?;
    if let Some(range) = range {
        // A filter too long to take the range's comparisons is narrowed here.
        page.items.retain(|entity| range.contains(&entity.key()));
    }
    if no_rows {
        if let Some(first) = page.items.pop() {
            page.continuation = Some(ContinuationToken::new(
                first.partition_key,
                Some(first.row_key),
            ));
        }
    }
    let mut body = Vec::with_capacity(64 + page.items.len() * 256);
    encode_entity_page(
        &page.items,
        select.as_deref(),
        metadata,
        &resource(call, table),
        &mut body,
    );
    let mut reply = Reply::json(200, metadata, body);
    if let Some(next) = page.continuation {
        reply = reply.with_header(
            paging_header(NEXT_PARTITION_KEY)?,
            encode_position(next.next_partition_key()),
        );
        if let Some(row_key) = next.next_row_key() {
            reply = reply.with_header(paging_header(NEXT_ROW_KEY)?, encode_position(row_key));
        }
    }
    Ok(reply)
}

/// `$select=A,B`: the names; `None` when absent.
fn select(text: Option<&str>) -> Result<Option<Vec<String>>, Failure> {
    let Some(text) = text else {
        return Ok(None);
    };
    let names: Vec<String> = text.split(',').map(|n| n.trim().to_owned()).collect();
    if names.iter().any(String::is_empty) {
        return Err(Failure::invalid_input(format!(
            "$select={text:?} holds an empty property name; list names separated by commas"
        )));
    }
    Ok(Some(names))
}

/// The position a query resumes at, from `NextPartitionKey`/`NextRowKey`.
fn continuation(call: &Call<'_>) -> Result<Option<ContinuationToken>, Failure> {
    let request = call.request;
    let Some(partition) = request.param(NEXT_PARTITION_KEY) else {
        return Ok(None);
    };
    let bad = || {
        Failure::invalid_input(
            "NextPartitionKey/NextRowKey are not values this server's continuation headers \
             gave: pass them back exactly as a previous page returned them",
        )
    };
    let partition = decode_position(partition).ok_or_else(bad)?;
    let row = request
        .param(NEXT_ROW_KEY)
        .map(|row| decode_position(row).ok_or_else(bad))
        .transpose()?;
    Ok(Some(ContinuationToken::new(partition, row)))
}

/// `GET /<table>(PartitionKey='..',RowKey='..')`.
pub(crate) async fn get(call: &Call<'_>, table: &str, key: &EntityKey) -> Result<Reply, Failure> {
    call.access
        .allow_entities(table, "r", Some(key), "reading an entity")?;
    let metadata = call.metadata()?;
    let select = select(call.request.query_option("$select"))?;
    let entity = call
        .account
        .engine
        .get_entity(table, key, select.as_deref())
        .await?
        .ok_or_else(not_found)?;
    let mut body = Vec::with_capacity(256);
    encode_selected_entity(
        &entity,
        select.as_deref(),
        metadata,
        &resource(call, table),
        &mut body,
    );
    Ok(Reply::json(200, metadata, body).with_etag(entity.etag.as_ref()))
}

/// The service's answer for an entity that isn't there.
pub(crate) fn not_found() -> Failure {
    Failure::new(
        404,
        "ResourceNotFound",
        "The specified resource does not exist.",
    )
}

/// `POST /<table>`: Insert Entity, answering the entity (`201`) unless the request
/// prefers no content (`204`).
pub(crate) async fn insert(call: &Call<'_>, table: &str) -> Result<Reply, Failure> {
    let metadata = call.metadata()?;
    let op = WriteOp::Insert(inserted_entity(&call.request.body)?);
    allow_write(&call.access, table, &op)?;
    let outcome = call.account.engine.write(table, &op).await?;
    let entity = op
        .entity()
        .unwrap_or_else(|| unreachable!("an insert has an entity"));
    let here = resource(call, table);
    let preference = preference(call.request.header(names::PREFER));
    let reply = if preference.no_content() {
        Reply::empty(204)
    } else {
        Reply::json(
            201,
            metadata,
            inserted_json(entity, &outcome, metadata, &here),
        )
    }
    .with_preference(preference);
    // Where the new entity lives, as the service says it (clients read the keys
    // back from it, the JS SDK from each insert of a batch).
    let url = here.entity_url(&entity.key());
    Ok(reply
        .with_header(header::LOCATION, url.clone())
        .with_header(names::DATA_SERVICE_ID, url)
        .with_etag(outcome.etag.as_ref()))
}

/// The entity a `POST /<table>` body inserts.
pub(crate) fn inserted_entity(body: &[u8]) -> Result<DynamicEntity, Failure> {
    let RequestEntity {
        entity,
        has_partition_key,
        has_row_key,
    } = decode_body(body)?;
    if !has_partition_key || !has_row_key {
        return Err(Failure::new(
            400,
            "PropertiesNeedValue",
            "an inserted entity needs PartitionKey and RowKey in its body",
        ));
    }
    Ok(entity)
}

/// The JSON an insert with `return-content` answers: the entity as stored, with the
/// write's Timestamp and ETag.
pub(crate) fn inserted_json(
    entity: &DynamicEntity,
    outcome: &WriteOutcome,
    metadata: Metadata,
    here: &Resource<'_>,
) -> Vec<u8> {
    let mut stored = entity.clone();
    stored.timestamp = outcome.timestamp;
    stored.etag.clone_from(&outcome.etag);
    let mut body = Vec::with_capacity(256);
    encode_entity(&stored, metadata, here, &mut body);
    body
}

fn decode_body(body: &[u8]) -> Result<RequestEntity, Failure> {
    decode_request_entity(body).map_err(|err| {
        // The service's own words first: clients match on them.
        Failure::invalid_input(format!(
            "An error occurred while processing this request. The entity body is invalid: {}",
            err.message()
        ))
    })
}

/// `PUT`, `MERGE`/`PATCH` (also tunnelled) and `DELETE` on an entity.
pub(crate) async fn write(call: &Call<'_>, table: &str, key: &EntityKey) -> Result<Reply, Failure> {
    let op = write_op(
        call.request.method.as_str(),
        key,
        call.request.header(header::IF_MATCH),
        &call.request.body,
    )?;
    allow_write(&call.access, table, &op)?;
    let outcome = call.account.engine.write(table, &op).await?;
    Ok(Reply::empty(204).with_etag(outcome.etag.as_ref()))
}

/// Whether the credentials allow the write: the SAS permissions it needs (`a` to
/// insert, `u` to update or merge, both for an upsert, `d` to delete) and its key.
pub(crate) fn allow_write(access: &Access, table: &str, op: &WriteOp) -> Result<(), Failure> {
    let (needs, what) = match op {
        WriteOp::Insert(_) => ("a", "inserting an entity"),
        WriteOp::UpsertReplace(_) | WriteOp::UpsertMerge(_) => ("au", "upserting an entity"),
        WriteOp::Replace { .. } | WriteOp::Merge { .. } => ("u", "updating an entity"),
        WriteOp::Delete { .. } => ("d", "deleting an entity"),
    };
    access.allow_entities(table, needs, Some(&op.key()), what)
}

/// The write a `PUT`, `MERGE`, `PATCH` or `DELETE` of the entity at `key` asks
/// for: without `If-Match` an upsert (a delete needs one).
pub(crate) fn write_op(
    method: &str,
    key: &EntityKey,
    if_match: Option<&str>,
    body: &[u8],
) -> Result<WriteOp, Failure> {
    let if_match = if_match.map(parse_if_match).transpose()?;
    if method == "DELETE" {
        let if_match = if_match.ok_or_else(|| {
            Failure::new(
                400,
                "MissingRequiredHeader",
                "Delete Entity needs an If-Match header: the entity's ETag, or * to delete \
                 whatever version is stored",
            )
        })?;
        return Ok(WriteOp::Delete {
            key: key.clone(),
            if_match,
        });
    }
    let RequestEntity {
        mut entity,
        has_partition_key,
        has_row_key,
    } = decode_body(body)?;
    if (has_partition_key && entity.partition_key != key.partition_key)
        || (has_row_key && entity.row_key != key.row_key)
    {
        return Err(Failure::invalid_input(format!(
            "the body's keys ({:?}, {:?}) differ from the URL's ({:?}, {:?}); send the same \
             keys in both, or leave them out of the body",
            entity.partition_key, entity.row_key, key.partition_key, key.row_key
        )));
    }
    entity.partition_key.clone_from(&key.partition_key);
    entity.row_key.clone_from(&key.row_key);
    Ok(match (method, if_match) {
        ("PUT", None) => WriteOp::UpsertReplace(entity),
        ("PUT", Some(if_match)) => WriteOp::Replace { entity, if_match },
        (_, None) => WriteOp::UpsertMerge(entity),
        (_, Some(if_match)) => WriteOp::Merge { entity, if_match },
    })
}

/// `*` or a weak ETag `W/"..."`.
fn parse_if_match(value: &str) -> Result<IfMatch, Failure> {
    let value = value.trim();
    if value == "*" {
        return Ok(IfMatch::Any);
    }
    // Table ETags are weak: a strong one (`"..."`) the service refuses as
    // malformed (400), while any weak one it compares, failing with 412
    // (docs/service-behaviour.md, "If-Match").
    let weak = value
        .strip_prefix("W/")
        .or_else(|| value.strip_prefix("w/"));
    if weak
        .is_some_and(|quoted| quoted.len() >= 2 && quoted.starts_with('"') && quoted.ends_with('"'))
    {
        // The service compares with `:` encoded; a client that decoded it still matches.
        return Ok(IfMatch::Etag(ETag::new(value.replace(':', "%3A"))));
    }
    Err(Failure::invalid_input(format!(
        "If-Match {value:?} is not * or a weak ETag such as W/\"datetime'...'\" as a read \
         returned it (table ETags are weak; send the ETag exactly as the service gave it)"
    )))
}
