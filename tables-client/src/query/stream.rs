//! [`PageStream`]: the stream behind `Query::stream`, which fetches the next page
//! while the caller consumes the current one, holding at most two pages.
//!
//! Inside a tokio runtime, the first poll spawns a task that reads pages through a
//! [`Fetcher`] and hands them over a channel of one slot. The task reserves the slot
//! *before* it fetches, so at any moment there is the page the caller is consuming
//! and at most one more (being fetched, or waiting in the slot): memory does not grow
//! with the size of the result. Dropping the stream aborts the task. Outside a
//! runtime the stream fetches in-line, one page whenever the current one runs out.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use tables_core::{Error, ErrorKind, Row};

use crate::query::fetch::{Fetcher, Item};
use crate::table::Versioned;

/// What the prefetch task sends.
enum Message<T> {
    /// The next page's items (never empty).
    Page(Vec<Item<T>>),
    /// The query has no more items.
    End,
}

type Fetching<T> = Pin<Box<dyn Future<Output = (Box<Fetcher<T>>, Option<Vec<Item<T>>>)> + Send>>;

/// The prefetch task; aborted when dropped.
struct Task(JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

enum State<T> {
    /// Not polled yet.
    Start(Box<Fetcher<T>>),
    /// Pages come from the prefetch task.
    Prefetching {
        pages: mpsc::Receiver<Message<T>>,
        task: Task,
    },
    /// The task stopped without saying `End`: find out why.
    Joining(Task),
    /// No runtime: pages are fetched in-line; none is being fetched.
    Inline(Box<Fetcher<T>>),
    /// No runtime: a page is being fetched in-line.
    InlineFetching(Fetching<T>),
    /// The query could not start: yield this error, then end.
    Failed(Error),
    Done,
}

/// A typed query's results, page by page, with the next page prefetched.
pub(crate) struct PageStream<T> {
    state: State<T>,
    current: std::vec::IntoIter<Item<T>>,
}

// Nothing in a `PageStream` is pinned in place: the in-line fetch is boxed.
impl<T> Unpin for PageStream<T> {}

impl<T: Row> PageStream<T> {
    pub(crate) fn new(fetcher: Fetcher<T>) -> PageStream<T> {
        PageStream {
            state: State::Start(Box::new(fetcher)),
            current: Vec::new().into_iter(),
        }
    }

    /// A stream yielding `error` once.
    pub(crate) fn failed(error: Error) -> PageStream<T> {
        PageStream {
            state: State::Failed(error),
            current: Vec::new().into_iter(),
        }
    }
}

/// Starts reading: a prefetch task when a tokio runtime is at hand, else in-line.
fn start<T: Row>(fetcher: Box<Fetcher<T>>) -> State<T> {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let (sender, pages) = mpsc::channel(1);
            let task = runtime.spawn(prefetch(fetcher, sender));
            State::Prefetching {
                pages,
                task: Task(task),
            }
        }
        Err(_) => State::Inline(fetcher),
    }
}

/// The prefetch task: claims the channel's slot, then fetches a page into it.
async fn prefetch<T: Row>(mut fetcher: Box<Fetcher<T>>, sender: mpsc::Sender<Message<T>>) {
    loop {
        // Waits until the caller has taken the previous page; fails once the stream
        // is gone.
        let Ok(slot) = sender.reserve().await else {
            return;
        };
        match fetcher.next_batch().await {
            Some(items) => slot.send(Message::Page(items)),
            None => {
                slot.send(Message::End);
                return;
            }
        }
    }
}

async fn fetch_inline<T: Row>(
    mut fetcher: Box<Fetcher<T>>,
) -> (Box<Fetcher<T>>, Option<Vec<Item<T>>>) {
    let items = fetcher.next_batch().await;
    (fetcher, items)
}

impl<T: Row> Stream for PageStream<T> {
    type Item = Item<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item<T>>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.current.next() {
                return Poll::Ready(Some(item));
            }
            // Free the spent page's buffer before waiting for the next.
            this.current = Vec::new().into_iter();
            match &mut this.state {
                State::Prefetching { pages, .. } => match ready!(pages.poll_recv(cx)) {
                    Some(Message::Page(items)) => this.current = items.into_iter(),
                    Some(Message::End) => this.state = State::Done,
                    None => {
                        if let State::Prefetching { task, .. } =
                            std::mem::replace(&mut this.state, State::Done)
                        {
                            this.state = State::Joining(task);
                        }
                    }
                },
                State::Joining(task) => {
                    let outcome = ready!(Pin::new(&mut task.0).poll(cx));
                    this.state = State::Done;
                    return match outcome {
                        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
                        Err(_) => Poll::Ready(Some(Err(Error::new(
                            ErrorKind::Unsupported,
                            "the query's prefetch task was cancelled (its tokio runtime shut down) \
                             before the last page; poll the stream while the runtime that first \
                             polled it runs",
                        )))),
                        // The task only ends after sending `End`, or once the stream
                        // is gone.
                        Ok(()) => Poll::Ready(None),
                    };
                }
                State::InlineFetching(fetching) => {
                    let (fetcher, items) = ready!(fetching.as_mut().poll(cx));
                    match items {
                        Some(items) => {
                            this.current = items.into_iter();
                            this.state = State::Inline(fetcher);
                        }
                        None => this.state = State::Done,
                    }
                }
                State::Start(_) | State::Inline(_) | State::Failed(_) | State::Done => {
                    match std::mem::replace(&mut this.state, State::Done) {
                        State::Start(fetcher) => this.state = start(fetcher),
                        State::Inline(fetcher) => {
                            this.state = State::InlineFetching(Box::pin(fetch_inline(fetcher)));
                        }
                        State::Failed(err) => return Poll::Ready(Some(Err(err))),
                        _ => return Poll::Ready(None),
                    }
                }
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
