//! A ticketing service over HTTP (axum) on the SDK: the design guide's index patterns
//! behind a web API, with ETags passed through as HTTP's own.
//!
//! ```text
//! cargo run --example ticket_service
//! ```
//!
//! The service keeps one table of tickets, partitioned by project, and three indexes
//! the `Ticket` type declares:
//!
//! - `by_status`, in the ticket's own partition (the guide's intra-partition
//!   secondary index): a project's tickets by status, written in the ticket's own
//!   transaction, so a query over it always shows the tickets as stored;
//! - `by_assignee`, in a table of its own (inter-partition): each person's tickets,
//!   newest first, paged; written after the ticket, so a plain query may lag behind
//!   a change (the `verified` reads below check each copy against its ticket);
//! - `number`, a unique index: a ticket's number (`T-17`) finds it in whatever
//!   project it is in now, and no two tickets share one.
//!
//! Endpoints (JSON bodies; `ETag` on every answer that shows one ticket, `If-Match`
//! required on every change, `*` to overwrite whatever is stored):
//!
//! ```text
//! POST   /projects/{project}/tickets          {"title","assignee"}  -> 201 + Location
//! GET    /projects/{project}/tickets?status=open&page=TOKEN         -> a page of tickets
//! GET    /projects/{project}/tickets/{id}                           -> the ticket
//! PATCH  /projects/{project}/tickets/{id}     {"title"?,"assignee"?,"status"?}
//! DELETE /projects/{project}/tickets/{id}
//! POST   /projects/{project}/tickets/{id}/move {"project"}          -> the moved ticket
//! GET    /people/{assignee}/tickets?limit=N&page=TOKEN              -> newest first
//! GET    /tickets/{number}                                          -> the ticket
//! ```
//!
//! SDK errors become HTTP answers through `ErrorKind::suggested_http_status` (404,
//! 409, 412, 400...), `If-Match` headers through `IfMatch::from_header_value`, and
//! page tokens travel as text. `main` starts the service on a free port of
//! 127.0.0.1, drives it as a client would (concurrent edits, a move to another
//! project, paged reads), checks every answer, and shows the rows the SDK wrote.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;

use axum::extract::{Path, Query as UrlQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value as JsonValue};
use tables_client::{
    DateTime, Entity, Error, IfMatch, KeyRange, PageToken, Patch, Table, TableServiceClient,
    Versioned,
};
use tables_examples::{count_of, ensure, raw_rows, BoxResult, Example};

const TICKETS: &str = "Tickets";
const COUNTERS: &str = "TicketCounters";
/// The largest page a caller may ask for.
const MAX_PAGE: u32 = 100;
/// On an engine whose results come in any order (Cosmos DB for Table), the most
/// rows a listing reads to order them on the client; a listing past it answers 400
/// (narrow it). On Azure Storage the service orders them and this is never met.
const MAX_ORDERED: usize = 10_000;

/// A ticket: in its project's partition, found by id, by status, by assignee
/// (newest first) and by its number.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{project}", row_key = "t{id:07}")]
#[entity(index(name = "by_status", row_key = "status_{status}_{id:07}"))]
#[entity(index(
    name = "by_assignee",
    table = "TicketsByAssignee",
    partition_key = "{assignee}",
    row_key = "{opened:rticks}_{project}_{id:07}"
))]
#[entity(unique_index(
    name = "number",
    table = "TicketNumbers",
    partition_key = "{number}",
    row_key = "ticket"
))]
struct Ticket {
    project: String,
    id: u32,
    number: String,
    title: String,
    assignee: String,
    status: String,
    opened: DateTime,
}

/// The last ticket id handed out: ids are unique across projects, so a ticket keeps
/// its id (and its number) when it moves.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(rename_all = "PascalCase")]
#[entity(partition_key = "{name}", row_key = "last")]
struct Counter {
    name: String,
    last: u32,
}

/// The service's state: the tables it serves.
#[derive(Debug, Clone)]
struct App {
    tickets: Table<Ticket>,
    counters: Table<Counter>,
}

