//! What `#[derive(Entity)]`, `#[derive(EntityUnion)]` and `#[derive(Property)]`
//! generate, end to end against the runtime: round trips of every field type and key
//! form, key builders and parse-back, range helpers, typed columns, index copies and
//! entries, unions, upgrades, and the errors a bad row or value gives.

use std::ops::Bound;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use tables_client::key::{encode_signed, reverse_ticks_key, ticks_key};
use tables_client::model::{IndexKind, KeyInt, KeyRange, KeyText, StoredAs};
use tables_client::{
    DateTime, DynamicEntity, EdmType, Entity, EntityKey, EntityUnion, ErrorKind, Property, Row,
    Value,
};
use uuid::Uuid;

#[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
#[entity(rename_all = "lowercase")]
enum Level {
    Junior,
    Senior,
    #[entity(rename = "lead")]
    TeamLead,
}

#[derive(Property, Debug, Clone, PartialEq, Eq)]
struct Email(String);

#[derive(Property, Debug, Clone, Copy, PartialEq, Eq, PartialOrd)]
struct Seq(u32);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Note {
    text: String,
}

/// A custom codec storing twice the value.
mod doubled {
    use tables_client::{Error, ErrorKind, Result, Value};

    #[allow(clippy::trivially_copy_pass_by_ref, clippy::unnecessary_wraps)]
    pub(crate) fn to_value(value: &i32) -> Result<Option<Value>> {
        Ok(Some(Value::Int32(value * 2)))
    }

    pub(crate) fn from_value(value: Option<Value>) -> Result<i32> {
        match value {
            Some(Value::Int32(n)) if n % 2 == 0 => Ok(n / 2),
            _ => Err(Error::new(ErrorKind::InvalidValue, "not doubled")),
        }
    }
}

fn default_region() -> String {
    "emea".to_owned()
}

/// Every kind of field, with literal-only RowKey.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(partition_key = "{id}", row_key = "all", rename_all = "PascalCase")]
struct AllTypes {
    id: String,
    text: String,
    flag: bool,
    tiny: i8,
    small: i16,
    int: i32,
    long: i64,
    byte: u8,
    word: u16,
    uint: u32,
    ulong: u64,
    single: f32,
    double: f64,
    bytes: Vec<u8>,
    guid: Uuid,
    at: DateTime,
    maybe: Option<i32>,
    maybe_text: Option<String>,
    level: Level,
    email: Email,
    #[entity(json)]
    tags: Vec<String>,
    #[entity(json)]
    note: Option<Note>,
    #[entity(with = doubled)]
    score: i32,
    #[entity(skip)]
    cache: Vec<u8>,
    #[entity(default)]
    visits: u32,
    #[entity(default = default_region, column = "REGION_COLUMN")]
    region: String,
}

fn time(y: i32, mo: u32, d: u32) -> DateTime {
    DateTime::from_ymd_hms(y, mo, d, 12, 30, 15).expect("a valid date")
}

fn all_types() -> AllTypes {
    AllTypes {
        id: "a-1".into(),
        text: "hello".into(),
        flag: true,
        tiny: -8,
        small: -16,
        int: -32,
        long: i64::MIN,
        byte: 255,
        word: 65_535,
        uint: u32::MAX,
        ulong: i64::MAX as u64,
        single: 1.5,
        double: -0.25,
        bytes: vec![0, 1, 255],
        guid: Uuid::from_u128(0xABCD),
        at: time(2024, 5, 6),
        maybe: Some(7),
        maybe_text: None,
        level: Level::TeamLead,
        email: Email("j@x.com".into()),
        tags: vec!["a".into(), "b".into()],
        note: None,
        score: 21,
        cache: Vec::new(),
        visits: 3,
        region: "apac".into(),
    }
}

