//! Paging over an [`Engine`], written once: [`EntityPages`] walks the pages of an
//! entity query from a start position, [`TablePages`] those of a table listing. They
//! are the only code that follows continuation tokens: the query fetcher (and so
//! every typed query, stream and page), `reconcile()`, the index checks and the
//! table listings read through them. (An engine wrapper such as `PrefixedEngine`
//! sits below this: it answers one page at a time and never follows tokens.)

use tables_core::{
    ContinuationToken, DynamicEntity, Engine, ListTablesOptions, Page, QuerySpec, Result,
};

/// Where an entity query stands: the next page's start, or the end.
#[derive(Debug, Clone)]
pub(crate) struct EntityPages {
    table: String,
    spec: QuerySpec,
    next: Option<ContinuationToken>,
    done: bool,
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
        }
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
        let page = engine
            .query(&self.table, &self.spec, self.next.as_ref())
            .await?;
        self.next.clone_from(&page.continuation);
        self.done = self.next.is_none();
        Ok(Some(page))
    }
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
