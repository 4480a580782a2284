//! No two Rust source files of a crate import each other, directly or round a longer circle
//! (ARCHITECTURE.md, "house rules"). A circle means neither file can be read, changed or tested
//! without the other; it usually hides a piece that both need and that wants a file of its own.
//!
//! The walk is deliberately simple, at the level of module files:
//! - the module tree comes from the `mod name;` declarations, starting at each crate root
//!   (`src/lib.rs`, and `src/main.rs` for a binary, whose modules form a crate of their own);
//! - a file depends on the module a path names: `use` statements (brace trees expanded) and any
//!   `crate::…`, `super::…`, `self::…` path in its code (comments are skipped, so a doc link is
//!   not a dependency); a path ends at the deepest module it names, and a name that module
//!   re-exports (`pub use x::Name`) is followed to where it comes from;
//! - a crate root is a table of contents: its re-exports are followed, not counted as imports;
//! - code after an inline `mod name {` (in practice the `#[cfg(test)] mod tests {` at the end of
//!   a file) is one module deeper, so its `super::` is the file itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose sources are checked (the guest also has its own top-level check in
/// `guest/tests/layout.rs`).
const CRATES: &[&str] = &["guest", "host", "cli", "transcripts"];

type ModPath = Vec<String>;

/// One source file: its module path and what its code says.
struct File {
    path: PathBuf,
    is_root: bool,
    paths: Vec<Named>,
}

/// A path a file names, at an inline-module depth, and whether it is a `pub use`.
type Named = (Vec<String>, usize, bool);

/// Module files of one crate root, by module path.
type Tree = BTreeMap<ModPath, File>;

fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let code = match line.find("//") {
            // `"https://…"`: a `//` after an odd number of quotes sits in a string.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Expands a use tree (`a::{b, c::{d, e}}`, whitespace removed) into flat paths.
fn expand(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    if let Some(open) = tree.find('{') {
        let mut path = prefix.to_vec();
        path.extend(tree[..open].split("::").filter(|s| !s.is_empty()).map(String::from));
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..i], &path, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &path, out);
    } else if !tree.is_empty() {
        let mut path = prefix.to_vec();
        let tree = tree.split(" as ").next().unwrap_or(tree);
        path.extend(tree.split("::").filter(|s| !s.is_empty() && *s != "self").map(String::from));
        out.push(path);
    }
}

/// Every path a file's code names, and the child modules it declares (`mod x;`).
fn scan(text: &str) -> (Vec<Named>, Vec<String>) {
    let code = strip_comments(text);
    let (mut paths, mut mods, mut inline) = (Vec::new(), Vec::new(), 0);
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        // `pub use`, `pub(crate) use`, …: a re-export.
        let public = t.starts_with("pub ") || t.starts_with("pub(");
        let t = if public { t.split_once(' ').map_or(t, |(_, rest)| rest) } else { t };
        if let Some(rest) = t.strip_prefix("use ") {
            let mut stmt = rest.to_string();
            while !stmt.contains(';') {
                let Some(next) = lines.next() else { break };
                stmt.push_str(next);
            }
            let tree: String =
                stmt.split(';').next().unwrap_or("").replace(" as ", "\u{1}").split_whitespace().collect();
            let mut found = Vec::new();
            expand(&tree.replace('\u{1}', " as "), &[], &mut found);
            paths.extend(found.into_iter().map(|p| (p, inline, public)));
            continue;
        }
        if let Some(rest) = t.strip_prefix("mod ") {
            let name: String = rest.chars().take_while(|c| ident(*c)).collect();
            if rest[name.len()..].trim_start().starts_with(';') {
                mods.push(name);
            } else {
                inline += 1;
            }
            continue;
        }
        for start in ["crate::", "super::", "self::"] {
            let mut from = 0;
            while let Some(at) = line[from..].find(start).map(|a| a + from) {
                from = at + start.len();
                if line[..at].chars().next_back().is_some_and(ident) {
                    continue;
                }
                let rest = &line[at..];
                let end = rest.find(|c: char| !ident(c) && c != ':').unwrap_or(rest.len());
                let path = rest[..end].split("::").filter(|s| !s.is_empty()).map(String::from).collect();
                paths.push((path, inline, false));
            }
        }
    }
    (paths, mods)
}

