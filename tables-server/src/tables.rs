//! The table list: Query Tables, Create Table, Delete Table, and one table by name.

use tables_core::odata::continuation::NEXT_TABLE_NAME;
use tables_core::odata::response::encode_tables;
use tables_core::{DynamicEntity, Engine, Filter, ListTablesOptions, MAX_PAGE_SIZE};

use crate::access::Scope;
use crate::context::Call;
use crate::reply::{names, paging_header, preference, Failure, Reply};

/// `GET /Tables`: `$filter` on `TableName`, `$top`, `NextTableName`.
pub(crate) async fn query(call: &Call<'_>) -> Result<Reply, Failure> {
    call.access.allow(Scope::Tables, "l", "listing tables")?;
    let metadata = call.metadata()?;
    let request = call.request;
    let filter = request
        .query_option("$filter")
        .map(|text| {
            Filter::parse(text).map_err(|err| {
                Failure::invalid_input(format!("the query condition is invalid: {}", err.message()))
            })
        })
        .transpose()?;
    let top = top(request.param("$top"))?;
    let names = all_tables(call).await?;
    let start = request.param(NEXT_TABLE_NAME);
    let mut matching = names.into_iter().filter(|name| {
        start.is_none_or(|start| name.as_str() >= start)
            && filter.as_ref().is_none_or(|filter| {
                filter.matches(&DynamicEntity::new("", "").with("TableName", name.as_str()))
            })
    });
    let page: Vec<String> = matching.by_ref().take(top as usize).collect();
    let next = matching.next();
    let mut body = Vec::with_capacity(64 + page.len() * 48);
    encode_tables(
        &page,
        false,
        metadata,
        &call.target.base_url,
        call.target.account,
        &mut body,
    );
    let mut reply = Reply::json(200, metadata, body);
    if let Some(next) = next {
        reply = reply.with_header(paging_header(NEXT_TABLE_NAME)?, next);
    }
    Ok(reply)
}

/// Every table of the account, in order.
async fn all_tables(call: &Call<'_>) -> Result<Vec<String>, Failure> {
    let mut names = Vec::new();
    let mut options = ListTablesOptions::default();
    loop {
        let page = call.account.engine.list_tables(&options).await?;
        names.extend(page.names);
        match page.continuation {
            Some(next) => options = options.with_continuation(next),
            None => return Ok(names),
        }
    }
}

/// `GET /Tables('<name>')`: the one table, as Create Table returns it (the public
/// reference's "to return a single table, name that table within the Tables
/// collection"; the .NET and Python storage libraries' table `Exists` call it). The
/// name matches case-blind, as table names do; a missing table is
/// `404 ResourceNotFound`, as for Delete Table.
pub(crate) async fn get(call: &Call<'_>, name: &str) -> Result<Reply, Failure> {
    call.access.allow(Scope::Tables, "l", "reading a table")?;
    let metadata = call.metadata()?;
    let Some(stored) = all_tables(call)
        .await?
        .into_iter()
        .find(|stored| stored.eq_ignore_ascii_case(name))
    else {
        return Err(Failure::new(
            404,
            "ResourceNotFound",
            format!("the table {name:?} does not exist"),
        ));
    };
    let mut body = Vec::with_capacity(128);
    encode_tables(
        &[stored],
        true,
        metadata,
        &call.target.base_url,
        call.target.account,
        &mut body,
    );
    Ok(Reply::json(200, metadata, body))
}

/// `$top`: 1 to 1,000; absent means 1,000.
pub(crate) fn top(text: Option<&str>) -> Result<u32, Failure> {
    let Some(text) = text else {
        return Ok(MAX_PAGE_SIZE);
    };
    match text.trim().parse::<u32>() {
        Ok(top) if (1..=MAX_PAGE_SIZE).contains(&top) => Ok(top),
        _ => Err(Failure::new(
            400,
            "InvalidInput",
            format!("$top={text:?} is not a number from 1 to {MAX_PAGE_SIZE}"),
        )),
    }
}

/// `POST /Tables` with `{"TableName":"<name>"}`.
pub(crate) async fn create(call: &Call<'_>) -> Result<Reply, Failure> {
    call.access
        .allow(Scope::Tables, "acw", "creating a table")?;
    let metadata = call.metadata()?;
    let name = table_name(&call.request.body)?;
    call.account.engine.create_table(&name).await?;
    let preference = preference(call.request.header(names::PREFER));
    if preference.no_content() {
        return Ok(Reply::empty(204).with_preference(preference));
    }
    let mut body = Vec::with_capacity(128);
    encode_tables(
        &[name],
        true,
        metadata,
        &call.target.base_url,
        call.target.account,
        &mut body,
    );
    Ok(Reply::json(201, metadata, body).with_preference(preference))
}

fn table_name(body: &[u8]) -> Result<String, Failure> {
    let json: serde_json::Value = serde_json::from_slice(body).map_err(|err| {
        Failure::invalid_input(format!(
            "the Create Table body is not JSON ({err}); send {{\"TableName\":\"<name>\"}}"
        ))
    })?;
    match json.get("TableName") {
        Some(serde_json::Value::String(name)) => Ok(name.clone()),
        _ => Err(Failure::new(
            400,
            "PropertiesNeedValue",
            "the Create Table body has no TableName string; send {\"TableName\":\"<name>\"}",
        )),
    }
}

/// `DELETE /Tables('<name>')`. A missing table is `404 ResourceNotFound`, as the
/// service answers it.
pub(crate) async fn delete(call: &Call<'_>, name: &str) -> Result<Reply, Failure> {
    call.access.allow(Scope::Tables, "d", "deleting a table")?;
    match call.account.engine.delete_table(name).await {
        Ok(()) => {
            // Its stored access policies go with it (a new table of the same name
            // starts without any).
            call.account.acls().remove(&name.to_ascii_lowercase());
            Ok(Reply::empty(204))
        }
        Err(err) if err.kind() == tables_core::ErrorKind::TableNotFound => Err(Failure::new(
            404,
            "ResourceNotFound",
            format!("the table {name:?} does not exist"),
        )),
        Err(err) => Err(err.into()),
    }
}
