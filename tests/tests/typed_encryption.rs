//! Encrypted fields (`#[entity(encrypted)]`, `TableServiceClient::with_encryption`):
//! envelope encryption on the client, on every engine of the typed matrix. The
//! engine below only ever holds ciphertext; a client without the key fails closed
//! on writes and with a typed error on reads; a ciphertext altered or moved to
//! another row or column fails to decrypt; keys rotate by re-wrapping.

#![allow(clippy::unwrap_used)] // tests

use tables_client::encryption::{EncryptingEngine, KeyRing, LocalKey};
use tables_client::{DynamicEntity, Entity, ErrorKind, IfMatch, Origin, Result, Value, WriteOp};
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

tables_tests::typed_matrix!(
    encrypted_fields_round_trip_and_are_stored_as_ciphertext,
    without_the_key_nothing_is_written_or_read,
    moved_or_altered_ciphertexts_fail,
    keys_rotate_by_rewrapping,
);
