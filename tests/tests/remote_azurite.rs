//! Authentication against the run's Azurite, which checks signatures: SharedKey and
//! SharedKeyLite requests are accepted and a wrong key is refused; SAS tokens made by
//! `TableSasBuilder` grant what they say (signature, permissions and expiry checked
//! by Azurite; the key range by the client as Azure checks it, since Azurite does
//! not check ranges); connection
//! strings of every credential form reach the account.
//!
//! Skipped loudly without Azurite; a failure under `CI=true`.

#![allow(clippy::unwrap_used)] // tests

use tables_client::remote::{
    AccountKey, Credential, RemoteEngine, RetryPolicy, SasToken, TableSasBuilder,
    TableSasPermissions,
};
use tables_client::{
    col, AuthHint, DateTime, DynamicEntity, Engine, EntityKey, ErrorKind, Origin, QuerySpec,
    TableServiceClient, WriteOp,
};
use tables_tests::azurite::{connection_string, dev_key, engine, url_or_skip, DEV_ACCOUNT};
use tables_tests::read::query_all;

/// A table name unique to this test run.
fn unique(stem: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{stem}{}", &id[..12])
}

fn row(pk: &str, rk: &str) -> DynamicEntity {
    DynamicEntity::new(pk, rk).with("Note", format!("{pk}/{rk}"))
}

/// A table holding one row in each of partitions p1, p2 and p3.
async fn seeded(owner: &RemoteEngine, stem: &str) -> String {
    let table = unique(stem);
    owner.create_table(&table).await.unwrap();
    for pk in ["p1", "p2", "p3"] {
        owner
            .write(&table, &WriteOp::Insert(row(pk, "r")))
            .await
            .unwrap();
    }
    table
}

fn in_a_year() -> DateTime {
    DateTime::now()
        .checked_add_ticks(365 * 24 * 3600 * DateTime::TICKS_PER_SECOND)
        .unwrap()
}

fn sas_engine(url: &str, token: SasToken) -> RemoteEngine {
    RemoteEngine::builder(url)
        .credential(Credential::Sas(token))
        .build()
        .unwrap()
}

async fn get(
    engine: &RemoteEngine,
    table: &str,
    pk: &str,
) -> tables_client::Result<Option<DynamicEntity>> {
    engine
        .get_entity(table, &EntityKey::new(pk, "r"), None)
        .await
}

async fn partition(engine: &RemoteEngine, table: &str, pk: &str) -> tables_client::Result<usize> {
    let spec = QuerySpec::new().filter(col("PartitionKey").eq(pk));
    Ok(engine.query(table, &spec, None).await?.items.len())
}

#[tokio::test]
async fn shared_key_and_shared_key_lite_are_accepted() {
    let Some(url) = url_or_skip("remote_azurite::shared_key_and_shared_key_lite_are_accepted")
    else {
        return;
    };
    for credential in [
        Credential::SharedKey(dev_key()),
        Credential::SharedKeyLite(dev_key()),
    ] {
        let engine = RemoteEngine::builder(&url)
            .credential(credential)
            .build()
            .unwrap();
        let table = unique("Signed");
        engine.create_table(&table).await.unwrap();
        engine
            .write(&table, &WriteOp::Insert(row("p", "r")))
            .await
            .unwrap();
        assert!(get(&engine, &table, "p").await.unwrap().is_some());
        engine.delete_table(&table).await.unwrap();
    }
}

