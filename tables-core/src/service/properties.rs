//! Service properties (logging, hour and minute metrics, CORS rules) and service
//! stats: the bodies of Get/Set Table Service Properties and Get Table Service Stats.
//!
//! A Set body replaces only the elements it holds; [`ServiceProperties::apply`]
//! does that. [`CorsRule::allows`] is how a browser's request is matched to a rule.
//!
//! ```
//! use tables_core::service::properties::{decode_service_properties, ServiceProperties};
//!
//! let set = decode_service_properties(
//!     b"<StorageServiceProperties><Cors><CorsRule>\
//!       <AllowedOrigins>https://app.example</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods>\
//!       <MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>x-ms-*</ExposedHeaders>\
//!       <AllowedHeaders>x-ms-*,content-type</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>",
//! )?;
//! let mut properties = ServiceProperties::default();
//! properties.apply(set);
//! let rule = &properties.cors[0];
//! assert!(rule.allows("https://app.example", "PUT", &["x-ms-date", "Content-Type"]));
//! assert!(!rule.allows("https://evil.example", "PUT", &[]));
//! # Ok::<(), tables_core::Error>(())
//! ```

use serde::Deserialize;

use super::{body_text, element, invalid_xml, XML_DECLARATION};
use crate::{Error, ErrorKind};

/// How many CORS rules an account may hold.
pub const MAX_CORS_RULES: usize = 5;

/// The longest allowed origin, allowed header or exposed header, in characters.
pub const MAX_CORS_ITEM_CHARS: usize = 256;

/// The most origins a rule may list, and the most literal headers each header
/// list may hold.
pub const MAX_CORS_LITERALS: usize = 64;

/// The most prefixed headers (`x-ms-meta*`) each header list may hold.
pub const MAX_CORS_PREFIXES: usize = 2;

/// The most characters all CORS rules' settings may take, XML tags aside (2 KiB).
pub const MAX_CORS_SETTINGS_CHARS: usize = 2048;

/// The methods a CORS rule may allow.
pub const CORS_METHODS: [&str; 8] = [
    "DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH",
];

/// The account's service properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceProperties {
    /// Storage Analytics logging.
    pub logging: Logging,
    /// Hourly metrics.
    pub hour_metrics: Metrics,
    /// Per-minute metrics.
    pub minute_metrics: Metrics,
    /// CORS rules, tried in order (at most [`MAX_CORS_RULES`]).
    pub cors: Vec<CorsRule>,
}

impl Default for ServiceProperties {
    /// What a new account has: logging and metrics off, version 1.0, no CORS rule.
    fn default() -> ServiceProperties {
        ServiceProperties {
            logging: Logging {
                version: "1.0".to_owned(),
                delete: false,
                read: false,
                write: false,
                retention: Retention::default(),
            },
            hour_metrics: Metrics::default(),
            minute_metrics: Metrics::default(),
            cors: Vec::new(),
        }
    }
}

/// Storage Analytics logging settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logging {
    /// The analytics version (`1.0`).
    pub version: String,
    /// Log delete requests.
    pub delete: bool,
    /// Log read requests.
    pub read: bool,
    /// Log write requests.
    pub write: bool,
    /// How long logs are kept.
    pub retention: Retention,
}

/// Metrics settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metrics {
    /// The analytics version (`1.0`).
    pub version: String,
    /// Whether metrics are collected.
    pub enabled: bool,
    /// Whether per-API metrics are collected too (given when enabled).
    pub include_apis: Option<bool>,
    /// How long metrics are kept.
    pub retention: Retention,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            version: "1.0".to_owned(),
            enabled: false,
            include_apis: None,
            retention: Retention::default(),
        }
    }
}

/// A retention policy: off, or on for 1 to 365 days.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retention {
    /// Whether old data is deleted.
    pub enabled: bool,
    /// After how many days (given when enabled).
    pub days: Option<u32>,
}

