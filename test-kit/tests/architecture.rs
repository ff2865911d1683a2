//! docs/architecture.md is checked against the code, so the map a newcomer
//! reads is the territory:
//!
//! - its first code block describes every crate of the workspace (and
//!   herald-py), and under each crate every top-level module there is,
//!   and nothing that is not;
//! - *Crates* declares each crate's dependencies on the others
//!   (`name -> a, b`): a dependency in a `Cargo.toml` that it does not
//!   declare fails, and so does one it declares that is not there;
//! - *Who calls whom* declares, per crate (`### name`), each top-level
//!   module's imports of the crate's other top-level modules
//!   (`module -> a, b`): an import the code makes (`crate::x`, or `super::x`
//!   that reaches the crate root) that it does not declare fails, and so
//!   does a module it names that does not exist.
//!
//! On a failure the message prints the lines the code implies, so the
//! document is regenerated from the code, then explained by hand.
// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use herald_testkit::surface::rust_files;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn doc() -> String {
    std::fs::read_to_string(root().join("docs/architecture.md")).unwrap()
}

/// Every crate: its package name and its directory. The workspace's
/// members (root `Cargo.toml`), and herald-py (a workspace of its own).
fn crates() -> Vec<(String, PathBuf)> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("a members list");
    let mut dirs: Vec<String> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty() && !m.starts_with('#'))
        .collect();
    dirs.push("herald-py".into());
    dirs.into_iter()
        .map(|d| {
            let dir = root().join(&d);
            (package_name(&dir), dir)
        })
        .collect()
}

/// The `name` of a crate's `[package]`.
fn package_name(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let package = text.split("[package]").nth(1).expect("a [package]");
    package
        .lines()
        .find_map(|l| l.trim().strip_prefix("name = "))
        .map(|n| n.trim_matches('"').to_string())
        .expect("a package name")
}

/// The crates of `names` that a crate's normal (not dev, not build)
/// dependencies name, in `[dependencies]` and target-specific
/// `[target.….dependencies]` tables.
fn dependencies(dir: &Path, names: &BTreeSet<String>) -> BTreeSet<String> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let mut found = BTreeSet::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let table = line.trim_matches(|c| c == '[' || c == ']');
            inside = table == "dependencies" || table.ends_with(".dependencies");
            if let Some(dep) = table.strip_prefix("dependencies.") {
                if names.contains(dep) {
                    found.insert(dep.to_string());
                }
                inside = false;
            }
            continue;
        }
        if !inside || line.starts_with('#') {
            continue;
        }
        let key = line
            .split(['=', '.'])
            .next()
            .unwrap_or_default()
            .trim()
            .trim_matches('"');
        if names.contains(key) {
            found.insert(key.to_string());
        }
    }
    found
}

/// The top-level modules of a crate's `src`: each `NAME.rs` but the crate
/// roots, and each directory but `bin` (a `NAME.rs` with a `NAME/` of
/// submodules is one module).
fn modules(src: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(src) else {
        return names;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if name != "bin" {
                names.insert(name);
            }
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            names.insert(name);
        }
    }
    names
}

/// A source file's module path under `src` (`a/b.rs` and `a/b/mod.rs`
/// are `[a, b]`); `None` for the crate roots and `src/bin`.
fn module_path(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    let last = parts.pop()?;
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    if parts.is_empty() || (parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main")) {
        return None;
    }
    Some(parts)
}

/// The identifiers that follow `prefix` in `code`: `prefix::x` gives `x`,
/// `prefix::{x, y::z}` gives `x` and `y`.
fn after(code: &str, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // One level of braces: the first segment of each item.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 && c == ',' {
                    names.push(std::mem::take(&mut item));
                } else {
                    item.push(c);
                }
            }
            names.push(item);
        } else {
            names.push(rest.to_string());
        }
    }
    names
        .into_iter()
        .filter_map(|n| {
            let n = n.trim_start();
            let ident: String = n
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!ident.is_empty()).then_some(ident)
        })
        .collect()
}

