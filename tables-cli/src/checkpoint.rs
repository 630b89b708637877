//! The checkpoint of an export, import or copy: a JSON file saved atomically
//! (written beside, flushed to disk, renamed over) after each step whose output is
//! on disk or in the service, so a run killed at any instant leaves either the old
//! or the new checkpoint, and `--resume` goes on from it. It names tables, files
//! and positions, never a connection string or key.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::Failure;

/// Where a command's checkpoint lives.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    path: PathBuf,
}

impl Store {
    /// The checkpoint at `path`, and the state it holds when resuming. Without
    /// `resume`, an existing checkpoint refuses the command (it would start over
    /// what an interrupted run began); with it, a missing one does.
    pub(crate) fn open<S: DeserializeOwned>(
        path: PathBuf,
        resume: bool,
    ) -> Result<(Store, Option<S>), Failure> {
        let store = Store { path };
        let exists = store.path.exists();
        match (resume, exists) {
            (false, false) => Ok((store, None)),
            (false, true) => Err(Failure::usage(format!(
                "{} is the checkpoint of an interrupted run: add --resume to finish it, or \
                 delete it to start over",
                store.path.display()
            ))),
            (true, false) => Err(Failure::usage(format!(
                "--resume: no checkpoint at {} (nothing to resume; run without --resume)",
                store.path.display()
            ))),
            (true, true) => {
                let text = fs::read(&store.path).map_err(|e| {
                    Failure::service(format!("reading checkpoint {}: {e}", store.path.display()))
                })?;
                let state = serde_json::from_slice(&text).map_err(|e| {
                    Failure::usage(format!(
                        "checkpoint {} is damaged ({e}); delete it and start over",
                        store.path.display()
                    ))
                })?;
                Ok((store, Some(state)))
            }
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Saves `state`: the old checkpoint or the new one survives any crash.
    pub(crate) fn save<S: Serialize>(&self, state: &S) -> Result<(), Failure> {
        let failed = |e: io::Error| {
            Failure::service(format!("saving checkpoint {}: {e}", self.path.display()))
        };
        let mut beside = self.path.clone().into_os_string();
        beside.push(".new");
        let beside = PathBuf::from(beside);
        let json = serde_json::to_vec_pretty(state)
            .map_err(|e| Failure::service(format!("encoding the checkpoint: {e}")))?;
        let mut file = fs::File::create(&beside).map_err(failed)?;
        file.write_all(&json).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        fs::rename(&beside, &self.path).map_err(failed)
    }

    /// Removes the checkpoint: the job is done.
    pub(crate) fn remove(&self) -> Result<(), Failure> {
        match fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Failure::service(format!(
                "removing checkpoint {}: {e}",
                self.path.display()
            ))),
        }
    }
}

/// Checks that a resumed run is the interrupted one: the same `what` (tables,
/// format, filter, ...).
pub(crate) fn same_job<J: PartialEq + std::fmt::Debug>(
    store: &Store,
    saved: &J,
    asked: &J,
) -> Result<(), Failure> {
    if saved == asked {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "--resume: checkpoint {} is of another job ({saved:?}); this command asks for \
             {asked:?}. Run the command as it was first run, or delete the checkpoint",
            store.path.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_is_refused_or_required() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.checkpoint");
        let (store, none) = Store::open::<Vec<u32>>(path.clone(), false).unwrap();
        assert!(none.is_none());
        assert_eq!(
            Store::open::<Vec<u32>>(path.clone(), true)
                .unwrap_err()
                .code,
            2
        );
        store.save(&vec![1u32, 2]).unwrap();
        let err = Store::open::<Vec<u32>>(path.clone(), false).unwrap_err();
        assert!(err.message.contains("--resume"), "{err}");
        let (store, saved) = Store::open::<Vec<u32>>(path.clone(), true).unwrap();
        assert_eq!(saved, Some(vec![1, 2]));
        fs::write(&path, b"{not json").unwrap();
        assert!(Store::open::<Vec<u32>>(path.clone(), true)
            .unwrap_err()
            .message
            .contains("damaged"));
        store.remove().unwrap();
        assert!(!path.exists());
    }
}