impl App {
    /// Creates the tables (and the index tables) if needed.
    async fn open(service: &TableServiceClient) -> tables_client::Result<App> {
        let tickets = service.table::<Ticket>(TICKETS);
        let counters = service.table::<Counter>(COUNTERS);
        tickets.create_if_not_exists().await?;
        counters.create_if_not_exists().await?;
        Ok(App { tickets, counters })
    }

    /// The routes, over this state.
    fn router(self) -> Router {
        Router::new()
            .route(
                "/projects/{project}/tickets",
                post(create_ticket).get(project_tickets),
            )
            .route(
                "/projects/{project}/tickets/{id}",
                get(read_ticket).patch(change_ticket).delete(delete_ticket),
            )
            .route("/projects/{project}/tickets/{id}/move", post(move_ticket))
            .route("/people/{assignee}/tickets", get(assignee_tickets))
            .route("/tickets/{number}", get(ticket_by_number))
            .with_state(Arc::new(self))
    }
}

// ---------------------------------------------------------------------------
// Answers

/// An error answer: the status, a code and a message for the caller.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    code: String,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code.to_owned(),
            message: message.into(),
        }
    }
}

/// An SDK error, as the status `ErrorKind::suggested_http_status` suggests. A
/// failure that is the service's own (5xx) is logged and not shown to the caller.
impl From<Error> for ApiError {
    fn from(err: Error) -> ApiError {
        let status = StatusCode::from_u16(err.kind().suggested_http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let code = format!("{:?}", err.kind());
        if status.is_server_error() {
            eprintln!("ticket_service: {status}: {err}");
            return ApiError::new(status, &code, "the ticket store failed; try again");
        }
        ApiError::new(status, &code, err.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.code, "message": self.message });
        (self.status, Json(body)).into_response()
    }
}

type Answer = Result<Response, ApiError>;

fn ticket_json(t: &Ticket) -> JsonValue {
    json!({
        "project": t.project,
        "id": t.id,
        "number": t.number,
        "title": t.title,
        "assignee": t.assignee,
        "status": t.status,
        "opened": t.opened.to_string(),
    })
}

/// One ticket, with its ETag for the caller's next `If-Match`.
fn one_ticket(status: StatusCode, ticket: &Versioned<Ticket>) -> Answer {
    let etag = HeaderValue::from_str(ticket.etag.as_str()).map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "BadETag",
            "the stored ETag can't be sent as a header",
        )
    })?;
    let location = HeaderValue::from_str(&format!(
        "/projects/{}/tickets/{}",
        ticket.value.project, ticket.value.id
    ))
    .ok();
    let mut headers = HeaderMap::new();
    headers.insert(header::ETAG, etag);
    if let Some(location) = location {
        headers.insert(header::LOCATION, location);
    }
    Ok((status, headers, Json(ticket_json(&ticket.value))).into_response())
}

/// A page of tickets and the token of the next (absent after the last page).
fn ticket_page(items: &[Versioned<Ticket>], next: &PageToken) -> Answer {
    let tickets: Vec<JsonValue> = items.iter().map(|t| ticket_json(&t.value)).collect();
    let next = (!next.is_end()).then(|| next.to_string());
    Ok(Json(json!({ "tickets": tickets, "next": next })).into_response())
}

/// The caller's `If-Match`: required on every change, so nobody overwrites an
/// edit they have not seen by accident (`*` says "whatever is stored").
fn if_match(headers: &HeaderMap) -> Result<IfMatch, ApiError> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Err(ApiError::new(
            StatusCode::PRECONDITION_REQUIRED,
            "IfMatchRequired",
            "send If-Match with the ETag you read, or * to change whatever is stored",
        ));
    };
    let text = value.to_str().map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "InvalidInput",
            "the If-Match header is not text",
        )
    })?;
    Ok(IfMatch::from_header_value(text)?)
}

fn page_token(text: Option<&str>) -> Result<Option<PageToken>, ApiError> {
    text.map(str::parse).transpose().map_err(ApiError::from)
}

fn not_found(what: String) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "EntityNotFound", what)
}

// ---------------------------------------------------------------------------
// Handlers

#[derive(Deserialize)]
struct NewTicket {
    title: String,
    assignee: String,
}