/// Reads the module tree below the root file `root` of one crate.
fn tree(root: &Path) -> Tree {
    let mut tree = Tree::new();
    let mut todo = vec![(Vec::new(), root.to_path_buf(), root.parent().expect("src").to_path_buf(), true)];
    while let Some((module, path, dir, is_root)) = todo.pop() {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (paths, mods) = scan(&text);
        for name in mods {
            let mut child = module.clone();
            child.push(name.clone());
            let (flat, nested) = (dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs"));
            let file = if flat.exists() { flat } else { nested };
            todo.push((child, file, dir.join(&name), false));
        }
        tree.insert(module, File { path, is_root, paths });
    }
    tree
}

/// The module file a path names from `module` (at `inline` depth), following re-exports;
/// `None` for a path into another crate or the standard library.
fn resolve(tree: &Tree, module: &[String], inline: usize, path: &[String], hops: usize) -> Option<ModPath> {
    let first = path.first()?;
    let (mut at, mut rest): (ModPath, &[String]) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (module.to_vec(), &path[1..]),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let up = ups.saturating_sub(inline).min(module.len());
            (module[..module.len() - up].to_vec(), &path[ups..])
        }
        _ => (module.to_vec(), path),
    };
    if !["crate", "self", "super"].contains(&first.as_str()) {
        let mut child = module.to_vec();
        child.push(first.clone());
        tree.get(&child)?;
    }
    while let Some((name, tail)) = rest.split_first() {
        let mut child = at.clone();
        child.push(name.clone());
        if tree.contains_key(&child) {
            at = child;
            rest = tail;
            continue;
        }
        // An item of `at`: follow it if `at` re-exports it from elsewhere.
        if hops < 8 {
            let file = &tree[&at];
            for (p, _, public) in &file.paths {
                if *public && p.last() == Some(name) && p.len() > 1 {
                    return resolve(tree, &at, 0, p, hops + 1);
                }
            }
        }
        break;
    }
    Some(at)
}

/// File-level dependencies of one crate root: file -> the files it imports.
fn graph(tree: &Tree) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut graph = BTreeMap::new();
    for (module, file) in tree {
        let deps: &mut BTreeSet<PathBuf> = graph.entry(file.path.clone()).or_default();
        for (path, inline, public) in &file.paths {
            if file.is_root && *public {
                continue;
            }
            if let Some(target) = resolve(tree, module, *inline, path, 0) {
                if &target != module {
                    deps.insert(tree[&target].path.clone());
                }
            }
        }
    }
    graph
}

/// Groups of files that reach each other (each group is one circle or several joined).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    let reach = |from: &PathBuf| {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![from.clone()]);
        while let Some(n) = todo.pop() {
            for d in graph.get(&n).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    todo.push(d.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&PathBuf, BTreeSet<PathBuf>> = graph.keys().map(|n| (n, reach(n))).collect();
    let mut placed = BTreeSet::new();
    let mut groups = Vec::new();
    for (n, r) in &reaches {
        if placed.contains(*n) || !r.contains(*n) {
            continue;
        }
        let group: Vec<PathBuf> = r.iter().filter(|m| reaches[m].contains(*n)).cloned().collect();
        placed.extend(group.iter().cloned());
        groups.push(group);
    }
    groups
}

/// The circles of every crate root under `src`, as readable lines.
fn circles_in(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for root in ["lib.rs", "main.rs"].map(|r| src.join(r)).into_iter().filter(|r| r.exists()) {
        for group in circles(&graph(&tree(&root))) {
            let names: Vec<String> =
                group.iter().map(|p| p.strip_prefix(src).unwrap_or(p).display().to_string()).collect();
            found.push(format!("{}: {}", src.display(), names.join(" <-> ")));
        }
    }
    found
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

#[test]
fn no_two_source_files_of_a_crate_import_each_other() {
    let mut found = Vec::new();
    for krate in CRATES {
        let src = root().join(krate).join("src");
        let has_root = src.join("lib.rs").exists() || src.join("main.rs").exists();
        assert!(has_root, "{} has neither src/lib.rs nor src/main.rs", src.display());
        found.extend(circles_in(&src));
    }
    assert!(found.is_empty(), "import circles (move the shared piece into a file both use):\n{}", found.join("\n"));
}

/// A scratch crate in a fresh directory under the target dir.
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("imports").join(name).join("src");
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

#[test]
fn the_walk_finds_a_planted_circle_through_a_reexport_and_a_longer_loop() {
    let src = scratch(
        "planted",
        &[
            ("lib.rs", "mod a;\nmod b;\npub mod c;\npub use c::Thing;\n"),
            ("a.rs", "use crate::b::B;\npub struct A;\n"),
            // `crate::Thing` is c's, re-exported by the root: b -> c.
            ("b.rs", "use crate::{Thing, other::X as Y};\npub struct B;\n"),
            ("c/mod.rs", "mod d;\npub struct Thing;\nfn f() { let _ = super::a::A; }\n"),
            ("c/d.rs", "pub struct D;\n"),
        ],
    );
    let found = circles_in(&src);
    assert_eq!(found.len(), 1, "{found:?}");
    for file in ["a.rs", "b.rs", "c/mod.rs"] {
        assert!(found[0].contains(file), "{file} missing from {found:?}");
    }
}

#[test]
fn the_walk_allows_a_child_using_its_parent_tests_and_doc_links() {
    let src = scratch(
        "clean",
        &[
            ("lib.rs", "pub mod a;\nmod b;\npub use a::A;\n"),
            // A doc link and a test module's `super::*` are not imports.
            (
                "a/mod.rs",
                "//! See [`crate::b`].\nmod child;\npub struct A;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
            ),
            ("a/child.rs", "use super::A;\n"),
            ("b.rs", "use crate::A;\n"),
        ],
    );
    assert_eq!(circles_in(&src), Vec::<String>::new());
}
