//! Paging over an [`Engine`], written once: [`EntityPages`] walks the pages of an
//! entity query from a start position, [`TablePages`] those of a table listing. They
//! are the only code that follows continuation tokens: the query fetcher (and so
//! every typed query, stream and page), `reconcile()`, the index checks and the
//! table listings read through them. (An engine wrapper such as `PrefixedEngine`
//! sits below this: it answers one page at a time and never follows tokens.)

use std::collections::VecDeque;

use tables_core::key::cmp_ordinal;
use tables_core::{
    ContinuationToken, DynamicEntity, Engine, Error, ErrorKind, ListTablesOptions, Page, QuerySpec,
    Result, MAX_PAGE_SIZE,
};

/// Where an entity query stands: the next page's start, or the end.
#[derive(Debug, Clone)]
pub(crate) struct EntityPages {
    table: String,
    spec: QuerySpec,
    next: Option<ContinuationToken>,
    done: bool,
    /// Set for a query ordered on the client: what it was read into.
    sorted: Option<Sorted>,
}

/// A query read whole and ordered on the client, for an engine whose results come
/// in any order (Cosmos DB for Table): the rows from the start position on, in key
/// order.
#[derive(Debug, Clone)]
struct Sorted {
    /// Most rows the query may match; more is an error, not a silent buffer.
    max_rows: Option<usize>,
    /// What is left to hand out; `None` until the query has been read.
    rows: Option<VecDeque<DynamicEntity>>,
    /// Why the bound was chosen, for the error when it is passed.
    what: &'static str,
}

impl EntityPages {
    /// The pages of `spec` on `table`, from `start` (the first page when `None`).
    pub(crate) fn new(
        table: impl Into<String>,
        spec: QuerySpec,
        start: Option<ContinuationToken>,
    ) -> EntityPages {
        EntityPages {
            table: table.into(),
            spec,
            next: start,
            done: false,
            sorted: None,
        }
    }

    /// The pages in key order whatever order the engine answers in: the first
    /// page reads the whole query (every engine page), at most `max_rows` rows
    /// (`None`: no bound), orders it by PartitionKey and RowKey, and the pages hand
    /// it out from the start position on; the position of each page is the key of
    /// the row after it, so a page token resumes exactly. `what` names the call for
    /// the error past the bound.
    pub(crate) fn sorted_in_client(mut self, max_rows: Option<usize>, what: &'static str) -> Self {
        self.sorted = Some(Sorted {
            max_rows,
            rows: None,
            what,
        });
        self
    }

    /// The query, for a caller that sets `$top` per page.
    pub(crate) fn spec_mut(&mut self) -> &mut QuerySpec {
        &mut self.spec
    }

    /// Where the next page starts; `None` at the start (before any page, when
    /// started from the beginning) and at the end.
    pub(crate) fn position(&self) -> Option<&ContinuationToken> {
        self.next.as_ref()
    }

    /// Whether the last page has been read.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Reads the next page; `None` after the last. A page may be short, even empty,
    /// and still not be the last.
    ///
    /// # Errors
    ///
    /// The engine's error; the position stays where it was, so the page can be
    /// asked for again.
    pub(crate) async fn next(
        &mut self,
        engine: &dyn Engine,
    ) -> Result<Option<Page<DynamicEntity>>> {
        if self.done {
            return Ok(None);
        }
        if self.sorted.is_some() {
            return self.next_sorted(engine).await.map(Some);
        }
        let page = engine
            .query(&self.table, &self.spec, self.next.as_ref())
            .await?;
        self.next.clone_from(&page.continuation);
        self.done = self.next.is_none();
        Ok(Some(page))
    }
}

impl EntityPages {
    /// The next page of a query ordered on the client (reading it first).
    async fn next_sorted(&mut self, engine: &dyn Engine) -> Result<Page<DynamicEntity>> {
        let top = self.spec.top.unwrap_or(MAX_PAGE_SIZE).max(1) as usize;
        let Some(sorted) = &self.sorted else {
            return unreachable_sorted();
        };
        if sorted.rows.is_none() {
            let (max_rows, what) = (sorted.max_rows, sorted.what);
            let rows = self.read_whole(engine, max_rows, what).await?;
            if let Some(sorted) = &mut self.sorted {
                sorted.rows = Some(rows);
            }
        }
        let Some(rows) = self.sorted.as_mut().and_then(|s| s.rows.as_mut()) else {
            return unreachable_sorted();
        };
        let take = top.min(rows.len());
        let items: Vec<DynamicEntity> = rows.drain(..take).collect();
        self.next = rows.front().map(|row| {
            ContinuationToken::new(row.partition_key.clone(), Some(row.row_key.clone()))
        });
        self.done = self.next.is_none();
        Ok(Page {
            items,
            continuation: self.next.clone(),
        })
    }

