//! Encrypted fields (`#[entity(encrypted)]`, `TableServiceClient::with_encryption`):
//! envelope encryption on the client, on every engine of the typed matrix. The
//! engine below only ever holds ciphertext; a client without the key fails closed
//! on writes and with a typed error on reads; a ciphertext altered or moved to
//! another row or column fails to decrypt; keys rotate by re-wrapping; rows of the
//! legacy client-side encryption (.NET `TableEncryptionPolicy`) read.

#![allow(clippy::unwrap_used)] // tests

use tables_client::encryption::{EncryptingEngine, KeyRing, LocalKey};
use tables_client::{
    DynamicEntity, Entity, ErrorKind, IfMatch, Origin, Result, TableServiceClient, Value, WriteOp,
};
use tables_tests::read::get;
use tables_tests::typed::Backend;

/// A person whose SSN and salary are encrypted; the email is indexed (the copy
/// holds the encrypted SSN too).
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Person", partition_key = "{team}", row_key = "p_{id}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
struct Person {
    team: String,
    id: String,
    email: String,
    #[entity(encrypted)]
    ssn: String,
    #[entity(encrypted)]
    salary: Option<i64>,
}

const TABLE: &str = "People";
const SSN: &str = "123-45-6789";

fn person(id: &str, ssn: &str) -> Person {
    Person {
        team: "hr".to_owned(),
        id: id.to_owned(),
        email: format!("{id}@x.com"),
        ssn: ssn.to_owned(),
        salary: Some(90_000),
    }
}