#[test]
fn every_field_type_round_trips_with_its_edm_type() {
    let value = all_types();
    let row = value.to_entity().unwrap();
    assert_eq!(row.key(), EntityKey::new("a-1", "all"));
    assert_eq!(row.get("EntityType"), Some(&Value::from("AllTypes")));
    assert_eq!(row.get("EntityVersion"), Some(&Value::Int32(1)));
    let edm = |name: &str| row.get(name).map(Value::edm_type);
    for (name, expected) in [
        ("Text", EdmType::String),
        ("Flag", EdmType::Boolean),
        ("Tiny", EdmType::Int32),
        ("Word", EdmType::Int32),
        ("Uint", EdmType::Int64),
        ("Ulong", EdmType::Int64),
        ("Long", EdmType::Int64),
        ("Single", EdmType::Double),
        ("Bytes", EdmType::Binary),
        ("Guid", EdmType::Guid),
        ("At", EdmType::DateTime),
        ("Maybe", EdmType::Int32),
        ("Level", EdmType::String),
        ("Email", EdmType::String),
        ("Tags", EdmType::String),
        ("Score", EdmType::Int32),
    ] {
        assert_eq!(edm(name), Some(expected), "{name}");
    }
    assert_eq!(row.get("Level"), Some(&Value::from("lead")));
    assert_eq!(row.get("Tags"), Some(&Value::from(r#"["a","b"]"#)));
    assert_eq!(row.get("Score"), Some(&Value::Int32(42)));
    // Key fields live in the key; None, JSON null and skipped fields write nothing.
    for absent in ["Id", "MaybeText", "Note", "Cache"] {
        assert!(!row.contains(absent), "{absent}");
    }
    assert_eq!(
        row.len(),
        2 + 22,
        "discriminator + 24 stored fields - 2 absent"
    );
    assert_eq!(AllTypes::from_entity(row).unwrap(), value);

    let full = AllTypes {
        maybe: None,
        maybe_text: Some("x".into()),
        note: Some(Note { text: "n".into() }),
        cache: vec![9],
        ..all_types()
    };
    let back = AllTypes::from_entity(full.to_entity().unwrap()).unwrap();
    let expected = AllTypes {
        cache: Vec::new(), // skipped fields decode as Default
        ..full
    };
    assert_eq!(back, expected);
}

#[test]
fn absent_properties_decode_as_defaults_or_errors() {
    let mut row = all_types().to_entity().unwrap();
    let _ = row.remove("Visits");
    let _ = row.remove("Region");
    let _ = row.remove("Maybe");
    let _ = row.remove("Note");
    row.insert("Unknown", 5);
    let back = AllTypes::from_entity(row.clone()).unwrap();
    assert_eq!(
        (back.visits, back.region.as_str(), back.maybe),
        (0, "emea", None)
    );

    let _ = row.remove("Int");
    let err = AllTypes::from_entity(row.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert!(err.message().contains("`int`"), "{}", err.message());
    assert_eq!(err.property(), Some("Int"));

    let bad = |name: &str, value: Value, expected: &str| {
        let mut row = all_types().to_entity().unwrap();
        row.insert(name, value);
        let err = AllTypes::from_entity(row).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Decode);
        assert!(err.message().contains(expected), "{}", err.message());
    };
    bad("Flag", "yes".into(), "`flag`");
    bad("Score", 3.into(), "`score`");
    bad("Level", "boss".into(), "junior, senior, lead");
}

#[test]
fn the_discriminator_is_checked() {
    let row = all_types().to_entity().unwrap();
    let error = |name: &str, value: Value| {
        let mut changed = row.clone();
        changed.insert(name, value);
        AllTypes::from_entity(changed).unwrap_err().kind()
    };
    assert_eq!(error("EntityType", "Department".into()), ErrorKind::Decode);
    assert_eq!(
        error("EntityType", "AllTypes@email".into()),
        ErrorKind::Decode
    );
    assert_eq!(error("EntityVersion", 2.into()), ErrorKind::Decode, "newer");
}

/// Fixed-width forms around one variable part in the middle of the RowKey, a
/// trailing text part in the PartitionKey.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    partition_key = "s{shard:02}_{level}",
    row_key = "{delta:signed}_{when:ticks}_{seq:05}_{name}_{at:rticks}_{id}.x"
)]
struct Reading {
    shard: u8,
    level: Level,
    delta: i64,
    when: DateTime,
    seq: Seq,
    name: String,
    at: DateTime,
    id: Uuid,
    value: f64,
}

fn reading() -> Reading {
    Reading {
        shard: 7,
        level: Level::Senior,
        delta: -5,
        when: time(2020, 1, 2),
        seq: Seq(42),
        name: "a_b.c".into(),
        at: time(2024, 5, 6),
        id: Uuid::from_u128(0x1234),
        value: 0.5,
    }
}

#[test]
fn every_key_form_is_written_and_parsed_back() {
    let r = reading();
    let row = r.to_entity().unwrap();
    assert_eq!(row.partition_key, "s07_senior");
    let expected = format!(
        "{}_{}_00042_a_b.c_{}_00000000-0000-0000-0000-000000001234.x",
        encode_signed(-5),
        ticks_key(r.when),
        reverse_ticks_key(r.at)
    );
    assert_eq!(row.row_key, expected);
    // Key fields are not stored twice.
    assert_eq!(row.len(), 3);
    assert_eq!(Reading::from_entity(row).unwrap(), r);
}

#[test]
fn keys_that_do_not_match_the_template_are_decode_errors() {
    let row = reading().to_entity().unwrap();
    let bad = |pk: &str, rk: &str| {
        let mut copy = row.clone();
        copy.partition_key = pk.to_owned();
        copy.row_key = rk.to_owned();
        Reading::from_entity(copy).unwrap_err()
    };
    let err = bad("x07_senior", &row.row_key);
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert!(
        err.message().contains("s{shard:02}_{level}"),
        "{}",
        err.message()
    );
    assert_eq!(bad("s07_boss", &row.row_key).kind(), ErrorKind::Decode);
    assert_eq!(bad("s07_senior", "short").kind(), ErrorKind::Decode);
    let trailing = format!("{}y", row.row_key);
    assert_eq!(bad("s07_senior", &trailing).kind(), ErrorKind::Decode);
}

#[test]
fn key_builders_take_the_template_fields() {
    let r = reading();
    let key = Reading::key(7, Level::Senior, -5, r.when, Seq(42), "a_b.c", r.at, r.id).unwrap();
    assert_eq!(key, r.entity_key().unwrap());
    assert_eq!(
        Reading::partition_key(7, Level::Senior).unwrap(),
        key.partition_key
    );
    assert_eq!(
        Reading::row_key(-5, r.when, Seq(42), "a_b.c", r.at, r.id).unwrap(),
        key.row_key
    );
    let err = Reading::partition_key(100, Level::Junior).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert!(err.message().contains("shard"), "{}", err.message());
    let err = Reading::row_key(0, r.when, Seq(1), "a/b", r.at, r.id).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
    assert!(err.message().contains("name"), "{}", err.message());
    let bad = Reading {
        name: "a#b".into(),
        ..reading()
    };
    assert_eq!(bad.to_entity().unwrap_err().kind(), ErrorKind::InvalidKey);
    assert_eq!(bad.entity_key().unwrap_err().kind(), ErrorKind::InvalidKey);
}

#[test]
fn range_helpers_cover_fixed_width_placeholders() {
    let r = reading();
    let row_key = r.entity_key().unwrap().into_entity_key().row_key;
    let holds = |range: tables_client::Result<KeyRange>| range.unwrap().contains(&row_key);
    assert!(holds(Reading::delta_range(-10..0)));
    assert!(!holds(Reading::delta_range(0..10)));
    assert!(holds(Reading::when_range(
        -5,
        time(2020, 1, 1)..time(2020, 1, 3)
    )));
    assert!(!holds(Reading::when_range(-5, ..time(2020, 1, 2))));
    assert!(holds(Reading::seq_range(-5, r.when, Seq(40)..=Seq(42))));
    assert!(!holds(Reading::seq_range(-5, r.when, Seq(43)..)));
    let seqs = Reading::seq_range(-5, r.when, Seq(40)..).unwrap();
    let start = format!("{}_{}_00040", encode_signed(-5), ticks_key(r.when));
    assert_eq!(seqs.start, Bound::Included(start));
}

/// The design card's employee, with every index form.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(
    kind = "Employee",
    version = 2,
    upgrade_from(EmployeeV1),
    rename_all = "PascalCase"
)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
#[entity(unique_index(name = "email", row_key = "email_{email}"))]
#[entity(unique_index(
    name = "by_email",
    table = "EmployeesByEmail",
    partition_key = "email_{department}",
    row_key = "{email}",
    include(first_name)
))]
#[entity(unique_index(name = "nick", row_key = "nick_{nickname}"))]
#[entity(index_entity(name = "last_name", row_key = "lastname_{last_name}"))]
#[entity(index_entity(name = "team", partition_key = "teams", row_key = "team_{team}"))]
struct Employee {
    department: String,
    employee_id: u32,
    #[entity(rename = "FirstName")]
    first_name: String,
    last_name: String,
    age: i32,
    email: String,
    nickname: Option<String>,
    team: Option<Level>,
}