    /// Every row of the query from the start position on, in key order.
    async fn read_whole(
        &self,
        engine: &dyn Engine,
        max_rows: Option<usize>,
        what: &'static str,
    ) -> Result<VecDeque<DynamicEntity>> {
        let mut spec = self.spec.clone();
        spec.top = Some(MAX_PAGE_SIZE);
        let mut rows = Vec::new();
        let mut next: Option<ContinuationToken> = None;
        loop {
            let page = engine.query(&self.table, &spec, next.as_ref()).await?;
            rows.extend(page.items);
            if let Some(max) = max_rows {
                if rows.len() > max {
                    return Err(Error::new(
                        ErrorKind::InvalidQuery,
                        format!(
                            "{what} on table {:?} matched more than {max} rows: an engine whose \
                             results come in any order (Cosmos DB for Table) is ordered on the \
                             client by reading the whole query, and the bound given is {max} rows; \
                             narrow the query (a partition, a RowKey range) or raise the bound",
                            self.table
                        ),
                    ));
                }
            }
            match page.continuation {
                Some(token) => next = Some(token),
                None => break,
            }
        }
        rows.sort_by(|a, b| {
            cmp_ordinal(&a.partition_key, &b.partition_key)
                .then_with(|| cmp_ordinal(&a.row_key, &b.row_key))
        });
        // Resume at the start position: the first row whose key is not before it.
        let start = self.next.as_ref().map(|token| {
            (
                token.next_partition_key().to_owned(),
                token.next_row_key().unwrap_or_default().to_owned(),
            )
        });
        let skip = match &start {
            Some((pk, rk)) => rows.partition_point(|row| {
                cmp_ordinal(&row.partition_key, pk)
                    .then_with(|| cmp_ordinal(&row.row_key, rk))
                    .is_lt()
            }),
            None => 0,
        };
        Ok(rows.into_iter().skip(skip).collect())
    }
}

/// The sorted state is set before the calls that use it.
fn unreachable_sorted<T>() -> Result<T> {
    Err(Error::new(
        ErrorKind::InvalidQuery,
        "internal: a client-ordered query was read without its buffer",
    ))
}

/// Where a table listing stands.
#[derive(Debug, Clone)]
pub(crate) struct TablePages {
    options: ListTablesOptions,
    done: bool,
}

impl TablePages {
    /// The pages of a listing with `options` (its `continuation` is the start).
    pub(crate) fn new(options: ListTablesOptions) -> TablePages {
        TablePages {
            options,
            done: false,
        }
    }

    /// The next page's names; `None` after the last page.
    ///
    /// # Errors
    ///
    /// The engine's error; the position stays where it was.
    pub(crate) async fn next<E: Engine + ?Sized>(
        &mut self,
        engine: &E,
    ) -> Result<Option<Vec<String>>> {
        if self.done {
            return Ok(None);
        }
        let page = engine.list_tables(&self.options).await?;
        self.done = page.continuation.is_none();
        self.options.continuation = page.continuation;
        Ok(Some(page.names))
    }
}

#[cfg(all(test, feature = "mem"))]
mod tests {
    use super::*;
    use tables_core::{DynamicEntity, WriteOp};
    use tables_mem::{MemEngine, MemOptions};

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(future)
    }

    #[test]
    fn entity_pages_follow_continuation_from_a_start() {
        block_on(async {
            let engine = MemEngine::with_options(MemOptions::default().with_page_size(2));
            engine.create_table("Tbl").await.unwrap();
            for rk in ["a", "b", "c", "d", "e"] {
                let row = DynamicEntity::new("p", rk);
                engine.write("Tbl", &WriteOp::Insert(row)).await.unwrap();
            }
            let mut pages = EntityPages::new("Tbl", QuerySpec::new(), None);
            let mut sizes = Vec::new();
            let mut second = None;
            while let Some(page) = pages.next(&engine).await.unwrap() {
                sizes.push(page.items.len());
                if sizes.len() == 1 {
                    second = pages.position().cloned();
                }
            }
            assert_eq!(sizes, [2, 2, 1]);
            assert!(pages.is_done());
            assert!(pages.next(&engine).await.unwrap().is_none());

            // From the second page's start: the rest only.
            let mut rest = EntityPages::new("Tbl", QuerySpec::new(), second);
            let first = rest.next(&engine).await.unwrap().unwrap();
            assert_eq!(first.items[0].key().row_key, "c");
        });
    }

    #[test]
    fn table_pages_list_every_table() {
        block_on(async {
            let engine = MemEngine::with_options(MemOptions::default().with_page_size(1));
            for name in ["aaa", "bbb", "ccc"] {
                engine.create_table(name).await.unwrap();
            }
            let mut pages = TablePages::new(ListTablesOptions::default());
            let mut names = Vec::new();
            while let Some(page) = pages.next(&engine).await.unwrap() {
                names.extend(page);
            }
            assert_eq!(names, ["aaa", "bbb", "ccc"]);
        });
    }
}
