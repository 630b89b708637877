//! Bodies: entity JSON with every `@odata.type`, `$batch` multipart with
//! changesets, Set Table ACL and Set Service Properties XML, and the byte-level
//! mutations applied to all of them.

use super::names::{entity_path, table_name};
use super::{Rng, ACCOUNT, KEYS};

/// `text` as a JSON string.
pub(super) fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A JSON value for a property annotated `ty`: right, wrong or out of range.
fn json_value(rng: &mut Rng, ty: &str) -> String {
    let value = match ty {
        "Edm.String" => return quoted(&rng.text(10)),
        "Edm.Int32" => rng.one_of("1|-2147483648|2147483648|1.5|\"7\"|1e3|-0|01"),
        "Edm.Int64" => rng.one_of("\"5\"|\"9223372036854775808\"|\"-1\"|5|\"x\"|\"\"|\"+5\""),
        "Edm.Double" => rng
            .one_of("1.5|\"NaN\"|\"Infinity\"|\"-Infinity\"|\"INF\"|1e400|-1e-400|\"1.5\"|\"inf\""),
        "Edm.Boolean" => rng.one_of("true|false|\"true\"|1|null"),
        "Edm.DateTime" => rng.one_of(
            "\"2020-01-01T00:00:00Z\"|\"2020-01-01T00:00:00.1234567Z\"|\"10000-01-01T00:00:00Z\"|\
             \"0000-01-01T00:00:00Z\"|\"2020-02-30T00:00:00Z\"|\"2020-01-01\"|\"\"|0|\
             \"2020-01-01T00:00:00+01:00\"|\"9999-12-31T23:59:59.99999999Z\"",
        ),
        "Edm.Guid" => rng.one_of(
            "\"01234567-89ab-cdef-0123-456789abcdef\"|\"0123\"|\
             \"{01234567-89ab-cdef-0123-456789abcdef}\"|7",
        ),
        "Edm.Binary" => rng.one_of("\"AAEC\"|\"AAE\"|\"A\"|\"!!!!\"|\"\"|[1,2]|\"AAEC==\""),
        _ => match rng.below(8) {
            0 => rng.one_of("null|[]|{\"a\":1}|-0|1E+2|true"),
            1 => {
                let depth = if rng.percent(5) { 100_000 } else { 200 };
                return "[".repeat(depth) + &"]".repeat(depth);
            }
            2 => return "{\"a\":".repeat(200) + "1" + &"}".repeat(200),
            3 => "123456789012345678901234567890",
            4 => rng.one_of("\"\\ud800\"|\"\\u12\"|\"\\ud800\\u0041\"|\"\\x\""),
            5 if rng.percent(5) => {
                // Past the 64 KiB of a string property, or of the whole entity.
                return format!("\"{}\"", "x".repeat(rng.pick(&[32_768, 40_000])));
            }
            _ => return format!("\"{}\"", "x".repeat(rng.below(300))),
        },
    };
    value.to_owned()
}

/// An entity body: keys, properties with their annotations (before or after the
/// value, matching it or not), then perhaps mutated.
pub(super) fn entity_json(rng: &mut Rng) -> Vec<u8> {
    const TYPES: &str = "Edm.String|Edm.Int32|Edm.Int64|Edm.Double|Edm.Boolean|Edm.DateTime|\
        Edm.Guid|Edm.Binary|Edm.Single|Edm.Nonsense||none";
    const NAMES: &str =
        "Name|Age|Ratio|Timestamp|odata.etag|odata.metadata||a b|PartitionKey|x@odata.type";
    let mut members = Vec::new();
    let (pk, rk) = match rng.pick(&KEYS) {
        // Keys with the characters the service forbids in them (`/ \ # ?`, controls).
        _ if rng.percent(10) => (rng.text(8), rng.text(8)),
        (pk, rk) => (pk.to_owned(), rk.to_owned()),
    };
    if rng.percent(90) {
        members.push(format!("\"PartitionKey\":{}", quoted(&pk)));
    }
    if rng.percent(90) {
        members.push(format!("\"RowKey\":{}", quoted(&rk)));
    }
    let count = if rng.percent(2) {
        253
    } else {
        rng.pick(&[0, 1, 2, 4, 8])
    };
    for i in 0..count {
        let name = if rng.percent(60) {
            format!("P{i}")
        } else {
            rng.one_of(NAMES).to_owned()
        };
        let ty = rng.one_of(TYPES);
        let value_ty = if rng.percent(80) {
            ty
        } else {
            rng.one_of(TYPES)
        };
        let value = format!("{}:{}", quoted(&name), json_value(rng, value_ty));
        let annotation = format!("{}:{}", quoted(&format!("{name}@odata.type")), quoted(ty));
        match (ty, rng.below(3)) {
            ("none", _) => members.push(value),
            (_, 0) => members.extend([annotation, value]),
            _ => members.extend([value, annotation]),
        }
    }
    let body = if rng.percent(5) {
        rng.one_of("[]|null||{|{}{}|\u{feff}{}|{\"PartitionKey\":\"p\",\"PartitionKey\":1}")
            .to_owned()
    } else {
        format!("{{{}}}", members.join(","))
    };
    mutate(rng, body.into_bytes(), 40)
}