/// One CORS rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorsRule {
    /// Origins allowed (`*` for any).
    pub allowed_origins: Vec<String>,
    /// Methods allowed.
    pub allowed_methods: Vec<String>,
    /// Request headers allowed (`x-ms-meta*` style prefixes, `*` for any).
    pub allowed_headers: Vec<String>,
    /// Answer headers the browser may show the script.
    pub exposed_headers: Vec<String>,
    /// How long a browser may cache the preflight answer.
    pub max_age_seconds: u32,
}

/// Whether `name` matches a listed header: exactly (ignoring case), by a `prefix*`,
/// or by `*`.
fn header_listed(list: &[String], name: &str) -> bool {
    list.iter().any(|entry| match entry.strip_suffix('*') {
        Some(prefix) => name
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix)),
        None => entry.eq_ignore_ascii_case(name),
    })
}

impl CorsRule {
    /// Whether the rule admits a request from `origin` with `method` and these
    /// request headers (a preflight's `Access-Control-Request-Headers`).
    pub fn allows(&self, origin: &str, method: &str, headers: &[&str]) -> bool {
        self.allows_origin(origin)
            && self
                .allowed_methods
                .iter()
                .any(|m| m.eq_ignore_ascii_case(method))
            && headers
                .iter()
                .all(|header| header_listed(&self.allowed_headers, header.trim()))
    }

    /// Whether the rule admits `origin` (exactly, ignoring case, or by `*`).
    pub fn allows_origin(&self, origin: &str) -> bool {
        self.allowed_origins
            .iter()
            .any(|o| o == "*" || o.eq_ignore_ascii_case(origin))
    }

    /// Whether the rule admits every origin.
    pub fn any_origin(&self) -> bool {
        self.allowed_origins.iter().any(|o| o == "*")
    }

    /// Checks the rule's values as the service does, so that whatever a rule holds
    /// can be written in an answer's headers: origins are `*` or at most
    /// [`MAX_CORS_ITEM_CHARS`] visible ASCII characters, at most
    /// [`MAX_CORS_LITERALS`] of them; allowed and exposed headers are `*`, header
    /// names or `prefix*` (HTTP token characters only: no spaces, line breaks or
    /// control characters), at most [`MAX_CORS_ITEM_CHARS`] each, at most
    /// [`MAX_CORS_LITERALS`] names and [`MAX_CORS_PREFIXES`] prefixes per list; the
    /// methods are among [`CORS_METHODS`]; the max age fits a 32-bit signed count of
    /// seconds.
    ///
    /// # Errors
    ///
    /// What is wrong, naming the element and the value.
    pub fn check(&self) -> Result<(), String> {
        if self.allowed_origins.is_empty() || self.allowed_methods.is_empty() {
            return Err("it needs AllowedOrigins and AllowedMethods".to_owned());
        }
        if self.allowed_origins.len() > MAX_CORS_LITERALS {
            return Err(format!(
                "AllowedOrigins lists {} origins; at most {MAX_CORS_LITERALS}",
                self.allowed_origins.len()
            ));
        }
        for origin in &self.allowed_origins {
            let visible = origin.bytes().all(|b| b.is_ascii_graphic());
            if origin.chars().count() > MAX_CORS_ITEM_CHARS || !visible {
                return Err(format!(
                    "AllowedOrigins holds {origin:?}: an origin is `*` or at most \
                     {MAX_CORS_ITEM_CHARS} visible ASCII characters (no spaces, line breaks \
                     or control characters)"
                ));
            }
        }
        if let Some(method) = self
            .allowed_methods
            .iter()
            .find(|m| !CORS_METHODS.contains(&m.as_str()))
        {
            return Err(format!(
                "it allows method {method:?}; the methods are {}",
                CORS_METHODS.join(", ")
            ));
        }
        check_header_list("AllowedHeaders", &self.allowed_headers)?;
        check_header_list("ExposedHeaders", &self.exposed_headers)?;
        if self.max_age_seconds > i32::MAX as u32 {
            return Err(format!(
                "MaxAgeInSeconds is {}; at most {}",
                self.max_age_seconds,
                i32::MAX
            ));
        }
        Ok(())
    }
}