async fn create_ticket(
    State(app): State<Arc<App>>,
    Path(project): Path<String>,
    Json(new): Json<NewTicket>,
) -> Answer {
    // A new id: the counter's update reads, adds one and writes under the ETag
    // read, again on a lost race, so two creates never get the same id.
    let counter = app
        .counters
        .update_or_insert(
            Counter::key("tickets")?,
            || Counter {
                name: "tickets".into(),
                last: 0,
            },
            |c| c.last += 1,
        )
        .await?;
    let id = counter.value.last;
    let ticket = Ticket {
        project,
        id,
        number: format!("T-{id}"),
        title: new.title,
        assignee: new.assignee,
        status: "open".into(),
        opened: DateTime::now(),
    };
    let written = app.tickets.insert(&ticket).await?;
    let etag = written.etag.ok_or_else(|| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "NoETag",
            "the insert answered without an ETag",
        )
    })?;
    let stored = Versioned {
        value: ticket,
        etag,
        timestamp: written.timestamp.unwrap_or_else(DateTime::now),
    };
    one_ticket(StatusCode::CREATED, &stored)
}

async fn read_ticket(
    State(app): State<Arc<App>>,
    Path((project, id)): Path<(String, u32)>,
) -> Answer {
    match app.tickets.get(Ticket::key(&project, id)?).await? {
        Some(ticket) => one_ticket(StatusCode::OK, &ticket),
        None => Err(not_found(format!("no ticket {id} in project {project}"))),
    }
}

#[derive(Deserialize)]
struct TicketChange {
    title: Option<String>,
    assignee: Option<String>,
    status: Option<String>,
}

async fn change_ticket(
    State(app): State<Arc<App>>,
    Path((project, id)): Path<(String, u32)>,
    headers: HeaderMap,
    Json(change): Json<TicketChange>,
) -> Answer {
    let condition = if_match(&headers)?;
    let mut patch = Patch::new();
    if let Some(title) = change.title {
        patch = patch.set(Ticket::TITLE, title);
    }
    if let Some(assignee) = change.assignee {
        patch = patch.set(Ticket::ASSIGNEE, assignee);
    }
    if let Some(status) = change.status {
        patch = patch.set(Ticket::STATUS, status);
    }
    let key = Ticket::key(&project, id)?;
    // One conditional write; the index rows (status, assignee) follow it.
    app.tickets.patch(&key, patch, condition).await?;
    match app.tickets.get(&key).await? {
        Some(ticket) => one_ticket(StatusCode::OK, &ticket),
        None => Err(not_found(format!(
            "ticket {id} of project {project} was deleted just after the change"
        ))),
    }
}

async fn delete_ticket(
    State(app): State<Arc<App>>,
    Path((project, id)): Path<(String, u32)>,
    headers: HeaderMap,
) -> Answer {
    let condition = if_match(&headers)?;
    app.tickets
        .delete(Ticket::key(&project, id)?, condition)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Deserialize)]
struct MoveTo {
    project: String,
}

async fn move_ticket(
    State(app): State<Arc<App>>,
    Path((project, id)): Path<(String, u32)>,
    headers: HeaderMap,
    Json(to): Json<MoveTo>,
) -> Answer {
    let condition = if_match(&headers)?;
    // Another partition: the move locks the ticket, writes it under its new key,
    // then deletes the old row; its number passes with it, and a crash on the way
    // is finished by reconcile(). The ticket is never in neither project.
    let moved = app
        .tickets
        .move_to(
            Ticket::key(&project, id)?,
            Ticket::key(&to.project, id)?,
            condition,
        )
        .await?;
    one_ticket(StatusCode::OK, &moved)
}

#[derive(Deserialize)]
struct ProjectQuery {
    status: Option<String>,
    page: Option<String>,
}

/// A project's tickets of one status, by id, from the intra-partition index (always
/// as stored: its copies change in the ticket's own transaction).
async fn project_tickets(
    State(app): State<Arc<App>>,
    Path(project): Path<String>,
    UrlQuery(query): UrlQuery<ProjectQuery>,
) -> Answer {
    let token = page_token(query.page.as_deref())?;
    let page = match query.status {
        Some(status) => {
            app.tickets
                .query_index(Ticket::by_status_partition(&project)?)
                .row_range(KeyRange::prefix(&format!("status_{status}_")))
                .order_in_client(MAX_ORDERED)
                .page_size(MAX_PAGE)
                .page(token.as_ref())
                .await?
        }
        None => {
            app.tickets
                .query()
                .partition(&project)
                .order_in_client(MAX_ORDERED)
                .page_size(MAX_PAGE)
                .page(token.as_ref())
                .await?
        }
    };
    ticket_page(&page.items, &page.next)
}

