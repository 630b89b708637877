//! The data directory's lock, and the modes of what the server writes there.
//!
//! The lock is the kernel's (`flock` on the folder's `LOCK` file): it is released
//! when the process ends, however it ends, so a crash leaves no stale lock, a
//! process id reused by another program blocks nothing, and of two servers started
//! together on one folder exactly one gets it. The file also holds the process id of
//! the server that has it, for the error message only; it is never removed (a
//! removal would let two servers lock two files of one name).
//!
//! Folders are made owner-only (`0700`) and files owner-only (`0600`), whatever the
//! umask: the journal holds every row and the stored access policies.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::context;

const LOCK: &str = "LOCK";

/// A data directory held by this server until dropped.
#[derive(Debug)]
pub(crate) struct DirLock {
    /// The locked file: closing it releases the lock.
    _file: File,
}

/// Options that create a file owner-only (`0600` on Unix, whatever the umask).
pub(crate) fn private_file() -> OpenOptions {
    #[allow(unused_mut)] // mutated on Unix only
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

/// Creates `dir` and its missing parents owner-only (`0700` on Unix), and makes
/// `dir` itself owner-only if it was not.
pub(crate) fn private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        builder.mode(0o700);
        builder.create(dir)?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
    }
    #[cfg(not(unix))]
    builder.create(dir)
}

/// Takes the lock of the account folder `dir`.
///
/// # Errors
///
/// `AddrInUse` when another server (in this process or another) holds it, naming
/// that server's process id; any I/O error, naming the file.
pub(crate) fn take(dir: &Path) -> io::Result<DirLock> {
    let path = dir.join(LOCK);
    let mut options = private_file();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(windows)]
    {
        // No other handle may open it while this one is open: Windows' own lock,
        // released with the handle when the process ends.
        use std::os::windows::fs::OpenOptionsExt;
        options.share_mode(0);
    }
    let opened = options.open(&path);
    #[cfg(windows)]
    let opened = match opened {
        // ERROR_SHARING_VIOLATION: another server has it open.
        Err(err) if err.raw_os_error() == Some(32) => {
            return Err(in_use(dir, String::new()));
        }
        other => other,
    };
    let mut file = opened.map_err(context(&path, "can't open the lock"))?;
    if !try_lock(&file).map_err(context(&path, "can't lock"))? {
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        return Err(in_use(dir, text));
    }
    // For the message another server shows; the lock itself is the kernel's.
    let pid = std::process::id().to_string();
    file.set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| file.write_all(pid.as_bytes()))
        .map_err(context(&path, "can't write"))?;
    Ok(DirLock { _file: file })
}

/// The refusal when another server holds `dir`; `holder` is what its `LOCK` file
/// says (its process id), if it could be read.
fn in_use(dir: &Path, holder: String) -> io::Error {
    let holder = match holder.trim() {
        "" => String::new(),
        pid => format!(" (process {pid})"),
    };
    io::Error::new(
        io::ErrorKind::AddrInUse,
        format!(
            "the data directory {} is in use by another server{holder}: stop that server \
             first. The lock is the kernel's, on its {LOCK} file: it goes away when that \
             server's process ends, so there is nothing to delete",
            dir.display()
        ),
    )
}

/// Takes an exclusive lock on `file` without waiting: `false` if another open file
/// holds it.
#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    use rustix::fs::{flock, FlockOperation};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(err) if err == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(err) => Err(err.into()),
    }
}

/// On Windows the file was opened without sharing, which is the lock itself.
#[cfg(not(unix))]
fn try_lock(_file: &File) -> io::Result<bool> {
    Ok(true)
}
