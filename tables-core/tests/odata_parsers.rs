//! Property tests of the OData codec (`tables_core::odata`, entity bodies, error bodies
//! and URLs): the parsers never panic, on any input, and what the encoders write reads
//! back to the same values.
//!
//! The case count comes from `TABLES_FUZZ_CASES` (default 2,000), e.g.
//! `TABLES_FUZZ_CASES=1000000 cargo test --release -p tables-core --test odata_parsers`.

use proptest::prelude::*;
use tables_core::odata::{
    decode_entity, decode_entity_page, decode_table_names, encode_entity, encode_query_value,
    entity_path, entity_to_json, parse_error_body, service_error, split_batch_index,
};
use tables_core::{DateTime, DynamicEntity, EntityKey, ErrorKind, Value};

mod support;

/// A regex strategy, compiled once (a `&str` strategy compiles on every case).
fn regex(pattern: &str) -> proptest::string::RegexGeneratorStrategy<String> {
    proptest::string::string_regex(pattern).expect("the test regexes are valid")
}

/// Any text, including control characters, quotes and non-ASCII.
fn arb_text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..24).prop_map(String::from_iter)
}

/// Keys: plain, with the characters URLs and OData literals care about, any text.
fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        regex("[a-z0-9]{1,8}"),
        regex("[a-z'%() ,=&+?#/\\\\\"]{0,10}"),
        prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter),
        arb_text(),
    ]
}

/// Property names: identifiers mostly, any text sometimes, never a system name.
fn arb_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => regex("[A-Za-z_][A-Za-z0-9_]{0,12}"),
        1 => prop::collection::vec(any::<char>(), 0..6).prop_map(String::from_iter),
        1 => arb_text(),
    ]
    .prop_filter("system names are not properties", |n| {
        !matches!(n.as_str(), "PartitionKey" | "RowKey" | "Timestamp")
            && !n.starts_with("odata.")
            && !n.ends_with("@odata.type")
    })
}

fn arb_double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        (-1e6f64..1e6f64),
        prop::sample::select(vec![
            0.0,
            -0.0,
            0.1,
            3.0,
            1e300,
            -1e300,
            5e-324,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
        any::<u64>().prop_map(f64::from_bits),
    ]
}

fn arb_datetime() -> impl Strategy<Value = DateTime> {
    prop_oneof![
        Just(DateTime::MIN),
        Just(DateTime::MAX),
        (DateTime::MIN_TICKS..=DateTime::MAX_TICKS)
            .prop_map(|t| DateTime::from_ticks(t).unwrap_or(DateTime::MIN)),
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        arb_text().prop_map(Value::String),
        prop_oneof![Just(i32::MIN), Just(i32::MAX), Just(0), any::<i32>()].prop_map(Value::Int32),
        prop_oneof![
            Just(i64::MIN),
            Just(i64::MAX),
            Just(0),
            Just(i64::from(i32::MAX) + 1),
            any::<i64>()
        ]
        .prop_map(Value::Int64),
        arb_double().prop_map(Value::Double),
        any::<bool>().prop_map(Value::Boolean),
        arb_datetime().prop_map(Value::DateTime),
        any::<u128>().prop_map(|g| Value::Guid(uuid::Uuid::from_u128(g))),
        prop::collection::vec(any::<u8>(), 0..48).prop_map(Value::Binary),
    ]
}

fn arb_entity() -> impl Strategy<Value = DynamicEntity> {
    (
        arb_key(),
        arb_key(),
        prop::collection::vec((arb_name(), arb_value()), 0..12),
    )
        .prop_map(|(pk, rk, props)| {
            let mut e = DynamicEntity::new(pk, rk);
            for (name, value) in props {
                e.insert(name, value);
            }
            e
        })
}

/// Values equal, doubles compared bit for bit (-0.0 differs from 0.0), except that
/// every NaN is the same: the wire has one `"NaN"`, whatever the sign and payload.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    }
}