#[derive(Deserialize)]
struct PersonQuery {
    limit: Option<u32>,
    page: Option<String>,
}

/// A person's tickets, newest first, from the index in its own table. `verified`:
/// each copy is checked against its ticket (one point read per row), so a ticket
/// just moved, reassigned or deleted is shown as it is now or not at all, never
/// twice or as it was.
async fn assignee_tickets(
    State(app): State<Arc<App>>,
    Path(assignee): Path<String>,
    UrlQuery(query): UrlQuery<PersonQuery>,
) -> Answer {
    let limit = query.limit.unwrap_or(20).clamp(1, MAX_PAGE);
    let token = page_token(query.page.as_deref())?;
    let page = app
        .tickets
        .query_index(Ticket::by_assignee_partition(&assignee)?)
        .verified()
        .order_in_client(MAX_ORDERED)
        .page_size(limit)
        .page(token.as_ref())
        .await?;
    ticket_page(&page.items, &page.next)
}

async fn ticket_by_number(State(app): State<Arc<App>>, Path(number): Path<String>) -> Answer {
    match app
        .tickets
        .get_by_index(Ticket::number_key(&number)?)
        .await?
    {
        Some(ticket) => one_ticket(StatusCode::OK, &ticket),
        None => Err(not_found(format!("no ticket numbered {number}"))),
    }
}

// ---------------------------------------------------------------------------
// The program: the service on 127.0.0.1, driven as a client would.

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(ticket_service).await
}

/// A running service: its base URL, and its task (stopped when dropped).
struct Running {
    base: String,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn start(app: App) -> BoxResult<Running> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let router = app.router();
    let server = tokio::spawn(async move {
        if let Err(err) = axum::serve(listener, router).await {
            eprintln!("ticket_service: the server stopped: {err}");
        }
    });
    Ok(Running { base, server })
}

/// A client's view of one answer.
struct Reply {
    status: u16,
    etag: Option<String>,
    body: JsonValue,
}

struct Client {
    http: reqwest::Client,
    base: String,
}

impl Client {
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        if_match: Option<&str>,
        body: Option<JsonValue>,
    ) -> BoxResult<Reply> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(etag) = if_match {
            request = request.header("If-Match", etag);
        }
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let answer = request.send().await?;
        let status = answer.status().as_u16();
        let etag = answer
            .headers()
            .get("ETag")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = answer.text().await?;
        // Axum's own refusals (a path that doesn't parse) are plain text.
        let body = match serde_json::from_str(&text) {
            Ok(json) => json,
            Err(_) if text.is_empty() => JsonValue::Null,
            Err(_) => JsonValue::String(text),
        };
        Ok(Reply { status, etag, body })
    }

    async fn get(&self, path: &str) -> BoxResult<Reply> {
        self.send(reqwest::Method::GET, path, None, None).await
    }

    async fn create(&self, project: &str, title: &str, assignee: &str) -> BoxResult<Reply> {
        let body = json!({ "title": title, "assignee": assignee });
        let path = format!("/projects/{project}/tickets");
        let reply = self
            .send(reqwest::Method::POST, &path, None, Some(body))
            .await?;
        ensure(
            reply.status == 201,
            format!("create answers 201: {}", reply.body),
        )?;
        Ok(reply)
    }

    /// Every ticket id of a paged listing, following its page tokens.
    async fn all_pages(&self, path: &str) -> BoxResult<(Vec<u64>, usize)> {
        let mut ids = Vec::new();
        let mut pages = 0;
        let mut next: Option<String> = None;
        loop {
            let url = match &next {
                Some(token) => format!("{path}&page={token}"),
                None => path.to_owned(),
            };
            let reply = self.get(&url).await?;
            ensure(
                reply.status == 200,
                format!("{url} answers 200: {}", reply.body),
            )?;
            pages += 1;
            ids.extend(ids_of(&reply.body));
            match reply.body["next"].as_str() {
                Some(token) => next = Some(token.to_owned()),
                None => return Ok((ids, pages)),
            }
        }
    }
}