/// The version-1 rows of `Employee`.
#[derive(Entity, Debug, Clone, PartialEq)]
#[entity(kind = "Employee", version = 1)]
#[entity(partition_key = "{department}", row_key = "empid_{employee_id:06}")]
struct EmployeeV1 {
    department: String,
    employee_id: u32,
    name: String,
}

impl From<EmployeeV1> for Employee {
    fn from(old: EmployeeV1) -> Employee {
        let (first_name, last_name) = old.name.split_once(' ').unwrap_or((&old.name, ""));
        Employee {
            department: old.department,
            employee_id: old.employee_id,
            first_name: first_name.to_owned(),
            last_name: last_name.to_owned(),
            age: 0,
            email: String::new(),
            nickname: None,
            team: None,
        }
    }
}

fn jones() -> Employee {
    Employee {
        department: "Sales".into(),
        employee_id: 223,
        first_name: "Ann".into(),
        last_name: "Jones".into(),
        age: 34,
        email: "jonesj@contoso.com".into(),
        nickname: None,
        team: Some(Level::Senior),
    }
}

#[test]
fn the_guides_key_and_range_examples() {
    assert_eq!(
        Employee::key("Sales", 223).unwrap(),
        EntityKey::new("Sales", "empid_000223")
    );
    assert_eq!(
        jones().entity_key().unwrap(),
        Employee::key("Sales", 223).unwrap()
    );
    let range = Employee::employee_id_range(100..200).unwrap();
    assert_eq!(range.start, Bound::Included("empid_000100".to_owned()));
    assert_eq!(range.end, Bound::Excluded("empid_000200".to_owned()));
    assert_eq!(
        Employee::email_email_prefix("jo").unwrap(),
        KeyRange::prefix("email_jo")
    );
    let emails = Employee::email_email_range("a".."k").unwrap();
    assert!(emails.contains("email_jonesj@contoso.com"));
    assert!(!emails.contains("email_smith@contoso.com"));
    let all = Employee::by_email_email_range(..).unwrap();
    assert!(all.contains("anything"));
    assert!(Employee::nick_nickname_prefix("a/").is_err());
    let index_keys = [
        (
            Employee::email_key("Sales", "j@x").map(EntityKey::from),
            ("Sales", "email_j@x"),
        ),
        (
            Employee::by_email_key("Sales", "j@x").map(EntityKey::from),
            ("email_Sales", "j@x"),
        ),
        (
            Employee::nick_key("Sales", "annie").map(EntityKey::from),
            ("Sales", "nick_annie"),
        ),
        (
            Employee::team_key(Level::Junior).map(EntityKey::from),
            ("teams", "team_junior"),
        ),
    ];
    for (built, (pk, rk)) in index_keys {
        assert_eq!(built.unwrap(), EntityKey::new(pk, rk));
    }
}

