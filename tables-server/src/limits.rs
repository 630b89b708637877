//! What one client, or many, may hold of the server: connections, time to send a
//! request's headers and body, and buffered request bytes. Past a limit the server
//! answers `503 ServerBusy` with `Retry-After` (or closes a connection that sends
//! nothing in time) rather than run out of memory or descriptors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap};

use crate::reply::{names, Failure, Reply};

/// The largest request body read: the service's 4 MiB for a batch, with room for
/// the multipart framing around it (a larger body is refused, `413`).
pub(crate) const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;

/// The longest `x-ms-client-request-id` taken (and echoed): the service's 1 KiB
/// (docs/protocol.md §2).
pub(crate) const MAX_CLIENT_REQUEST_ID: usize = 1024;

/// The longest `x-ms-version` echoed; a longer one is answered with the server's.
pub(crate) const MAX_ECHOED_VERSION: usize = 32;

/// How long a busy client is asked to wait (`Retry-After`, seconds).
const RETRY_AFTER_SECONDS: u64 = 1;

/// The server's limits on what clients hold ([`crate::Server::limits`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; more are answered `503 ServerBusy` (a few at a
    /// time) or closed. Default: the process's descriptor limit less 128 (room for
    /// the journal and the busy answers), between 16 and 4,096; 1,024 where the
    /// limit can't be read.
    pub max_connections: usize,
    /// How long a client has to send a request's line and headers, from the
    /// moment the server waits for them (so also how long an idle kept-alive
    /// connection stays open); then the connection is closed. Default 20 s.
    pub header_timeout: Duration,
    /// How long a client has to send a request's whole body once its headers
    /// arrived; then it is answered `408 RequestTimeout`. Default 30 s.
    pub body_timeout: Duration,
    /// Request body bytes held by all requests together; a request that would
    /// pass it is answered `503 ServerBusy`. Default 256 MiB.
    pub max_buffered_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: default_max_connections(),
            header_timeout: Duration::from_secs(20),
            body_timeout: Duration::from_secs(30),
            max_buffered_bytes: 256 << 20,
        }
    }
}

/// The descriptor limit less room for the rest, within 16 to 4,096.
fn default_max_connections() -> usize {
    #[cfg(unix)]
    {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        if let Some(soft) = limit.current {
            let soft = usize::try_from(soft).unwrap_or(usize::MAX);
            return soft.saturating_sub(128).clamp(16, 4_096);
        }
    }
    1_024
}

/// The request body bytes all requests hold, against [`Limits::max_buffered_bytes`].
#[derive(Debug)]
pub(crate) struct Budget {
    used: AtomicUsize,
    max: usize,
}

/// Bytes taken from the [`Budget`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Budget {
    pub(crate) fn new(max: usize) -> Arc<Budget> {
        Arc::new(Budget {
            used: AtomicUsize::new(0),
            max,
        })
    }

    /// Takes `bytes` more for `held`, if the budget has them.
    fn take(&self, held: &mut Held, bytes: usize) -> bool {
        let taken = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.max)
            })
            .is_ok();
        if taken {
            held.bytes += bytes;
        }
        taken
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// Reads a request's body whole, within the limits: at most [`MAX_BODY_BYTES`],
/// within the body timeout, and only while the budget has room. The bytes stay
/// counted until the returned [`Held`] is dropped.
///
/// # Errors
///
/// The answer: `413 RequestBodyTooLarge` past [`MAX_BODY_BYTES`]; `400
/// InvalidInput` for a body that ends early or is malformed (a bad chunk size);
/// `408 RequestTimeout` when it does not arrive in time; `503 ServerBusy` when the
/// budget is spent.
pub(crate) async fn read_body(
    headers: &HeaderMap,
    body: Incoming,
    budget: &Arc<Budget>,
    timeout: Duration,
) -> Result<(Bytes, Held), Failure> {
    let mut held = Held {
        budget: Arc::clone(budget),
        bytes: 0,
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    if let Some(length) = declared {
        if length > MAX_BODY_BYTES {
            return Err(too_large());
        }
        if !budget.take(&mut held, length) {
            return Err(busy(budget));
        }
    }
    let read = async {
        let mut body = body;
        // The pieces as they came: a body of one piece is kept without a copy.
        let mut pieces: Vec<Bytes> = Vec::new();
        let mut length = 0;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|err| incomplete(&err))?;
            let Ok(data) = frame.into_data() else {
                continue; // trailers
            };
            length += data.len();
            if length > MAX_BODY_BYTES {
                return Err(too_large());
            }
            let beyond_declared = length.saturating_sub(held.bytes);
            if beyond_declared > 0 && !budget.take(&mut held, beyond_declared) {
                return Err(busy(budget));
            }
            pieces.push(data);
        }
        Ok(match pieces.len() {
            0 => Bytes::new(),
            1 => pieces.swap_remove(0),
            _ => {
                let mut whole = BytesMut::with_capacity(length);
                for piece in pieces {
                    whole.extend_from_slice(&piece);
                }
                whole.freeze()
            }
        })
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(Ok(bytes)) => Ok((bytes, held)),
        Ok(Err(failure)) => Err(failure),
        Err(_) => Err(Failure::new(
            408,
            "RequestTimeout",
            format!(
                "the request body did not arrive within {} s of its headers; send it whole, \
                 or start the server with a longer --body-timeout",
                timeout.as_secs_f64()
            ),
        )),
    }
}

