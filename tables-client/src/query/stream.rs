//! [`PageStream`]: the stream behind `Query::stream`, which fetches the next page
//! while the caller consumes the current one, holding at most two pages.
//!
//! The prefetch is explicit and spawns nothing: the stream owns the one request in
//! flight (a boxed future over the [`Fetcher`]) and polls it on every poll of the
//! stream, before handing out an item of the current page. As soon as the current
//! page is handed over, the request for the next one starts; when it answers, its
//! page waits in a slot of one until the current page runs out. So at any moment
//! there is the page the caller is consuming and at most one more, being fetched or
//! waiting: memory does not grow with the size of the result. The stream works on any
//! executor, and dropping it drops the request in flight.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;

use tables_core::{Error, Row};

use crate::query::fetch::{Fetcher, Item};
use crate::table::Versioned;

/// A page request in flight: gives the fetcher back with the page (`None` at the
/// end).
type Fetching<T> = Pin<Box<dyn Future<Output = (Box<Fetcher<T>>, Option<Vec<Item<T>>>)> + Send>>;

/// Where the next page comes from.
enum Next<T> {
    /// Not asked for yet (the fetcher waits).
    Idle(Box<Fetcher<T>>),
    /// In flight.
    Fetching(Fetching<T>),
    /// Arrived while the current page is still being consumed.
    Ready(Box<Fetcher<T>>, Vec<Item<T>>),
    /// The query has no more pages.
    End,
}

pub(crate) struct PageStream<T> {
    next: Next<T>,
    current: std::vec::IntoIter<Item<T>>,
    /// An error to report before anything else (a query that could not be prepared).
    failed: Option<Error>,
}

// Nothing in a `PageStream` is pinned in place: the fetch in flight is boxed.
impl<T> Unpin for PageStream<T> {}

impl<T: Row> PageStream<T> {
    pub(crate) fn new(fetcher: Fetcher<T>) -> PageStream<T> {
        PageStream {
            next: Next::Idle(Box::new(fetcher)),
            current: Vec::new().into_iter(),
            failed: None,
        }
    }

    pub(crate) fn failed(error: Error) -> PageStream<T> {
        PageStream {
            next: Next::End,
            current: Vec::new().into_iter(),
            failed: Some(error),
        }
    }

    /// Starts the request for the next page if none is in flight or waiting.
    fn start_fetch(&mut self) {
        if let Next::Idle(_) = self.next {
            if let Next::Idle(fetcher) = std::mem::replace(&mut self.next, Next::End) {
                self.next = Next::Fetching(Box::pin(fetch(fetcher)));
            }
        }
    }

    /// Drives the request in flight; a page that arrives waits in the slot.
    fn poll_fetch(&mut self, cx: &mut Context<'_>) {
        if let Next::Fetching(fetching) = &mut self.next {
            if let Poll::Ready((fetcher, page)) = fetching.as_mut().poll(cx) {
                self.next = match page {
                    Some(items) => Next::Ready(fetcher, items),
                    None => Next::End,
                };
            }
        }
    }
}

async fn fetch<T: Row>(mut fetcher: Box<Fetcher<T>>) -> (Box<Fetcher<T>>, Option<Vec<Item<T>>>) {
    let items = fetcher.next_batch().await;
    (fetcher, items)
}

impl<T: Row> Stream for PageStream<T> {
    type Item = Item<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item<T>>> {
        let this = self.get_mut();
        if let Some(err) = this.failed.take() {
            return Poll::Ready(Some(Err(err)));
        }
        loop {
            // The next page's request runs while the caller consumes this one.
            this.start_fetch();
            this.poll_fetch(cx);
            if let Some(item) = this.current.next() {
                return Poll::Ready(Some(item));
            }
            match std::mem::replace(&mut this.next, Next::End) {
                Next::Ready(fetcher, items) => {
                    // The spent page's buffer goes; the waiting page becomes current,
                    // and the loop starts the request for the one after it.
                    this.current = items.into_iter();
                    this.next = Next::Idle(fetcher);
                }
                Next::End => return Poll::Ready(None),
                // Polled above: it registered the waker.
                pending @ Next::Fetching(_) => {
                    this.next = pending;
                    return Poll::Pending;
                }
                Next::Idle(fetcher) => this.next = Next::Idle(fetcher),
            }
        }
    }
}

/// The values of a stream of versioned items.
pub(crate) fn values<T: Row>(
    stream: PageStream<T>,
) -> impl Stream<Item = tables_core::Result<T>> + Send + 'static {
    futures::StreamExt::map(stream, |item| item.map(Versioned::into_value))
}
