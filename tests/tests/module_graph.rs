//! No module cycles in the product crates: for every file, the files whose items it
//! uses (through `use` and inline `crate::`/`super::` paths, each name resolved to the
//! file that defines it, as a reader would follow it) must form an acyclic graph.
//! A cycle means two modules each need the other, so neither can be read, tested or
//! moved alone.
//!
//! The reading is textual (no compiler): good enough for our code, which names its
//! imports plainly. Test modules (`#[cfg(test)]` to the end of a file, or a
//! `tests.rs`) are left out: tests may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const CRATES: [&str; 5] = [
    "tables-core",
    "tables-client",
    "tables-mem",
    "tables-derive",
    // The server's handlers share their context through `context` and `access`,
    // never through the dispatcher that calls them (`handle`).
    "tables-server",
];

/// One crate's files: module path (`key::form::ticks`) -> file.
struct Crate {
    modules: BTreeMap<String, PathBuf>,
    /// file -> names it defines at item level.
    defines: BTreeMap<PathBuf, BTreeSet<String>>,
    /// file -> its code without tests and comments.
    code: BTreeMap<PathBuf, String>,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_path(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without comments, string contents and its test module.
fn product_code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            // A test module declared here (`mod tests;`) or written out to the end.
            if lines
                .peek()
                .is_some_and(|next| next.trim_end().ends_with(';'))
            {
                lines.next();
                continue;
            }
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let code = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        out.push_str(&without_strings(code));
        out.push('\n');
    }
    out
}

/// `line` with the contents of its string literals blanked (a string may span lines;
/// its other lines are rarely code-like enough to matter).
fn without_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => {
                in_string = false;
                out.push(c);
            }
            (true, _) => {}
            (false, '\'') if chars.peek() == Some(&'"') => {
                // The character literal '"'.
                out.push(c);
                out.extend(chars.next());
            }
            (false, '"') => {
                in_string = true;
                out.push(c);
            }
            (false, _) => out.push(c),
        }
    }
    out
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
        .filter(|w| !w.is_empty())
}

fn definitions(code: &str) -> BTreeSet<String> {
    const KEYWORDS: [&str; 9] = [
        "fn",
        "struct",
        "enum",
        "trait",
        "const",
        "static",
        "type",
        "union",
        "macro_rules!",
    ];
    let mut names = BTreeSet::new();
    for line in code.lines() {
        let mut iter = words(line);
        while let Some(word) = iter.next() {
            if KEYWORDS.contains(&word) {
                if let Some(name) = iter.next() {
                    names.insert(name.to_owned());
                }
            }
        }
    }
    names
}

fn load(krate: &str) -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut modules = BTreeMap::new();
    let mut defines = BTreeMap::new();
    let mut code = BTreeMap::new();
    for file in files {
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = fs::read_to_string(&file).expect("a readable source file");
        let product = product_code(&text);
        defines.insert(file.clone(), definitions(&product));
        code.insert(file.clone(), product);
        modules.insert(module_path(&src, &file), file);
    }
    Crate {
        modules,
        defines,
        code,
    }
}

/// Expands `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(expand)
        .map(|p| {
            if p == "self" {
                prefix.trim_end_matches("::").to_owned()
            } else {
                format!("{prefix}{p}")
            }
        })
        .collect()
}

/// The paths a file names: its `use` trees and inline `crate::`/`super::` paths.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let item = line.trim_start();
        let item = item
            .strip_prefix("pub(crate) ")
            .or_else(|| item.strip_prefix("pub "))
            .unwrap_or(item);
        if let Some(tree) = item.strip_prefix("use ") {
            let mut tree = tree.to_owned();
            while !tree.contains(';') {
                match lines.next() {
                    Some(more) => tree.push_str(more),
                    None => break,
                }
            }
            let end = tree.find(';').unwrap_or(tree.len());
            out.extend(expand(&tree[..end]));
            continue;
        }
        for (i, _) in line
            .match_indices("crate::")
            .chain(line.match_indices("super::"))
        {
            if i > 0 && line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = line[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            out.push(path.trim_end_matches(':').to_owned());
        }
    }
    out
}

