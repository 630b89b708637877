//! What a long command shows while it runs, on stderr: a bar per worker and one for
//! the whole on a terminal; a plain line every few seconds when stderr is a file or
//! a pipe (no escape codes); nothing with `--quiet`. The final summary is the
//! command's own.

use std::io::{self, IsTerminal};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{
    HumanBytes, HumanCount, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle,
};

/// Seconds between plain progress lines (`TABLES_PROGRESS_SECONDS` overrides).
const LINE_EVERY: Duration = Duration::from_secs(5);

/// The progress of one command.
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    shown: Shown,
    started: Instant,
}

#[derive(Debug, Clone)]
enum Shown {
    Bars(MultiProgress),
    Lines(Arc<Mutex<Instant>>),
    Quiet,
}

impl Progress {
    /// Bars when stderr is a terminal, lines when it isn't, nothing when `quiet`.
    pub(crate) fn new(quiet: bool) -> Progress {
        let shown = if quiet {
            Shown::Quiet
        } else if io::stderr().is_terminal() {
            Shown::Bars(MultiProgress::with_draw_target(
                ProgressDrawTarget::stderr_with_hz(4),
            ))
        } else {
            Shown::Lines(Arc::new(Mutex::new(Instant::now())))
        };
        Progress {
            shown,
            started: Instant::now(),
        }
    }

    /// A counter for one job (a table, a file) with `workers` workers: a bar for
    /// each worker and one for the job on a terminal.
    pub(crate) fn job(&self, name: &str, workers: usize) -> Job {
        let totals = Arc::new(Totals::default());
        let (total_bar, bars) = match &self.shown {
            Shown::Bars(multi) => {
                let style = ProgressStyle::with_template(
                    "{prefix:>16} {spinner} {human_pos:>11} rows {per_sec:>14} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
                let bar = |prefix: String| {
                    let bar = multi.add(ProgressBar::new_spinner().with_style(style.clone()));
                    bar.set_prefix(prefix);
                    bar.enable_steady_tick(Duration::from_millis(250));
                    bar
                };
                let total = bar(name.to_owned());
                let workers = if workers > 1 {
                    (0..workers)
                        .map(|w| bar(format!("worker {}", w + 1)))
                        .collect()
                } else {
                    Vec::new()
                };
                (Some(total), workers)
            }
            _ => (None, Vec::new()),
        };
        Job {
            name: name.to_owned(),
            totals,
            total_bar,
            bars,
            progress: self.clone(),
        }
    }

    /// Seconds since the command started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Prints `message` (a summary line) unless quiet, above any bars.
    pub(crate) fn say(&self, message: &str) {
        match &self.shown {
            Shown::Bars(multi) => {
                if multi.println(message).is_err() {
                    eprintln!("{message}");
                }
            }
            Shown::Lines(_) => eprintln!("{message}"),
            Shown::Quiet => {}
        }
    }

    fn line_every() -> Duration {
        std::env::var("TABLES_PROGRESS_SECONDS")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .map_or(LINE_EVERY, Duration::from_secs_f64)
    }
}

#[derive(Debug, Default)]
struct Totals {
    rows: AtomicU64,
    bytes: AtomicU64,
}

/// The counters of one job.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    name: String,
    totals: Arc<Totals>,
    total_bar: Option<ProgressBar>,
    bars: Vec<ProgressBar>,
    progress: Progress,
}

impl Job {
    /// Counts `rows` (and `bytes`) done by `worker`.
    pub(crate) fn add(&self, worker: usize, rows: u64, bytes: u64) {
        let all = self.totals.rows.fetch_add(rows, Ordering::Relaxed) + rows;
        let all_bytes = self.totals.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if let Some(bar) = &self.total_bar {
            bar.inc(rows);
            if all_bytes > 0 {
                bar.set_message(HumanBytes(all_bytes).to_string());
            }
        }
        if let Some(bar) = self.bars.get(worker) {
            bar.inc(rows);
        }
        if let Shown::Lines(last) = &self.progress.shown {
            let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
            if last.elapsed() >= Progress::line_every() {
                *last = Instant::now();
                let seconds = self.progress.elapsed().as_secs_f64().max(0.001);
                eprintln!(
                    "{}: {} rows, {} rows/s, {}",
                    self.name,
                    HumanCount(all),
                    HumanCount((all as f64 / seconds) as u64),
                    HumanBytes(all_bytes)
                );
            }
        }
    }

    /// Starts the counts at what an earlier run did (on `--resume`).
    pub(crate) fn resume_from(&self, rows: u64) {
        self.totals.rows.fetch_add(rows, Ordering::Relaxed);
        if let Some(bar) = &self.total_bar {
            bar.inc(rows);
        }
    }

    /// Removes the bars.
    pub(crate) fn finish(&self) {
        for bar in self.bars.iter().chain(&self.total_bar) {
            bar.finish_and_clear();
        }
    }
}
