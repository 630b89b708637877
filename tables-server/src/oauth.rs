//! Bearer tokens (Microsoft Entra ID), accepted with `--oauth` over HTTPS: the
//! token's form, lifetime, issuer and audience are checked as Azure checks them (its
//! signature too when the server is given the secret it was signed with), and the
//! principal (`oid`) gets the data role the server assigns it (docs/protocol.md §2.4).

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tables_core::auth::Jwt;
use tables_core::ServiceKind;

use crate::reply::Failure;

/// Issuers of Entra ID access tokens, by prefix: v1 tokens (what Entra ID issues for
/// the storage resource) of the public and sovereign clouds, and v2 tokens.
const ISSUERS: [&str; 4] = [
    "https://sts.windows.net/",
    "https://sts.chinacloudapi.cn/",
    "https://sts.microsoftonline.de/",
    "https://login.microsoftonline.com/",
];

/// The Azure Storage resource's application id, an audience Azure accepts.
const STORAGE_APP_ID: &str = "e406a681-f3d4-42a8-90b6-c2b029497af1";

/// A data role of a principal: Azure's built-in roles for table data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Storage Table Data Reader: list and read tables and entities.
    Reader,
    /// Storage Table Data Contributor: read, write and delete tables and entities.
    Contributor,
}

impl FromStr for Role {
    type Err = String;

    fn from_str(text: &str) -> Result<Role, String> {
        match text.to_ascii_lowercase().as_str() {
            "reader" | "storage table data reader" => Ok(Role::Reader),
            "contributor" | "storage table data contributor" => Ok(Role::Contributor),
            _ => Err(format!(
                "{text:?} is not a table data role: `reader` (Storage Table Data Reader) or \
                 `contributor` (Storage Table Data Contributor)"
            )),
        }
    }
}