/// The file that defines what `path`, named in the file of module `from`, refers to.
fn resolve(krate: &Crate, from: &str, path: &str) -> Option<PathBuf> {
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = match segments.first() {
        Some(&"crate") => {
            segments.remove(0);
            Vec::new()
        }
        Some(&"super") | Some(&"self") => from.split("::").filter(|s| !s.is_empty()).collect(),
        _ => return None,
    };
    while let Some(&first) = segments.first() {
        match first {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        segments.remove(0);
    }
    // The longest prefix of the path that is a module of the crate.
    let mut module = base.clone();
    let mut taken = 0;
    for (i, segment) in segments.iter().enumerate() {
        let mut candidate = module.clone();
        candidate.push(*segment);
        if krate.modules.contains_key(&candidate.join("::")) {
            module = candidate;
            taken = i + 1;
        } else {
            break;
        }
    }
    let module_file = krate.modules.get(&module.join("::"))?;
    let Some(name) = segments.get(taken) else {
        return Some(module_file.clone());
    };
    if krate.defines[module_file].contains(*name) {
        return Some(module_file.clone());
    }
    // Re-exported from a submodule: the file under the module that defines it; or
    // re-exported from elsewhere: the one file of the crate that defines it.
    let prefix = module.join("::");
    let defining = |under: bool| -> Vec<&PathBuf> {
        krate
            .modules
            .iter()
            .filter(|(path, _)| {
                !under || prefix.is_empty() || path.starts_with(&format!("{prefix}::"))
            })
            .filter(|(_, file)| krate.defines[*file].contains(*name))
            .map(|(_, file)| file)
            .collect()
    };
    match defining(true).first() {
        Some(file) => Some((*file).clone()),
        None => match defining(false).as_slice() {
            [only] => Some((*only).clone()),
            _ => None,
        },
    }
}

/// The cycles (strongly connected components of more than one file) of `edges`.
fn cycles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    let nodes: Vec<&PathBuf> = edges.keys().collect();
    let reaches = |from: &PathBuf, to: &PathBuf| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(node) = stack.pop() {
            if node == to {
                return true;
            }
            if seen.insert(node) {
                stack.extend(edges.get(node).into_iter().flatten());
            }
        }
        false
    };
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for a in &nodes {
        if assigned.contains(*a) {
            continue;
        }
        let component: Vec<PathBuf> = nodes
            .iter()
            .filter(|b| reaches(a, b) && reaches(b, a))
            .map(|b| (*b).clone())
            .collect();
        assigned.extend(component.iter().cloned());
        if component.len() > 1 {
            out.push(component);
        }
    }
    out
}

fn edges_of(krate: &Crate) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut edges = BTreeMap::new();
    for (module, file) in &krate.modules {
        let targets: BTreeSet<PathBuf> = paths(&krate.code[file])
            .iter()
            .filter_map(|path| resolve(krate, module, path))
            .filter(|target| target != file)
            .collect();
        edges.insert(file.clone(), targets);
    }
    edges
}

#[test]
fn product_crates_have_no_module_cycles() {
    let mut found = Vec::new();
    for name in CRATES {
        let krate = load(name);
        assert!(krate.modules.len() > 3, "{name}: no sources read");
        for cycle in cycles(&edges_of(&krate)) {
            found.push(format!("{name}: {cycle:?}"));
        }
    }
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

#[test]
fn the_reader_sees_a_cycle_when_there_is_one() {
    // Two files that use each other's items, and a third that only uses one.
    let mut modules = BTreeMap::new();
    let mut defines = BTreeMap::new();
    let mut code = BTreeMap::new();
    for (module, text) in [
        ("a", "use crate::b::Bee;\npub struct Ay;\n"),
        (
            "b",
            "pub fn bee() -> super::a::Ay { todo() }\npub struct Bee;\n",
        ),
        ("c", "use crate::{a::Ay, b::{self, Bee}};\n"),
    ] {
        let file = PathBuf::from(format!("{module}.rs"));
        let product = product_code(text);
        defines.insert(file.clone(), definitions(&product));
        code.insert(file.clone(), product);
        modules.insert(module.to_owned(), file);
    }
    let krate = Crate {
        modules,
        defines,
        code,
    };
    let edges = edges_of(&krate);
    assert_eq!(
        cycles(&edges),
        [vec![PathBuf::from("a.rs"), PathBuf::from("b.rs")]]
    );
    assert_eq!(edges[&PathBuf::from("c.rs")].len(), 2);
}