#[test]
fn typed_columns_use_stored_names_and_codecs() {
    assert_eq!(Employee::AGE.name(), "Age");
    assert_eq!(Employee::FIRST_NAME.name(), "FirstName");
    // Integer columns match both integer types, as their fields read both.
    assert_eq!(Employee::AGE.gt(30).to_odata(), "Age gt 30 or Age gt 30L");
    assert_eq!(
        AllTypes::UINT.le(10).to_odata(),
        "Uint le 10L or Uint le 10"
    );
    assert_eq!(
        AllTypes::LEVEL.eq(Level::TeamLead).to_odata(),
        "Level eq 'lead'"
    );
    assert_eq!(
        AllTypes::MAYBE.eq(3).to_odata(),
        "Maybe eq 3 or Maybe eq 3L"
    );
    assert_eq!(AllTypes::REGION_COLUMN.name(), "Region");
    assert_eq!(<Employee as Entity>::KIND, "Employee");
    assert_eq!(<Employee as Entity>::VERSION, 2);
}

#[test]
fn the_schema_describes_properties_and_indexes() {
    let schema = Employee::schema();
    assert_eq!((schema.kind, schema.version), ("Employee", 2));
    assert_eq!(schema.row_key, "empid_{employee_id:06}");
    assert_eq!(
        schema.property_names().collect::<Vec<_>>(),
        ["FirstName", "LastName", "Age", "Email", "Nickname", "Team"]
    );
    let names: Vec<_> = schema.indexes.iter().map(|i| (i.name, i.kind)).collect();
    assert_eq!(
        names,
        [
            ("email", IndexKind::Copy),
            ("by_email", IndexKind::Copy),
            ("nick", IndexKind::Copy),
            ("last_name", IndexKind::List),
            ("team", IndexKind::List),
        ]
    );
    let by_email = schema.index("by_email").unwrap();
    assert_eq!(by_email.table, Some("EmployeesByEmail"));
    assert_eq!(by_email.include, Some(&["FirstName"][..]));
    assert!(!by_email.same_partition);
    assert!(schema.index("email").unwrap().same_partition);
    assert_eq!(schema.index("email").unwrap().partition_key, "{department}");
    let all = AllTypes::schema();
    let stored = |field: &str| {
        all.properties
            .iter()
            .find(|p| p.field == field)
            .map(|p| p.stored_as)
    };
    assert_eq!(stored("tags"), Some(StoredAs::Json));
    assert_eq!(stored("score"), Some(StoredAs::Custom));
    assert_eq!(stored("int"), Some(StoredAs::Plain));
    assert_eq!(stored("cache"), None);
    assert_eq!(stored("id"), None);
}

