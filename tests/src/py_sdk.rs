//! The official Azure Tables Python SDK, pinned by hash in
//! `tools/py-sdk/requirements.txt` (the test command installs it in
//! `tools/py-sdk/.venv`): where its interpreter and scripts are, or a loud skip.

use std::path::PathBuf;

/// The virtual environment's `python` and the path of `tools/py-sdk/<script>`, or
/// `None` after a loud `SKIPPED` line naming `test` when the install is missing.
///
/// # Panics
///
/// Under `CI=true` when the install is missing: the test command makes it, so its
/// absence there is a failure.
pub fn script_or_skip(test: &str, script: &str) -> Option<(PathBuf, PathBuf)> {
    tool_script_or_skip(test, "py-sdk", script)
}

/// [`script_or_skip`] for the Python tool in `tools/<tool>` (`py-sdk`,
/// `py-legacy`): its `.venv/bin/python` and `tools/<tool>/<script>`.
///
/// # Panics
///
/// Under `CI=true` when the install is missing.
pub fn tool_script_or_skip(test: &str, tool: &str, script: &str) -> Option<(PathBuf, PathBuf)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tools")
        .join(tool);
    let python = dir.join(".venv/bin/python");
    if python.exists() {
        return Some((python, dir.join(script)));
    }
    let why = format!(
        "SKIPPED {test}: tools/{tool}/.venv is not installed (python3 -m venv tools/{tool}/.venv, \
         then its pip install --require-hashes --no-deps -r tools/{tool}/requirements.txt; the \
         test command does)"
    );
    assert!(!crate::azurite::under_ci(), "{why}");
    eprintln!("{why}");
    None
}

/// Runs an SDK's drive script to the end and returns how many checks passed: its
/// last lines say `ok <n> checks`.
///
/// # Panics
///
/// If the script fails (with its output), or prints no count.
pub fn passed_checks(command: &mut std::process::Command, sdk: &str) -> usize {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("can't run the {sdk} checks: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the {sdk}'s checks failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|line| {
            line.strip_prefix("ok ")?
                .strip_suffix(" checks")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no `ok <n> checks` line in:\n{stdout}"))
}
