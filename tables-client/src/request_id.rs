//! [`ClientRequestId`]: the `x-ms-client-request-id` a call's requests carry, to
//! find them in the service's logs.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use tables_core::{Error, ErrorKind, Result};

tokio::task_local! {
    static CURRENT: ClientRequestId;
}

/// Longest client request id the service accepts (1 KiB of ASCII).
const MAX_LEN: usize = 1024;

/// The client request id of a call: the service logs it with each request
/// (`x-ms-client-request-id`), so a failing or slow call can be found there.
///
/// Every call of the typed client carries one: [`ClientRequestId::scope`] chooses
/// it; otherwise the client makes a random one per call. Every request the call
/// sends (its reads, its transaction, its retries, its index upkeep) carries the
/// same id, and the call reports it ([`tables_core::WriteOutcome::client_request_id`],
/// [`Error::client_request_id`]).
///
/// ```
/// use tables_client::{ClientRequestId, Entity, TableServiceClient};
///
/// #[derive(Entity, Debug, Clone, PartialEq)]
/// #[entity(partition_key = "{customer}", row_key = "order_{id:06}")]
/// pub struct Order { pub customer: String, pub id: u32, pub total: f64 }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let service = TableServiceClient::in_memory();
/// let orders = service.table::<Order>("Orders");
/// orders.create().await?;
/// let order = Order { customer: "c1".into(), id: 42, total: 9.5 };
///
/// let id = ClientRequestId::new("checkout-42")?;
/// let outcome = id.clone().scope(orders.insert(&order)).await?;
/// assert_eq!(outcome.client_request_id.as_deref(), Some("checkout-42"));
///
/// // Without a scope, each call gets its own random id.
/// let err = orders.insert(&order).await.unwrap_err();
/// assert!(err.client_request_id().is_some_and(|id| id != "checkout-42"));
/// # Ok::<(), tables_client::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ClientRequestId(Arc<str>);

impl ClientRequestId {
    /// An id of 1 to 1,024 visible ASCII characters (letters, digits, punctuation;
    /// no spaces or control characters).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an empty, longer or non-ASCII id.
    pub fn new(id: impl Into<String>) -> Result<ClientRequestId> {
        let id = id.into();
        let valid =
            !id.is_empty() && id.len() <= MAX_LEN && id.bytes().all(|b| b.is_ascii_graphic());
        if !valid {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "a client request id has 1 to {MAX_LEN} visible ASCII characters (no spaces \
                     or control characters); got {} characters",
                    id.chars().count()
                ),
            ));
        }
        Ok(ClientRequestId(Arc::from(id)))
    }

    /// A random id (a version 4 UUID, from a fast generator: it only tells calls
    /// apart in logs, so it needs no cryptographic randomness and no system call).
    pub fn random() -> ClientRequestId {
        let bytes = fastrand::u128(..).to_le_bytes();
        let uuid = uuid::Builder::from_random_bytes(bytes).into_uuid();
        ClientRequestId(Arc::from(uuid.hyphenated().to_string()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Runs `future` with this id on every request it sends (calls of the typed
    /// client nested in it use this id instead of making their own).
    pub async fn scope<F: Future>(self, future: F) -> F::Output {
        CURRENT.scope(self, future).await
    }

    /// The id of the scope the current task runs in, if any.
    pub fn current() -> Option<ClientRequestId> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Runs a call of the typed client: in the current scope's id, or in a new
    /// random one. Returns the id with the call's output.
    pub(crate) async fn in_call<F: Future>(future: F) -> (ClientRequestId, F::Output) {
        match ClientRequestId::current() {
            Some(id) => (id, future.await),
            None => {
                let id = ClientRequestId::random();
                let output = id.clone().scope(future).await;
                (id, output)
            }
        }
    }
}

impl fmt::Debug for ClientRequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ClientRequestId").field(&&*self.0).finish()
    }
}

impl fmt::Display for ClientRequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked() {
        assert_eq!(ClientRequestId::new("abc-123").unwrap().as_str(), "abc-123");
        for bad in ["", "a b", "é", "a\nb"] {
            let err = ClientRequestId::new(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad:?}");
        }
        assert!(ClientRequestId::new("x".repeat(MAX_LEN)).is_ok());
        assert!(ClientRequestId::new("x".repeat(MAX_LEN + 1)).is_err());
        let random = ClientRequestId::random();
        assert_eq!(random.as_str().len(), 36);
        assert_ne!(random, ClientRequestId::random());
    }

    #[tokio::test]
    async fn scopes_nest_and_calls_reuse_the_outer_id() {
        assert_eq!(ClientRequestId::current(), None);
        let outer = ClientRequestId::new("outer").unwrap();
        let (used, inner) = outer
            .clone()
            .scope(ClientRequestId::in_call(async {
                ClientRequestId::current()
            }))
            .await;
        assert_eq!(used, outer);
        assert_eq!(inner, Some(outer));
        let (fresh, seen) = ClientRequestId::in_call(async { ClientRequestId::current() }).await;
        assert_eq!(seen, Some(fresh));
        assert_eq!(ClientRequestId::current(), None);
    }
}
