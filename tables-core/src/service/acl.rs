//! Table access policies: the `SignedIdentifiers` body of Get and Set Table ACL.
//!
//! A table holds up to five stored access policies; a table SAS that names one
//! (`si=`) takes its start, expiry and permissions from it, so they can be changed
//! or revoked after the token is handed out.
//!
//! ```
//! use tables_core::service::acl::{decode_table_acl, encode_table_acl, AccessPolicy, SignedIdentifier};
//! use tables_core::DateTime;
//!
//! let policies = vec![SignedIdentifier {
//!     id: "readers".to_owned(),
//!     policy: AccessPolicy {
//!         start: None,
//!         expiry: DateTime::from_ymd_hms(2030, 1, 1, 0, 0, 0),
//!         permission: Some("r".to_owned()),
//!     },
//! }];
//! let mut body = Vec::new();
//! encode_table_acl(&policies, &mut body);
//! assert_eq!(decode_table_acl(&body)?, policies);
//! # Ok::<(), tables_core::Error>(())
//! ```

use serde::Deserialize;

use super::{body_text, element, invalid_xml, XML_DECLARATION};
use crate::auth::parse_sas_time;
use crate::{DateTime, Error};

/// How many stored access policies a table may hold.
pub const MAX_SIGNED_IDENTIFIERS: usize = 5;

/// The longest policy id, in characters.
pub const MAX_POLICY_ID_CHARS: usize = 64;

/// One stored access policy and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIdentifier {
    /// The id a SAS names in `si=` (1 to 64 characters).
    pub id: String,
    /// What the policy grants.
    pub policy: AccessPolicy,
}

/// What a stored access policy grants; a field left out must be given by the SAS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessPolicy {
    /// When tokens naming it become valid.
    pub start: Option<DateTime>,
    /// When tokens naming it expire.
    pub expiry: Option<DateTime>,
    /// The permissions: a subset of `raud`.
    pub permission: Option<String>,
}

#[derive(Deserialize)]
struct SignedIdentifiersXml {
    #[serde(rename = "SignedIdentifier", default)]
    identifiers: Vec<SignedIdentifierXml>,
}

#[derive(Deserialize)]
struct SignedIdentifierXml {
    #[serde(rename = "Id")]
    id: String,
    #[serde(rename = "AccessPolicy", default)]
    policy: Option<AccessPolicyXml>,
}

#[derive(Deserialize, Default)]
struct AccessPolicyXml {
    #[serde(rename = "Start", default)]
    start: Option<String>,
    #[serde(rename = "Expiry", default)]
    expiry: Option<String>,
    #[serde(rename = "Permission", default)]
    permission: Option<String>,
}

const WHAT: &str = "table ACL";

/// Reads a Set Table ACL body. An empty body is an empty list (it removes every
/// policy).
///
/// # Errors
///
/// `400 InvalidXmlDocument` ([`ErrorKind::InvalidInput`](crate::ErrorKind)) when
/// the body is not a `SignedIdentifiers` document, holds more than five policies or
/// the same id twice, an id is empty or longer than 64 characters, a time is not a
/// SAS time, or a permission letter is not one of `raud`.
pub fn decode_table_acl(body: &[u8]) -> Result<Vec<SignedIdentifier>, Error> {
    let text = body_text(WHAT, body)?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let document: SignedIdentifiersXml =
        quick_xml::de::from_str(text).map_err(|e| invalid_xml(WHAT, e))?;
    if document.identifiers.len() > MAX_SIGNED_IDENTIFIERS {
        return Err(invalid_xml(
            WHAT,
            format!(
                "it holds {} access policies; a table may hold at most {MAX_SIGNED_IDENTIFIERS}",
                document.identifiers.len()
            ),
        ));
    }
    let mut identifiers: Vec<SignedIdentifier> = Vec::with_capacity(document.identifiers.len());
    for item in document.identifiers {
        let chars = item.id.chars().count();
        if chars == 0 || chars > MAX_POLICY_ID_CHARS {
            return Err(invalid_xml(
                WHAT,
                format!("the policy id {:?} is not 1 to 64 characters long", item.id),
            ));
        }
        if identifiers.iter().any(|known| known.id == item.id) {
            return Err(invalid_xml(
                WHAT,
                format!("the policy id {:?} appears twice", item.id),
            ));
        }
        let policy = item.policy.unwrap_or_default();
        let time = |field: &str, text: Option<String>| -> Result<Option<DateTime>, Error> {
            match text.as_deref().map(str::trim) {
                None | Some("") => Ok(None),
                Some(text) => parse_sas_time(text).map(Some).ok_or_else(|| {
                    invalid_xml(
                        WHAT,
                        format!(
                            "the {field} {text:?} of policy {:?} is not an ISO 8601 UTC time \
                             such as 2030-01-01T00:00:00Z",
                            item.id
                        ),
                    )
                }),
            }
        };
        let start = time("Start", policy.start)?;
        let expiry = time("Expiry", policy.expiry)?;
        let permission = policy
            .permission
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty());
        if let Some(letters) = &permission {
            if let Some(bad) = letters.chars().find(|c| !"raud".contains(*c)) {
                return Err(invalid_xml(
                    WHAT,
                    format!(
                        "the permission {letters:?} of policy {:?} has {bad:?}; a table \
                         policy grants a subset of `raud`",
                        item.id
                    ),
                ));
            }
        }
        identifiers.push(SignedIdentifier {
            id: item.id,
            policy: AccessPolicy {
                start,
                expiry,
                permission,
            },
        });
    }
    Ok(identifiers)
}