/// Keys, timestamp, ETag and properties (in order) equal.
fn same_entity(a: &DynamicEntity, b: &DynamicEntity) -> bool {
    a.partition_key == b.partition_key
        && a.row_key == b.row_key
        && a.timestamp == b.timestamp
        && a.etag == b.etag
        && a.len() == b.len()
        && a.properties()
            .zip(b.properties())
            .all(|((na, va), (nb, vb))| na == nb && same_value(va, vb))
}

/// Feeds one input to every parser; each may fail, none may panic, and failures
/// are decode errors.
fn parse_everything(bytes: &[u8]) {
    for result in [
        decode_entity(bytes).err(),
        decode_entity_page(bytes).err(),
        decode_table_names(bytes).err(),
    ]
    .into_iter()
    .flatten()
    {
        assert_eq!(result.kind(), ErrorKind::Decode);
        assert!(result.message().len() < 400, "{}", result.message());
    }
    let parsed = parse_error_body(400, Some("InvalidInput"), bytes);
    assert!(!parsed.message.is_empty());
    let err = service_error(503, None, bytes);
    assert_eq!(err.status(), Some(503));
    let text = String::from_utf8_lossy(bytes);
    let (index, rest) = split_batch_index(&text);
    assert!(index.is_some() || rest.len() == text.len());
}

/// Fragments that make structure go wrong in interesting ways.
const SNIPPETS: &[&str] = &[
    r#""X@odata.type":"Edm.Int64","#,
    r#""X@odata.type":"Edm.Guid","#,
    r#""X@odata.type":5,"#,
    r#""X":{"a":[1,{"b":null}]},"#,
    r#""X":[],"#,
    r#""X":null,"#,
    r#""odata.etag":7,"#,
    r#""odata.metadata":{"deep":[[[[]]]]},"#,
    r#""Timestamp":"not a time","#,
    r#""PartitionKey":"again","#,
    r#""value":[{}],"#,
    r#""\ud800":1,"#,
    r#""\u00e9\n":"\t","#,
    "1e999",
    "-0",
    "18446744073709551616",
    "[[[[[[[[[[[[[[[[[[[[",
    "}}}",
    "\u{0}",
    "\"",
    ",",
    ":",
];

const TYPE_NAMES: &[&str] = &[
    "Edm.String",
    "Edm.Int32",
    "Edm.Int64",
    "Edm.Double",
    "Edm.Boolean",
    "Edm.DateTime",
    "Edm.Guid",
    "Edm.Binary",
    "Edm.Single",
    "",
];

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(usize, u8),
    Insert(usize, &'static str),
    /// Annotates the n-th property (or a missing one) with a type, just after `{`.
    Annotate(usize, &'static str),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), prop::sample::select(SNIPPETS)).prop_map(|(i, s)| Mutation::Insert(i, s)),
        (any::<usize>(), prop::sample::select(TYPE_NAMES))
            .prop_map(|(i, t)| Mutation::Annotate(i, t)),
    ]
}

fn mutate(entity: &DynamicEntity, json: &mut Vec<u8>, mutation: &Mutation) {
    match *mutation {
        Mutation::Truncate(i) => json.truncate(i % (json.len() + 1)),
        Mutation::Flip(i, b) => {
            if !json.is_empty() {
                let i = i % json.len();
                json[i] ^= b.max(1);
            }
        }
        Mutation::Insert(i, snippet) => {
            let i = i % (json.len() + 1);
            json.splice(i..i, snippet.bytes());
        }
        Mutation::Annotate(i, type_name) => {
            let names: Vec<&str> = entity.properties().map(|(n, _)| n).collect();
            let name = names
                .get(i % (names.len() + 1))
                .copied()
                .unwrap_or("Missing");
            let annotation = serde_json::json!({ format!("{name}@odata.type"): type_name });
            let text = annotation.to_string();
            // `{"k":"v"}` → `"k":"v",` after the opening brace.
            if json.first() == Some(&b'{') && text.len() > 2 {
                let inner = format!("{},", &text[1..text.len() - 1]);
                json.splice(1..1, inner.bytes());
            }
        }
    }
}