/// Whether `name` is an HTTP token (RFC 9110 `tchar`s): what a header name holds.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn check_header_list(element: &str, list: &[String]) -> Result<(), String> {
    let mut prefixes = 0;
    for entry in list {
        let name = match entry.strip_suffix('*') {
            Some("") => continue,
            Some(prefix) => {
                prefixes += 1;
                prefix
            }
            None => entry.as_str(),
        };
        if !is_token(name) || entry.chars().count() > MAX_CORS_ITEM_CHARS {
            return Err(format!(
                "{element} holds {entry:?}: each is `*`, a header name or a `prefix*`, of at \
                 most {MAX_CORS_ITEM_CHARS} characters a header name may hold (letters, digits \
                 and !#$%&'*+-.^_`|~; no spaces, line breaks or control characters)"
            ));
        }
    }
    if prefixes > MAX_CORS_PREFIXES || list.len() - prefixes > MAX_CORS_LITERALS {
        return Err(format!(
            "{element} lists {} headers and {prefixes} prefixes; at most \
             {MAX_CORS_LITERALS} and {MAX_CORS_PREFIXES}",
            list.len() - prefixes
        ));
    }
    Ok(())
}

impl ServiceProperties {
    /// Replaces the parts `set` holds, as Set Table Service Properties does.
    pub fn apply(&mut self, set: ServicePropertiesUpdate) {
        if let Some(logging) = set.logging {
            self.logging = logging;
        }
        if let Some(metrics) = set.hour_metrics {
            self.hour_metrics = metrics;
        }
        if let Some(metrics) = set.minute_metrics {
            self.minute_metrics = metrics;
        }
        if let Some(cors) = set.cors {
            self.cors = cors;
        }
    }

    /// The first CORS rule that admits the request.
    pub fn cors_rule(&self, origin: &str, method: &str, headers: &[&str]) -> Option<&CorsRule> {
        self.cors
            .iter()
            .find(|rule| rule.allows(origin, method, headers))
    }
}

/// A Set Table Service Properties body: the parts it replaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServicePropertiesUpdate {
    /// New logging settings.
    pub logging: Option<Logging>,
    /// New hourly metrics settings.
    pub hour_metrics: Option<Metrics>,
    /// New per-minute metrics settings.
    pub minute_metrics: Option<Metrics>,
    /// New CORS rules (an empty `<Cors/>` removes them all).
    pub cors: Option<Vec<CorsRule>>,
}

#[derive(Deserialize)]
struct PropertiesXml {
    #[serde(rename = "Logging", default)]
    logging: Option<LoggingXml>,
    #[serde(rename = "HourMetrics", default)]
    hour_metrics: Option<MetricsXml>,
    #[serde(rename = "MinuteMetrics", default)]
    minute_metrics: Option<MetricsXml>,
    #[serde(rename = "Cors", default)]
    cors: Option<CorsXml>,
}

#[derive(Deserialize)]
struct LoggingXml {
    #[serde(rename = "Version")]
    version: String,
    #[serde(rename = "Delete")]
    delete: String,
    #[serde(rename = "Read")]
    read: String,
    #[serde(rename = "Write")]
    write: String,
    #[serde(rename = "RetentionPolicy")]
    retention: RetentionXml,
}

#[derive(Deserialize)]
struct MetricsXml {
    #[serde(rename = "Version")]
    version: String,
    #[serde(rename = "Enabled")]
    enabled: String,
    #[serde(rename = "IncludeAPIs", default)]
    include_apis: Option<String>,
    #[serde(rename = "RetentionPolicy")]
    retention: RetentionXml,
}

#[derive(Deserialize)]
struct RetentionXml {
    #[serde(rename = "Enabled")]
    enabled: String,
    #[serde(rename = "Days", default)]
    days: Option<String>,
}

#[derive(Deserialize, Default)]
struct CorsXml {
    #[serde(rename = "CorsRule", default)]
    rules: Vec<CorsRuleXml>,
}

#[derive(Deserialize)]
struct CorsRuleXml {
    #[serde(rename = "AllowedOrigins")]
    allowed_origins: String,
    #[serde(rename = "AllowedMethods")]
    allowed_methods: String,
    #[serde(rename = "AllowedHeaders", default)]
    allowed_headers: String,
    #[serde(rename = "ExposedHeaders", default)]
    exposed_headers: String,
    #[serde(rename = "MaxAgeInSeconds")]
    max_age_seconds: String,
}

