//! The cases: one request each, from its seed: the method, the path (of every
//! resource, keys quoted and escaped well and badly), the query (`$filter`,
//! `$select`, `$top`, continuation, SAS), the headers, the body and the credentials.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, SystemTime};

use percent_encoding::utf8_percent_encode;
use tables_core::auth::{AccountSasFields, TableSasFields, QUERY_VALUE};
use tables_core::odata::continuation::encode_position;

use super::body::{acl_xml, batch, entity_json, mutate, properties_xml, quoted};
use super::names::{entity_path, table_name};
use super::{dev_key, Rng, ACCOUNT, KEYS};

/// One generated request, before signing.
pub(super) struct Case {
    pub(super) method: String,
    /// The request target: path and query, as on the request line.
    pub(super) target: String,
    pub(super) headers: Vec<(String, Vec<u8>)>,
    pub(super) body: Vec<u8>,
    /// How to sign it, once the path is read as hyper reads it.
    pub(super) auth: Auth,
    pub(super) peer: IpAddr,
}

/// How a case is signed (SharedKey and SharedKeyLite correctly; garbage
/// `Authorization` headers and SAS tokens are in the case itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Auth {
    None,
    SharedKey,
    SharedKeyLite,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (method, target, auth) = (&self.method, &self.target, self.auth);
        writeln!(f, "{method} {target} (sign: {auth:?}, peer {})", self.peer)?;
        for (name, value) in &self.headers {
            writeln!(f, "{name}: {:?}", String::from_utf8_lossy(value))?;
        }
        let body = String::from_utf8_lossy(&self.body);
        let shown: String = body.chars().take(4_000).collect();
        write!(f, "body ({} bytes): {shown:?}", self.body.len())
    }
}

impl Case {
    fn header(&mut self, name: &str, value: impl Into<Vec<u8>>) {
        self.headers.push((name.to_owned(), value.into()));
    }
}