#[tokio::test]
async fn a_wrong_key_is_refused() {
    let Some(url) = url_or_skip("remote_azurite::a_wrong_key_is_refused") else {
        return;
    };
    // A well-formed key that is not the account's: Azurite checks the signature.
    const WRONG: &str = "d3Jvbmcga2V5IGZvciB0aGUgZGV2IGFjY291bnQ=";
    let wrong = AccountKey::new(DEV_ACCOUNT, WRONG).unwrap();
    for (credential, hint) in [
        (
            Credential::SharedKey(wrong.clone()),
            AuthHint::WrongAccountOrKey,
        ),
        (
            Credential::SharedKeyLite(wrong),
            AuthHint::WrongAccountOrKey,
        ),
        (Credential::Anonymous, AuthHint::NoCredential),
    ] {
        let engine = RemoteEngine::builder(&url)
            .credential(credential)
            .build()
            .unwrap();
        let err = engine.create_table(&unique("Refused")).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
        assert_eq!(err.status(), Some(403), "{err:?}");
        assert_eq!(err.origin(), Origin::Service, "{err:?}");
        assert_eq!(err.auth_hint(), Some(hint), "{err}");
        assert!(!err.is_transient());
        // What to check, and never the key or a signature.
        let shown = format!("{err} {err:?}");
        if hint == AuthHint::WrongAccountOrKey {
            assert!(shown.contains(DEV_ACCOUNT), "{shown}");
        }
        for secret in [WRONG, &WRONG[..16], "SharedKey devstoreaccount1:"] {
            assert!(!shown.contains(secret), "{secret:?} in {shown}");
        }
    }
}

#[tokio::test]
async fn a_partition_range_sas_reads_inside_and_is_refused_outside() {
    let Some(url) =
        url_or_skip("remote_azurite::a_partition_range_sas_reads_inside_and_is_refused_outside")
    else {
        return;
    };
    let owner = engine(&url);
    let table = seeded(&owner, "Ranged").await;
    let token = TableSasBuilder::new(&table, TableSasPermissions::read_only(), in_a_year())
        .start_key("p2", None)
        .end_key("p2", None)
        .sign(&dev_key())
        .unwrap();
    assert!(!format!("{token:?}").contains(&sig_of(&token)));
    let reader = sas_engine(&url, token.clone());

    // Inside the range: the point read and the partition query succeed, signed by the
    // token alone (Azurite checks its signature against the account key).
    assert_eq!(
        get(&reader, &table, "p2")
            .await
            .unwrap()
            .unwrap()
            .partition_key,
        "p2"
    );
    assert_eq!(partition(&reader, &table, "p2").await.unwrap(), 1);

    // Outside it: refused, before anything is sent, with the service's 403 answer.
    for pk in ["p1", "p3"] {
        let err = get(&reader, &table, pk).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
        assert_eq!(err.status(), Some(403));
        let err = partition(&reader, &table, pk).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    }

    // A query over every partition is answered as Azure answers it, with the rows
    // inside the range only. Azurite itself does not check SAS key ranges
    // (https://github.com/Azure/Azurite/issues/726): the client adds
    // the range to the filter, so the answer is the same on both.
    let everything = query_all(&reader, &table, &QuerySpec::new()).await.unwrap();
    let partitions: Vec<&str> = everything
        .iter()
        .map(|e| e.partition_key.as_str())
        .collect();
    assert_eq!(partitions, ["p2"]);
    // Without the client's help, Azurite hands out every row: the same token on a
    // plain GET of the whole table shows it.
    let raw = raw_sas_query(&url, &table, &token).await;
    assert_eq!(raw, 3, "Azurite ignores SAS key ranges");
    owner.delete_table(&table).await.unwrap();
}

/// The number of rows a plain GET of the whole table returns with the token's query
/// string, bypassing the client.
async fn raw_sas_query(url: &str, table: &str, token: &SasToken) -> usize {
    let response = reqwest::Client::new()
        .get(format!("{url}/{table}()?{}", token.expose_query()))
        .header("Accept", "application/json;odata=nometadata")
        .header("x-ms-version", "2019-02-02")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    body["value"].as_array().unwrap().len()
}