const WHAT: &str = "service properties";

fn boolean(field: &str, text: &str) -> Result<bool, Error> {
    match text.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(invalid_xml(
            WHAT,
            format!("{field} is {other:?}, not true or false"),
        )),
    }
}

fn retention(field: &str, xml: RetentionXml) -> Result<Retention, Error> {
    let enabled = boolean(&format!("{field}/RetentionPolicy/Enabled"), &xml.enabled)?;
    let days = match xml.days.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(
            text.parse::<u32>()
                .ok()
                .filter(|days| (1..=365).contains(days))
                .ok_or_else(|| {
                    invalid_xml(
                        WHAT,
                        format!("{field}/RetentionPolicy/Days is {text:?}, not 1 to 365"),
                    )
                })?,
        ),
    };
    if enabled && days.is_none() {
        return Err(invalid_xml(
            WHAT,
            format!("{field}/RetentionPolicy is enabled without Days"),
        ));
    }
    Ok(Retention {
        enabled,
        days: days.filter(|_| enabled),
    })
}

fn metrics(field: &str, xml: MetricsXml) -> Result<Metrics, Error> {
    let enabled = boolean(&format!("{field}/Enabled"), &xml.enabled)?;
    let include_apis = xml
        .include_apis
        .as_deref()
        .map(|text| boolean(&format!("{field}/IncludeAPIs"), text))
        .transpose()?;
    if enabled && include_apis.is_none() {
        return Err(invalid_xml(
            WHAT,
            format!("{field} is enabled without IncludeAPIs"),
        ));
    }
    Ok(Metrics {
        version: xml.version.trim().to_owned(),
        enabled,
        include_apis: include_apis.filter(|_| enabled),
        retention: retention(field, xml.retention)?,
    })
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

fn cors_rule(index: usize, xml: CorsRuleXml) -> Result<CorsRule, Error> {
    let rule = CorsRule {
        allowed_origins: list(&xml.allowed_origins),
        allowed_methods: list(&xml.allowed_methods),
        allowed_headers: list(&xml.allowed_headers),
        exposed_headers: list(&xml.exposed_headers),
        max_age_seconds: xml.max_age_seconds.trim().parse().map_err(|_| {
            invalid_xml(
                WHAT,
                format!(
                    "CORS rule {} has MaxAgeInSeconds {:?}, not a whole number of seconds",
                    index + 1,
                    xml.max_age_seconds
                ),
            )
        })?,
    };
    Ok(rule)
}

/// A rule's settings in characters, XML tags aside (all rules together: at most
/// [`MAX_CORS_SETTINGS_CHARS`]).
fn settings_chars(rule: &CorsRule) -> usize {
    let list = |items: &[String]| items.iter().map(|i| i.chars().count() + 1).sum::<usize>();
    list(&rule.allowed_origins)
        + list(&rule.allowed_methods)
        + list(&rule.allowed_headers)
        + list(&rule.exposed_headers)
        + rule.max_age_seconds.to_string().len()
}

/// A value the service refuses (`400 InvalidXmlNodeValue`).
fn invalid_value(detail: String) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("the {WHAT} XML holds a value the service refuses: {detail}"),
    )
    .with_status(400)
    .with_service_code("InvalidXmlNodeValue")
}

/// Reads a Set Table Service Properties body, checking every CORS rule as the
/// service does ([`CorsRule::check`]): nothing stored can make an answer fail.
///
/// # Errors
///
/// `400 InvalidXmlDocument` when the body is not a `StorageServiceProperties`
/// document, a flag is not `true`/`false`, retention days are outside 1 to 365 (or
/// missing when retention is on), enabled metrics lack `IncludeAPIs`, or there are
/// more than five CORS rules; `400 InvalidXmlNodeValue` when a rule's value is
/// refused ([`CorsRule::check`]) or the rules' settings pass 2 KiB.
pub fn decode_service_properties(body: &[u8]) -> Result<ServicePropertiesUpdate, Error> {
    let update = decode_unchecked(body)?;
    for (i, rule) in update.cors.iter().flatten().enumerate() {
        rule.check()
            .map_err(|why| invalid_value(format!("CORS rule {}: {why}", i + 1)))?;
    }
    let chars: usize = update.cors.iter().flatten().map(settings_chars).sum();
    if chars > MAX_CORS_SETTINGS_CHARS {
        return Err(invalid_value(format!(
            "the CORS rules' settings take {chars} characters; at most \
             {MAX_CORS_SETTINGS_CHARS} (2 KiB), XML tags aside"
        )));
    }
    Ok(update)
}