/// Writes a Get Table ACL body.
pub fn encode_table_acl(identifiers: &[SignedIdentifier], out: &mut Vec<u8>) {
    out.extend_from_slice(XML_DECLARATION);
    out.extend_from_slice(b"<SignedIdentifiers>");
    for identifier in identifiers {
        out.extend_from_slice(b"<SignedIdentifier>");
        element(out, "Id", &identifier.id);
        out.extend_from_slice(b"<AccessPolicy>");
        let policy = &identifier.policy;
        if let Some(start) = policy.start {
            element(out, "Start", &start.to_string());
        }
        if let Some(expiry) = policy.expiry {
            element(out, "Expiry", &expiry.to_string());
        }
        if let Some(permission) = &policy.permission {
            element(out, "Permission", permission);
        }
        out.extend_from_slice(b"</AccessPolicy></SignedIdentifier>");
    }
    out.extend_from_slice(b"</SignedIdentifiers>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &str) -> Result<Vec<SignedIdentifier>, Error> {
        decode_table_acl(text.as_bytes())
    }

    #[test]
    fn reads_what_the_sdks_send() {
        let body = "\u{feff}<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>\
            <SignedIdentifier><Id>a &amp; b</Id><AccessPolicy><Start>2024-01-01T00:00:00.0000000Z</Start>\
            <Expiry>2030-01-01T00:00:00Z</Expiry><Permission>raud</Permission></AccessPolicy></SignedIdentifier>\
            <SignedIdentifier><Id>bare</Id></SignedIdentifier></SignedIdentifiers>";
        let read = decode(body).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].id, "a & b");
        assert_eq!(
            read[0].policy.start,
            DateTime::from_ymd_hms(2024, 1, 1, 0, 0, 0)
        );
        assert_eq!(read[0].policy.permission.as_deref(), Some("raud"));
        assert_eq!(read[1].policy, AccessPolicy::default());
        let mut out = Vec::new();
        encode_table_acl(&read, &mut out);
        assert_eq!(decode_table_acl(&out).unwrap(), read);
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("<Id>a &amp; b</Id>"));
        assert_eq!(decode("").unwrap(), Vec::new());
        assert_eq!(decode("<SignedIdentifiers/>").unwrap(), Vec::new());
    }

    #[test]
    fn refuses_what_the_service_refuses() {
        let one = |id: &str, inner: &str| {
            format!("<SignedIdentifier><Id>{id}</Id><AccessPolicy>{inner}</AccessPolicy></SignedIdentifier>")
        };
        let six: String = (0..6).map(|i| one(&format!("p{i}"), "")).collect();
        let cases = [
            "<SignedIdentifiers>".to_owned(),
            "not xml at all <".to_owned(),
            format!("<SignedIdentifiers>{six}</SignedIdentifiers>"),
            format!(
                "<SignedIdentifiers>{}{}</SignedIdentifiers>",
                one("x", ""),
                one("x", "")
            ),
            format!("<SignedIdentifiers>{}</SignedIdentifiers>", one("", "")),
            format!(
                "<SignedIdentifiers>{}</SignedIdentifiers>",
                one(&"i".repeat(65), "")
            ),
            format!(
                "<SignedIdentifiers>{}</SignedIdentifiers>",
                one("x", "<Permission>rw</Permission>")
            ),
            format!(
                "<SignedIdentifiers>{}</SignedIdentifiers>",
                one("x", "<Expiry>tomorrow</Expiry>")
            ),
        ];
        for case in &cases {
            let err = decode(case).unwrap_err();
            assert_eq!(err.status(), Some(400), "{case}");
            assert_eq!(err.service_code(), Some("InvalidXmlDocument"), "{case}");
        }
        let five: String = (0..5).map(|i| one(&format!("p{i}"), "")).collect();
        assert_eq!(
            decode(&format!("<SignedIdentifiers>{five}</SignedIdentifiers>"))
                .unwrap()
                .len(),
            5
        );
    }
}
