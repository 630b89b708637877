//! A query read page by page with the next page already on its way: while a
//! worker writes one page (encoding it, compressing it, sending it as batches), the
//! service answers the next and the client decodes it on another thread.
//!
//! An export of JSON Lines asks for pages as the service's JSON
//! ([`Pages::as_json`]): each entity's object is copied as it came, never decoded
//! and encoded again (an engine without a wire form, the mem engine, hands rows).

use tables_client::{ContinuationToken, DynamicEntity, QuerySpec, TableServiceClient};
use tables_core::JsonPage;
use tokio::task::JoinHandle;

use crate::Failure;

/// The rows of one page: decoded, or the service's JSON body.
#[derive(Debug)]
pub(crate) enum Rows {
    Decoded(Vec<DynamicEntity>),
    Json(Vec<u8>),
}

/// One page and the continuation after it (`None` after the last).
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) rows: Rows,
    pub(crate) continuation: Option<ContinuationToken>,
}

impl Fetched {
    /// The page's rows, decoded.
    pub(crate) fn into_rows(self) -> Result<Vec<DynamicEntity>, Failure> {
        match self.rows {
            Rows::Decoded(rows) => Ok(rows),
            Rows::Json(body) => Ok(tables_core::odata::decode_entity_page(&body)?),
        }
    }
}

type Fetch = JoinHandle<tables_client::Result<Fetched>>;

/// The pages of one query, one requested ahead.
pub(crate) struct Pages {
    service: TableServiceClient,
    table: String,
    spec: QuerySpec,
    json: bool,
    ahead: Option<Fetch>,
}

impl Pages {
    /// Starts reading `table` at `continuation` (`None`: from the start), rows
    /// decoded.
    pub(crate) fn new(
        service: &TableServiceClient,
        table: &str,
        spec: QuerySpec,
        continuation: Option<ContinuationToken>,
    ) -> Pages {
        Pages::start(service, table, spec, continuation, false)
    }

    /// As [`Pages::new`], pages as the service's JSON where the engine has it.
    pub(crate) fn as_json(
        service: &TableServiceClient,
        table: &str,
        spec: QuerySpec,
        continuation: Option<ContinuationToken>,
    ) -> Pages {
        Pages::start(service, table, spec, continuation, true)
    }

    fn start(
        service: &TableServiceClient,
        table: &str,
        spec: QuerySpec,
        continuation: Option<ContinuationToken>,
        json: bool,
    ) -> Pages {
        let mut pages = Pages {
            service: service.clone(),
            table: table.to_owned(),
            spec,
            json,
            ahead: None,
        };
        pages.ahead = Some(pages.fetch(continuation));
        pages
    }

    fn fetch(&self, continuation: Option<ContinuationToken>) -> Fetch {
        let (service, table, spec, json) = (
            self.service.clone(),
            self.table.clone(),
            self.spec.clone(),
            self.json,
        );
        tokio::spawn(async move {
            let engine = service.engine();
            if json {
                if let Some(JsonPage {
                    body, continuation, ..
                }) = engine
                    .query_json(&table, &spec, continuation.as_ref())
                    .await?
                {
                    return Ok(Fetched {
                        rows: Rows::Json(body),
                        continuation,
                    });
                }
            }
            let page = engine.query(&table, &spec, continuation.as_ref()).await?;
            Ok(Fetched {
                rows: Rows::Decoded(page.items),
                continuation: page.continuation,
            })
        })
    }

    /// The next page, asking for the one after it before returning; `None` after
    /// the last.
    pub(crate) async fn next(&mut self) -> Result<Option<Fetched>, Failure> {
        let Some(fetch) = self.ahead.take() else {
            return Ok(None);
        };
        let page = fetch
            .await
            .map_err(|e| Failure::service(format!("reading a page failed: {e}")))??;
        if let Some(next) = &page.continuation {
            self.ahead = Some(self.fetch(Some(next.clone())));
        }
        Ok(Some(page))
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        if let Some(fetch) = self.ahead.take() {
            fetch.abort();
        }
    }
}