/// Reads service properties stored by a server that may have taken CORS values
/// [`decode_service_properties`] now refuses: a rule that fails
/// [`CorsRule::check`] is left out, and described in the list returned, for the
/// caller to report.
///
/// # Errors
///
/// As [`decode_service_properties`], but for the values of CORS rules.
pub fn decode_stored_service_properties(
    body: &[u8],
) -> Result<(ServicePropertiesUpdate, Vec<String>), Error> {
    let mut update = decode_unchecked(body)?;
    let mut dropped = Vec::new();
    if let Some(rules) = &mut update.cors {
        let mut index = 0;
        rules.retain(|rule| {
            index += 1;
            match rule.check() {
                Ok(()) => true,
                Err(why) => {
                    dropped.push(format!("CORS rule {index} ({why})"));
                    false
                }
            }
        });
    }
    Ok((update, dropped))
}

fn decode_unchecked(body: &[u8]) -> Result<ServicePropertiesUpdate, Error> {
    let text = body_text(WHAT, body)?;
    let xml: PropertiesXml = quick_xml::de::from_str(text).map_err(|e| invalid_xml(WHAT, e))?;
    let logging = xml
        .logging
        .map(|l| -> Result<Logging, Error> {
            Ok(Logging {
                version: l.version.trim().to_owned(),
                delete: boolean("Logging/Delete", &l.delete)?,
                read: boolean("Logging/Read", &l.read)?,
                write: boolean("Logging/Write", &l.write)?,
                retention: retention("Logging", l.retention)?,
            })
        })
        .transpose()?;
    let hour_metrics = xml
        .hour_metrics
        .map(|m| metrics("HourMetrics", m))
        .transpose()?;
    let minute_metrics = xml
        .minute_metrics
        .map(|m| metrics("MinuteMetrics", m))
        .transpose()?;
    let cors = match xml.cors {
        None => None,
        Some(cors) => {
            if cors.rules.len() > MAX_CORS_RULES {
                return Err(invalid_xml(
                    WHAT,
                    format!(
                        "it holds {} CORS rules; an account may hold at most {MAX_CORS_RULES}",
                        cors.rules.len()
                    ),
                ));
            }
            Some(
                cors.rules
                    .into_iter()
                    .enumerate()
                    .map(|(i, rule)| cors_rule(i, rule))
                    .collect::<Result<Vec<_>, Error>>()?,
            )
        }
    };
    Ok(ServicePropertiesUpdate {
        logging,
        hour_metrics,
        minute_metrics,
        cors,
    })
}

fn flag(out: &mut Vec<u8>, name: &str, value: bool) {
    element(out, name, if value { "true" } else { "false" });
}

fn encode_retention(out: &mut Vec<u8>, retention: Retention) {
    out.extend_from_slice(b"<RetentionPolicy>");
    flag(out, "Enabled", retention.enabled);
    if let Some(days) = retention.days {
        element(out, "Days", &days.to_string());
    }
    out.extend_from_slice(b"</RetentionPolicy>");
}

fn encode_metrics(out: &mut Vec<u8>, name: &str, metrics: &Metrics) {
    out.extend_from_slice(format!("<{name}>").as_bytes());
    element(out, "Version", &metrics.version);
    flag(out, "Enabled", metrics.enabled);
    if let Some(include) = metrics.include_apis {
        flag(out, "IncludeAPIs", include);
    }
    encode_retention(out, metrics.retention);
    out.extend_from_slice(format!("</{name}>").as_bytes());
}

