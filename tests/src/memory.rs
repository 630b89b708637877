//! The process's resident memory, as Linux reports it in `/proc/self/status`: for
//! the tests that show a reader or writer holds a bounded amount whatever the data's
//! length (`stream_memory`, `bulk_memory`).

/// A `/proc/self/status` field in KiB (`VmRSS:`, `VmHWM:`, ...).
///
/// # Panics
///
/// Off Linux, or when the field is missing.
pub fn status_kib(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    line.split_whitespace()
        .nth(1)
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("a number of KiB in {line:?}"))
}

/// The resident set now, with the peak (`VmHWM`) reset to it: [`PeakGrowth::kib`]
/// later says how far the process grew above it since.
#[derive(Debug, Clone, Copy)]
pub struct PeakGrowth {
    before_kib: usize,
}

impl PeakGrowth {
    /// Resets the peak resident set to the current one and remembers it.
    ///
    /// # Panics
    ///
    /// When `/proc/self/clear_refs` can't be written (off Linux).
    pub fn start() -> PeakGrowth {
        let before_kib = status_kib("VmRSS:");
        // "5" resets the peak resident set (VmHWM) to the current resident set.
        std::fs::write("/proc/self/clear_refs", "5").expect("/proc/self/clear_refs");
        PeakGrowth { before_kib }
    }

    /// The most the resident set grew since [`PeakGrowth::start`], in KiB.
    pub fn kib(&self) -> usize {
        status_kib("VmHWM:").saturating_sub(self.before_kib)
    }
}
