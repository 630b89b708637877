//! [`Fetcher`]: runs a prepared query one engine page at a time, decoding rows and
//! keeping count for `take(n)`. Pages, streams and `collect` all read through it.

use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::try_join_all;
use tables_core::model::{
    primary_from_copy, primary_key_of_copy, row_role, schema_of, EntitySchema, RowRole, Tag,
};
use tables_core::{
    ContinuationToken, DynamicEntity, Engine, Error, ErrorKind, QuerySpec, Result, Row,
};

use crate::paging::EntityPages;
use crate::query::index::{CopySource, Source};
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
    /// Primary rows, or an index's copies.
    source: Source,
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
            source: Source::Primary,
            _rows: PhantomData,
        }
    }

    /// The fetcher, reading `source` (an index's copies, or primary rows).
    pub(crate) fn reading(mut self, source: Source) -> Fetcher<T> {
        if matches!(source, Source::Copies(_)) {
            self.told_apart_here = None;
        }
        self.source = source;
        self
    }

    /// The fetcher, reading the query whole and in key order on the client (an
    /// engine without ordered results): at most `max_rows` rows (`None`: no bound),
    /// `what` naming the call in the error past it.
    pub(crate) fn sorted_in_client(
        mut self,
        max_rows: Option<usize>,
        what: &'static str,
    ) -> Fetcher<T> {
        self.pages = self.pages.sorted_in_client(max_rows, what);
        self
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
        let decoded = match &self.source {
            Source::Primary => page
                .items
                .into_iter()
                .filter(|row| match &self.told_apart_here {
                    Some(schemas) => schema_of(schemas, row).is_some(),
                    None => is_primary(row),
                })
                .map(decode)
                .collect(),
            Source::Copies(copies) if copies.verified => {
                match verified(self.engine.as_ref(), copies, page.items).await {
                    Ok(items) => items,
                    Err(err) => {
                        self.done = true;
                        return Err(err);
                    }
                }
            }
            Source::Copies(_) => page.items.into_iter().map(decode_copy).collect(),
        };
        let mut items: Vec<Item<T>> = decoded;
        // An engine that returned more than `$top`: `take` still holds.
        if let Some(left) = self.remaining {
            items.truncate(left);
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

/// Decodes an index copy as the entity it copies, with the copy's version.
fn decode_copy<T: Row>(copy: DynamicEntity) -> Item<T> {
    decode(primary_from_copy(copy)?)
}

/// Reads the entity of each copy (concurrently) and keeps those that still imply
/// their copy, as stored: the verified reading of an index.
async fn verified<T: Row>(
    engine: &dyn Engine,
    copies: &CopySource,
    rows: Vec<DynamicEntity>,
) -> Result<Vec<Item<T>>> {
    let reads = rows.into_iter().map(|copy| async move {
        let key = match primary_key_of_copy(&copy) {
            Ok(key) => key,
            Err(err) => return Ok(Some(Err(err))),
        };
        let Some(primary) = engine.get_entity(&copies.primary_table, &key, None).await? else {
            // An orphan: its entity is gone.
            return Ok(None);
        };
        Ok::<_, Error>(
            match (copies.implies)(&primary, copies.index, &copy.key()) {
                Ok(true) => Some(decode(primary)),
                // A stale copy: the entity moved on.
                Ok(false) => None,
                Err(err) => Some(Err(err)),
            },
        )
    });
    Ok(try_join_all(reads).await?.into_iter().flatten().collect())
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