/// Writes a Get Table Service Properties body.
pub fn encode_service_properties(properties: &ServiceProperties, out: &mut Vec<u8>) {
    out.extend_from_slice(XML_DECLARATION);
    out.extend_from_slice(b"<StorageServiceProperties><Logging>");
    let logging = &properties.logging;
    element(out, "Version", &logging.version);
    flag(out, "Delete", logging.delete);
    flag(out, "Read", logging.read);
    flag(out, "Write", logging.write);
    encode_retention(out, logging.retention);
    out.extend_from_slice(b"</Logging>");
    encode_metrics(out, "HourMetrics", &properties.hour_metrics);
    encode_metrics(out, "MinuteMetrics", &properties.minute_metrics);
    out.extend_from_slice(b"<Cors>");
    for rule in &properties.cors {
        out.extend_from_slice(b"<CorsRule>");
        element(out, "AllowedOrigins", &rule.allowed_origins.join(","));
        element(out, "AllowedMethods", &rule.allowed_methods.join(","));
        element(out, "MaxAgeInSeconds", &rule.max_age_seconds.to_string());
        element(out, "ExposedHeaders", &rule.exposed_headers.join(","));
        element(out, "AllowedHeaders", &rule.allowed_headers.join(","));
        out.extend_from_slice(b"</CorsRule>");
    }
    out.extend_from_slice(b"</Cors></StorageServiceProperties>");
}