#[test]
fn index_copies_follow_the_value_and_skip_absent_fields() {
    let e = jones();
    let primary = e.to_entity().unwrap();
    let copies = e.index_copies(&primary).unwrap();
    let keys: Vec<_> = copies.iter().map(|c| (c.name(), c.key())).collect();
    assert_eq!(
        keys,
        [
            ("email", EntityKey::new("Sales", "email_jonesj@contoso.com")),
            (
                "by_email",
                EntityKey::new("email_Sales", "jonesj@contoso.com")
            ),
        ],
        "no `nick` copy while the nickname is None"
    );
    let partial = copies[1].entity();
    assert_eq!(
        partial.get("EntityType"),
        Some(&Value::from("Employee@by_email"))
    );
    assert!(partial.contains("FirstName") && !partial.contains("Age"));
    assert_eq!(copies[1].table(), Some("EmployeesByEmail"));

    let nicknamed = Employee {
        nickname: Some("annie".into()),
        ..jones()
    };
    let copies = nicknamed
        .index_copies(&nicknamed.to_entity().unwrap())
        .unwrap();
    assert_eq!(copies.len(), 3);
    assert_eq!(copies[2].key(), EntityKey::new("Sales", "nick_annie"));

    let entries = e.index_entries().unwrap();
    let keys: Vec<_> = entries
        .iter()
        .map(|i| (i.name(), i.key().clone()))
        .collect();
    assert_eq!(
        keys,
        [
            ("last_name", EntityKey::new("Sales", "lastname_Jones")),
            ("team", EntityKey::new("teams", "team_senior")),
        ]
    );
    assert_eq!(entries[0].member(), &e.entity_key().unwrap());
    let teamless = Employee {
        team: None,
        ..jones()
    };
    assert_eq!(teamless.index_entries().unwrap().len(), 1);
    let bad = Employee {
        email: "a/b".into(),
        ..jones()
    };
    let err = bad.index_copies(&primary).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidKey);
}

#[test]
fn older_versions_are_upgraded() {
    let old = EmployeeV1 {
        department: "Sales".into(),
        employee_id: 7,
        name: "Ann Jones".into(),
    };
    let row = old.to_entity().unwrap();
    assert_eq!(row.get("EntityVersion"), Some(&Value::Int32(1)));
    let upgraded = Employee::from_entity(row).unwrap();
    assert_eq!(
        (upgraded.first_name.as_str(), upgraded.last_name.as_str()),
        ("Ann", "Jones")
    );
    assert!(Employee::decodes_version(1) && Employee::decodes_version(2));
    assert!(!Employee::decodes_version(3) && !EmployeeV1::decodes_version(2));
    let current = jones().to_entity().unwrap();
    assert_eq!(Employee::from_entity(current.clone()).unwrap(), jones());
    assert_eq!(
        EmployeeV1::from_entity(current).unwrap_err().kind(),
        ErrorKind::Decode
    );
}

