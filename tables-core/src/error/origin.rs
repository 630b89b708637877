//! Where an error came from ([`Origin`]) and what most likely caused an auth
//! failure ([`AuthHint`]).

use std::fmt;

/// Where an error came from; see [`Error::origin`](super::Error::origin).
///
/// ```
/// use tables_core::{Error, ErrorKind, Origin};
///
/// // Refused by this process's own checks: nothing was sent.
/// let local = Error::new(ErrorKind::InvalidKey, "the RowKey holds '/'");
/// assert_eq!(local.origin(), Origin::Local);
/// assert!(local.to_string().contains("checked locally, nothing was sent"));
/// // Said by the service.
/// let answer = Error::from_service(409, "EntityAlreadyExists", "The specified entity already exists.");
/// assert_eq!(answer.origin(), Origin::Service);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// Found by this process before anything was sent: the input broke a rule of
    /// the service that `tables-core` or the client checks first (a key, an entity,
    /// a batch, a query option, a token, a SAS, a connection string). Nothing was
    /// sent and nothing was written, on every engine.
    /// [`Error::status`](super::Error::status) and
    /// [`Error::service_code`](super::Error::service_code) are then what the
    /// service would answer (absent where it has no answer for the mistake).
    Local,
    /// The service's answer: an error status from the remote endpoint, or the
    /// in-memory engine's decision (it plays the service: a missing table, a taken
    /// key, a stale ETag). A conclusion the client draws from such answers (an index
    /// value another entity owns, a race lost too often) keeps this origin.
    Service,
    /// No usable answer came back: connecting failed (nothing listening, DNS, TLS),
    /// the attempt timed out, or the connection broke. A write may then have been
    /// applied: see [`Error::may_have_applied`](super::Error::may_have_applied).
    Transport,
    /// Something came back but can't be used: a response body that does not decode,
    /// or a stored row that is not the type asked for.
    Response,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Local => "checked locally, nothing was sent",
            Origin::Service => "the service's answer",
            Origin::Transport => "no usable answer from the service",
            Origin::Response => "an answer that could not be read",
        })
    }
}

/// What most likely caused an authentication or authorisation failure
/// ([`ErrorKind::Auth`](super::ErrorKind::Auth)), as far as the client can tell
/// from its credential, the operation and the answer; see
/// [`Error::auth_hint`](super::Error::auth_hint). The error's message says what to
/// check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthHint {
    /// The signature did not match: the account name or key is wrong (or, for a
    /// SAS, it was signed with another key or altered).
    WrongAccountOrKey,
    /// The SAS token's expiry (`se`) has passed.
    SasExpired,
    /// The SAS token's start (`st`) has not come yet.
    SasNotYetValid,
    /// This machine's clock and the service's differ by more than the service
    /// tolerates (15 minutes), so signed requests look stale or from the future.
    ClockSkew,
    /// The credential is genuine but does not grant this operation: a SAS without
    /// the permission letter, for another table, or outside its key range; or an
    /// identity without the data role.
    MissingPermission,
    /// No credential was given, and the endpoint requires one.
    NoCredential,
}
