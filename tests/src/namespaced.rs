//! [`Namespaced`]: an engine wrapper that gives each instance its own table
//! namespace, so tests sharing one endpoint (one Azurite for the whole run) never
//! see or touch each other's tables.

use async_trait::async_trait;
use tables_core::key::validate_table_name;
use tables_core::{
    ContinuationToken, DynamicEntity, Engine, EntityKey, ListTablesOptions, Page, QuerySpec,
    Result, TablePage, WriteOp, WriteOutcome,
};

/// Length of every namespace prefix: `t` and 8 hex digits.
const PREFIX_LEN: usize = 9;

/// The longest table name the service accepts.
const MAX_SERVICE_NAME_LEN: usize = 63;

/// An [`Engine`] wrapper that prefixes every table name with a per-instance
/// namespace (`t` and 8 random hex digits) on the way in, and strips it on the way
/// out.
///
/// - Table names are checked with [`validate_table_name`] first, and an invalid name
///   fails with that error unchanged, exactly as on the bare engine (prefixing `ab`
///   would otherwise make it valid).
/// - A valid name longer than [`Namespaced::MAX_TABLE_NAME_LEN`] (54) characters
///   cannot be namespaced within the service's 63-character limit: using one
///   **panics**, telling the test's author to shorten it.
/// - [`Engine::list_tables`] lists only this namespace: the prefix is added to the
///   prefix filter and to the continuation, and stripped from the names and the
///   next continuation.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use tables_core::{Engine, ListTablesOptions};
/// use tables_tests::Namespaced;
///
/// let shared = tables_mem::MemEngine::new();
/// let a = Namespaced::new(shared.clone());
/// let b = Namespaced::new(shared.clone());
/// a.create_table("Orders").await.unwrap();
/// b.create_table("Orders").await.unwrap(); // no conflict: another namespace
///
/// let page = a.list_tables(&ListTablesOptions::default()).await.unwrap();
/// assert_eq!(page.names, ["Orders"]);
/// let inner = shared.list_tables(&ListTablesOptions::default()).await.unwrap();
/// assert!(inner.names.contains(&format!("{}Orders", a.prefix())));
///
/// a.drop_tables().await;
/// b.drop_tables().await;
/// # });
/// ```
#[derive(Debug)]
pub struct Namespaced<E> {
    inner: E,
    prefix: String,
}

impl<E: Engine> Namespaced<E> {
    /// The longest table name a test can use through a [`Namespaced`] engine: the
    /// service's 63 characters minus the 9-character prefix.
    pub const MAX_TABLE_NAME_LEN: usize = MAX_SERVICE_NAME_LEN - PREFIX_LEN;

    /// Wraps `inner` in a fresh, random namespace.
    pub fn new(inner: E) -> Namespaced<E> {
        let hex = uuid::Uuid::new_v4().simple().to_string();
        let prefix = format!("t{}", &hex[..PREFIX_LEN - 1]);
        Namespaced { inner, prefix }
    }

    /// The namespace prefix (`t` and 8 lowercase hex digits) that every table name
    /// gets on the wrapped engine.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The wrapped engine, which sees the prefixed names.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// Deletes, best effort, every table of this namespace (and none of any
    /// other). Failures are ignored, as cleanup must not mask a test's own
    /// outcome: a table already gone is skipped, and if the listing fails, the
    /// tables listed so far are still deleted.
    pub async fn drop_tables(&self) {
        let mut names = Vec::new();
        let mut options = ListTablesOptions {
            prefix: Some(self.prefix.clone()),
            ..ListTablesOptions::default()
        };
        loop {
            let Ok(page) = self.inner.list_tables(&options).await else {
                break;
            };
            names.extend(
                page.names
                    .into_iter()
                    .filter(|name| self.strip(name).is_some()),
            );
            match page.continuation {
                Some(next) => options.continuation = Some(next),
                None => break,
            }
        }
        for name in names {
            // Best effort: a table deleted meanwhile (or any failure) is skipped.
            let _ = self.inner.delete_table(&name).await;
        }
    }