fn key(id: &str, byte: u8) -> LocalKey {
    LocalKey::new(id, [byte; 32]).unwrap()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Values round-trip through every write path; the stored rows (the primary and
/// its index copy) hold envelopes in which the plaintext does not appear.
async fn encrypted_fields_round_trip_and_are_stored_as_ciphertext(backend: Backend) -> Result<()> {
    let plain = backend.service();
    plain.create_table(TABLE).await?;
    let service = plain.clone().with_encryption(key("k1", 1));
    let people = service.table::<Person>(TABLE);
    people.insert(&person("ann", SSN)).await?;
    let got = people.get(Person::key("hr", "ann")?).await?.unwrap().value;
    assert_eq!(got, person("ann", SSN));
    let by_email = people
        .get_by_index(Person::email_key("hr", "ann@x.com")?)
        .await?;
    assert_eq!(by_email.unwrap().value, person("ann", SSN));

    // Bulk, a transaction-backed update and a query all pass through the layer.
    service
        .bulk_writer::<Person>(TABLE)
        .write_all(vec![
            person("bob", "987-65-4321"),
            person("cy", "555-55-5555"),
        ])
        .await?;
    people
        .update(Person::key("hr", "bob")?, |p| p.salary = Some(1))
        .await?;
    let all = people.query().collect().await?;
    assert_eq!(all.len(), 3);
    assert!(all
        .iter()
        .any(|p| p.id == "bob" && p.salary == Some(1) && p.ssn == "987-65-4321"));

    for rk in ["p_ann", "email_ann@x.com"] {
        let raw = get(plain.engine().as_ref(), TABLE, "hr", rk)
            .await?
            .unwrap();
        let Some(Value::Binary(bytes)) = raw.get("ssn") else {
            panic!("{rk}: ssn is not stored as binary: {raw:?}");
        };
        assert!(bytes.starts_with(b"\0tblenc1"), "{rk}: an envelope");
        assert!(
            !contains(bytes, SSN.as_bytes()),
            "{rk}: the plaintext is stored"
        );
        assert!(matches!(raw.get("salary"), Some(Value::Binary(_))), "{rk}");
    }
    assert!(
        !format!("{service:?}").contains("[1, 1, 1"),
        "the key leaks into Debug"
    );
    Ok(())
}

/// A client without a key writes nothing (the engine refuses the sealed values
/// before anything is sent) and reads a typed error; so does a client with another
/// key under the same id.
async fn without_the_key_nothing_is_written_or_read(backend: Backend) -> Result<()> {
    let plain = backend.service();
    plain.create_table(TABLE).await?;
    let err = plain
        .table::<Person>(TABLE)
        .insert(&person("ann", SSN))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
    assert_eq!(err.origin(), Origin::Local, "{err}");
    assert!(!err.may_have_applied());
    assert!(!err.to_string().contains(SSN), "{err}");
    assert!(get(plain.engine().as_ref(), TABLE, "hr", "p_ann")
        .await?
        .is_none());

    plain
        .clone()
        .with_encryption(key("k1", 1))
        .table::<Person>(TABLE)
        .insert(&person("ann", SSN))
        .await?;
    let err = plain
        .table::<Person>(TABLE)
        .get(Person::key("hr", "ann")?)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
    let impostor = plain.clone().with_encryption(key("k1", 2));
    let err = impostor
        .table::<Person>(TABLE)
        .get(Person::key("hr", "ann")?)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
    Ok(())
}

/// A ciphertext moved to another row or another column, or altered, does not
/// decrypt: the error is typed, never garbage.
async fn moved_or_altered_ciphertexts_fail(backend: Backend) -> Result<()> {
    let plain = backend.service();
    plain.create_table(TABLE).await?;
    let service = plain.clone().with_encryption(key("k1", 1));
    let people = service.table::<Person>(TABLE);
    people.insert(&person("ann", SSN)).await?;
    people.insert(&person("bob", "000-00-0000")).await?;
    let ann = get(plain.engine().as_ref(), TABLE, "hr", "p_ann")
        .await?
        .unwrap();
    let ann_ssn = ann.get("ssn").unwrap().clone();
    let ann_salary = ann.get("salary").unwrap().clone();

    let overwrite = |rk: &str, name: &str, value: Value| WriteOp::Merge {
        entity: DynamicEntity::new("hr", rk).with(name, value),
        if_match: IfMatch::Any,
    };
    // Ann's SSN copied into Bob's row.
    plain
        .engine()
        .write(TABLE, &overwrite("p_bob", "ssn", ann_ssn.clone()))
        .await?;
    let err = people.get(Person::key("hr", "bob")?).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
    // Ann's salary ciphertext moved into her SSN column.
    plain
        .engine()
        .write(TABLE, &overwrite("p_ann", "ssn", ann_salary))
        .await?;
    let err = people.get(Person::key("hr", "ann")?).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
    // One bit of the ciphertext flipped.
    let Value::Binary(mut bytes) = ann_ssn else {
        panic!("binary")
    };
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    plain
        .engine()
        .write(TABLE, &overwrite("p_ann", "ssn", Value::Binary(bytes)))
        .await?;
    let err = people.get(Person::key("hr", "ann")?).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
    Ok(())
}

/// Rotation: rows written under k1 read under a ring whose current key is k2;
/// re-wrapping moves every row to k2 without changing a value, after which k1 can
/// go.
async fn keys_rotate_by_rewrapping(backend: Backend) -> Result<()> {
    let plain = backend.service();
    plain.create_table(TABLE).await?;
    let old = plain.clone().with_encryption(key("k1", 1));
    old.table::<Person>(TABLE)
        .insert(&person("ann", SSN))
        .await?;
    let before = get(plain.engine().as_ref(), TABLE, "hr", "p_ann")
        .await?
        .unwrap();

    let ring = KeyRing::new(key("k2", 2)).with_older(key("k1", 1));
    let rotating = EncryptingEngine::new(plain.engine().clone(), std::sync::Arc::new(ring.clone()));
    let rewrapped = rotating.rewrap_table(TABLE).await?;
    assert_eq!(rewrapped, 2, "the primary and its index copy");
    assert_eq!(
        rotating.rewrap_table(TABLE).await?,
        0,
        "nothing left under k1"
    );

    let after = get(plain.engine().as_ref(), TABLE, "hr", "p_ann")
        .await?
        .unwrap();
    let (Some(Value::Binary(a)), Some(Value::Binary(b))) = (before.get("ssn"), after.get("ssn"))
    else {
        panic!("binary")
    };
    assert_ne!(a, b, "the key id and wrapped key changed");
    assert_eq!(
        a[a.len() - 40..],
        b[b.len() - 40..],
        "the ciphertext did not"
    );

    let new_only = plain.clone().with_encryption(key("k2", 2));
    let got = new_only
        .table::<Person>(TABLE)
        .get(Person::key("hr", "ann")?)
        .await?;
    assert_eq!(got.unwrap().value, person("ann", SSN));
    let err = old
        .table::<Person>(TABLE)
        .get(Person::key("hr", "ann")?)
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        ErrorKind::Encryption,
        "k1 alone no longer reads: {err}"
    );
    Ok(())
}

/// A row of an existing table that the legacy client-side encryption wrote.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    untagged,
    partition_key = "{pk}",
    row_key = "{rk}",
    rename_all = "PascalCase"
)]
struct LegacyPerson {
    pk: String,
    rk: String,
    name: String,
    age: Option<i32>,
    #[entity(encrypted, rename = "SSN")]
    ssn: Option<String>,
    #[entity(encrypted)]
    note: Option<String>,
    #[entity(encrypted)]
    secret: Option<String>,
}