/// A `$batch` body and its Content-Type: a changeset of writes (or a read alone),
/// in framing that varies as clients' does, then perhaps mutated.
pub(super) fn batch(rng: &mut Rng) -> (String, Vec<u8>) {
    let batch = rng.or_garbage("batch_1|batch_a-b|b");
    let changeset = rng.or_garbage("changeset_1|cs|batch_1");
    let nl = if rng.percent(85) { "\r\n" } else { "\n" };
    let read = rng.percent(15);
    let count = if read {
        1
    } else {
        if rng.percent(3) {
            101
        } else {
            rng.pick(&[0, 1, 2, 3, 5])
        }
    };
    let mut body = String::new();
    let in_changeset = !read && rng.percent(85);
    let mut inner = batch.clone();
    if in_changeset {
        let head = |outer: &str, inner: &str| {
            format!("--{outer}{nl}Content-Type: multipart/mixed; boundary={inner}{nl}{nl}")
        };
        body.push_str(&head(&batch, &changeset));
        inner.clone_from(&changeset);
        if rng.percent(3) {
            // Changesets nested in the changeset, deeply.
            for level in 0..rng.pick(&[2, 50]) {
                let deeper = format!("{changeset}{level}");
                body.push_str(&head(&inner, &deeper));
                inner = deeper;
            }
        }
    }
    for i in 0..count {
        let method = if read {
            "GET".to_owned()
        } else {
            rng.or_garbage("POST|PUT|MERGE|PATCH|DELETE|GET")
        };
        let path = if method == "POST" && rng.percent(80) {
            if rng.percent(90) {
                "fuzz".to_owned()
            } else {
                table_name(rng)
            }
        } else {
            entity_path(rng)
        };
        let url = match rng.below(8) {
            0 => format!("/{ACCOUNT}/{path}"),
            1 => path,
            2 => format!("http://{ACCOUNT}.table.localhost:10002/{path}"),
            3 => format!("http://127.0.0.1:10002/nosuch/{path}?$select=Name"),
            4 => rng.text(12),
            _ => format!("http://127.0.0.1:10002/{ACCOUNT}/{path}"),
        };
        let id = if rng.percent(90) {
            i.to_string()
        } else {
            rng.text(4)
        };
        body.push_str(&format!(
            "--{inner}{nl}Content-Type: application/http{nl}Content-Transfer-Encoding: binary\
             {nl}{nl}{method} {url} HTTP/1.1{nl}Content-ID: {id}{nl}\
             Content-Type: application/json{nl}"
        ));
        for (name, values) in [
            ("If-Match", "*|W/\"x\"|garbage"),
            ("Prefer", "return-no-content|return-content"),
            ("X-HTTP-Method", "MERGE|DELETE|PUT|GET"),
            (
                "Accept",
                "application/json;odata=fullmetadata|application/atom+xml",
            ),
        ] {
            if rng.percent(25) {
                body.push_str(&format!("{name}: {}{nl}", rng.one_of(values)));
            }
        }
        body.push_str(nl);
        body.push_str(&String::from_utf8_lossy(&entity_json(rng)));
        body.push_str(nl);
    }
    if in_changeset {
        body.push_str(&format!("--{changeset}--{nl}"));
    }
    body.push_str(&format!("--{batch}--{nl}"));
    let content_type = match rng.below(12) {
        0 => format!("multipart/mixed; boundary=\"{batch}\""),
        1 => "multipart/mixed".to_owned(),
        2 => "multipart/mixed; boundary=".to_owned(),
        3 => format!("multipart/mixed; boundary={batch}; boundary=other"),
        4 => format!("multipart/mixed;boundary=\"{batch}"),
        5 => "application/json".to_owned(),
        _ => format!("multipart/mixed; boundary={batch}"),
    };
    (content_type, mutate(rng, body.into_bytes(), 50))
}

/// An XML element's text: a good value, or one that is garbage, escaped oddly, or
/// out of range.
fn xml_value(rng: &mut Rng, good: &'static str) -> String {
    match rng.below(10) {
        0 => rng.text(6).replace('<', "&lt;"),
        1 => rng
            .one_of("&amp;|&#0;|&#xD800;|&bogus;|<![CDATA[r]]>|99999999999999999999|-1|<x/>")
            .to_owned(),
        2 => "x".repeat(65),
        _ => rng.one_of(good).to_owned(),
    }
}

