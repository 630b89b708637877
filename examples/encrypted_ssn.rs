//! Encrypted properties: an employee's SSN encrypted on the client before it is
//! sent, so the service (and anyone reading the table) holds only ciphertext.
//!
//! ```text
//! cargo run --example encrypted_ssn
//! ```
//!
//! The design guide's "Encrypt table data": `#[entity(encrypted)]` marks the field;
//! `TableServiceClient::with_encryption` gives the client a key-encryption key. Each
//! value gets a fresh data key, wrapped by that key and stored beside the value;
//! the ciphertext is bound to its table, row and column. Rotating the key
//! re-wraps data keys without re-encrypting the values.
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use tables_client::encryption::{EncryptingEngine, KeyRing, LocalKey};
use tables_client::{Entity, ErrorKind, Value};
use tables_examples::{ensure, BoxResult, Example};

const TABLE: &str = "Employees";
const SSN: &str = "123-45-6789";

#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
struct Employee {
    department: String,
    employee_id: u32,
    name: String,
    #[entity(encrypted)]
    ssn: String,
}

#[tokio::main]
async fn main() -> BoxResult<()> {
    tables_examples::run(encrypted_ssn).await
}

async fn encrypted_ssn(example: Example) -> BoxResult<()> {
    let plain = example.service();
    plain.create_table(TABLE).await?;
    // In production the key comes from a key vault (implement KeyEncryptionKey).
    let key_2025 = LocalKey::generate("hr-2025")?;
    let hr = plain.clone().with_encryption(key_2025.clone());
    let employees = hr.table::<Employee>(TABLE);

    // 1. Written and read back through the encrypting client.
    let ann = Employee {
        department: "HR".into(),
        employee_id: 7,
        name: "Ann".into(),
        ssn: SSN.into(),
    };
    employees.insert(&ann).await?;
    let read = employees
        .get(Employee::key("HR", 7)?)
        .await?
        .ok_or("written")?
        .value;
    println!("\n1. read back through the key: {} {}", read.name, read.ssn);
    ensure(read == ann, "the value round-trips")?;

    // 2. What the table holds: an envelope, not the SSN.
    let stored = plain
        .engine()
        .get_entity(TABLE, &Employee::key("HR", 7)?.into_entity_key(), None)
        .await?
        .ok_or("stored")?;
    let Some(Value::Binary(bytes)) = stored.get("ssn") else {
        return Err("ssn is not stored as binary".into());
    };
    let leaks = bytes.windows(SSN.len()).any(|w| w == SSN.as_bytes());
    println!(
        "2. stored ssn: {} bytes of Edm.Binary; holds the plaintext: {leaks}",
        bytes.len()
    );
    ensure(!leaks, "the table holds no plaintext")?;

    // 3. A client without the key can neither read nor write the field.
    let no_key = plain.table::<Employee>(TABLE);
    let read_err = no_key
        .get(Employee::key("HR", 7)?)
        .await
        .err()
        .ok_or("refused")?;
    let write_err = no_key
        .insert(&Employee {
            employee_id: 8,
            ..ann.clone()
        })
        .await
        .err()
        .ok_or("refused")?;
    println!(
        "3. without the key: read -> {:?}, write -> {:?}",
        read_err.kind(),
        write_err.kind()
    );
    ensure(
        read_err.kind() == ErrorKind::Encryption && write_err.kind() == ErrorKind::Encryption,
        "both are encryption errors",
    )?;

    // 4. Rotation: a new key becomes current, the old one stays for reading until
    //    every row is re-wrapped; then the old key can go.
    let key_2026 = LocalKey::generate("hr-2026")?;
    let ring = KeyRing::new(key_2026.clone()).with_older(key_2025);
    let rotating = EncryptingEngine::new(Arc::clone(plain.engine()), Arc::new(ring));
    let rewrapped = rotating.rewrap_table(TABLE).await?;
    let after = plain
        .clone()
        .with_encryption(key_2026)
        .table::<Employee>(TABLE);
    let read = after
        .get(Employee::key("HR", 7)?)
        .await?
        .ok_or("written")?
        .value;
    println!(
        "4. re-wrapped {rewrapped} row(s); read with the new key alone: {}",
        read.ssn
    );
    ensure(rewrapped == 1 && read == ann, "rotation keeps every value")?;
    Ok(())
}