#[derive(EntityUnion, Debug)]
enum Sales {
    Employee(Employee),
    Reading(Reading),
    #[entity(other)]
    Other(DynamicEntity),
}

#[derive(EntityUnion, Debug)]
enum Strict {
    Employee(Employee),
    Types(AllTypes),
}

#[test]
fn unions_pick_the_variant_the_row_names() {
    assert_eq!(Sales::VARIANT_KINDS, ["Employee", "Reading"]);
    let rows = [jones().to_entity().unwrap(), reading().to_entity().unwrap()];
    let decoded: Vec<Sales> = rows
        .iter()
        .map(|r| Sales::from_entity(r.clone()).unwrap())
        .collect();
    assert!(matches!(&decoded[0], Sales::Employee(e) if *e == jones()));
    assert!(matches!(&decoded[1], Sales::Reading(r) if *r == reading()));
    assert_eq!(decoded[0].kind(), Some("Employee"));
    assert_eq!(decoded[0].to_entity().unwrap(), rows[0]);
    assert_eq!(
        decoded[1].entity_key().unwrap(),
        reading().entity_key().unwrap().into_key_of::<Sales>()
    );
    assert_eq!(decoded[0].index_copies(&rows[0]).unwrap().len(), 2);
    assert_eq!(decoded[0].index_entries().unwrap().len(), 2);

    let foreign = DynamicEntity::new("p", "r").with("EntityType", "Invoice");
    let other = Sales::from_entity(foreign.clone()).unwrap();
    assert!(matches!(&other, Sales::Other(row) if *row == foreign));
    assert_eq!(other.kind(), None);
    assert_eq!(other.to_entity().unwrap(), foreign);
    assert_eq!(other.entity_key().unwrap(), EntityKey::new("p", "r"));
    assert!(other.index_copies(&foreign).unwrap().is_empty());
    assert!(other.index_entries().unwrap().is_empty());

    let err = Strict::from_entity(foreign).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert!(err.message().contains("Strict"), "{}", err.message());
    assert!(matches!(Strict::from(all_types()), Strict::Types(_)));
    assert!(matches!(
        Sales::from(DynamicEntity::new("p", "r")),
        Sales::Other(_)
    ));
    assert!(matches!(Sales::from(reading()), Sales::Reading(_)));
}

#[test]
fn property_derives_store_enums_as_text_and_newtypes_as_their_inner_type() {
    assert_eq!(Level::EDM_TYPE, EdmType::String);
    let text = |t: &str| Some(Value::from(t));
    assert_eq!(Level::Junior.to_value().unwrap(), text("junior"));
    assert_eq!(Level::from_value(text("lead")).unwrap(), Level::TeamLead);
    let err = Level::from_value(text("Junior")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert!(Level::from_value(None).is_err());
    assert_eq!(<Option<Level>>::from_value(None).unwrap(), None);
    let mut key = String::new();
    Level::TeamLead.write_key_text(&mut key);
    assert_eq!(key, "lead");
    assert_eq!(Level::from_key_text("senior").unwrap(), Level::Senior);
    assert!(Level::from_key_text("x").is_err());

    assert_eq!(Email::EDM_TYPE, EdmType::String);
    let email = Email("a@b".into());
    assert_eq!(email.to_value().unwrap(), Some(Value::from("a@b")));
    assert_eq!(Email::from_value(Some(Value::from("a@b"))).unwrap(), email);
    assert_eq!(Email::from_key_text("k").unwrap(), Email("k".into()));
    assert_eq!(Seq::EDM_TYPE, EdmType::Int64);
    assert_eq!(Seq(5).to_key_u64(), Some(5));
    assert_eq!(Seq::from_key_u64(u64::MAX), None);
    assert_eq!(Seq::from_value(Some(Value::Int64(9))).unwrap(), Seq(9));
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_ .~-]{0,24}"
}

fn datetime() -> impl Strategy<Value = DateTime> {
    (DateTime::MIN_TICKS..=DateTime::MAX_TICKS)
        .prop_map(|t| DateTime::from_ticks(t).expect("ticks in range"))
}