    /// The wrapped engine's name for the table `name`.
    ///
    /// # Errors
    ///
    /// [`validate_table_name`]'s error for an invalid name, unchanged.
    ///
    /// # Panics
    ///
    /// If `name` is valid but too long to namespace.
    fn inner_name(&self, name: &str) -> Result<String> {
        validate_table_name(name)?;
        let length = name.chars().count();
        assert!(
            length <= Self::MAX_TABLE_NAME_LEN,
            "Namespaced: the table name {name:?} is valid ({length} characters) but too long \
             to run under a test namespace: with the {PREFIX_LEN}-character prefix {:?} it \
             would exceed the service's {MAX_SERVICE_NAME_LEN} characters. Shorten it to at \
             most {} characters.",
            self.prefix,
            Self::MAX_TABLE_NAME_LEN,
        );
        let mut inner = String::with_capacity(PREFIX_LEN + name.len());
        inner.push_str(&self.prefix);
        inner.push_str(name);
        Ok(inner)
    }

    /// The caller's name for the wrapped engine's table `inner`, if it belongs to
    /// this namespace. Table names compare case-insensitively.
    fn strip<'a>(&self, inner: &'a str) -> Option<&'a str> {
        let head = inner.get(..PREFIX_LEN)?;
        head.eq_ignore_ascii_case(&self.prefix)
            .then(|| &inner[PREFIX_LEN..])
    }
}

#[async_trait]
impl<E: Engine> Engine for Namespaced<E> {
    async fn create_table(&self, table: &str) -> Result<()> {
        self.inner.create_table(&self.inner_name(table)?).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.inner.delete_table(&self.inner_name(table)?).await
    }

    async fn list_tables(&self, options: &ListTablesOptions) -> Result<TablePage> {
        let namespaced = |text: &str| format!("{}{text}", self.prefix);
        let inner_options = ListTablesOptions {
            prefix: Some(namespaced(options.prefix.as_deref().unwrap_or(""))),
            page_size: options.page_size,
            continuation: options.continuation.as_deref().map(namespaced),
        };
        let page = self.inner.list_tables(&inner_options).await?;
        Ok(TablePage {
            names: page
                .names
                .iter()
                .filter_map(|name| self.strip(name))
                .map(str::to_owned)
                .collect(),
            // A continuation outside the namespace means nothing of it is left.
            continuation: page
                .continuation
                .as_deref()
                .and_then(|next| self.strip(next))
                .map(str::to_owned),
        })
    }

    async fn get_entity(
        &self,
        table: &str,
        key: &EntityKey,
        select: Option<&[String]>,
    ) -> Result<Option<DynamicEntity>> {
        let table = self.inner_name(table)?;
        self.inner.get_entity(&table, key, select).await
    }

    async fn query(
        &self,
        table: &str,
        spec: &QuerySpec,
        continuation: Option<&ContinuationToken>,
    ) -> Result<Page<DynamicEntity>> {
        let table = self.inner_name(table)?;
        self.inner.query(&table, spec, continuation).await
    }

    async fn write(&self, table: &str, op: &WriteOp) -> Result<WriteOutcome> {
        self.inner.write(&self.inner_name(table)?, op).await
    }

