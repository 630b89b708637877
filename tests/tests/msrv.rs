//! The Rust the workspace declares (`rust-version` in `Cargo.toml`, and the README's
//! "You need a Rust toolchain (X or later") builds every locked package: none asks
//! for a newer one. A dependency update that raises the floor fails here, naming
//! the packages, instead of failing a user on an older toolchain.

#![allow(clippy::unwrap_used)] // a test

use std::path::Path;
use std::process::Command;

/// `1.89` or `1.89.0` as comparable numbers.
fn version(text: &str) -> Vec<u32> {
    text.split('.').map(|part| part.parse().unwrap()).collect()
}

fn newer(package: &str, declared: &str) -> bool {
    let (mut p, mut d) = (version(package), version(declared));
    let len = p.len().max(d.len());
    p.resize(len, 0);
    d.resize(len, 0);
    p > d
}

#[test]
fn the_declared_rust_version_builds_every_locked_package() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let declared = manifest
        .lines()
        .find_map(|line| line.strip_prefix("rust-version = "))
        .map(|v| v.trim().trim_matches('"').to_owned())
        .expect("rust-version in the workspace Cargo.toml");

    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut too_new: Vec<String> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            let needs = p["rust_version"].as_str()?;
            let (name, version) = (p["name"].as_str()?, p["version"].as_str()?);
            newer(needs, &declared).then(|| format!("{name} {version} needs {needs}"))
        })
        .collect();
    too_new.sort();
    assert!(
        too_new.is_empty(),
        "the workspace declares rust-version {declared}, but locked packages need more: {}; \
         raise rust-version (and the README's line) or pin older versions",
        too_new.join(", ")
    );

    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("You need a Rust toolchain ({declared} or later")),
        "the README must state the declared rust-version {declared}"
    );
}

#[test]
fn versions_compare_by_number() {
    assert!(newer("1.89.0", "1.80"));
    assert!(newer("1.100", "1.89"));
    assert!(!newer("1.89", "1.89.0"));
    assert!(!newer("1.70.1", "1.89"));
}