fn ids_of(page: &JsonValue) -> Vec<u64> {
    page["tickets"]
        .as_array()
        .map(|tickets| tickets.iter().filter_map(|t| t["id"].as_u64()).collect())
        .unwrap_or_default()
}

async fn ticket_service(example: Example) -> BoxResult<()> {
    let service = example.service();
    let app = App::open(&service).await?;
    let running = start(app).await?;
    println!("ticket_service listening on {}", running.base);
    let client = Client {
        http: reqwest::Client::new(),
        base: running.base.clone(),
    };

    // 1. Ann and Bob open tickets in two projects.
    println!("\n1. Tickets opened in web and api");
    let mut opened = Vec::new();
    for (project, title, assignee) in [
        ("web", "Login page is slow", "ann"),
        ("web", "Broken link in footer", "bob"),
        ("api", "Rate limit headers", "ann"),
        ("web", "Dark mode", "ann"),
        ("api", "Pagination bug", "ann"),
    ] {
        let reply = client.create(project, title, assignee).await?;
        let id = reply.body["id"].as_u64().unwrap_or_default();
        println!("   POST /projects/{project}/tickets -> 201 ticket {id} ({title}, {assignee})");
        opened.push((project, id, reply));
        // Distinct opening times: the assignee index is newest first.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let ids: Vec<u64> = opened.iter().map(|(_, id, _)| *id).collect();
    ensure(
        ids.windows(2).all(|w| w[0] < w[1]),
        format!("ids are handed out in order, once each: {ids:?}"),
    )?;

    // 2. Two people edit ticket 1 from the same read: the second is refused (412)
    // and must read again.
    println!("\n2. Concurrent edits of one ticket, each with the ETag it read");
    let first = ids[0];
    let path = format!("/projects/web/tickets/{first}");
    let read = client.get(&path).await?;
    let etag = read.etag.clone().unwrap_or_default();
    let mut edits = Vec::new();
    for n in 0..16 {
        let (client, path, etag) = (
            Client {
                http: client.http.clone(),
                base: client.base.clone(),
            },
            path.clone(),
            etag.clone(),
        );
        edits.push(tokio::spawn(async move {
            let body = json!({ "title": format!("Login page is slow (edit {n})") });
            client
                .send(reqwest::Method::PATCH, &path, Some(&etag), Some(body))
                .await
                .map(|reply| reply.status)
                .map_err(|e| e.to_string())
        }));
    }
    let mut statuses = Vec::new();
    for edit in edits {
        statuses.push(edit.await??);
    }
    let won = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 412).count();
    println!("   16 PATCHes with one ETag: {won} answered 200, {refused} answered 412");
    ensure(
        won == 1 && refused == 15,
        format!("exactly one edit of a version wins: {statuses:?}"),
    )?;
    let missing = client
        .send(
            reqwest::Method::PATCH,
            &path,
            None,
            Some(json!({ "status": "done" })),
        )
        .await?;
    ensure(
        missing.status == 428,
        format!("a change without If-Match answers 428: {}", missing.status),
    )?;
    let bad = client
        .send(
            reqwest::Method::PATCH,
            &path,
            Some("\"a\", \"b\""),
            Some(json!({})),
        )
        .await?;
    ensure(
        bad.status == 400,
        format!("a list of ETags answers 400: {}", bad.status),
    )?;

    // 3. Close ticket 2; the project's open tickets (the in-partition index).
    println!("\n3. A project's open tickets, through the status index");
    let second = format!("/projects/web/tickets/{}", ids[1]);
    let closed = client
        .send(
            reqwest::Method::PATCH,
            &second,
            Some("*"),
            Some(json!({ "status": "done" })),
        )
        .await?;
    ensure(
        closed.status == 200,
        "closing a ticket with If-Match: * answers 200",
    )?;
    let open = client.get("/projects/web/tickets?status=open").await?;
    let open_ids = ids_of(&open.body);
    println!("   GET /projects/web/tickets?status=open -> {open_ids:?}");
    ensure(
        open_ids == [ids[0], ids[3]],
        format!("web's open tickets are 1 and 4: {open_ids:?}"),
    )?;

    // 4. Ticket 4 moves to api: its key changes partition, its number follows.
    println!("\n4. A ticket moves to another project");
    let fourth = format!("/projects/web/tickets/{}", ids[3]);
    let before = client.get(&fourth).await?;
    let moved = client
        .send(
            reqwest::Method::POST,
            &format!("{fourth}/move"),
            before.etag.as_deref(),
            Some(json!({ "project": "api" })),
        )
        .await?;
    println!(
        "   POST {fourth}/move {{\"project\":\"api\"}} -> {} ({})",
        moved.status, moved.body["project"]
    );
    ensure(
        moved.status == 200,
        format!("the move answers 200: {}", moved.body),
    )?;
    ensure(
        client.get(&fourth).await?.status == 404,
        "the old address answers 404",
    )?;
    let number = before.body["number"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let found = client.get(&format!("/tickets/{number}")).await?;
    println!(
        "   GET /tickets/{number} -> project {}",
        found.body["project"]
    );
    ensure(
        found.body["project"] == "api" && found.etag == moved.etag,
        format!("the number finds the ticket in api: {}", found.body),
    )?;
    // The version the caller read is gone: a second move with it is refused.
    let again = client
        .send(
            reqwest::Method::POST,
            &format!("{fourth}/move"),
            before.etag.as_deref(),
            Some(json!({ "project": "docs" })),
        )
        .await?;
    ensure(
        again.status == 404,
        format!("moving from the old address answers 404: {}", again.status),
    )?;

    // 5. Ann's tickets, newest first, two per page (the index in its own table).
    println!("\n5. Ann's tickets, newest first, two per page");
    let (anns, pages) = client.all_pages("/people/ann/tickets?limit=2").await?;
    println!("   GET /people/ann/tickets?limit=2 -> {anns:?} in {pages} pages");
    ensure(
        anns == [ids[4], ids[3], ids[2], ids[0]],
        format!("Ann's tickets newest first, the moved one once: {anns:?}"),
    )?;
    let stale = client.get("/people/ann/tickets?page=pt1.nonsense").await?;
    ensure(
        stale.status == 400,
        format!("a malformed page token answers 400: {}", stale.status),
    )?;

    // 6. Delete ticket 2 with a stale ETag (412), then with the current one.
    println!("\n6. Deletes are conditional too");
    let stale_delete = client
        .send(reqwest::Method::DELETE, &second, read.etag.as_deref(), None)
        .await?;
    ensure(
        stale_delete.status == 412,
        format!(
            "a delete with another ticket's ETag answers 412: {}",
            stale_delete.status
        ),
    )?;
    let deleted = client
        .send(
            reqwest::Method::DELETE,
            &second,
            closed.etag.as_deref(),
            None,
        )
        .await?;
    ensure(
        deleted.status == 204,
        "a delete with the current ETag answers 204",
    )?;
    ensure(
        client.get(&second).await?.status == 404,
        "a deleted ticket answers 404",
    )?;

    // 7. What the SDK wrote.
    println!("\n7. The rows behind it");
    let tickets = raw_rows(&service, TICKETS).await?;
    let by_assignee = raw_rows(&service, "TicketsByAssignee").await?;
    let numbers = raw_rows(&service, "TicketNumbers").await?;
    println!(
        "   {TICKETS}: {} tickets, {} status copies; TicketsByAssignee: {} copies; TicketNumbers: {} numbers",
        count_of(&tickets, "Ticket"),
        count_of(&tickets, "Ticket@by_status"),
        count_of(&by_assignee, "Ticket@by_assignee"),
        count_of(&numbers, "Ticket@number"),
    );
    ensure(
        count_of(&tickets, "Ticket") == 4
            && count_of(&tickets, "Ticket@by_status") == 4
            && count_of(&by_assignee, "Ticket@by_assignee") == 4
            && count_of(&numbers, "Ticket@number") == 4,
        "four tickets, each with one copy in each index",
    )?;
    let report = app_report(&service).await?;
    println!("   reconcile: {report}");
    println!("\nticket_service finished: every check passed.");
    Ok(())
}

/// What `reconcile` finds left to do: nothing, when every change finished.
async fn app_report(service: &TableServiceClient) -> BoxResult<String> {
    let report = service.table::<Ticket>(TICKETS).reconcile().await?;
    ensure(
        report.intents_found == 0 && report.moves_left == 0,
        format!("nothing left unfinished: {report}"),
    )?;
    Ok(report.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn client() -> (Running, Client, TableServiceClient) {
        let service = TableServiceClient::in_memory();
        let app = App::open(&service).await.unwrap();
        let running = start(app).await.unwrap();
        let client = Client {
            http: reqwest::Client::new(),
            base: running.base.clone(),
        };
        (running, client, service)
    }

    #[tokio::test]
    async fn the_whole_scenario_passes_on_the_mem_engine() {
        let engine: Arc<dyn tables_client::Engine> = Arc::new(tables_client::mem::MemEngine::new());
        ticket_service(Example::new(engine)).await.unwrap();
    }

    #[tokio::test]
    async fn errors_map_to_their_statuses() {
        let (_running, client, _) = client().await;
        let created = client.create("web", "A", "ann").await.unwrap();
        let id = created.body["id"].as_u64().unwrap();
        let path = format!("/projects/web/tickets/{id}");
        // Unknown ticket: 404; a key the service refuses: 400.
        assert_eq!(
            client
                .get("/projects/web/tickets/999")
                .await
                .unwrap()
                .status,
            404
        );
        assert_eq!(client.get("/tickets/T-999").await.unwrap().status, 404);
        let slash = client.get("/projects/a%2Fb/tickets/1").await.unwrap();
        assert_eq!(slash.status, 400, "{}", slash.body);
        assert_eq!(slash.body["error"], "InvalidKey");
        // A move to the key it has: 400, nothing written.
        let other = client.create("api", "B", "bob").await.unwrap();
        let other_id = other.body["id"].as_u64().unwrap();
        let moved = client
            .send(
                reqwest::Method::POST,
                &format!("/projects/api/tickets/{other_id}/move"),
                Some("*"),
                Some(json!({ "project": "api" })),
            )
            .await
            .unwrap();
        assert_eq!(moved.status, 400, "a move to its own key: {}", moved.body);
        // The ETag a read hands out is the one a change accepts.
        let read = client.get(&path).await.unwrap();
        assert_eq!(read.etag, created.etag);
        let changed = client
            .send(
                reqwest::Method::PATCH,
                &path,
                read.etag.as_deref(),
                Some(json!({ "assignee": "bob" })),
            )
            .await
            .unwrap();
        assert_eq!(changed.status, 200);
        assert_ne!(changed.etag, read.etag);
        let bobs = client
            .all_pages("/people/bob/tickets?limit=1")
            .await
            .unwrap();
        assert_eq!(bobs.0, [other_id, id]);
        assert_eq!(
            client.all_pages("/people/ann/tickets?").await.unwrap().0,
            Vec::<u64>::new()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_moves_of_one_ticket_keep_it_once() {
        let (_running, client, service) = client().await;
        let created = client.create("web", "A", "ann").await.unwrap();
        let id = created.body["id"].as_u64().unwrap();
        let mut moves = Vec::new();
        for to in [
            "api", "docs", "ops", "ios", "android", "data", "infra", "qa",
        ] {
            let client = Client {
                http: client.http.clone(),
                base: client.base.clone(),
            };
            let etag = created.etag.clone().unwrap();
            moves.push(tokio::spawn(async move {
                let reply = client
                    .send(
                        reqwest::Method::POST,
                        &format!("/projects/web/tickets/{id}/move"),
                        Some(&etag),
                        Some(json!({ "project": to })),
                    )
                    .await
                    .unwrap();
                (to, reply.status)
            }));
        }
        let mut won = Vec::new();
        for task in moves {
            let (to, status) = task.await.unwrap();
            assert!(matches!(status, 200 | 404 | 412), "{to}: {status}");
            if status == 200 {
                won.push(to);
            }
        }
        assert_eq!(won.len(), 1, "one move of a version wins: {won:?}");
        let found = client.get(&format!("/tickets/T-{id}")).await.unwrap();
        assert_eq!(found.body["project"], won[0]);
        let rows = service.raw_rows(TICKETS).await.unwrap();
        assert_eq!(count_of(&rows, "Ticket"), 1, "the ticket is in one project");
    }
}