/// Percent-encodes what a URI can't hold, and other bytes at random; sometimes
/// leaves a stray `%` or an invalid or overlong UTF-8 escape.
pub(super) fn escape(rng: &mut Rng, text: &[u8]) -> String {
    const EVIL: &str = "%|%4|%G0|%C0%AF|%E0%80%AF|%ED%A0%80|%F4%90%80%80|%FF|%00|%2F|%27%27|%28";
    let mut out = String::with_capacity(text.len() * 2);
    let rate = rng.pick(&[0, 0, 0, 0, 0, 0, 2, 10, 30, 100]);
    let evil_at = rng.percent(10).then(|| rng.below(text.len() + 1));
    for (i, &b) in text.iter().enumerate() {
        if evil_at == Some(i) {
            out.push_str(rng.one_of(EVIL));
        }
        let plain = b.is_ascii_alphanumeric() || b"-._~!$'()*,;=:@/".contains(&b);
        if plain && !rng.percent(rate) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if evil_at == Some(text.len()) {
        out.push_str(rng.one_of(EVIL));
    }
    out
}

/// A `$filter` from the grammar, with literals of every type, some out of range.
fn filter(rng: &mut Rng, depth: usize) -> String {
    if depth > 0 && rng.percent(40) {
        let (a, b) = (filter(rng, depth - 1), filter(rng, depth - 1));
        return match rng.below(4) {
            0 => format!("{a} and {b}"),
            1 => format!("{a} or {b}"),
            2 => format!("not ({a})"),
            _ => format!("({a})"),
        };
    }
    let literal = match rng.below(12) {
        0 => format!("'{}'", rng.text(6).replace('\'', "''")),
        1 => format!("{}", rng.next() as i32),
        2 => format!("{}L", rng.next() as i64),
        3 => rng
            .one_of("1.5|1e10|2.5E+20|-0.0|2D|1e999|NaN|INF|.5|1.|-")
            .to_owned(),
        4 => rng.one_of("true|false|True").to_owned(),
        5 => rng
            .one_of(
                "datetime'2020-01-01T00:00:00Z'|datetime'9999-12-31T23:59:59.9999999Z'|\
                 datetime'0000-00-00'|datetime''|datetime'2020-01-01T00:00:00.12345678901Z'",
            )
            .to_owned(),
        6 => rng
            .one_of("guid'01234567-89ab-cdef-0123-456789abcdef'|guid'0123'|guid''")
            .to_owned(),
        7 => rng.one_of("X'0A0B'|binary'00ff'|X'0'|X'zz'|X''").to_owned(),
        8 => rng
            .one_of("2147483648|-2147483649|9223372036854775808L|-9223372036854775809L")
            .to_owned(),
        _ => format!("'{}'", rng.pick(&KEYS).0.replace('\'', "''")),
    };
    let prop = rng.one_of("PartitionKey|RowKey|Name|Age|Big|Ratio|Flag|Data|TableName|Timestamp");
    let op = rng.one_of("eq|ne|gt|ge|lt|le|EQ");
    if rng.percent(10) {
        format!("{literal} {op} {prop}")
    } else {
        format!("{prop} {op} {literal}")
    }
}

/// A `$filter`: from the grammar, then perhaps cut or spliced with fragments; or
/// deep, long or garbage.
fn filter_text(rng: &mut Rng) -> String {
    const FRAGMENTS: &str =
        "(|)|'|''| eq | and |not | or|datetime'|guid'|X'|L|-|.|9999999999999999999999|1e|\0|é|true| ";
    match rng.below(20) {
        0 => "(".repeat(rng.pick(&[63, 64, 65, 1_000])),
        1 => "not ".repeat(rng.pick(&[63, 65, 500])) + "true",
        2 => vec!["Age eq 1"; rng.pick(&[15, 16, 257])].join(" and "),
        3 => rng.text(20),
        _ => {
            let mut text = filter(rng, 3);
            for _ in 0..rng.pick(&[0, 0, 1, 2, 4]) {
                let mut at = rng.below(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                if rng.percent(50) {
                    text.insert_str(at, rng.one_of(FRAGMENTS));
                } else {
                    text.truncate(at);
                }
            }
            text
        }
    }
}

/// A `NextPartitionKey`/`NextRowKey` value: one the server wrote, or one close to
/// it (bad length, bad base64, base64 of bytes that are not UTF-8), or garbage.
fn continuation(rng: &mut Rng) -> String {
    const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=/+";
    match rng.below(6) {
        0 | 1 => encode_position(rng.pick(&KEYS).0),
        2 => encode_position(&rng.text(8)),
        3 => {
            let len = rng.below(12);
            let text: String = (0..len).map(|_| rng.pick(BASE64URL) as char).collect();
            let claimed = if rng.percent(80) { len } else { rng.below(20) };
            format!("1!{claimed}!{text}")
        }
        4 => rng
            .one_of("1!|1!!|1!-1!|1!99999999999999999999!x|2!4!cDE|!|1!2!_w|1!3!wMA")
            .to_owned(),
        _ => rng.text(10),
    }
}

/// A shared access signature's parameters: mostly signed over its (possibly odd)
/// fields, so that they reach the checks behind the signature; or a garbage `sig`.
fn sas(rng: &mut Rng) -> Vec<(&'static str, String)> {
    const TIMES: &str = "2099-01-01T00:00:00Z|2099-01-01T00:00:00Z|2000-01-01T00:00:00Z|\
        2099-13-45T99:99:99Z|2099-01-01|9999-12-31T23:59:59.9999999Z|+275760-09-13T00:00:00Z|";
    // Each field is mostly good, so that a token often gets past the earlier checks.
    let field = |rng: &mut Rng, alternatives: &'static str| {
        if rng.percent(92) {
            rng.one_of(alternatives).to_owned()
        } else {
            rng.text(8)
        }
    };
    let version = field(rng, "2019-02-02|2020-12-06|2019-02-02|2020-12-06|");
    let permissions = field(rng, "raud|r|a|ud|rwdlacu|x|");
    let start = field(
        rng,
        "||2000-01-01T00:00:00Z|2098-01-01T00:00:00Z|2000-01-01",
    );
    let expiry = field(rng, TIMES);
    let ip = field(
        rng,
        "||127.0.0.1|10.0.0.1-10.0.0.9|::1|1.2.3.4-|-|127.0.0.1-::1",
    );
    let protocol = field(rng, "||https,http|https|http");
    let mut params: Vec<(&str, String)>;
    let string_to_sign = if rng.percent(40) {
        let services = field(rng, "t|t|bq|");
        let types = field(rng, "sco|o|c|s|");
        let scope = rng.one_of("||scope").to_owned();
        let fields = AccountSasFields {
            permissions: &permissions,
            services: &services,
            resource_types: &types,
            start: &start,
            expiry: &expiry,
            ip_range: &ip,
            protocol: &protocol,
            version: &version,
            encryption_scope: &scope,
        };
        let string_to_sign = fields.string_to_sign(ACCOUNT);
        params = vec![("ss", services), ("srt", types), ("ses", scope)];
        string_to_sign
    } else {
        let table = field(rng, "fuzz|FUZZ|Other|");
        let policy = field(rng, "||readers|nosuch");
        // A row key bound mostly comes with its partition key bound.
        let mut keys = Vec::with_capacity(4);
        for _ in 0..2 {
            let partition_key = field(rng, "||p1|p2|quo'te");
            let row_key = match partition_key.is_empty() || rng.percent(50) {
                true if rng.percent(95) => String::new(),
                _ => field(rng, "r1|r2|"),
            };
            keys.extend([partition_key, row_key]);
        }
        let fields = TableSasFields {
            permissions: &permissions,
            start: &start,
            expiry: &expiry,
            table: &table,
            policy_id: &policy,
            ip_range: &ip,
            protocol: &protocol,
            version: &version,
            start_partition_key: &keys[0],
            start_row_key: &keys[1],
            end_partition_key: &keys[2],
            end_row_key: &keys[3],
        };
        let string_to_sign = fields.string_to_sign(ACCOUNT);
        params = vec![("tn", table), ("si", policy)];
        params.extend(["spk", "srk", "epk", "erk"].into_iter().zip(keys));
        string_to_sign
    };
    params.extend([
        ("sv", version),
        ("sp", permissions),
        ("st", start),
        ("se", expiry),
        ("sip", ip),
        ("spr", protocol),
    ]);
    params.retain(|(_, v)| !v.is_empty() || rng.percent(10));
    let signature = match rng.below(10) {
        0 => rng.text(12),
        1 => rng.one_of("|===|AAAA|%%").to_owned(),
        _ => dev_key().sign(&string_to_sign),
    };
    params.push(("sig", signature));
    if rng.percent(5) {
        let again = params[rng.below(params.len())].clone();
        params.push(again);
    }
    params
}

/// What a case does: sets its method and body (with Content-Type) and returns the
/// path below the account and the query.
fn operation(rng: &mut Rng, case: &mut Case) -> (String, Vec<(&'static str, String)>) {
    let mut query: Vec<(&'static str, String)> = Vec::new();
    let (method, path) = match rng.below(14) {
        0 => {
            query.push(("restype", "service".to_owned()));
            query.push(("comp", "properties".to_owned()));
            if rng.percent(50) {
                case.header("content-type", "application/xml");
                case.body = properties_xml(rng);
                ("PUT", String::new())
            } else {
                ("GET", String::new())
            }
        }
        1 => {
            query.push(("restype", rng.or_garbage("service|Service")));
            query.push(("comp", rng.or_garbage("stats|properties|acl|list")));
            (
                rng.one_of("GET|PUT|HEAD"),
                rng.one_of("|/|Tables").to_owned(),
            )
        }
        2 => {
            if rng.percent(50) {
                query.push(("$filter", filter_text(rng)));
            }
            if rng.percent(30) {
                query.push(("$top", rng.or_garbage("1|0|1000|1001| 5|-1|4294967296")));
            }
            if rng.percent(30) {
                query.push(("NextTableName", rng.or_garbage("Other|fuzz|")));
            }
            ("GET", "Tables".to_owned())
        }
        3 => {
            case.header("content-type", "application/json");
            let name = table_name(rng);
            let body = match rng.below(6) {
                0 => format!("{{\"TableName\":{}}}", rng.one_of("1|null|[]")),
                1 => "{}".to_owned(),
                _ => format!("{{\"TableName\":{}}}", quoted(&name)),
            };
            case.body = mutate(rng, body.into_bytes(), 30);
            ("POST", "Tables".to_owned())
        }
        4 => {
            let name = table_name(rng).replace('\'', "''");
            ("DELETE", format!("Tables('{name}')"))
        }
        5 => {
            query.push(("comp", "acl".to_owned()));
            if rng.percent(50) {
                case.body = acl_xml(rng);
                ("PUT", table_name(rng))
            } else {
                (rng.one_of("GET|HEAD"), table_name(rng))
            }
        }
        6 | 7 => {
            if rng.percent(60) {
                query.push(("$filter", filter_text(rng)));
            }
            if rng.percent(30) {
                query.push((
                    "$select",
                    rng.or_garbage("Name|Name,Age|Name,,Age| |*|RowKey"),
                ));
            }
            if rng.percent(30) {
                query.push(("$top", rng.or_garbage("1|2|0|1001")));
            }
            if rng.percent(30) {
                query.push(("NextPartitionKey", continuation(rng)));
                if rng.percent(70) {
                    query.push(("NextRowKey", continuation(rng)));
                }
            }
            let table = table_name(rng);
            (
                "GET",
                if rng.percent(70) {
                    format!("{table}()")
                } else {
                    table
                },
            )
        }
        8 => {
            if rng.percent(30) {
                query.push(("$select", rng.or_garbage("Name|Name,Age|")));
            }
            ("GET", entity_path(rng))
        }
        9 => {
            case.header("content-type", "application/json");
            case.body = entity_json(rng);
            ("POST", table_name(rng))
        }
        10 => {
            case.header("content-type", "application/json");
            case.body = entity_json(rng);
            let method = rng.one_of("PUT|MERGE|PATCH|DELETE");
            if rng.percent(30) {
                case.header("x-http-method", method);
                ("POST", entity_path(rng))
            } else {
                (method, entity_path(rng))
            }
        }
        11 => {
            let (content_type, body) = batch(rng);
            case.header("content-type", content_type);
            case.body = body;
            (
                "POST",
                rng.one_of("$batch|$batch|$BATCH|$batch/x").to_owned(),
            )
        }
        12 => {
            case.body = rng.bytes(64);
            let path = rng.one_of(
                "|/|Tables('')|Tables('a''b')|Tables(%27x%27)|Tables('x|Tables()|fuzz()()|fuzz(|\
                 fuzz)|a/b/c|fuzz(PartitionKey='p1',RowKey='r1')/x|_faults|Tables('fuzz')()",
            );
            (rng.one_of("GET|POST|PUT|DELETE|MERGE"), path.to_owned())
        }
        _ => {
            let raw = rng.bytes(24);
            let path = String::from_utf8_lossy(&raw).into_owned();
            (rng.one_of("GET|POST|PUT"), path)
        }
    };
    case.method = if rng.percent(4) {
        rng.one_of("OPTIONS|HEAD|TRACE|FOO|merge|CONNECT|PATCH")
    } else {
        method
    }
    .to_owned();
    (path, query)
}

/// A whole case from its seed.
pub(super) fn generate(seed: u64) -> Case {
    let rng = &mut Rng::new(seed);
    let mut case = Case {
        method: String::new(),
        target: String::new(),
        headers: Vec::new(),
        body: Vec::new(),
        auth: Auth::None,
        peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
    };
    let (path, mut query) = operation(rng, &mut case);
    if rng.percent(3) {
        case.body = rng.bytes(512);
    }
    // Addressing: path-style (primary or secondary), host-style, or an account the
    // server does not serve.
    let host = match rng.below(20) {
        0..=9 => "127.0.0.1:10002".to_owned(),
        10 | 11 => "localhost".to_owned(),
        12..=15 => format!("{ACCOUNT}.table.localhost:10002"),
        16 => format!("{ACCOUNT}-secondary.table.localhost"),
        17 => rng.or_garbage("[::1]:10002|[::1|nosuch.table.localhost|:|[]|a.b.c"),
        _ => String::new(),
    };
    let prefix = match (host.starts_with(ACCOUNT), rng.below(20)) {
        (true, _) => String::new(),
        (false, 0) => format!("/{ACCOUNT}-secondary"),
        (false, 1) => "/nosuch".to_owned(),
        (false, 2) => {
            let account = rng.text(6);
            format!("/{}", escape(rng, account.as_bytes()))
        }
        _ => format!("/{ACCOUNT}"),
    };
    if !host.is_empty() {
        case.header("host", host);
    }
    let path = escape(rng, path.as_bytes());
    let path = if path.starts_with('/') {
        path
    } else {
        format!("/{path}")
    };
    // Credentials: mostly a good signature, or none (then often a SAS); some garbage.
    let sas_percent = match rng.below(20) {
        0..=4 => 60,
        5..=16 => {
            case.auth = Auth::SharedKey;
            3
        }
        17 => {
            case.auth = Auth::SharedKeyLite;
            3
        }
        _ => {
            let garbage = rng.or_garbage(
                "SharedKey a:|SharedKey devstoreaccount1:|SharedKey devstoreaccount1:AAAA|\
                 SharedKey :x|Bearer x|SharedKey|SharedKeyLite devstoreaccount1:%%|\
                 SharedKey  devstoreaccount1:sig extra|SharedKey nosuch:AAAA",
            );
            case.header("authorization", garbage);
            3
        }
    };
    if rng.percent(sas_percent) {
        query.extend(sas(rng));
    }
    for (name, good) in [
        (
            "$format",
            "application/json;odata=nometadata|application/atom+xml|json",
        ),
        ("timeout", "30|-1"),
        ("comp", "acl|properties|stats|list"),
    ] {
        if rng.percent(3) {
            query.push((name, rng.or_garbage(good)));
        }
    }
    let pairs: Vec<String> = query
        .iter()
        .map(|(name, value)| match rng.below(20) {
            0 => (*name).to_owned(),
            1 => format!("{name}={}", escape(rng, value.as_bytes())),
            2 => format!("{name}={}", value.replace(' ', "+")),
            _ => format!("{name}={}", utf8_percent_encode(value, QUERY_VALUE)),
        })
        .collect();
    let separator = if rng.percent(95) { "&" } else { "&&" };
    case.target = if pairs.is_empty() && rng.percent(95) {
        format!("{prefix}{path}")
    } else {
        format!("{prefix}{path}?{}", pairs.join(separator))
    };
    headers(rng, &mut case);
    case
}

/// The headers a client sends, good and bad, and the date a signature needs.
fn headers(rng: &mut Rng, case: &mut Case) {
    let optional = |rng: &mut Rng, case: &mut Case, name: &str, percent, good| {
        if rng.percent(percent) {
            let value = if rng.percent(85) {
                rng.one_of(good).as_bytes().to_vec()
            } else {
                rng.bytes(12)
            };
            case.header(name, value);
        }
    };
    let accept = "application/json;odata=minimalmetadata|application/json;odata=nometadata|\
        application/json;odata=fullmetadata|application/json|application/atom+xml|\
        application/xml|*/*|application/*|text/plain, application/xml|,;,|application/json;odata=";
    optional(rng, case, "accept", 70, accept);
    let versions = "2019-02-02|2020-12-06|garbage";
    optional(rng, case, "x-ms-version", 60, versions);
    let prefer = "return-no-content|return-content| RETURN-NO-CONTENT ";
    optional(rng, case, "prefer", 20, prefer);
    let etags = "*|W/\"datetime'2020-01-01T00%3A00%3A00Z'\"|\"x\"|W/\"|\"|w/\"\"";
    optional(rng, case, "if-match", 25, etags);
    let tunnelled = "MERGE|DELETE|PUT|GET|PATCH|POST| merge ";
    optional(rng, case, "x-http-method", 4, tunnelled);
    optional(rng, case, "x-http-method", 1, "MERGE");
    optional(rng, case, "content-md5", 3, "|x|1B2M2Y8AsgTpgAmY7PhCfg==");
    let types = "multipart/mixed; boundary=\"|application/json;odata=nometadata|text/xml";
    optional(rng, case, "content-type", 5, types);
    if case.method == "OPTIONS" || rng.percent(10) {
        let origins = "https://app.example|https://evil.example|null|";
        optional(rng, case, "origin", 90, origins);
        let methods = "GET|PUT|DELETE|FOO|";
        optional(rng, case, "access-control-request-method", 85, methods);
        let asked = "x-ms-date|x-ms-date, content-md5|,,|*";
        optional(rng, case, "access-control-request-headers", 50, asked);
    }
    if rng.percent(3) {
        let name = String::from_utf8_lossy(&rng.bytes(8)).into_owned();
        let value = rng.bytes(16);
        case.header(&name, value);
    }
    if rng.percent(5) {
        case.peer = rng.pick(&[
            IpAddr::V6(Ipv6Addr::LOCALHOST),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 5)),
        ]);
    }
    if case.auth != Auth::None || rng.percent(20) {
        let date = match rng.below(40) {
            0 => rng.or_garbage(
                "Mon, 01 Jan 2001 00:00:00 GMT|Mon, 99 Jan 2024 00:00:00 GMT|\
                 Sun, 06 Nov 1994 08:49:37 GMT|Sunday, 06-Nov-94 08:49:37 GMT|",
            ),
            1 => httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(3_600)),
            _ => httpdate::fmt_http_date(SystemTime::now()),
        };
        let name = if rng.percent(90) { "x-ms-date" } else { "date" };
        case.header(name, date);
    }
}