/// How the server accepts bearer tokens ([`crate::Server::oauth`]).
///
/// A principal with no role assigned has full access, as on Azurite, unless
/// [`OAuth::require_role`] says otherwise (then it is refused, as on Azure).
#[derive(Clone, Default)]
pub struct OAuth {
    roles: HashMap<String, Role>,
    require_role: bool,
    hs256_secret: Option<Vec<u8>>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("roles", &self.roles)
            .field("require_role", &self.require_role)
            .field(
                "hs256_secret",
                &self.hs256_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl OAuth {
    /// Bearer tokens accepted; no role assigned to anyone, no signature checked.
    pub fn new() -> OAuth {
        OAuth::default()
    }

    /// Assigns `role` to the principal whose tokens carry `object_id` (`oid`).
    #[must_use]
    pub fn role(mut self, object_id: impl Into<String>, role: Role) -> OAuth {
        let _ = self.roles.insert(object_id.into(), role);
        self
    }

    /// Refuses principals with no role assigned (`403
    /// AuthorizationPermissionMismatch`), as Azure does.
    #[must_use]
    pub fn require_role(mut self) -> OAuth {
        self.require_role = true;
        self
    }

    /// Checks each token's signature: HMAC-SHA256 (`alg` `HS256`) with `secret`.
    /// Entra ID signs with its own RSA keys, which a local server can't check;
    /// without a secret the signature is not checked (as on Azurite).
    #[must_use]
    pub fn hs256_secret(mut self, secret: impl Into<Vec<u8>>) -> OAuth {
        self.hs256_secret = Some(secret.into());
        self
    }

    /// Checks an `Authorization: Bearer ..` header of a request to `account`.
    ///
    /// # Errors
    ///
    /// `400 InvalidAuthenticationInfo` when the header is not `Bearer <token>`;
    /// `403 AuthenticationFailed` over HTTP; `401 InvalidAuthenticationInfo`, with
    /// the `WWW-Authenticate` challenge, for a token that is malformed, expired, not
    /// yet valid, from another issuer, for another audience or badly signed;
    /// `403 AuthorizationPermissionMismatch` for a principal without a role when
    /// one is required.
    pub(crate) fn authenticate(
        &self,
        header: &str,
        https: bool,
        account: &str,
        service: ServiceKind,
        now: SystemTime,
    ) -> Result<Bearer, Failure> {
        let Some(token) = header.strip_prefix("Bearer ").map(str::trim) else {
            return Err(Failure::new(
                400,
                "InvalidAuthenticationInfo",
                "Authentication information is not given in the correct format. Check the \
                 value of Authorization header.",
            ));
        };
        if !https {
            return Err(Failure::new(
                403,
                "AuthenticationFailed",
                "Server failed to authenticate the request. Authentication scheme Bearer is \
                 not allowed with HTTP: send bearer tokens over HTTPS only",
            ));
        }
        let resource = match service {
            ServiceKind::CosmosTable => "https://cosmos.azure.com",
            _ => "https://storage.azure.com",
        };
        let claims = Jwt::decode(token, self.hs256_secret.as_deref())
            .map_err(|detail| challenge(None, resource, &detail))?
            .claims;
        let tenant = claims.get("tid").and_then(Value::as_str);
        let refuse = |detail: String| challenge(tenant, resource, &detail);
        let seconds = |name: &str| claims.get(name).and_then(Value::as_f64);
        let now = now
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        match seconds("exp") {
            None => return Err(refuse("the token has no `exp` claim".to_owned())),
            Some(exp) if now >= exp => {
                return Err(refuse(
                    "Lifetime validation failed. The token is expired.".to_owned(),
                ))
            }
            Some(_) => {}
        }
        if seconds("nbf").is_some_and(|nbf| now < nbf) {
            return Err(refuse(
                "Lifetime validation failed. The token is not yet valid (nbf).".to_owned(),
            ));
        }
        let issuer = claims.get("iss").and_then(Value::as_str).unwrap_or("");
        if !ISSUERS.iter().any(|prefix| issuer.starts_with(prefix)) {
            return Err(refuse(format!(
                "Issuer validation failed: {issuer:?} is not an Entra ID issuer"
            )));
        }
        let audiences: Vec<&str> = match claims.get("aud") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !audiences
            .iter()
            .any(|aud| audience_accepted(aud, account, service))
        {
            return Err(refuse(format!(
                "Audience validation failed. Audience did not match: {audiences:?} is not \
                 {resource} or this account's endpoint; ask for the scope {resource}/.default"
            )));
        }
        let principal = claims
            .get("oid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let role = self.roles.get(&principal).copied();
        if role.is_none() && self.require_role {
            return Err(Failure::new(
                403,
                "AuthorizationPermissionMismatch",
                format!(
                    "This request is not authorized to perform this operation using this \
                     permission: the principal {principal:?} has no table data role on this \
                     account (assign Storage Table Data Reader or Contributor)"
                ),
            ));
        }
        Ok(Bearer { principal, role })
    }
}

/// Whether `aud` names the service's resource, the storage application, or this
/// account's endpoint, as Azure accepts them.
fn audience_accepted(aud: &str, account: &str, service: ServiceKind) -> bool {
    let aud = aud.strip_suffix('/').unwrap_or(aud);
    match service {
        ServiceKind::CosmosTable => {
            aud == "https://cosmos.azure.com"
                || aud.strip_prefix("https://").is_some_and(|host| {
                    host.strip_prefix(account)
                        .is_some_and(|rest| rest.starts_with(".table.cosmos."))
                })
        }
        _ => {
            aud == "https://storage.azure.com"
                || aud == STORAGE_APP_ID
                || aud.strip_prefix("https://").is_some_and(|host| {
                    host.strip_prefix(account)
                        .is_some_and(|rest| rest.starts_with(".table.core."))
                })
        }
    }
}

/// `401 InvalidAuthenticationInfo` with the challenge Azure sends: where to sign in
/// (the token's tenant, or `common`) and the resource to ask a token for.
fn challenge(tenant: Option<&str>, resource: &str, detail: &str) -> Failure {
    let tenant = tenant
        .filter(|t| {
            t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        })
        .unwrap_or("common");
    let mut failure = Failure::new(
        401,
        "InvalidAuthenticationInfo",
        format!(
            "Server failed to authenticate the request. Please refer to the information in \
             the www-authenticate header. {detail}"
        ),
    );
    failure.www_authenticate = Some(format!(
        "Bearer authorization_uri=https://login.microsoftonline.com/{tenant}/oauth2/authorize \
         resource_id={resource}"
    ));
    failure
}

/// A request signed with a bearer token: who, and the role the server gives them.
#[derive(Debug, Clone)]
pub(crate) struct Bearer {
    pub(crate) principal: String,
    pub(crate) role: Option<Role>,
}

impl Bearer {
    /// Allows an operation that needs every letter of `all_of` (`r` read, `l` list,
    /// `a` add, `u` update, `d` delete, `c` create, `w` write) on table data.
    ///
    /// # Errors
    ///
    /// `403 AuthorizationPermissionMismatch` for a reader that would change data.
    pub(crate) fn allow_data(&self, all_of: &str, what: &str) -> Result<(), Failure> {
        if all_of.chars().all(|letter| self.allows(letter)) {
            Ok(())
        } else {
            Err(self.mismatch(what, "Storage Table Data Contributor"))
        }
    }

    /// As [`Bearer::allow_data`] for an operation that needs any one of `any_of`.
    ///
    /// # Errors
    ///
    /// `403 AuthorizationPermissionMismatch` when the role grants none of them.
    pub(crate) fn allow_data_any(&self, any_of: &str, what: &str) -> Result<(), Failure> {
        if any_of.chars().any(|letter| self.allows(letter)) {
            Ok(())
        } else {
            Err(self.mismatch(what, "Storage Table Data Contributor"))
        }
    }

    /// Whether the principal's role grants the permission `letter` on table data:
    /// a reader reads (`r`) and lists (`l`); a contributor, or a principal the
    /// server gives no role, does everything.
    fn allows(&self, letter: char) -> bool {
        match self.role {
            None | Some(Role::Contributor) => true,
            Some(Role::Reader) => matches!(letter, 'r' | 'l'),
        }
    }

    /// Allows a service-level operation (service properties and stats): not a data
    /// role's, so only a principal without an assigned role may.
    ///
    /// # Errors
    ///
    /// `403 AuthorizationPermissionMismatch` for a principal with a data role.
    pub(crate) fn allow_service(&self, what: &str) -> Result<(), Failure> {
        match self.role {
            None => Ok(()),
            Some(_) => Err(self.mismatch(what, "a role over the storage account")),
        }
    }

    fn mismatch(&self, what: &str, needed: &str) -> Failure {
        Failure::new(
            403,
            "AuthorizationPermissionMismatch",
            format!(
                "This request is not authorized to perform this operation using this \
                 permission: {what} needs {needed}, and the principal {:?} holds {}",
                self.principal,
                match self.role {
                    Some(Role::Reader) => "Storage Table Data Reader",
                    Some(Role::Contributor) => "Storage Table Data Contributor",
                    None => "no role",
                }
            ),
        )
    }
}
