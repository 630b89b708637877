use super::*;
use crate::mem::{MemEngine, MemOptions};
use tables_core::Value;

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

#[test]
fn prefixes_must_start_valid_table_names() {
    for good in ["a", "staging", "T1", &"a".repeat(60)] {
        let engine = PrefixedEngine::new(MemEngine::new(), good).unwrap();
        assert_eq!(engine.prefix(), good);
        assert_eq!(engine.max_table_name_len(), 63 - good.len());
    }
    for bad in ["", "1abc", "my-env", "a b", "é", &"a".repeat(61)] {
        let err = PrefixedEngine::new(MemEngine::new(), bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad:?}");
        assert!(err.to_string().contains("prefix"), "{err}");
    }
}

#[test]
fn unique_prefixes_are_t_and_8_hex_digits() {
    let a = PrefixedEngine::unique(MemEngine::new());
    let b = PrefixedEngine::unique(MemEngine::new());
    for engine in [&a, &b] {
        let prefix = engine.prefix();
        assert_eq!(prefix.len(), 9);
        assert!(prefix.starts_with('t'));
        assert!(prefix[1..]
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
        assert!(validate_table_name(prefix).is_ok());
        assert_eq!(engine.max_table_name_len(), 54);
    }
    assert_ne!(a.prefix(), b.prefix());
}

#[tokio::test]
async fn wrappers_over_one_engine_see_only_their_own_tables() {
    let shared = MemEngine::new();
    let a = PrefixedEngine::new(shared.clone(), "envA").unwrap();
    let b = PrefixedEngine::new(shared.clone(), "envB").unwrap();
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
        ["Outside", "envAOrders", "envAUsers", "envBOrders"]
    );

    // Entities live in the prefixed table.
    let key = EntityKey::new("p", "r");
    let entity = DynamicEntity::new("p", "r").with("N", Value::Int32(7));
    a.write("Orders", &WriteOp::Insert(entity.clone()))
        .await
        .unwrap();
    a.submit_batch(
        "Users",
        &[
            WriteOp::Insert(entity.clone()),
            WriteOp::Insert(DynamicEntity::new("p", "s")),
        ],
    )
    .await
    .unwrap();
    assert!(a.get_entity("Orders", &key, None).await.unwrap().is_some());
    assert!(b.get_entity("Orders", &key, None).await.unwrap().is_none());
    assert!(shared
        .get_entity("envAOrders", &key, None)
        .await
        .unwrap()
        .is_some());
    let page = a.query("Users", &QuerySpec::new(), None).await.unwrap();
    assert_eq!(page.items.len(), 2);
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
async fn a_prefix_that_prefixes_another_does_not_see_its_tables_as_empty_names() {
    // "env" and "envA": the account's table "envA" is neither a table named "" under
    // "envA" nor one named "A" (too short) under "env"; "envAOrders" shows under
    // "env" as "AOrders", a valid name that starts with the prefix.
    let shared = MemEngine::new();
    let short = PrefixedEngine::new(shared.clone(), "env").unwrap();
    let long = PrefixedEngine::new(shared.clone(), "envA").unwrap();
    long.create_table("Orders").await.unwrap();
    shared.create_table("envA").await.unwrap();
    assert_eq!(
        all_names(&long, ListTablesOptions::default()).await,
        ["Orders"]
    );
    assert_eq!(
        all_names(&short, ListTablesOptions::default()).await,
        ["AOrders"]
    );
}

#[tokio::test]
async fn listing_with_a_prefix_and_pages_of_one() {
    let shared = MemEngine::with_options(MemOptions::default().with_page_size(1));
    let a = PrefixedEngine::unique(shared.clone());
    let b = PrefixedEngine::unique(shared.clone());
    for name in ["abc1", "abc2", "abd", "xyz"] {
        a.create_table(name).await.unwrap();
        b.create_table(name).await.unwrap();
    }
    shared.create_table("abc3").await.unwrap();

    let prefixed = |prefix: &str, page_size| {
        let mut options = ListTablesOptions::default().with_prefix(prefix);
        options.page_size = page_size;
        options
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

    // Paging by hand: each continuation is a name of the caller's.
    let first = a.list_tables(&prefixed("ab", Some(1))).await.unwrap();
    assert_eq!(first.names, ["abc1"]);
    let next = first.continuation.unwrap();
    assert!(!next.starts_with(a.prefix()), "{next}");
    let second = a
        .list_tables(&prefixed("ab", Some(1)).with_continuation(next))
        .await
        .unwrap();
    assert_eq!(second.names, ["abc2"]);

    // Continuing from an arbitrary caller-side name.
    let from = ListTablesOptions::default().with_continuation("abd");
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
async fn delete_all_tables_removes_only_its_own() {
    let shared = MemEngine::with_options(MemOptions::default().with_page_size(1));
    let a = PrefixedEngine::unique(shared.clone());
    let b = PrefixedEngine::unique(shared.clone());
    for name in ["one", "two", "three"] {
        a.create_table(name).await.unwrap();
    }
    b.create_table("one").await.unwrap();
    shared.create_table("plain").await.unwrap();

    assert_eq!(
        a.delete_all_tables().await.unwrap(),
        ["one", "three", "two"]
    );
    assert!(all_names(&a, ListTablesOptions::default()).await.is_empty());
    assert_eq!(all_names(&b, ListTablesOptions::default()).await, ["one"]);
    assert_eq!(
        sorted(all_names(&shared, ListTablesOptions::default()).await),
        sorted(vec!["plain".to_owned(), format!("{}one", b.prefix())])
    );
    // Idempotent, and the prefix stays usable.
    assert!(a.delete_all_tables().await.unwrap().is_empty());
    a.create_table("one").await.unwrap();
    assert_eq!(all_names(&a, ListTablesOptions::default()).await, ["one"]);
}

#[tokio::test]
async fn invalid_names_fail_as_on_the_bare_engine() {
    let bare = MemEngine::new();
    let engine = PrefixedEngine::unique(MemEngine::new());
    let overlong = format!("a{}", "b".repeat(63));
    for name in ["ab", "1abc", "my-table", "tables", "", overlong.as_str()] {
        let expected = bare.create_table(name).await.unwrap_err();
        let got = engine.create_table(name).await.unwrap_err();
        assert_eq!(got.kind(), ErrorKind::InvalidTableName, "{name:?}");
        assert_eq!(got.kind(), expected.kind(), "{name:?}");
        assert_eq!(got.service_code(), expected.service_code(), "{name:?}");
        let key = EntityKey::new("p", "r");
        assert_eq!(
            engine
                .get_entity(name, &key, None)
                .await
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidTableName,
            "{name:?}"
        );
    }
    assert!(all_names(engine.inner(), ListTablesOptions::default())
        .await
        .is_empty());
}

#[tokio::test]
async fn names_too_long_for_the_prefix_are_refused_with_the_limit() {
    let engine = PrefixedEngine::unique(MemEngine::new());
    let longest = format!("a{}", "b".repeat(53));
    engine.create_table(&longest).await.unwrap();
    assert_eq!(
        all_names(&engine, ListTablesOptions::default()).await,
        [longest]
    );
    let name = format!("a{}", "b".repeat(54));
    assert!(validate_table_name(&name).is_ok());
    let err = engine.create_table(&name).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidTableName);
    assert!(err.to_string().contains("at most 54 characters"), "{err}");
    let page = engine
        .inner()
        .list_tables(&ListTablesOptions::default())
        .await
        .unwrap();
    assert_eq!(page.names.len(), 1, "nothing else was created");
}
