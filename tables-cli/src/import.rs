//! `tables import`: rows from files into a table, in batches per partition, with a
//! rejects file for the rows that fail and a checkpoint after each stretch.

use std::path::PathBuf;

use clap::ArgMatches;
use serde::{Deserialize, Serialize};
use tables_client::{DynamicEntity, ErrorKind, QuerySpec, TableServiceClient};

use crate::checkpoint::{same_job, Store};
use crate::export::interrupted;
use crate::files::{Origin, Records, Refusal};
use crate::load::{mode_arg, Counts, Loader, Rejects};
use crate::progress::Progress;
use crate::{table_arg, Failure};

/// Rows read and written between checkpoints, per worker of `--parallel`.
const STRETCH_PER_WORKER: usize = 2_500;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Asked {
    paths: Vec<String>,
    table: String,
    mode: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    asked: Asked,
    files: Vec<FileState>,
    rejects_bytes: u64,
    counts: Counts,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileState {
    path: String,
    /// Records of the file done (written, already there or rejected).
    records: u64,
    done: bool,
}

pub(crate) async fn import(
    service: &TableServiceClient,
    args: &ArgMatches,
    progress: &Progress,
) -> Result<(), Failure> {
    let table = table_arg(args).to_owned();
    let paths: Vec<String> = args
        .get_many::<String>("paths")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let asked = Asked {
        paths: paths.clone(),
        table: table.clone(),
        mode: args
            .get_one::<String>("mode")
            .cloned()
            .unwrap_or_else(|| "insert".into()),
    };
    let parallel = usize::from(args.get_one::<u16>("parallel").copied().unwrap_or(4));
    let checkpoint = args.get_one::<String>("checkpoint").map_or_else(
        || PathBuf::from(format!("{table}.import.checkpoint")),
        PathBuf::from,
    );
    let rejects_path = args.get_one::<String>("rejects").map_or_else(
        || PathBuf::from(format!("{table}.rejects.jsonl")),
        PathBuf::from,
    );
    let resume = args.get_flag("resume");
    let (store, saved) = Store::open::<State>(checkpoint, resume)?;
    // Every file opens (its format known, a CSV's header read) before anything is
    // written.
    for path in &paths {
        Records::open(path.as_ref())?;
    }
    let mut state = match saved {
        Some(saved) => {
            same_job(&store, &saved.asked, &asked)?;
            saved
        }
        None => {
            Rejects::must_be_new(&rejects_path)?;
            State {
                asked,
                files: paths
                    .iter()
                    .map(|p| FileState {
                        path: p.clone(),
                        records: 0,
                        done: false,
                    })
                    .collect(),
                rejects_bytes: 0,
                counts: Counts::default(),
            }
        }
    };
    ensure_table(service, &table, args.get_flag("create")).await?;
    let mut rejects = Rejects::open(rejects_path, state.rejects_bytes)?;
    let loader = Loader {
        service: service.clone(),
        table: table.clone(),
        mode: mode_arg(args),
        concurrency: parallel,
    };
    let job = progress.job(&format!("import {table}"), 1);
    job.resume_from(state.counts.rows());
    let stretch = STRETCH_PER_WORKER * parallel;
    let run = async {
        for f in 0..state.files.len() {
            if state.files[f].done {
                continue;
            }
            let path = state.files[f].path.clone();
            let mut records = Records::open(path.as_ref())?;
            for _ in 0..state.files[f].records {
                if records.next()?.is_none() {
                    return Err(Failure::usage(format!(
                        "--resume: {path} is shorter than when the import began; it changed"
                    )));
                }
            }
            loop {
                let mut batch: Vec<(Origin, Result<DynamicEntity, Refusal>)> =
                    Vec::with_capacity(stretch);
                while batch.len() < stretch {
                    match records.next()? {
                        Some(record) => batch.push((record.origin, record.row)),
                        None => break,
                    }
                }
                let end = batch.len() < stretch;
                let n = batch.len() as u64;
                let loaded = loader.load(batch).await?;
                rejects.append(&loaded.rejects)?;
                rejects.sync()?;
                job.add(0, n, 0);
                state.files[f].records += n;
                state.files[f].done = end;
                state.counts.add(loaded.counts);
                state.rejects_bytes = rejects.bytes;
                store.save(&state)?;
                if end {
                    break;
                }
            }
        }
        Ok(())
    };
    tokio::select! {
        done = run => done?,
        _ = tokio::signal::ctrl_c() => return Err(interrupted(store.path())),
    }
    job.finish();
    store.remove()?;
    let counts = state.counts;
    progress.say(&format!(
        "imported into {table}: {} in {:.1} s",
        counts.summary(),
        progress.elapsed().as_secs_f64()
    ));
    if counts.rejected > 0 {
        return Err(Failure {
            code: Failure::REJECTED,
            message: format!(
                "{} rows rejected, each with its reason in {}",
                counts.rejected,
                rejects.path().display()
            ),
        });
    }
    Ok(())
}

/// Makes sure `table` is there: created with `create`, else an error that says how.
pub(crate) async fn ensure_table(
    service: &TableServiceClient,
    table: &str,
    create: bool,
) -> Result<(), Failure> {
    if create {
        service.create_table_if_not_exists(table).await?;
        return Ok(());
    }
    let spec = QuerySpec::new().top(1);
    match service.engine().query(table, &spec, None).await {
        Ok(_) => Ok(()),
        Err(err) if err.kind() == ErrorKind::TableNotFound => Err(Failure::usage(format!(
            "table {table} doesn't exist: create it first (tables create {table}) or add --create"
        ))),
        Err(err) => Err(err.into()),
    }
}
