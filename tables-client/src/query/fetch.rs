//! [`Fetcher`]: runs a prepared query one engine page at a time, decoding rows and
//! keeping count for `take(n)`. Pages, streams and `collect` all read through it.

use std::marker::PhantomData;
use std::sync::Arc;

use tables_core::model::{row_role, schema_of, EntitySchema, RowRole, Tag};
use tables_core::{
    ContinuationToken, DynamicEntity, Engine, Error, ErrorKind, QuerySpec, Result, Row,
};

use crate::paging::EntityPages;
use crate::table::Versioned;

/// One decoded row, or the reason it could not be decoded.
pub(crate) type Item<T> = Result<Versioned<T>>;

/// The state of a query being read: where the next engine page starts and how many
/// items `take(n)` still allows.
pub(crate) struct Fetcher<T> {
    engine: Arc<dyn Engine>,
    /// `$filter` and `$select`, and where the next page starts; `$top` is set per
    /// request.
    pages: EntityPages,
    page_size: u32,
    /// Items `take(n)` still allows; `None` without `take`.
    remaining: Option<usize>,
    done: bool,
    /// The types whose rows the query reads, when the service can't tell them apart
    /// (an untagged type takes any row but those another kind's tag marks): rows
    /// none of them takes are skipped. `None` when the service's filter selects them.
    told_apart_here: Option<Vec<&'static EntitySchema>>,
    _rows: PhantomData<fn() -> T>,
}

impl<T: Row> Fetcher<T> {
    /// A fetcher starting at `next` (the first page when `None`).
    pub(crate) fn new(
        engine: Arc<dyn Engine>,
        table: Arc<str>,
        spec: QuerySpec,
        page_size: u32,
        remaining: Option<usize>,
        next: Option<ContinuationToken>,
    ) -> Fetcher<T> {
        Fetcher {
            engine,
            pages: EntityPages::new(&*table, spec, next),
            page_size,
            remaining,
            done: remaining == Some(0),
            told_apart_here: T::KINDS.and_then(|_| {
                let schemas = T::schemas();
                schemas
                    .iter()
                    .any(|s| s.tag == Tag::Untagged)
                    .then_some(schemas)
            }),
            _rows: PhantomData,
        }
    }

    /// Whether the query has nothing more to give.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Where the next engine page starts; `None` before the first page and at the
    /// end.
    pub(crate) fn continuation(&self) -> Option<&ContinuationToken> {
        self.pages.position()
    }

    /// Runs one engine page of at most `limit` rows (and at most the page size and
    /// what `take` allows). Rows that are not primaries (index copies, index
    /// entries, the client's own rows) are skipped; a row that fails to decode is an
    /// `Err` item in its place.
    ///
    /// # Errors
    ///
    /// The engine's error; the query is then done.
    pub(crate) async fn fetch_once(&mut self, limit: usize) -> Result<Vec<Item<T>>> {
        if self.done {
            return Ok(Vec::new());
        }
        let allowed = self.remaining.map_or(limit, |left| left.min(limit));
        let top = u32::try_from(allowed)
            .unwrap_or(u32::MAX)
            .clamp(1, self.page_size);
        self.pages.spec_mut().top = Some(top);
        let page = match self.pages.next(self.engine.as_ref()).await {
            Ok(Some(page)) => page,
            Ok(None) => {
                self.done = true;
                return Ok(Vec::new());
            }
            Err(err) => {
                self.done = true;
                return Err(err);
            }
        };
        let mut items = Vec::with_capacity(page.items.len());
        for row in page.items {
            if self.remaining == Some(items.len()) {
                // An engine that returned more than `$top`: `take` still holds.
                break;
            }
            let taken = match &self.told_apart_here {
                Some(schemas) => schema_of(schemas, &row).is_some(),
                None => is_primary(&row),
            };
            if taken {
                items.push(decode(row));
            }
        }
        if let Some(left) = &mut self.remaining {
            *left -= items.len();
        }
        self.done = self.pages.is_done() || self.remaining == Some(0);
        Ok(items)
    }

    /// Engine pages until at least one item or the end; `None` at the end. An
    /// engine error is the batch's last item, and ends the query.
    pub(crate) async fn next_batch(&mut self) -> Option<Vec<Item<T>>> {
        while !self.done {
            match self.fetch_once(self.page_size as usize).await {
                Ok(items) if items.is_empty() => continue,
                Ok(items) => return Some(items),
                Err(err) => return Some(vec![Err(err)]),
            }
        }
        None
    }
}

/// Whether a row is a primary row (or a row no derived type wrote), as opposed to an
/// index copy, an index entry or a row the client keeps for itself.
fn is_primary(row: &DynamicEntity) -> bool {
    matches!(row_role(row), RowRole::Primary { .. } | RowRole::Untyped)
}

/// Decodes a stored row with its version.
pub(crate) fn decode<T: Row>(row: DynamicEntity) -> Result<Versioned<T>> {
    let (Some(etag), Some(timestamp)) = (row.etag.clone(), row.timestamp) else {
        let key = row.key();
        return Err(Error::new(
            ErrorKind::Decode,
            format!("the engine returned {key} without its ETag and Timestamp"),
        )
        .with_entity_key(key));
    };
    Ok(Versioned {
        value: T::from_entity(row)?,
        etag,
        timestamp,
    })
}