/// Writes a Get Table Service Stats body: geo-replication `live`, last synced at
/// `last_sync` (an emulator has no secondary; its data is always in sync).
pub fn encode_service_stats(last_sync: std::time::SystemTime, out: &mut Vec<u8>) {
    out.extend_from_slice(XML_DECLARATION);
    out.extend_from_slice(b"<StorageServiceStats><GeoReplication>");
    element(out, "Status", "live");
    element(out, "LastSyncTime", &httpdate::fmt_http_date(last_sync));
    out.extend_from_slice(b"</GeoReplication></StorageServiceStats>");
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>\
        <Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write>\
        <RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging>\
        <HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs>\
        <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>\
        <Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>\
        <MaxAgeInSeconds>5</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders><AllowedHeaders>*</AllowedHeaders>\
        </CorsRule></Cors></StorageServiceProperties>";

    #[test]
    fn set_replaces_only_what_it_holds_and_reads_back() {
        let mut properties = ServiceProperties::default();
        properties.apply(decode_service_properties(FULL.as_bytes()).unwrap());
        assert!(properties.logging.delete && properties.logging.write && !properties.logging.read);
        assert_eq!(properties.logging.retention.days, Some(7));
        assert_eq!(properties.hour_metrics.include_apis, Some(false));
        assert_eq!(properties.minute_metrics, Metrics::default());
        assert!(properties.cors[0].allows("https://any.example", "GET", &["x-anything"]));
        assert!(!properties.cors[0].allows("https://any.example", "PUT", &[]));

        let only_cors = decode_service_properties(
            b"<StorageServiceProperties><Cors/></StorageServiceProperties>",
        )
        .unwrap();
        let before = properties.clone();
        properties.apply(only_cors);
        assert!(properties.cors.is_empty());
        assert_eq!(properties.logging, before.logging);

        let mut out = Vec::new();
        encode_service_properties(&before, &mut out);
        let mut again = ServiceProperties::default();
        again.apply(decode_service_properties(&out).unwrap());
        assert_eq!(again, before);
    }

    #[test]
    fn header_prefixes_and_case() {
        let rule = CorsRule {
            allowed_origins: vec!["https://a.example".to_owned()],
            allowed_methods: vec!["PUT".to_owned()],
            allowed_headers: vec!["x-ms-meta*".to_owned(), "Content-Type".to_owned()],
            exposed_headers: Vec::new(),
            max_age_seconds: 0,
        };
        assert!(rule.allows(
            "HTTPS://A.example",
            "put",
            &["X-MS-META-color", "content-type"]
        ));
        assert!(!rule.allows("https://a.example", "PUT", &["x-ms-date"]));
        assert!(!rule.any_origin());
    }

    #[test]
    fn refuses_what_the_service_refuses() {
        let rule = |inner: &str| {
            format!("<StorageServiceProperties><Cors>{inner}</Cors></StorageServiceProperties>")
        };
        let good = "<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule>";
        let cases = [
            "<StorageServiceProperties>".to_owned(),
            FULL.replace("<Delete>true</Delete>", "<Delete>yes</Delete>"),
            FULL.replace("<Days>7</Days>", "<Days>366</Days>"),
            FULL.replace("<Days>7</Days>", ""),
            FULL.replace("<IncludeAPIs>false</IncludeAPIs>", ""),
            rule(&good.repeat(6)),
            rule(&good.replace("<MaxAgeInSeconds>1<", "<MaxAgeInSeconds>soon<")),
        ];
        for case in &cases {
            let err = decode_service_properties(case.as_bytes()).unwrap_err();
            assert_eq!(err.service_code(), Some("InvalidXmlDocument"), "{case}");
        }
        let with = |element: &str, value: &str| {
            rule(&good.replace(
                "</MaxAgeInSeconds>",
                &format!("</MaxAgeInSeconds><{element}>{value}</{element}>"),
            ))
        };
        let long = "x".repeat(257);
        let many: Vec<String> = (0..65).map(|i| format!("x-long-header-name-{i}")).collect();
        // Three rules of 60 headers each: every list within its limits, the whole
        // over 2 KiB.
        let big = good.replace(
            "</MaxAgeInSeconds>",
            &format!(
                "</MaxAgeInSeconds><ExposedHeaders>{}</ExposedHeaders>",
                many[..60].join(",")
            ),
        );
        let values = [
            rule(&good.replace("GET", "TRACE")),
            rule(&good.replace(
                "<AllowedOrigins>*</AllowedOrigins>",
                "<AllowedOrigins></AllowedOrigins>",
            )),
            rule(&good.replace("<MaxAgeInSeconds>1<", "<MaxAgeInSeconds>2147483648<")),
            with("ExposedHeaders", "x-ms-a&#10;x-ms-b"),
            with("ExposedHeaders", "x-ms-a\nx-ms-b"),
            with("ExposedHeaders", "x-ms-a\r\nx-ms-b"),
            with("ExposedHeaders", "x-ms-&#1;a"),
            with("ExposedHeaders", "x-ms-\u{7f}a"),
            with("ExposedHeaders", "x ms"),
            with("AllowedHeaders", "x-ms-a&#10;b"),
            with("AllowedHeaders", "a*,b*,c*"),
            with("AllowedHeaders", &many.join(",")),
            with("ExposedHeaders", &long),
            rule(&good.replace(
                "<AllowedOrigins>*<",
                "<AllowedOrigins>https://a.example&#10;x<",
            )),
            rule(&good.replace("<AllowedOrigins>*<", &format!("<AllowedOrigins>{long}<"))),
            rule(&big.repeat(3)),
        ];
        for (i, case) in values.iter().enumerate() {
            let err = decode_service_properties(case.as_bytes()).unwrap_err();
            assert_eq!(err.service_code(), Some("InvalidXmlNodeValue"), "{case}");
            // Stored by an older server, a refused rule is left out and reported
            // (the last case's rules are each fine: only their sum is too big).
            let (update, dropped) = decode_stored_service_properties(case.as_bytes()).unwrap();
            if i + 1 < values.len() {
                assert!(
                    update.cors.unwrap().is_empty() && dropped.len() == 1,
                    "{case}"
                );
            }
        }
        let fine = with("ExposedHeaders", " x-ms-*, Content-Type ,x-custom ");
        assert!(decode_service_properties(fine.as_bytes()).is_ok());
        assert_eq!(
            decode_service_properties(rule(&good.repeat(5)).as_bytes())
                .unwrap()
                .cors
                .unwrap()
                .len(),
            5
        );
    }

    #[test]
    fn stats_body() {
        let mut out = Vec::new();
        encode_service_stats(std::time::UNIX_EPOCH, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(
                "<Status>live</Status><LastSyncTime>Thu, 01 Jan 1970 00:00:00 GMT</LastSyncTime>"
            ),
            "{text}"
        );
    }
}
