//! No two source files of the crate import each other, directly or round a longer circle
//! (issue 48: four files of `src/` once did, so none of them could be read or changed alone).
//!
//! A file imports the files its code names: `crate::a::b::…` and `super::…` paths (the longest
//! prefix that is a file: `a/b.rs`, `a/b/mod.rs` or `a.rs`), the items of a `{…}` group after
//! them, and `use child::…` of its own child modules. Comments and the `#[cfg(test)]` tail are
//! skipped; `lib.rs`, the table of contents, is not a node.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `read/sqlite/list.rs` → `["read", "sqlite", "list"]`; `read/mod.rs` → `["read"]`.
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file.trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The file of the longest prefix of `path` that is one.
fn resolve(path: &[String], files: &BTreeSet<String>) -> Option<String> {
    (1..=path.len()).rev().find_map(|n| {
        let base = path[..n].join("/");
        [format!("{base}.rs"), format!("{base}/mod.rs")].into_iter().find(|f| files.contains(f))
    })
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The files `file` (its text `text`) imports.
fn imports(file: &str, text: &str, files: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let here = module_of(file);
    let mut found = BTreeSet::new();
    for (root, base) in [("crate::", Vec::new()), ("super::", here[..here.len().saturating_sub(1)].to_vec())] {
        let mut rest = code;
        while let Some(at) = rest.find(root) {
            let before = rest[..at].chars().last();
            rest = &rest[at + root.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut path = base.clone();
            let mut tail = rest;
            while !tail.starts_with('{') && !ident(tail).is_empty() {
                path.push(ident(tail).to_string());
                tail = &tail[ident(tail).len()..];
                match tail.strip_prefix("::") {
                    Some(t) => tail = t,
                    None => break,
                }
            }
            let mut targets = vec![path.clone()];
            if let Some(group) = tail.strip_prefix('{').and_then(|g| g.split('}').next()) {
                for item in group.split(',').map(|i| ident(i.trim())) {
                    if item.starts_with(|c: char| c.is_ascii_lowercase()) {
                        targets.push([path.clone(), vec![item.to_string()]].concat());
                    }
                }
            }
            found.extend(targets.iter().filter_map(|t| resolve(t, files)));
        }
    }
    for line in code.lines() {
        let line = line.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        if let Some(child) = line.strip_prefix("use ").map(ident) {
            if !["crate", "super", "self", "std"].contains(&child) {
                found.extend(resolve(&[here.clone(), vec![child.to_string()]].concat(), files));
            }
        }
    }
    found.remove(file);
    found
}

fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            return Some([&path[i..], &[node.to_string()]].concat());
        }
        if !done.insert(node.to_string()) {
            return None;
        }
        path.push(node.to_string());
        let found = graph.get(node).into_iter().flatten().find_map(|dep| visit(dep, graph, path, done));
        path.pop();
        found
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_source_files_import_each_other() {
    let mut paths = Vec::new();
    rust_files(&src(), &mut paths);
    let name = |p: &Path| p.strip_prefix(src()).expect("under src").to_string_lossy().replace('\\', "/");
    let files: BTreeSet<String> = paths.iter().map(|p| name(p)).collect();
    let mut graph = BTreeMap::new();
    for path in &paths {
        let file = name(path);
        if file != "lib.rs" {
            let text = std::fs::read_to_string(path).expect("readable");
            graph.insert(file.clone(), imports(&file, &text, &files));
        }
    }
    assert!(graph["read/mod.rs"].contains("read/jsonl.rs"), "the walk must see imports: {graph:?}");
    if let Some(c) = circle(&graph) {
        panic!("import circle: {}", c.join(" -> "));
    }
}

#[test]
fn a_circle_is_found() {
    let files: BTreeSet<String> = ["a/mod.rs", "a/b.rs"].map(String::from).into();
    let graph = BTreeMap::from([
        ("a/mod.rs".to_string(), imports("a/mod.rs", "mod b;\nuse b::X;\n", &files)),
        ("a/b.rs".to_string(), imports("a/b.rs", "use super::{Y, Z};\n", &files)),
    ]);
    assert_eq!(circle(&graph), Some(vec!["a/b.rs".into(), "a/mod.rs".into(), "a/b.rs".into()]));
}