/// A projection of [`LegacyPerson`]: the SSN alone.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    untagged,
    kind = "LegacyPerson",
    partition_key = "{pk}",
    row_key = "{rk}"
)]
struct LegacySsn {
    pk: String,
    rk: String,
    #[entity(encrypted, rename = "SSN")]
    ssn: Option<String>,
}

const LEGACY: &str = "LegacyRows";

/// The rows of `tests/fixtures/legacy_encryption_vectors.json`, as stored, and the
/// key that wrapped their content keys.
fn legacy_vectors() -> (Vec<(DynamicEntity, serde_json::Value)>, LocalKey) {
    use base64::Engine as _;
    let vectors: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/legacy_encryption_vectors.json")).unwrap();
    let hex = vectors["key_hex"].as_str().unwrap();
    let mut bytes = [0u8; 32];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    let key = LocalKey::new(vectors["key_id"].as_str().unwrap(), bytes).unwrap();
    let rows = vectors["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let mut entity = DynamicEntity::new(
                row["PartitionKey"].as_str().unwrap(),
                row["RowKey"].as_str().unwrap(),
            );
            for (name, stored) in row["stored"].as_object().unwrap() {
                let value = &stored["value"];
                let value = match stored["type"].as_str().unwrap() {
                    "Edm.String" => Value::String(value.as_str().unwrap().to_owned()),
                    "Edm.Int32" => Value::Int32(i32::try_from(value.as_i64().unwrap()).unwrap()),
                    "Edm.Binary" => Value::Binary(
                        base64::engine::general_purpose::STANDARD
                            .decode(value.as_str().unwrap())
                            .unwrap(),
                    ),
                    other => panic!("no such type in the vectors: {other}"),
                };
                entity.insert(name.clone(), value);
            }
            (entity, row["plaintext"].clone())
        })
        .collect();
    (rows, key)
}

/// The table `LEGACY` holding the vectors' rows as stored (written past any
/// encryption); the rows and the key that wrapped their content keys.
async fn legacy_table(
    plain: &TableServiceClient,
) -> Result<(Vec<(DynamicEntity, serde_json::Value)>, LocalKey)> {
    plain.create_table(LEGACY).await?;
    let (rows, legacy_key) = legacy_vectors();
    for (entity, _) in &rows {
        plain
            .engine()
            .write(LEGACY, &WriteOp::Insert(entity.clone()))
            .await?;
    }
    Ok((rows, legacy_key))
}