fn level() -> impl Strategy<Value = Level> {
    prop_oneof![
        Just(Level::Junior),
        Just(Level::Senior),
        Just(Level::TeamLead)
    ]
}

prop_compose! {
    fn any_reading()(
        shard in 0u8..100,
        level in level(),
        delta in any::<i64>(),
        when in datetime(),
        seq in 0u32..100_000,
        name in text(),
        at in datetime(),
        id in any::<u128>(),
        value in any::<f64>().prop_filter("NaN never equals itself", |v| !v.is_nan()),
    ) -> Reading {
        Reading { shard, level, delta, when, seq: Seq(seq), name, at, id: Uuid::from_u128(id), value }
    }
}

proptest! {
    #[test]
    fn readings_round_trip_through_their_keys(r in any_reading()) {
        let row = r.to_entity().unwrap();
        prop_assert_eq!(
            row.key(),
            Reading::key(r.shard, r.level, r.delta, r.when, r.seq, &r.name, r.at, r.id).unwrap()
        );
        prop_assert!(Reading::delta_range(r.delta..=r.delta).unwrap().contains(&row.row_key));
        prop_assert_eq!(Reading::from_entity(row).unwrap(), r);
    }

    #[test]
    fn employees_round_trip(
        department in text(),
        employee_id in 0u32..1_000_000,
        first_name in any::<String>(),
        age in any::<i32>(),
        nickname in proptest::option::of(text()),
    ) {
        let e = Employee { department, employee_id, first_name, age, nickname, ..jones() };
        let back = Employee::from_entity(e.to_entity().unwrap()).unwrap();
        prop_assert_eq!(back, e);
    }
}

/// Derives under the strictest lints: the generated code must not trip them.
#[deny(
    warnings,
    missing_docs,
    unreachable_pub,
    unused_qualifications,
    unused_results,
    clippy::all,
    clippy::pedantic
)]
pub mod strict {
    use tables_client::{DateTime, Entity, EntityUnion, Property};

    /// A status.
    #[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Status {
        /// Open.
        Open,
        /// Closed.
        Closed,
    }

    /// A ticket number.
    #[derive(Property, Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Number(pub u64);

    /// A ticket.
    #[derive(Entity, Debug, Clone, PartialEq)]
    #[entity(partition_key = "{queue}", row_key = "t_{opened:rticks}_{number:08}")]
    #[entity(unique_index(name = "by_status", row_key = "status_{status}_{number:08}"))]
    #[entity(index_entity(name = "owner", row_key = "owner_{owner}"))]
    pub struct Ticket {
        /// Queue.
        pub queue: String,
        /// Opened.
        pub opened: DateTime,
        /// Number.
        pub number: Number,
        /// Status.
        pub status: Status,
        /// Owner.
        pub owner: Option<String>,
        /// Notes.
        #[entity(json)]
        pub notes: Vec<String>,
        /// Scratch.
        #[entity(skip)]
        pub scratch: u8,
    }

    /// Rows of a queue.
    #[derive(EntityUnion, Debug)]
    pub enum Queue {
        /// A ticket.
        Ticket(Ticket),
        /// Anything else.
        #[entity(other)]
        Other(tables_client::DynamicEntity),
    }
}

#[test]
fn the_strict_module_works() {
    use strict::{Number, Status, Ticket};
    let t = Ticket {
        queue: "q".into(),
        opened: time(2024, 1, 1),
        number: Number(12),
        status: Status::Open,
        owner: Some("ann".into()),
        notes: vec!["n".into()],
        scratch: 0,
    };
    let row = t.to_entity().unwrap();
    assert_eq!(Ticket::from_entity(row.clone()).unwrap(), t);
    assert_eq!(
        t.index_copies(&row).unwrap()[0].key().row_key,
        "status_Open_00000012"
    );
    assert_eq!(
        Ticket::owner_key("q", "ann").unwrap(),
        EntityKey::new("q", "owner_ann")
    );
    assert!(Ticket::number_range(t.opened, Number(10)..Number(20))
        .unwrap()
        .contains(&row.row_key));
    assert_eq!(
        Ticket::by_status_number_range(Status::Open, ..)
            .unwrap()
            .start,
        Bound::Included("status_Open_00000000".to_owned())
    );
}