/// A Set Table ACL body.
pub(super) fn acl_xml(rng: &mut Rng) -> Vec<u8> {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>");
    for i in 0..rng.pick(&[0, 1, 2, 5, 6]) {
        xml.push_str("<SignedIdentifier>");
        if rng.percent(90) {
            let id = xml_value(rng, "readers|writers");
            xml.push_str(&format!("<Id>{id}{i}</Id>"));
        }
        xml.push_str("<AccessPolicy>");
        for (element, good) in [
            (
                "Start",
                "2000-01-01T00:00:00Z|2000-01-01T00:00:00.0000000Z|",
            ),
            ("Expiry", "2099-01-01T00:00:00Z|2001-01-01T00:00:00Z|"),
            ("Permission", "r|raud|x|"),
        ] {
            if rng.percent(80) {
                let value = xml_value(rng, good);
                xml.push_str(&format!("<{element}>{value}</{element}>"));
            }
        }
        xml.push_str("</AccessPolicy></SignedIdentifier>");
    }
    xml.push_str("</SignedIdentifiers>");
    mutate(rng, xml.into_bytes(), 50)
}

/// A Set Table Service Properties body.
pub(super) fn properties_xml(rng: &mut Rng) -> Vec<u8> {
    let flag = |rng: &mut Rng| xml_value(rng, "true|false|TRUE|");
    let retention = |rng: &mut Rng| {
        let (enabled, days) = (flag(rng), xml_value(rng, "1|7|365|366|0"));
        format!(
            "<RetentionPolicy><Enabled>{enabled}</Enabled><Days>{days}</Days></RetentionPolicy>"
        )
    };
    let mut xml =
        String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>");
    if rng.percent(50) {
        let (delete, read, write) = (flag(rng), flag(rng), flag(rng));
        xml.push_str(&format!(
            "<Logging><Version>1.0</Version><Delete>{delete}</Delete><Read>{read}</Read>\
             <Write>{write}</Write>{}</Logging>",
            retention(rng)
        ));
    }
    for metrics in ["HourMetrics", "MinuteMetrics"] {
        if rng.percent(40) {
            let (enabled, apis) = (flag(rng), flag(rng));
            xml.push_str(&format!(
                "<{metrics}><Version>1.0</Version><Enabled>{enabled}</Enabled>\
                 <IncludeAPIs>{apis}</IncludeAPIs>{}</{metrics}>",
                retention(rng)
            ));
        }
    }
    if rng.percent(70) {
        xml.push_str("<Cors>");
        for _ in 0..rng.pick(&[0, 1, 2, 6]) {
            let origins = xml_value(
                rng,
                "*|https://app.example|https://a.example,https://b.example|",
            );
            let methods = xml_value(rng, "GET|GET,PUT|OPTIONS|FOO|");
            let age = xml_value(rng, "0|30|4294967296");
            let exposed = xml_value(rng, "|x-ms-*|*");
            let allowed = xml_value(rng, "|x-ms-*|*|x-ms-meta-abc,x-ms-meta-data*");
            xml.push_str(&format!(
                "<CorsRule><AllowedOrigins>{origins}</AllowedOrigins><AllowedMethods>{methods}\
                 </AllowedMethods><MaxAgeInSeconds>{age}</MaxAgeInSeconds><ExposedHeaders>\
                 {exposed}</ExposedHeaders><AllowedHeaders>{allowed}</AllowedHeaders></CorsRule>"
            ));
        }
        xml.push_str("</Cors>");
    }
    if rng.percent(3) {
        xml.push_str(&"<a>".repeat(10_000));
    }
    xml.push_str("</StorageServiceProperties>");
    mutate(rng, xml.into_bytes(), 50)
}

/// With `percent` chance, one to four byte-level mutations: a bit flipped, a token
/// or a random byte inserted, a range deleted or duplicated, the end cut off.
pub(super) fn mutate(rng: &mut Rng, mut bytes: Vec<u8>, percent: usize) -> Vec<u8> {
    const TOKENS: [&[u8]; 18] = [
        b"\"",
        b"\\",
        b"{",
        b"}",
        b"[",
        b"]",
        b"<",
        b">",
        b"&",
        b"\r\n",
        b"\n",
        b"--",
        b":",
        b",",
        b"'",
        b"\xC0\xAF",
        b"\xED\xA0\x80",
        b"@odata.type",
    ];
    if !rng.percent(percent) {
        return bytes;
    }
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(6) {
            0 if at < bytes.len() => bytes[at] ^= 1 << rng.below(8),
            1 => {
                let token = rng.pick(&TOKENS);
                bytes.splice(at..at, token.iter().copied());
            }
            2 => {
                let end = (at + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => {
                let end = (at + rng.below(64)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
            4 => bytes.truncate(at),
            _ => bytes.insert(at, rng.next() as u8),
        }
    }
    bytes
}
