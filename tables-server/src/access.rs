//! What a request's credentials allow (an account key, an account or table SAS, a
//! bearer token's role), and the check of each operation against it. Who the
//! request is, `auth` decides; the handlers ask this module what that permits.

use tables_core::auth::SasKeyRange;
use tables_core::EntityKey;

use crate::reply::Failure;

/// What a request proved it may do.
#[derive(Debug, Clone)]
pub(crate) enum Access {
    /// Signed with an account key: everything in the account.
    Full,
    /// An account SAS: the operations of its resource types (`srt`) its
    /// permissions (`sp`) allow.
    Account {
        resource_types: String,
        permissions: String,
    },
    /// A table SAS: the entity operations on one table its permissions allow,
    /// within its key range.
    Table {
        table: String,
        permissions: String,
        range: Option<SasKeyRange>,
    },
    /// A bearer token (`--oauth`): its principal's data role.
    Bearer(crate::oauth::Bearer),
}

/// The kind of resource an operation acts on, as an account SAS's `srt` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// `s`: service properties and stats.
    Service,
    /// `c`: tables (list, create, delete).
    Tables,
}

impl Access {
    /// Allows a service- or table-level operation that needs one of `any_of` (account
    /// SAS letters).
    ///
    /// # Errors
    ///
    /// `403`: `AuthorizationFailure` for a table SAS (it grants entity operations
    /// only), `AuthorizationResourceTypeMismatch` or
    /// `AuthorizationPermissionMismatch` for an account SAS that lacks the resource
    /// type or permission.
    pub(crate) fn allow(&self, scope: Scope, any_of: &str, what: &str) -> Result<(), Failure> {
        match self {
            Access::Full => Ok(()),
            Access::Bearer(bearer) => match scope {
                Scope::Service => bearer.allow_service(what),
                Scope::Tables => bearer.allow_data_any(any_of, what),
            },
            Access::Table { .. } => Err(Failure::new(
                403,
                "AuthorizationFailure",
                format!(
                    "a table SAS grants entity operations on its table only, not {what}; use \
                     an account SAS or the account key"
                ),
            )),
            Access::Account {
                resource_types,
                permissions,
            } => {
                let letter = match scope {
                    Scope::Service => 's',
                    Scope::Tables => 'c',
                };
                if !resource_types.contains(letter) {
                    return Err(Failure::new(
                        403,
                        "AuthorizationResourceTypeMismatch",
                        format!(
                            "{what} needs an account SAS with resource type `{letter}` (srt); \
                             this one has srt={resource_types}"
                        ),
                    ));
                }
                if !any_of.chars().any(|p| permissions.contains(p)) {
                    return Err(permission_mismatch(what, any_of, permissions, true));
                }
                Ok(())
            }
        }
    }

    /// Allows an operation that only the account key may do (table ACLs).
    ///
    /// # Errors
    ///
    /// `403 AuthorizationFailure` for any SAS.
    pub(crate) fn allow_key_only(&self, what: &str) -> Result<(), Failure> {
        match self {
            Access::Full => Ok(()),
            Access::Bearer(_) => Err(Failure::new(
                403,
                "AuthorizationFailure",
                format!(
                    "{what} needs the account key (SharedKey); a bearer token may not do it \
                     (stored access policies are not served with Entra ID)"
                ),
            )),
            _ => Err(Failure::new(
                403,
                "AuthorizationFailure",
                format!("{what} needs the account key (SharedKey); a SAS may not do it"),
            )),
        }
    }

    /// Allows an entity operation on `table` that needs every letter of `all_of`
    /// (`r`, `a`, `u`, `d`), on `key` if it names one.
    ///
    /// # Errors
    ///
    /// `403`: `AuthorizationPermissionMismatch` for a missing permission,
    /// `AuthorizationResourceTypeMismatch` for an account SAS without `o`,
    /// `AuthorizationFailure` for a table SAS of another table or a key outside its
    /// range.
    pub(crate) fn allow_entities(
        &self,
        table: &str,
        all_of: &str,
        key: Option<&EntityKey>,
        what: &str,
    ) -> Result<(), Failure> {
        let granted = match self {
            Access::Full => return Ok(()),
            Access::Bearer(bearer) => return bearer.allow_data(all_of, what),
            Access::Account {
                resource_types,
                permissions,
            } => {
                if !resource_types.contains('o') {
                    return Err(Failure::new(
                        403,
                        "AuthorizationResourceTypeMismatch",
                        format!(
                            "{what} needs an account SAS with resource type `o` (srt); this \
                             one has srt={resource_types}"
                        ),
                    ));
                }
                permissions
            }
            Access::Table {
                table: granted_table,
                permissions,
                range,
            } => {
                if !granted_table.eq_ignore_ascii_case(table) {
                    return Err(Failure::new(
                        403,
                        "AuthorizationFailure",
                        format!(
                            "the SAS is for table {granted_table:?}, not {table:?}; make one \
                             for {table:?}"
                        ),
                    ));
                }
                if let (Some(range), Some(key)) = (range, key) {
                    if !range.contains(key) {
                        return Err(Failure::new(
                            403,
                            "AuthorizationFailure",
                            format!(
                                "the entity {key} is outside the key range the SAS grants ({})",
                                range.describe()
                            ),
                        ));
                    }
                }
                permissions
            }
        };
        if !all_of.chars().all(|p| granted.contains(p)) {
            return Err(permission_mismatch(what, all_of, granted, false));
        }
        Ok(())
    }

    /// The key range of a table SAS, if it has one.
    pub(crate) fn key_range(&self) -> Option<&SasKeyRange> {
        match self {
            Access::Table { range, .. } => range.as_ref(),
            _ => None,
        }
    }
}

fn permission_mismatch(what: &str, needed: &str, granted: &str, any: bool) -> Failure {
    Failure::new(
        403,
        "AuthorizationPermissionMismatch",
        format!(
            "This request is not authorized to perform this operation using this permission: \
             {what} needs {} of `{needed}` (sp) and the SAS grants `{granted}`",
            if any { "one" } else { "each" }
        ),
    )
}
