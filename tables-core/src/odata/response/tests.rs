use super::*;
use crate::odata::batch::parse_batch_response;
use crate::odata::{decode_entity, decode_entity_page, decode_table_names, parse_error_body};
use crate::{DateTime, ETag, EntityKey};

fn here() -> Resource<'static> {
    Resource {
        base_url: "http://127.0.0.1:10002/acct",
        account: "acct",
        table: "t",
    }
}

fn sample() -> DynamicEntity {
    let timestamp: DateTime = "2026-11-21T22:27:39.1328500Z".parse().unwrap();
    let mut entity = DynamicEntity::new("o'hara", "a b")
        .with("S", "text \"quoted\"")
        .with("I", 42)
        .with("L", i64::MAX)
        .with("D", 3.0)
        .with("N", f64::NEG_INFINITY)
        .with("B", true)
        .with("T", timestamp)
        .with("G", uuid::Uuid::nil())
        .with("Bin", vec![0u8, 1, 255]);
    entity.timestamp = Some(timestamp);
    entity.etag = Some(ETag::from_timestamp(timestamp));
    entity
}

#[test]
fn every_level_reads_back() {
    for metadata in [Metadata::Minimal, Metadata::Full] {
        let mut body = Vec::new();
        encode_entity(&sample(), metadata, &here(), &mut body);
        assert_eq!(decode_entity(&body).unwrap(), sample(), "{metadata:?}");
    }
    let mut body = Vec::new();
    encode_entity(&sample(), Metadata::None, &here(), &mut body);
    let text = String::from_utf8(body).unwrap();
    assert!(!text.contains("odata"), "{text}");
}

#[test]
fn full_metadata_names_the_entity() {
    let mut body = Vec::new();
    encode_entity(&sample(), Metadata::Full, &here(), &mut body);
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["odata.type"], "acct.t");
    assert_eq!(
        json["odata.editLink"],
        "t(PartitionKey='o''hara',RowKey='a%20b')"
    );
    assert_eq!(
        json["odata.id"],
        "http://127.0.0.1:10002/acct/t(PartitionKey='o''hara',RowKey='a%20b')"
    );
    assert_eq!(json["Timestamp@odata.type"], "Edm.DateTime");
    assert_eq!(json["L@odata.type"], "Edm.Int64");
    assert!(json.get("I@odata.type").is_none());
    assert!(
        json.get("D@odata.type").is_none(),
        "a finite double needs none"
    );
    assert_eq!(json["D"].as_f64(), Some(3.0));
    assert_eq!(json["N@odata.type"], "Edm.Double");
}

#[test]
fn pages_and_tables_read_back() {
    let entities = [sample(), DynamicEntity::new("p", "r")];
    for metadata in [Metadata::Minimal, Metadata::Full] {
        let mut body = Vec::new();
        encode_entity_page(&entities, None, metadata, &here(), &mut body);
        assert_eq!(decode_entity_page(&body).unwrap(), entities);
        for single in [false, true] {
            let mut body = Vec::new();
            encode_tables(
                &["Orders", "Staff"],
                single,
                metadata,
                "http://h/a",
                "a",
                &mut body,
            );
            let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
            if single {
                assert_eq!(json["TableName"], "Orders");
                assert_eq!(
                    json["odata.metadata"],
                    "http://h/a/$metadata#Tables/@Element"
                );
            } else {
                assert_eq!(decode_table_names(&body).unwrap(), ["Orders", "Staff"]);
            }
        }
    }
}

#[test]
fn errors_read_back() {
    let mut body = Vec::new();
    encode_error("InvalidInput", "bad \"input\"\nRequestId:1", &mut body);
    let read = parse_error_body(400, None, &body);
    assert_eq!(
        (read.code.as_str(), read.message.as_str()),
        ("InvalidInput", "bad \"input\"\nRequestId:1")
    );
    let mut xml = Vec::new();
    encode_error_xml("AuthenticationFailed", "a <b> & c", &mut xml);
    let read = parse_error_body(403, None, &xml);
    assert_eq!(
        (read.code.as_str(), read.message.as_str()),
        ("AuthenticationFailed", "a <b> & c")
    );
}