fn sig_of(token: &SasToken) -> String {
    token
        .expose_query()
        .split('&')
        .find_map(|p| p.strip_prefix("sig="))
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn sas_permissions_and_expiry_are_enforced_by_the_service() {
    let Some(url) =
        url_or_skip("remote_azurite::sas_permissions_and_expiry_are_enforced_by_the_service")
    else {
        return;
    };
    let owner = engine(&url);
    let table = seeded(&owner, "Perms").await;

    // Read-only: reads pass, every write is refused by Azurite (403
    // AuthorizationPermissionMismatch), and the error says which permission.
    let reader = sas_engine(
        &url,
        TableSasBuilder::new(&table, TableSasPermissions::read_only(), in_a_year())
            .sign(&dev_key())
            .unwrap(),
    );
    assert_eq!(
        reader
            .query(&table, &QuerySpec::new(), None)
            .await
            .unwrap()
            .items
            .len(),
        3
    );
    for op in [
        WriteOp::Insert(row("p9", "r")),
        WriteOp::UpsertReplace(row("p1", "r")),
        WriteOp::Delete {
            key: EntityKey::new("p1", "r"),
            if_match: tables_client::IfMatch::Any,
        },
    ] {
        let err = reader.write(&table, &op).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Auth, "{:?}: {err:?}", op.mode());
        assert_eq!(err.status(), Some(403));
        assert_eq!(
            err.auth_hint(),
            Some(AuthHint::MissingPermission),
            "{:?}: {err}",
            op.mode()
        );
    }

    // Read and add: inserts pass; deletes still refused.
    let adder = sas_engine(
        &url,
        TableSasBuilder::new(
            &table,
            TableSasPermissions {
                read: true,
                add: true,
                update: false,
                delete: false,
            },
            in_a_year(),
        )
        .sign(&dev_key())
        .unwrap(),
    );
    adder
        .write(&table, &WriteOp::Insert(row("p4", "r")))
        .await
        .unwrap();
    assert!(get(&adder, &table, "p4").await.unwrap().is_some());

    // An expiry already past: refused by the builder, before anything is sent.
    let past = TableSasBuilder::new(
        &table,
        TableSasPermissions::all(),
        DateTime::from_ymd_hms(2020, 1, 2, 0, 0, 0).unwrap(),
    )
    .sign(&dev_key())
    .unwrap_err();
    assert_eq!(past.kind(), ErrorKind::InvalidInput, "{past:?}");
    assert_eq!(past.auth_hint(), Some(AuthHint::SasExpired));
    assert_eq!(past.origin(), Origin::Local);

    // Expired since it was made: refused by Azurite, and the error says so.
    let expiry = DateTime::now()
        .checked_add_ticks(2 * DateTime::TICKS_PER_SECOND)
        .unwrap();
    let soon_expired = TableSasBuilder::new(&table, TableSasPermissions::all(), expiry)
        .sign(&dev_key())
        .unwrap();
    let soon_expired = sas_engine(&url, soon_expired);
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let err = get(&soon_expired, &table, "p1").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    assert_eq!(err.auth_hint(), Some(AuthHint::SasExpired), "{err}");

    // Not valid yet: refused, and the error says from when.
    let later = |hours: i64| {
        DateTime::now()
            .checked_add_ticks(hours * 3600 * DateTime::TICKS_PER_SECOND)
            .unwrap()
    };
    let early = TableSasBuilder::new(&table, TableSasPermissions::all(), later(2))
        .start(later(1))
        .sign(&dev_key())
        .unwrap();
    let err = get(&sas_engine(&url, early), &table, "p1")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    assert_eq!(err.auth_hint(), Some(AuthHint::SasNotYetValid), "{err}");

    // A token for another table does not open this one.
    let other_name = unique("Other");
    let other = TableSasBuilder::new(&other_name, TableSasPermissions::all(), in_a_year())
        .sign(&dev_key())
        .unwrap();
    let err = get(&sas_engine(&url, other), &table, "p1")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err:?}");
    assert_eq!(err.auth_hint(), Some(AuthHint::MissingPermission), "{err}");
    assert!(err.to_string().contains(&other_name), "{err}");
    owner.delete_table(&table).await.unwrap();
}

/// Connection failures name the endpoint, the request and what to check, on the
/// run's Azurite: https to its plain-http port fails the TLS handshake.
#[tokio::test]
async fn https_to_azurites_plain_http_port_says_tls() {
    let Some(url) = url_or_skip("remote_azurite::https_to_azurites_plain_http_port_says_tls")
    else {
        return;
    };
    let https = url.replacen("http://", "https://", 1);
    let engine = RemoteEngine::builder(&https)
        .credential(Credential::SharedKey(dev_key()))
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();
    let err = engine.create_table(&unique("Tls")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Transport, "{err:?}");
    assert_eq!(err.origin(), Origin::Transport, "{err:?}");
    let parsed = reqwest::Url::parse(&https).unwrap();
    let origin = format!(
        "https://{}:{}",
        parsed.host_str().unwrap(),
        parsed.port().unwrap()
    );
    let text = err.to_string();
    assert!(text.contains(&origin), "{text}");
    assert!(text.contains("POST /devstoreaccount1/Tables"), "{text}");
    assert!(text.contains("the TLS handshake failed"), "{text}");
}

