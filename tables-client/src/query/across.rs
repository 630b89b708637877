//! One query over several partitions at once, merged in key order: how a type
//! whose PartitionKey starts with a hashed shard bucket (`{field:shard(N)}`) is read
//! across its buckets.

use std::collections::VecDeque;
use std::pin::Pin;

use futures::future::join_all;
use futures::{Stream, StreamExt};
use tables_core::{EntityKey, Error, ErrorKind, Result, Row};

use super::{Order, Query};
use crate::table::Versioned;

type Items<T> = Pin<Box<dyn Stream<Item = Result<Versioned<T>>> + Send>>;

/// A [`Query`] run in several partitions at once and merged in key order: by
/// RowKey, then PartitionKey. Made by [`Query::across_partitions`].
#[derive(Debug)]
#[must_use = "a query does nothing until it is streamed or collected"]
pub struct AcrossPartitions<T> {
    query: Query<T>,
    partitions: Vec<String>,
}

/// The merge's state: one stream per partition and the item each has ready.
struct Merge<T> {
    streams: Vec<Items<T>>,
    heads: Vec<Option<(EntityKey, Versioned<T>)>>,
    /// Errors met while refilling, handed out before the next item.
    errors: VecDeque<Error>,
    started: bool,
    remaining: Option<usize>,
}

impl<T: Row> Merge<T> {
    /// Fills the head of stream `i` with its next item that has a key; errors are
    /// queued in its place.
    async fn refill(&mut self, i: usize) {
        loop {
            match self.streams[i].next().await {
                None => {
                    self.heads[i] = None;
                    return;
                }
                Some(Err(e)) => self.errors.push_back(e),
                Some(Ok(item)) => match item.value.entity_key() {
                    Ok(key) => {
                        self.heads[i] = Some((EntityKey::from(key), item));
                        return;
                    }
                    Err(e) => self.errors.push_back(e),
                },
            }
        }
    }

    async fn next(&mut self) -> Option<Result<Versioned<T>>> {
        if self.remaining == Some(0) {
            return None;
        }
        if !self.started {
            self.started = true;
            // Every partition's first page at once.
            let firsts = join_all(self.streams.iter_mut().map(|s| s.next())).await;
            for (i, first) in firsts.into_iter().enumerate() {
                match first {
                    None => {}
                    Some(Err(e)) => {
                        self.errors.push_back(e);
                        self.refill(i).await;
                    }
                    Some(Ok(item)) => match item.value.entity_key() {
                        Ok(key) => self.heads[i] = Some((EntityKey::from(key), item)),
                        Err(e) => {
                            self.errors.push_back(e);
                            self.refill(i).await;
                        }
                    },
                }
            }
        }
        if let Some(e) = self.errors.pop_front() {
            return Some(Err(e));
        }
        let next = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(i, head)| head.as_ref().map(|(key, _)| (i, key)))
            .min_by(|(_, a), (_, b)| merge_order(a, b))
            .map(|(i, _)| i)?;
        let (_, item) = self.heads[next].take()?;
        self.refill(next).await;
        if let Some(remaining) = &mut self.remaining {
            *remaining -= 1;
        }
        Some(Ok(item))
    }
}

impl<T: Row> AcrossPartitions<T> {
    pub(super) fn new(query: Query<T>, partitions: Vec<String>) -> AcrossPartitions<T> {
        AcrossPartitions { query, partitions }
    }

