//! JSON Web Tokens as bearer tokens carry them (RFC 7519): three base64url parts,
//! header, claims and signature. Here once for whoever reads or signs one with HS256
//! (a secret shared by signer and checker): tables-server's `--oauth` check and the
//! tests that make tokens for it. Entra ID signs RS256 with its own keys; reading
//! such a token's claims needs no key.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;

/// A JWT's header and claims, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Jwt {
    /// The header (`alg`, `typ`, ...).
    pub header: Map<String, Value>,
    /// The claims (`aud`, `iss`, `exp`, `oid`, ...).
    pub claims: Map<String, Value>,
}

impl Jwt {
    /// Decodes `token`; with `hs256_secret`, also checks that it is signed HS256
    /// with that secret.
    ///
    /// # Errors
    ///
    /// What is wrong, in words fit for an error answer: not three base64url parts
    /// of JSON objects, or a signature that is not HS256 with the secret.
    pub fn decode(token: &str, hs256_secret: Option<&[u8]>) -> Result<Jwt, String> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("the token is not a JWT: three base64url parts".to_owned());
        };
        let object = |part: &str, what: &str| -> Result<Map<String, Value>, String> {
            let bytes = URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| format!("the token's {what} is not base64url"))?;
            match serde_json::from_slice(&bytes) {
                Ok(Value::Object(map)) => Ok(map),
                _ => Err(format!("the token's {what} is not a JSON object")),
            }
        };
        let jwt = Jwt {
            header: object(header, "header")?,
            claims: object(payload, "payload")?,
        };
        if let Some(secret) = hs256_secret {
            if jwt.header.get("alg").and_then(Value::as_str) != Some("HS256") {
                return Err(
                    "Signature validation failed: the token is not signed HS256, \
                            the algorithm this server checks"
                        .to_owned(),
                );
            }
            let signature = URL_SAFE_NO_PAD
                .decode(signature)
                .map_err(|_| "Signature validation failed: not base64url".to_owned())?;
            hs256(secret, header, payload)
                .verify_slice(&signature)
                .map_err(|_| "Signature validation failed.".to_owned())?;
        }
        Ok(jwt)
    }

    /// A token of `claims` (a JSON object), signed HS256 with `secret`.
    pub fn sign_hs256(claims: &Value, secret: &[u8]) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signature =
            URL_SAFE_NO_PAD.encode(hs256(secret, &header, &payload).finalize().into_bytes());
        format!("{header}.{payload}.{signature}")
    }
}

/// The HMAC-SHA256 of `header.payload` under `secret`, before finalizing.
fn hs256(secret: &[u8], header: &str, payload: &str) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(header.as_bytes());
    mac.update(b".");
    mac.update(payload.as_bytes());
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_tokens_decode_and_any_change_is_refused() {
        let claims = serde_json::json!({"aud": "https://storage.azure.com", "oid": "a"});
        let token = Jwt::sign_hs256(&claims, b"secret");
        let jwt = Jwt::decode(&token, Some(b"secret")).unwrap();
        assert_eq!(Value::Object(jwt.claims), claims);
        assert!(Jwt::decode(&token, Some(b"other")).is_err());
        assert!(Jwt::decode(&token, None).is_ok(), "no secret: claims only");
        let other = Jwt::sign_hs256(&serde_json::json!({"oid": "b"}), b"secret");
        let spliced: Vec<&str> = token.split('.').collect();
        let forged = format!(
            "{}.{}.{}",
            spliced[0],
            other.split('.').nth(1).unwrap(),
            spliced[2]
        );
        assert!(Jwt::decode(&forged, Some(b"secret")).is_err());
        for bad in ["", "a.b", "a.b.c.d", "!.!.!"] {
            assert!(Jwt::decode(bad, None).is_err(), "{bad:?}");
        }
    }
}