/// Rows that the legacy client-side encryption wrote (the .NET storage library's
/// `TableEncryptionPolicy` format; these by azure-cosmosdb-table 1.0.6, its Python
/// twin, through its public API: `tools/py-legacy/make_vectors.py`) read into
/// encrypted fields when the ring holds the key that wrapped their content keys:
/// multi-block and empty values, non-ASCII keys (they feed each value's IV), by get,
/// by query and by a projection. Written back, a row is stored in this crate's
/// format. Without the key, or with a value altered, the read fails with an
/// encryption error naming the key or the property.
async fn legacy_client_side_encryption_rows_read(backend: Backend) -> Result<()> {
    let plain = backend.service();
    let (rows, legacy_key) = legacy_table(&plain).await?;
    let service = plain
        .clone()
        .with_encryption(KeyRing::new(key("current", 9)).with_older(legacy_key));
    let table = service.table::<LegacyPerson>(LEGACY);
    let text =
        |plaintext: &serde_json::Value, name: &str| plaintext[name].as_str().map(str::to_owned);
    for (entity, plaintext) in &rows {
        let got = table
            .get(LegacyPerson::key(&entity.partition_key, &entity.row_key)?)
            .await?
            .unwrap()
            .value;
        assert_eq!(got.ssn, text(plaintext, "SSN"), "{got:?}");
        assert_eq!(got.note, text(plaintext, "Note"), "{got:?}");
        assert_eq!(got.secret, text(plaintext, "Secret"), "{got:?}");
        assert_eq!(Some(&Value::String(got.name.clone())), entity.get("Name"));
    }
    assert_eq!(rows[0].1["Note"], "", "an empty value is one padding block");
    let all = table.query().collect().await?;
    assert_eq!(all.len(), rows.len());
    assert!(all.iter().any(|p| p.ssn.as_deref() == Some("123-45-6789")));
    // A projection: the layer also selects the legacy metadata it decrypts with.
    let ssns = table.query().select::<LegacySsn>().collect().await?;
    let mut ssns: Vec<Option<String>> = ssns.into_iter().map(|p| p.ssn).collect();
    ssns.sort();
    assert_eq!(ssns, [None, Some("123-45-6789".to_owned())]);

    // Written back: this crate's format, no legacy metadata; it still reads.
    let ann = all.iter().find(|p| p.ssn.is_some()).unwrap().clone();
    table.replace(&ann, IfMatch::Any).await?;
    let stored = get(plain.engine().as_ref(), LEGACY, &ann.pk, &ann.rk)
        .await?
        .unwrap();
    assert!(stored.get("_ClientEncryptionMetadata1").is_none());
    let Some(Value::Binary(ssn)) = stored.get("SSN") else {
        panic!("binary")
    };
    assert!(ssn.starts_with(b"\0tblenc1"), "this crate's envelope");
    let again = table
        .get(LegacyPerson::key(&ann.pk, &ann.rk)?)
        .await?
        .unwrap();
    assert_eq!(again.value, ann);

    // Without the legacy key: refused, naming it.
    let (entity, _) = &rows[1];
    let other_key = plain.clone().with_encryption(key("current", 9));
    let err = other_key
        .table::<LegacyPerson>(LEGACY)
        .get(LegacyPerson::key(&entity.partition_key, &entity.row_key)?)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
    assert!(err.to_string().contains("legacy-key-1"), "{err}");
    // A ciphertext altered in its last block: its padding no longer checks.
    let Some(Value::Binary(mut secret)) = entity.get("Secret").cloned() else {
        panic!("binary")
    };
    let last = secret.len() - 1;
    secret[last] ^= 0x55;
    plain
        .engine()
        .write(
            LEGACY,
            &WriteOp::Merge {
                entity: DynamicEntity::new(&entity.partition_key, &entity.row_key)
                    .with("Secret", Value::Binary(secret)),
                if_match: IfMatch::Any,
            },
        )
        .await?;
    let err = table
        .get(LegacyPerson::key(&entity.partition_key, &entity.row_key)?)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Encryption, "{err}");
    assert!(err.to_string().contains("Secret"), "{err}");
    Ok(())
}

/// `rewrap_table` moves rows of the legacy format to this one: each is replaced
/// whole, its values encrypted again under the current key and the legacy metadata
/// gone, so a client without the legacy key reads them; a second run finds nothing
/// left to move.
async fn rewrap_table_moves_legacy_rows_to_this_format(backend: Backend) -> Result<()> {
    let plain = backend.service();
    let (rows, legacy_key) = legacy_table(&plain).await?;
    let ring = KeyRing::new(key("current", 9)).with_older(legacy_key);
    let moving = EncryptingEngine::new(plain.engine().clone(), std::sync::Arc::new(ring));
    assert_eq!(moving.rewrap_table(LEGACY).await?, rows.len());
    assert_eq!(
        moving.rewrap_table(LEGACY).await?,
        0,
        "nothing left to move"
    );

    let current_only = plain.clone().with_encryption(key("current", 9));
    let table = current_only.table::<LegacyPerson>(LEGACY);
    for (entity, plaintext) in &rows {
        let stored = get(
            plain.engine().as_ref(),
            LEGACY,
            &entity.partition_key,
            &entity.row_key,
        )
        .await?
        .unwrap();
        assert!(
            stored.get("_ClientEncryptionMetadata1").is_none(),
            "{stored:?}"
        );
        assert!(
            stored.get("_ClientEncryptionMetadata2").is_none(),
            "{stored:?}"
        );
        assert_eq!(stored.get("Name"), entity.get("Name"), "plain values kept");
        assert_eq!(stored.get("Age"), entity.get("Age"), "plain values kept");
        let got = table
            .get(LegacyPerson::key(&entity.partition_key, &entity.row_key)?)
            .await?
            .unwrap()
            .value;
        for (name, field) in [
            ("SSN", &got.ssn),
            ("Note", &got.note),
            ("Secret", &got.secret),
        ] {
            assert_eq!(field.as_deref(), plaintext[name].as_str(), "{name}");
        }
    }
    Ok(())
}

tables_tests::typed_matrix!(
    encrypted_fields_round_trip_and_are_stored_as_ciphertext,
    without_the_key_nothing_is_written_or_read,
    moved_or_altered_ciphertexts_fail,
    keys_rotate_by_rewrapping,
    legacy_client_side_encryption_rows_read,
    rewrap_table_moves_legacy_rows_to_this_format,
);