    /// The items of every partition with their versions, merged in key order (by
    /// RowKey, then PartitionKey). Each partition's query runs at once; each
    /// prefetches as [`Query::stream_versioned`] does, so the merge holds at most two
    /// pages per partition. `take` counts merged items.
    ///
    /// On an engine whose results come in any order (Cosmos DB for Table) the merge
    /// needs each partition in key order: the stream's only item is a refusal unless
    /// the query says [`Query::order_in_client`] (each partition read whole, at most
    /// that many rows each, and ordered on the client) or [`Query::any_order`]
    /// (every row once, in no particular order).
    pub fn stream_versioned(self) -> impl Stream<Item = Result<Versioned<T>>> + Send + 'static {
        self.stream_as("stream_versioned")
    }

    /// [`AcrossPartitions::stream_versioned`], refusing as the `call` the caller made.
    fn stream_as(
        self,
        call: &'static str,
    ) -> impl Stream<Item = Result<Versioned<T>>> + Send + 'static {
        let AcrossPartitions { query, partitions } = self;
        let refused = if query.partition.is_some() {
            Some(Error::local(
                ErrorKind::InvalidInput,
                "the query names a partition and across_partitions names others: use one of them",
            ))
        } else if partitions.is_empty() {
            Some(Error::local(
                ErrorKind::InvalidInput,
                "across_partitions needs at least one partition",
            ))
        } else {
            order_refusal(&query, call)
        };
        let remaining = query.take;
        let streams: Vec<Items<T>> = if refused.is_some() {
            Vec::new()
        } else {
            partitions
                .into_iter()
                .map(|pk| Box::pin(query.clone().partition(pk).stream_versioned()) as Items<T>)
                .collect()
        };
        let heads = streams.iter().map(|_| None).collect();
        let merge = Merge {
            streams,
            heads,
            errors: refused.into_iter().collect(),
            started: false,
            remaining,
        };
        futures::stream::unfold(merge, |mut merge| async move {
            let item = merge.next().await?;
            Some((item, merge))
        })
    }

    /// As [`AcrossPartitions::stream_versioned`], the values only.
    pub fn stream(self) -> impl Stream<Item = Result<T>> + Send + 'static {
        self.stream_as("stream")
            .map(|item| item.map(Versioned::into_value))
    }

    /// Every item of every partition, merged in key order. On an engine whose
    /// results come in any order (Cosmos DB for Table) the rows are ordered on the
    /// client (they are all held anyway); with `take(n)` that needs
    /// [`Query::order_in_client`] or [`Query::any_order`].
    ///
    /// # Errors
    ///
    /// The first error of any partition's query, or the first item that fails to
    /// decode.
    pub async fn collect(mut self) -> Result<Vec<T>> {
        let unordered = !self.query.service.engine().capabilities().ordered_results;
        if unordered && self.query.order == Order::Key && self.query.take.is_none() {
            // Every row is held anyway: read them in any order, then order them as
            // the merge would (by RowKey, then PartitionKey).
            self.query.order = Order::Any;
            let mut stream = std::pin::pin!(self.stream_as("collect"));
            let mut keyed = Vec::new();
            while let Some(item) = stream.next().await {
                let value = item?.into_value();
                keyed.push((EntityKey::from(value.entity_key()?), value));
            }
            keyed.sort_by(|(a, _), (b, _)| merge_order(a, b));
            return Ok(keyed.into_iter().map(|(_, value)| value).collect());
        }
        let mut stream = std::pin::pin!(self
            .stream_as("collect")
            .map(|item| item.map(Versioned::into_value)));
        let mut values = Vec::new();
        while let Some(item) = stream.next().await {
            values.push(item?);
        }
        Ok(values)
    }
}

/// The order of the merge: by RowKey, then PartitionKey (ordinal, as the service).
fn merge_order(a: &EntityKey, b: &EntityKey) -> std::cmp::Ordering {
    tables_core::key::cmp_ordinal(&a.row_key, &b.row_key)
        .then_with(|| tables_core::key::cmp_ordinal(&a.partition_key, &b.partition_key))
}

/// The refusal of a merge in key order over an engine whose results come in any
/// order, unless the query said how to order them; `None` when the merge is right.
fn order_refusal<T>(query: &Query<T>, call: &str) -> Option<Error> {
    let capabilities = query.service.engine().capabilities();
    if capabilities.ordered_results || query.order != Order::Key {
        return None;
    }
    let take = match query.take {
        Some(n) => format!(" take({n}) would keep any {n} rows, and"),
        None => String::new(),
    };
    Some(Error::new(
        ErrorKind::InvalidQuery,
        format!(
            "`across_partitions(..).{call}` on table {:?} merges the partitions in key order, \
             and {} returns query results in any order, so{take} the merge would not be in \
             key order; call .order_in_client(max_rows) on the query to read each partition \
             whole and order it on the client (at most max_rows rows each), .any_order() if \
             any order will do, or collect() without take to read every row and order them. \
             Nothing was sent",
            query.table, capabilities.service
        ),
    ))
}
