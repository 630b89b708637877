//! The official Azure Tables JS SDK, pinned in `tools/js-sdk` (the test command
//! installs it): where its scripts are, or a loud skip.

use std::path::PathBuf;
use std::process::Command;

/// The path of the script `tools/js-sdk/<script>`, or `None` after a loud
/// `SKIPPED` line naming `test` when node or the install is missing.
///
/// # Panics
///
/// Under `CI=true` when node or the install is missing: the test command installs
/// both, so their absence there is a failure.
pub fn script_or_skip(test: &str, script: &str) -> Option<PathBuf> {
    tool_script_or_skip(test, "js-sdk", "@azure/data-tables", script)
}

/// [`script_or_skip`] for the Node tool in `tools/<tool>` (`js-sdk`, `js-legacy`)
/// whose install provides `node_modules/<package>`.
///
/// # Panics
///
/// Under `CI=true` when node or the install is missing.
pub fn tool_script_or_skip(test: &str, tool: &str, package: &str, script: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tools")
        .join(tool);
    let installed = dir.join("node_modules").join(package).is_dir();
    let node = Command::new("node").arg("--version").output().is_ok();
    if installed && node {
        return Some(dir.join(script));
    }
    let why = format!(
        "SKIPPED {test}: {} (run `npm ci` in tools/{tool}; the test command does)",
        if node {
            format!("tools/{tool} is not installed")
        } else {
            "node is not on PATH".to_owned()
        }
    );
    assert!(!crate::azurite::under_ci(), "{why}");
    eprintln!("{why}");
    None
}