#[test]
fn batch_answers_read_back() {
    let etag = ETag::from_timestamp("2026-01-01T00:00:00Z".parse().unwrap());
    let ok = |id: usize| BatchPart {
        status: 204,
        headers: vec![
            ("Content-ID".into(), id.to_string()),
            ("ETag".into(), etag.as_str().to_owned()),
        ],
        body: Vec::new(),
    };
    let response = encode_batch_response("b1", Some("c1"), &[ok(1), ok(2)]);
    let outcomes = parse_batch_response(&response.content_type, &response.body, 2).unwrap();
    assert_eq!(outcomes.len(), 2);
    assert_eq!(outcomes[1].etag.as_ref(), Some(&etag));

    let mut error = Vec::new();
    encode_error(
        "EntityAlreadyExists",
        "1:The specified entity already exists.",
        &mut error,
    );
    let failed = BatchPart {
        status: 409,
        headers: vec![("Content-ID".into(), "2".into())],
        body: error,
    };
    let response = encode_batch_response("b1", Some("c1"), &[failed]);
    let err = parse_batch_response(&response.content_type, &response.body, 3).unwrap_err();
    assert_eq!(err.batch_index(), Some(1));
    assert_eq!(err.kind(), crate::ErrorKind::EntityAlreadyExists);
    let _ = EntityKey::new("p", "r");
}

#[test]
fn media_types() {
    use Metadata::*;
    for (text, level) in [
        ("application/json;odata=nometadata", Some(None)),
        ("application/json;odata=minimalmetadata", Some(Minimal)),
        ("APPLICATION/JSON; ODATA=FullMetadata", Some(Full)),
        ("application/json;odata=verbose", Option::None),
        ("application/atom+xml", Option::None),
        ("nometadata", Some(None)),
        ("json", Some(Minimal)),
        ("JSON", Some(Minimal)),
        ("FullMetadata", Some(Full)),
        ("atom", Option::None),
    ] {
        assert_eq!(Metadata::from_media_type(text), level, "{text}");
    }
    // Each level's own media type (a server's shortcut) reads as that level.
    for level in [None, Minimal, Full] {
        assert_eq!(Metadata::from_media_type(level.media_type()), Some(level));
    }
}

#[test]
fn projections_write_the_selected_properties_only() {
    let select = ["I".to_owned(), "Missing".to_owned(), "RowKey".to_owned()];
    for metadata in [Metadata::None, Metadata::Minimal, Metadata::Full] {
        let mut body = Vec::new();
        encode_selected_entity(&sample(), Some(&select), metadata, &here(), &mut body);
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["I"], 42, "{metadata:?}");
        assert!(
            json["Missing"].is_null() && json.get("Missing").is_some(),
            "{json}"
        );
        assert_eq!(json["RowKey"], "a b");
        assert!(
            json.get("PartitionKey").is_none() && json.get("S").is_none(),
            "{json}"
        );
        assert!(json.get("Timestamp").is_none(), "{json}");
        assert_eq!(json.get("odata.etag").is_some(), metadata != Metadata::None);
    }
    let none: [String; 1] = ["Missing".to_owned()];
    let mut body = Vec::new();
    encode_selected_entity(&sample(), Some(&none), Metadata::None, &here(), &mut body);
    assert_eq!(body, br#"{"Missing":null}"#);
}

/// The answer JSON a row keeps is written once per version: a clone shares it, and
/// any change, to a clone or in place, is seen by the next answer.
#[test]
fn a_row_answers_from_its_kept_json_until_it_changes() {
    let answer = |entity: &DynamicEntity| {
        let mut body = Vec::new();
        encode_entity(entity, Metadata::Minimal, &here(), &mut body);
        decode_entity(&body).unwrap()
    };
    let stored = sample();
    assert_eq!(answer(&stored), sample());
    let kept = stored.answer_json(annotated_members);
    let reader = stored.clone();
    assert!(std::ptr::eq(kept, reader.answer_json(annotated_members)));
    assert_eq!(answer(&reader), sample());

    // A clone that changes gets its own list; the stored row keeps its answer.
    let mut changed = reader.clone();
    changed.insert("S", "changed");
    assert_eq!(answer(&changed).get("S"), Some(&Value::from("changed")));
    assert_eq!(answer(&stored), sample());

    // A row that owns its list alone, changed in place after an answer.
    let mut owned = sample();
    assert_eq!(answer(&owned), sample());
    owned.insert("I", 7);
    owned.remove("B");
    owned.retain(|name, _| name != "G");
    let read = answer(&owned);
    assert_eq!(read.get("I"), Some(&Value::Int32(7)));
    assert!(read.get("B").is_none() && read.get("G").is_none());

    // No metadata: no annotations, so never the kept JSON.
    let mut body = Vec::new();
    encode_entity(&stored, Metadata::None, &here(), &mut body);
    assert!(!String::from_utf8(body).unwrap().contains("odata.type"));
}