/// Unchecked filter text reaches the service as written: Azurite reads upper-case
/// keywords (docs/service-behaviour.md#filters), which `Filter::parse` does not, and answers
/// the query.
#[tokio::test]
async fn unchecked_filter_text_reaches_the_service_as_written() {
    let Some(url) =
        url_or_skip("remote_azurite::unchecked_filter_text_reaches_the_service_as_written")
    else {
        return;
    };
    let owner = engine(&url);
    let table = seeded(&owner, "Raw").await;
    let text = "Note eq 'p1/r' OR Note eq 'p3/r'";
    assert!(tables_client::Filter::parse(text).is_err());
    let spec = QuerySpec::new().filter_unchecked(text);
    let rows = query_all(&owner, &table, &spec).await.unwrap();
    let partitions: Vec<&str> = rows.iter().map(|e| e.partition_key.as_str()).collect();
    assert_eq!(partitions, ["p1", "p3"]);
    // Combined with a checked part, it stays in its parentheses.
    let spec = QuerySpec::new().filter(
        col("PartitionKey")
            .eq("p3")
            .and(tables_client::Filter::unchecked_raw(text)),
    );
    let rows = query_all(&owner, &table, &spec).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].partition_key, "p3");
    // The mem engine can't evaluate it, and says so.
    let mem = tables_client::mem::MemEngine::new();
    mem.create_table(&table).await.unwrap();
    let err = mem
        .query(&table, &QuerySpec::new().filter_unchecked(text), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    owner.delete_table(&table).await.unwrap();
}

/// `UseDevelopmentStorage=true` with a proxy URI reaches an Azurite on any port.
#[tokio::test]
async fn development_storage_reaches_azurite_on_its_port() {
    let Some(url) = url_or_skip("remote_azurite::development_storage_reaches_azurite_on_its_port")
    else {
        return;
    };
    let parsed = reqwest::Url::parse(&url).unwrap();
    let proxy = format!(
        "http://{}:{}",
        parsed.host_str().unwrap(),
        parsed.port().unwrap()
    );
    let service = TableServiceClient::from_connection_string(&format!(
        "UseDevelopmentStorage=true;DevelopmentStorageProxyUri={proxy}"
    ))
    .unwrap();
    let table = unique("Proxy");
    service.create_table(&table).await.unwrap();
    assert!(service.list_tables().await.unwrap().contains(&table));
    service.delete_table(&table).await.unwrap();
}

#[tokio::test]
async fn connection_strings_reach_the_account() {
    let Some(url) = url_or_skip("remote_azurite::connection_strings_reach_the_account") else {
        return;
    };
    // Account key form, through the typed client's constructor.
    let service = TableServiceClient::from_connection_string(&connection_string(&url)).unwrap();
    let table = unique("Conn");
    service.create_table(&table).await.unwrap();
    assert!(service.list_tables().await.unwrap().contains(&table));

    // SAS form: TableEndpoint plus SharedAccessSignature.
    let token = TableSasBuilder::new(&table, TableSasPermissions::all(), in_a_year())
        .sign(&dev_key())
        .unwrap();
    let sas_string = format!(
        "TableEndpoint={url};SharedAccessSignature={}",
        token.expose_query()
    );
    let via_sas = RemoteEngine::from_connection_string(&sas_string).unwrap();
    via_sas
        .write(&table, &WriteOp::Insert(row("p", "r")))
        .await
        .unwrap();
    assert!(get(&via_sas, &table, "p").await.unwrap().is_some());
    assert!(!format!("{via_sas:?}").contains(&sig_of(&token)));
    service.delete_table(&table).await.unwrap();
}