/// Reads a percent-decoded `t(PartitionKey='..',RowKey='..')` back into its key.
fn parse_entity_path(path: &str, table: &str) -> Option<EntityKey> {
    fn literal(text: &str) -> Option<(String, &str)> {
        let mut out = String::new();
        let mut chars = text.strip_prefix('\'')?.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|&(_, c)| c) == Some('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Some((out, &text[i + 2..]));
                }
            } else {
                out.push(c);
            }
        }
        None
    }
    let rest = path.strip_prefix(table)?.strip_prefix("(PartitionKey=")?;
    let (pk, rest) = literal(rest)?;
    let (rk, rest) = literal(rest.strip_prefix(",RowKey=")?)?;
    (rest == ")").then(|| EntityKey::new(pk, rk))
}

proptest! {
    #![proptest_config(support::fuzz_config())]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        parse_everything(&bytes);
    }

    #[test]
    fn markup_like_text_never_panics(text in regex("[<>&;#xX0-9a-zA-Z/:=\" {}\\[\\],.\\n-]{0,120}")) {
        parse_everything(text.as_bytes());
        let wrapped = format!("<Error><Code>{text}</Code><Message>{text}</Message></Error>");
        parse_everything(wrapped.as_bytes());
    }

    #[test]
    fn mutated_entities_never_panic(
        entity in arb_entity(),
        mutations in prop::collection::vec(arb_mutation(), 1..4),
        as_page in any::<bool>(),
    ) {
        let mut json = Vec::new();
        encode_entity(&entity, &mut json);
        for mutation in &mutations {
            mutate(&entity, &mut json, mutation);
        }
        if as_page {
            let mut page = br#"{"odata.metadata":"m","value":["#.to_vec();
            page.extend_from_slice(&json);
            page.extend_from_slice(b"]}");
            json = page;
        }
        parse_everything(&json);
        // Whatever decodes re-encodes to something that decodes to the same entity.
        if let Ok(decoded) = decode_entity(&json) {
            let mut again = decode_entity(entity_to_json(&decoded).as_bytes());
            if let Ok(e) = &mut again {
                e.timestamp = decoded.timestamp;
                e.etag.clone_from(&decoded.etag);
            }
            prop_assert!(again.as_ref().is_ok_and(|e| same_entity(e, &decoded)), "{:?}", again);
        }
    }

    #[test]
    fn encoded_entities_decode_to_the_same_values(entity in arb_entity()) {
        let json = entity_to_json(&entity);
        let decoded = decode_entity(json.as_bytes());
        prop_assert!(
            decoded.as_ref().is_ok_and(|d| same_entity(d, &entity)),
            "{json}\n{decoded:?}"
        );
        let page = format!(r#"{{"value":[{json},{json}]}}"#);
        let items = decode_entity_page(page.as_bytes());
        prop_assert!(
            items.as_ref().is_ok_and(|items| items.len() == 2 && items.iter().all(|d| same_entity(d, &entity))),
            "{items:?}"
        );
    }

    #[test]
    fn entity_paths_read_back_to_their_keys(pk in arb_key(), rk in arb_key()) {
        let key = EntityKey::new(pk, rk);
        let path = entity_path("t1", &key);
        prop_assert!(path.bytes().all(|b| b.is_ascii_graphic()), "{path}");
        let decoded = percent_encoding::percent_decode_str(&path).decode_utf8();
        prop_assert!(decoded.is_ok());
        let decoded = decoded.unwrap_or_default();
        prop_assert_eq!(parse_entity_path(&decoded, "t1"), Some(key));
    }

    #[test]
    fn query_values_read_back(value in arb_text()) {
        let encoded = encode_query_value(&value);
        prop_assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)));
        let decoded = percent_encoding::percent_decode_str(&encoded).decode_utf8();
        let decoded = decoded.ok();
        prop_assert_eq!(decoded.as_deref(), Some(value.as_str()));
    }
}