    async fn submit_batch(&self, table: &str, ops: &[WriteOp]) -> Result<Vec<WriteOutcome>> {
        self.inner.submit_batch(&self.inner_name(table)?, ops).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tables_core::{ErrorKind, Value};
    use tables_mem::{MemEngine, MemOptions};

    async fn all_names(engine: &dyn Engine, options: ListTablesOptions) -> Vec<String> {
        let mut options = options;
        let mut names = Vec::new();
        loop {
            let page = engine.list_tables(&options).await.unwrap();
            names.extend(page.names);
            match page.continuation {
                Some(next) => options.continuation = Some(next),
                None => return names,
            }
        }
    }

    fn sorted(mut names: Vec<String>) -> Vec<String> {
        names.sort();
        names
    }

    #[tokio::test]
    async fn prefix_is_t_and_8_hex_digits_and_unique() {
        let a = Namespaced::new(MemEngine::new());
        let b = Namespaced::new(MemEngine::new());
        for ns in [&a, &b] {
            assert_eq!(ns.prefix().len(), PREFIX_LEN);
            assert!(ns.prefix().starts_with('t'));
            assert!(ns.prefix()[1..]
                .bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
            assert!(validate_table_name(ns.prefix()).is_ok());
        }
        assert_ne!(a.prefix(), b.prefix());
        assert_eq!(Namespaced::<MemEngine>::MAX_TABLE_NAME_LEN, 54);
    }

    #[tokio::test]
    async fn wrappers_over_one_engine_see_only_their_own_tables() {
        let shared = MemEngine::new();
        let a = Namespaced::new(shared.clone());
        let b = Namespaced::new(shared.clone());
        shared.create_table("Outside").await.unwrap();
        a.create_table("Orders").await.unwrap();
        a.create_table("Users").await.unwrap();
        b.create_table("Orders").await.unwrap();
        assert_eq!(
            a.create_table("orders").await.unwrap_err().kind(),
            ErrorKind::TableAlreadyExists
        );

        assert_eq!(
            all_names(&a, ListTablesOptions::default()).await,
            ["Orders", "Users"]
        );
        assert_eq!(
            all_names(&b, ListTablesOptions::default()).await,
            ["Orders"]
        );
        assert_eq!(
            sorted(all_names(&shared, ListTablesOptions::default()).await),
            sorted(vec![
                "Outside".to_owned(),
                format!("{}Orders", a.prefix()),
                format!("{}Users", a.prefix()),
                format!("{}Orders", b.prefix()),
            ])
        );

        // Entities live in the namespaced table.
        let key = EntityKey::new("p", "r");
        let entity = DynamicEntity::new("p", "r").with("N", Value::Int32(7));
        a.write("Orders", &WriteOp::Insert(entity)).await.unwrap();
        assert!(a.get_entity("Orders", &key, None).await.unwrap().is_some());
        assert!(b.get_entity("Orders", &key, None).await.unwrap().is_none());
        let inner_table = format!("{}Orders", a.prefix());
        assert!(shared
            .get_entity(&inner_table, &key, None)
            .await
            .unwrap()
            .is_some());
        let page = a.query("Orders", &QuerySpec::new(), None).await.unwrap();
        assert_eq!(page.items.len(), 1);
        assert_eq!(
            b.get_entity("Users", &key, None).await.unwrap_err().kind(),
            ErrorKind::TableNotFound
        );

        a.delete_table("Users").await.unwrap();
        assert_eq!(
            all_names(&a, ListTablesOptions::default()).await,
            ["Orders"]
        );
        assert_eq!(
            b.delete_table("Users").await.unwrap_err().kind(),
            ErrorKind::TableNotFound
        );
    }

    #[tokio::test]
    async fn listing_with_a_prefix_and_pages_of_one() {
        let shared = MemEngine::with_options(MemOptions {
            page_size: 1,
            ..MemOptions::default()
        });
        let a = Namespaced::new(shared.clone());
        let b = Namespaced::new(shared.clone());
        for name in ["abc1", "abc2", "abd", "xyz"] {
            a.create_table(name).await.unwrap();
            b.create_table(name).await.unwrap();
        }
        shared.create_table("abc3").await.unwrap();

        let prefixed = |prefix: &str, page_size| ListTablesOptions {
            prefix: Some(prefix.to_owned()),
            page_size,
            continuation: None,
        };
        assert_eq!(all_names(&a, prefixed("abc", None)).await, ["abc1", "abc2"]);
        assert_eq!(
            all_names(&a, prefixed("ab", Some(1))).await,
            ["abc1", "abc2", "abd"]
        );
        assert_eq!(
            all_names(&b, ListTablesOptions::default()).await,
            ["abc1", "abc2", "abd", "xyz"]
        );

        // Paging by hand: each continuation is a name of the caller's namespace.
        let first = a.list_tables(&prefixed("ab", Some(1))).await.unwrap();
        assert_eq!(first.names, ["abc1"]);
        let next = first.continuation.unwrap();
        assert!(!next.starts_with(a.prefix()), "{next}");
        let second = a
            .list_tables(&ListTablesOptions {
                continuation: Some(next),
                ..prefixed("ab", Some(1))
            })
            .await
            .unwrap();
        assert_eq!(second.names, ["abc2"]);

        // Continuing from an arbitrary caller-side name.
        let from = ListTablesOptions {
            continuation: Some("abd".to_owned()),
            ..ListTablesOptions::default()
        };
        assert_eq!(all_names(&a, from).await, ["abd", "xyz"]);

        // An invalid page size is the engine's error.
        assert_eq!(
            a.list_tables(&prefixed("ab", Some(0)))
                .await
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidQuery
        );
    }

    #[tokio::test]
    async fn drop_tables_removes_only_its_own() {
        let shared = MemEngine::with_options(MemOptions {
            page_size: 1,
            ..MemOptions::default()
        });
        let a = Namespaced::new(shared.clone());
        let b = Namespaced::new(shared.clone());
        for name in ["one", "two", "three"] {
            a.create_table(name).await.unwrap();
        }
        b.create_table("one").await.unwrap();
        shared.create_table("plain").await.unwrap();

        a.drop_tables().await;
        assert!(all_names(&a, ListTablesOptions::default()).await.is_empty());
        assert_eq!(all_names(&b, ListTablesOptions::default()).await, ["one"]);
        assert_eq!(
            sorted(all_names(&shared, ListTablesOptions::default()).await),
            sorted(vec!["plain".to_owned(), format!("{}one", b.prefix())])
        );
        // Idempotent, and the namespace stays usable.
        a.drop_tables().await;
        a.create_table("one").await.unwrap();
        assert_eq!(all_names(&a, ListTablesOptions::default()).await, ["one"]);
    }

    #[tokio::test]
    async fn invalid_names_fail_as_on_the_bare_engine() {
        let bare = MemEngine::new();
        let ns = Namespaced::new(MemEngine::new());
        let overlong = format!("a{}", "b".repeat(63));
        for name in ["ab", "1abc", "my-table", "tables", "", overlong.as_str()] {
            let expected = bare.create_table(name).await.unwrap_err();
            let got = ns.create_table(name).await.unwrap_err();
            assert_eq!(got.kind(), ErrorKind::InvalidTableName, "{name:?}");
            assert_eq!(got.kind(), expected.kind(), "{name:?}");
            assert_eq!(got.service_code(), expected.service_code(), "{name:?}");
            let key = EntityKey::new("p", "r");
            assert_eq!(
                ns.get_entity(name, &key, None).await.unwrap_err().kind(),
                ErrorKind::InvalidTableName,
                "{name:?}"
            );
        }
        assert!(all_names(&ns.inner, ListTablesOptions::default())
            .await
            .is_empty());
    }

    #[tokio::test]
    async fn longest_namespaced_name_works() {
        let ns = Namespaced::new(MemEngine::new());
        let longest = format!("a{}", "b".repeat(53));
        ns.create_table(&longest).await.unwrap();
        assert_eq!(
            all_names(&ns, ListTablesOptions::default()).await,
            [longest]
        );
    }

    #[tokio::test]
    #[should_panic(expected = "Shorten it to at most 54 characters")]
    async fn valid_name_too_long_to_namespace_panics() {
        let ns = Namespaced::new(MemEngine::new());
        let name = format!("a{}", "b".repeat(54));
        assert!(validate_table_name(&name).is_ok());
        let _ = ns.create_table(&name).await;
    }
}
