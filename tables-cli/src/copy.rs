//! `tables copy`: a table's rows into another table, in this account or another,
//! the source read in `--parallel` key ranges, each page written in batches before
//! its range's checkpoint moves on.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use clap::ArgMatches;
use futures::future::try_join_all;
use serde::{Deserialize, Serialize};
use tables_client::{ContinuationToken, DynamicEntity, QuerySpec, TableServiceClient, Value};

use crate::checkpoint::{same_job, Store};
use crate::export::interrupted;
use crate::files::{Origin, Refusal};
use crate::load::{mode_arg, Counts, Loader, Rejects};
use crate::pages::Pages;
use crate::progress::{Job, Progress};
use crate::query::filter_arg;
use crate::ranges::{cut, KeyRange};
use crate::Failure;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Asked {
    source: String,
    dest: String,
    other_account: bool,
    filter: Option<String>,
    mode: String,
    keep_timestamp_as: Option<String>,
    parallel: u16,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    asked: Asked,
    ranges: Option<Vec<RangeState>>,
    rejects_bytes: u64,
    counts: Counts,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RangeState {
    range: KeyRange,
    continuation: Option<String>,
    started: bool,
    done: bool,
}

struct Shared {
    source: TableServiceClient,
    loader: Loader,
    keep_timestamp_as: Option<String>,
    store: Store,
    state: Mutex<(State, Rejects)>,
}

pub(crate) async fn copy(
    source: &TableServiceClient,
    dest: &TableServiceClient,
    args: &ArgMatches,
    progress: &Progress,
) -> Result<(), Failure> {
    let arg = |name: &str| args.get_one::<String>(name).cloned();
    let asked = Asked {
        source: arg("source").unwrap_or_default(),
        dest: arg("dest").unwrap_or_default(),
        other_account: arg("to-connection-string").is_some() || arg("to-account-url").is_some(),
        filter: arg("filter"),
        mode: arg("mode").unwrap_or_else(|| "insert".into()),
        keep_timestamp_as: arg("keep-timestamp-as"),
        parallel: args.get_one::<u16>("parallel").copied().unwrap_or(4),
    };
    if let Some(name) = &asked.keep_timestamp_as {
        tables_core::size::validate_entity(&DynamicEntity::new("p", "r").with(name.as_str(), 0))
            .map_err(|e| {
                Failure::usage(format!("--keep-timestamp-as {name:?}: {}", e.message()))
            })?;
    }
    let checkpoint = arg("checkpoint").map_or_else(
        || PathBuf::from(format!("{}-{}.copy.checkpoint", asked.source, asked.dest)),
        PathBuf::from,
    );
    let rejects_path = arg("rejects").map_or_else(
        || PathBuf::from(format!("{}.rejects.jsonl", asked.dest)),
        PathBuf::from,
    );
    let (store, saved) = Store::open::<State>(checkpoint, args.get_flag("resume"))?;
    let state = match saved {
        Some(saved) => {
            same_job(&store, &saved.asked, &asked)?;
            saved
        }
        None => {
            Rejects::must_be_new(&rejects_path)?;
            State {
                asked: asked.clone(),
                ranges: None,
                rejects_bytes: 0,
                counts: Counts::default(),
            }
        }
    };
    crate::import::ensure_table(source, &asked.source, false).await?;
    dest.create_table_if_not_exists(&asked.dest).await?;
    let rejects = Rejects::open(rejects_path, state.rejects_bytes)?;
    let spec_filter = filter_arg(args)?;
    let parallel = usize::from(asked.parallel);
    let ranges = match state.ranges.clone() {
        Some(ranges) => ranges,
        None => cut(source, &asked.source, parallel)
            .await?
            .into_iter()
            .map(|range| RangeState {
                range,
                continuation: None,
                started: false,
                done: false,
            })
            .collect(),
    };
    let resumed = state.counts.rows();
    let shared = Arc::new(Shared {
        source: source.clone(),
        loader: Loader {
            service: dest.clone(),
            table: asked.dest.clone(),
            mode: mode_arg(args),
            concurrency: 4,
        },
        keep_timestamp_as: asked.keep_timestamp_as.clone(),
        store,
        state: Mutex::new((
            State {
                ranges: Some(ranges.clone()),
                ..state
            },
            rejects,
        )),
    });
    {
        let guard = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        shared.store.save(&guard.0)?;
    }
    let job = progress.job(&format!("copy {}", asked.source), ranges.len());
    job.resume_from(resumed);
    let workers = ranges
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.done)
        .map(|(r, range)| {
            let mut spec = QuerySpec::new();
            if let Some(filter) = range.range.filter(spec_filter.as_ref()) {
                spec = spec.filter(filter);
            }
            copy_range(&shared, r, spec, &asked.source, &job)
        });
    let run = try_join_all(workers);
    tokio::select! {
        done = run => { done?; }
        _ = tokio::signal::ctrl_c() => return Err(interrupted(shared.store.path())),
    }
    job.finish();
    shared.store.remove()?;
    let guard = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
    let (state, rejects) = &*guard;
    progress.say(&format!(
        "copied {} to {}: {} in {:.1} s",
        asked.source,
        asked.dest,
        state.counts.summary(),
        progress.elapsed().as_secs_f64()
    ));
    if state.counts.rejected > 0 {
        return Err(Failure {
            code: Failure::REJECTED,
            message: format!(
                "{} rows rejected, each with its reason in {}",
                state.counts.rejected,
                rejects.path().display()
            ),
        });
    }
    Ok(())
}

async fn copy_range(
    shared: &Shared,
    r: usize,
    spec: QuerySpec,
    source_table: &str,
    job: &Job,
) -> Result<(), Failure> {
    let saved = {
        let guard = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        guard.0.ranges.as_ref().map(|rs| rs[r].clone())
    };
    let Some(range) = saved else {
        return Ok(());
    };
    let mut continuation: Option<ContinuationToken> = match &range.continuation {
        Some(text) => Some(text.parse()?),
        None => None,
    };
    let mut pages = Pages::new(&shared.source, source_table, spec, continuation.clone());
    loop {
        let Some(page) = pages.next().await? else {
            return Ok(());
        };
        let next = page.continuation.clone();
        let records: Vec<(Origin, Result<DynamicEntity, Refusal>)> = page
            .into_rows()?
            .into_iter()
            .map(|mut row| {
                if let (Some(name), Some(stamp)) = (&shared.keep_timestamp_as, row.timestamp) {
                    row.insert(name.as_str(), Value::DateTime(stamp));
                }
                let origin = Origin {
                    source: source_table.to_owned(),
                    line: 0,
                };
                (origin, Ok(row))
            })
            .collect();
        let n = records.len() as u64;
        let loaded = shared.loader.load(records).await?;
        job.add(r, n, 0);
        continuation = next;
        let mut guard = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (state, rejects) = &mut *guard;
        rejects.append(&loaded.rejects)?;
        rejects.sync()?;
        state.rejects_bytes = rejects.bytes;
        state.counts.add(loaded.counts);
        if let Some(ranges) = state.ranges.as_mut() {
            ranges[r].continuation = continuation.as_ref().map(ToString::to_string);
            ranges[r].started = true;
            ranges[r].done = continuation.is_none();
        }
        shared.store.save(state)?;
        if continuation.is_none() {
            return Ok(());
        }
    }
}