fn too_large() -> Failure {
    Failure::new(
        413,
        "RequestBodyTooLarge",
        format!(
            "the request body is larger than {MAX_BODY_BYTES} bytes; the service accepts at \
             most 4 MiB"
        ),
    )
}

fn incomplete(err: &hyper::Error) -> Failure {
    Failure::new(
        400,
        "InvalidInput",
        format!(
            "One of the request inputs is not valid: the request body could not be read \
             whole ({err}): it ended before its Content-Length, or its chunked framing is \
             malformed"
        ),
    )
}

fn busy(budget: &Budget) -> Failure {
    Failure::new(
        503,
        "ServerBusy",
        format!(
            "The server is busy: the request bodies being received hold {} of the {} bytes \
             it buffers; retry after {RETRY_AFTER_SECONDS} s",
            budget.used.load(Ordering::Acquire),
            budget.max
        ),
    )
}

/// The answer to a connection past [`Limits::max_connections`].
pub(crate) fn busy_connection(max: usize) -> Failure {
    Failure::new(
        503,
        "ServerBusy",
        format!(
            "The server is busy: it serves {max} connections at once; retry after \
             {RETRY_AFTER_SECONDS} s"
        ),
    )
}

/// `Retry-After` (and the service's `x-ms-retry-after-ms`) on a busy answer.
pub(crate) fn with_retry_after(reply: Reply) -> Reply {
    if reply.status != 503 {
        return reply;
    }
    reply
        .with_header(header::RETRY_AFTER, RETRY_AFTER_SECONDS.to_string())
        .with_header(
            names::RETRY_AFTER_MS,
            (RETRY_AFTER_SECONDS * 1000).to_string(),
        )
}

/// The pause before accepting again after `failures` accept errors in a row (out of
/// descriptors, say): 10 ms, doubling, at most 1 s, so a full descriptor table
/// costs no CPU while it lasts.
pub(crate) fn accept_backoff(failures: u32) -> Duration {
    Duration::from_millis(10u64 << failures.min(7)).min(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_given_back_when_dropped() {
        let budget = Budget::new(100);
        let mut a = Held {
            budget: Arc::clone(&budget),
            bytes: 0,
        };
        assert!(budget.take(&mut a, 60));
        let mut b = Held {
            budget: Arc::clone(&budget),
            bytes: 0,
        };
        assert!(!budget.take(&mut b, 41));
        assert!(budget.take(&mut b, 40));
        drop(a);
        assert!(budget.take(&mut b, 60));
        drop(b);
        assert_eq!(budget.used.load(Ordering::Acquire), 0);
    }

    #[test]
    fn the_accept_backoff_grows_to_a_second() {
        assert_eq!(accept_backoff(0), Duration::from_millis(10));
        assert_eq!(accept_backoff(1), Duration::from_millis(20));
        assert_eq!(accept_backoff(30), Duration::from_secs(1));
    }
}