/// The code of a file without its comments (doc comments included): an
/// intra-doc link is not an import.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            // Not inside a string: good enough for this tree, which keeps
            // no `//` in the strings around its paths.
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each top-level module's imports of the crate's other top-level modules.
fn imports(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = dir.join("src");
    let top = modules(&src);
    let mut edges: BTreeMap<String, BTreeSet<String>> =
        top.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for file in rust_files(&src) {
        let Some(path) = module_path(&src, &file) else {
            continue;
        };
        let from = path[0].clone();
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        let mut named = after(&code, "crate::");
        // `super::` repeated as many times as the module is deep reaches
        // the crate root.
        let to_root = vec!["super::"; path.len()].concat();
        named.extend(after(&code, &to_root));
        for to in named {
            if to != from && top.contains(&to) {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

/// The lines of the code blocks of the document's section `heading`
/// (`## …`), grouped by the `### ` subheading they follow (`""` before
/// any).
fn section_blocks(doc: &str, heading: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut inside = false;
    let mut sub = String::new();
    let mut code = false;
    for line in doc.lines() {
        if !code && line.starts_with("## ") {
            inside = line == heading;
            sub.clear();
            continue;
        }
        if !inside {
            continue;
        }
        if !code && let Some(s) = line.strip_prefix("### ") {
            sub = s.trim().to_string();
            continue;
        }
        if line.starts_with("```") {
            code = !code;
            continue;
        }
        if code {
            out.entry(sub.clone()).or_default().push(line.to_string());
        }
    }
    out
}

/// `name -> a, b` lines: each name and what it declares.
fn arrows(lines: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for line in lines {
        let Some((name, deps)) = line.split_once("->") else {
            continue;
        };
        let deps = deps
            .split('(')
            .next()
            .unwrap_or_default()
            .split(',')
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty())
            .collect();
        out.insert(name.trim().to_string(), deps);
    }
    out
}

/// The lines that state `edges`, for a failure message.
fn render(edges: &BTreeMap<String, BTreeSet<String>>) -> String {
    let width = edges.keys().map(String::len).max().unwrap_or(0);
    edges
        .iter()
        .map(|(k, v)| {
            let deps: Vec<&str> = v.iter().map(String::as_str).collect();
            format!("{k:width$} -> {}", deps.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module names the first code block lists under `krate`: the lines
/// indented by exactly two spaces after the line that starts with the
/// crate's name; each line's first column (up to two spaces) may name
/// several, comma-separated, a directory with a `/`.
fn listed(doc: &str, krate: &str) -> Option<BTreeSet<String>> {
    let block = doc.split("```").nth(1).expect("a code block");
    let mut names = BTreeSet::new();
    let mut inside = false;
    let mut seen = false;
    for line in block.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            inside = line.split_whitespace().next() == Some(krate);
            seen |= inside;
            continue;
        }
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        if !inside || rest.starts_with(' ') {
            continue;
        }
        let column = rest.split("  ").next().unwrap_or_default();
        for name in column.split(',') {
            names.insert(name.trim().trim_end_matches('/').to_string());
        }
    }
    seen.then_some(names)
}

#[test]
fn the_architecture_describes_every_crate_and_exactly_its_modules() {
    let doc = doc();
    let mut wrong = Vec::new();
    for (krate, dir) in crates() {
        let present = modules(&dir.join("src"));
        let Some(listed) = listed(&doc, &krate) else {
            wrong.push(format!("{krate}: not described in the first code block"));
            continue;
        };
        let missing: Vec<_> = present.difference(&listed).collect();
        let phantom: Vec<_> = listed.difference(&present).collect();
        if !missing.is_empty() || !phantom.is_empty() {
            wrong.push(format!(
                "{krate}: modules not listed: {missing:?}; listed but absent: {phantom:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_architecture_declares_exactly_the_crate_dependencies() {
    let doc = doc();
    let crates = crates();
    let names: BTreeSet<String> = crates.iter().map(|(n, _)| n.clone()).collect();
    let real: BTreeMap<String, BTreeSet<String>> = crates
        .iter()
        .map(|(n, dir)| (n.clone(), dependencies(dir, &names)))
        .collect();
    let lines: Vec<String> = section_blocks(&doc, "## Crates")
        .into_values()
        .flatten()
        .collect();
    let declared = arrows(&lines);
    assert_eq!(
        declared,
        real,
        "docs/architecture.md, *Crates*, must declare each crate's dependencies \
         on the others as the Cargo.toml files have them:\n{}",
        render(&real)
    );
}

#[test]
fn the_architecture_declares_every_module_import() {
    let doc = doc();
    let blocks = section_blocks(&doc, "## Who calls whom");
    let mut wrong = Vec::new();
    for (krate, dir) in crates() {
        let real = imports(&dir);
        if real.len() < 2 {
            continue;
        }
        let Some(lines) = blocks.get(&krate) else {
            wrong.push(format!(
                "### {krate} is missing; the code implies:\n{}",
                render(&real)
            ));
            continue;
        };
        let declared = arrows(lines);
        let mut problems = Vec::new();
        for name in declared.keys().filter(|n| !real.contains_key(*n)) {
            problems.push(format!("module {name} does not exist"));
        }
        for (name, deps) in &declared {
            for d in deps.iter().filter(|d| !real.contains_key(*d)) {
                problems.push(format!("{name} -> {d}: module {d} does not exist"));
            }
        }
        for (name, deps) in &real {
            let Some(said) = declared.get(name) else {
                problems.push(format!("module {name} is not listed"));
                continue;
            };
            for d in deps.difference(said) {
                problems.push(format!("{name} -> {d} is not declared"));
            }
        }
        if !problems.is_empty() {
            wrong.push(format!(
                "### {krate}: {}; the code implies:\n{}",
                problems.join("; "),
                render(&real)
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md, *Who calls whom*:\n{}",
        wrong.join("\n\n")
    );
}

#[test]
fn imports_are_read_from_paths_not_comments() {
    let code = code_of(
        "use crate::{alpha, beta::gamma};\n\
         // crate::commented\n\
         fn f() { crate::delta::run(); super::super::epsilon::x(); }",
    );
    assert_eq!(after(&code, "crate::"), ["alpha", "beta", "delta"]);
    assert_eq!(after(&code, "super::super::"), ["epsilon"]);
    let src = Path::new("/s/src");
    assert_eq!(
        module_path(src, Path::new("/s/src/a/b.rs")),
        Some(vec!["a".into(), "b".into()])
    );
    assert_eq!(
        module_path(src, Path::new("/s/src/a/mod.rs")),
        Some(vec!["a".into()])
    );
    assert_eq!(module_path(src, Path::new("/s/src/lib.rs")), None);
    assert_eq!(module_path(src, Path::new("/s/src/bin/x.rs")), None);
}
