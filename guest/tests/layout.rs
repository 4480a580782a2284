//! The house shows its rooms: `src/lib.rs` links every detector and budget file, no source
//! file is over 400 lines, and no two top-level modules import each other (directly or round a
//! longer circle). These are the properties a newcomer relies on to find their way.

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

/// The top-level module a file belongs to (`tool_loop` for `src/tool_loop/ping_pong.rs`).
fn top_module(file: &Path) -> String {
    let rel = file.strip_prefix(src()).expect("under src");
    let first = rel.components().next().expect("a path").as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

/// The top-level modules a file's code names as `crate::<module>` (comments are skipped, so a
/// doc link is not a dependency).
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn no_source_file_is_over_400_lines() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).expect("readable").lines().count();
            (n > 400).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these files: {long:?}");
}

#[test]
fn top_level_modules_import_each_other_without_circles() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = top_module(f);
        if from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("readable");
        let deps = graph.entry(from.clone()).or_default();
        deps.extend(imports(&text).into_iter().filter(|d| *d != from));
    }
    // Depth-first search for a back edge; the circle found is printed.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut circle = path[i..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for dep in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(dep, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(circle) = visit(node, &graph, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn lib_rs_links_every_detector_and_budget_file() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    for module in [
        "tool_loop::openclaw::unknown_tool",
        "tool_loop::openclaw::circuit_breaker",
        "tool_loop::openclaw::known_poll",
        "tool_loop::openclaw::ping_pong",
        "tool_loop::openclaw::generic_repeat",
        "tool_loop::openclaw::argument_churn",
        "tool_loop::openclaw::post_compaction",
        "tool_loop::openclaw::recovery",
        "bot_loop::pair",
        "bot_loop::burst",
        "group",
    ] {
        assert!(lib.contains(&format!("[`{module}`]")), "src/lib.rs does not link {module}");
        let file = src().join(format!("{}.rs", module.replace("::", "/")));
        let dir = src().join(module.replace("::", "/")).join("mod.rs");
        assert!(file.exists() || dir.exists(), "{module} has no file of its own");
    }
}

/// The files of one family that hold a detector: every `.rs` file in its folder with a `pub fn
/// check(` (the helpers beside them have none).
fn detector_files(family: &str) -> Vec<(String, String)> {
    let dir = src().join("tool_loop").join(family);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the family's folder") {
        let path = entry.expect("a directory entry").path();
        let text = std::fs::read_to_string(&path).expect("readable");
        let name = path.file_stem().expect("a file name").to_string_lossy().to_string();
        if name != "mod" && text.contains("pub fn check(") {
            found.push((name, text));
        }
    }
    found.sort();
    found
}

#[test]
fn every_detector_on_disk_is_in_the_map_with_the_shape_of_its_family() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let shapes = [
        ("openclaw", "pub fn check(scope: &Scope<'_>, s: &LoopSettings) -> Option<Finding>"),
        ("beyond", "pub fn check(look: &Look<'_>"),
    ];
    for (family, shape) in shapes {
        let files = detector_files(family);
        assert!(files.len() >= 4, "{family}: only {} detector files found", files.len());
        for (name, text) in files {
            let module = format!("tool_loop::{family}::{name}");
            assert!(lib.contains(&format!("[`{module}`]")), "src/lib.rs's map does not list {module}");
            assert!(text.contains(shape), "{module}: its check is not `{shape}...`");
        }
    }
    // The ladder has no `check` (it acts on the verdict), but it is a detector all the same.
    assert!(lib.contains("[`tool_loop::beyond::ladder`]"));
}

#[test]
fn the_import_scanner_sees_code_and_skips_comments() {
    let text = "use crate::json::Json; // crate::store\n/// [`crate::replay`]\nlet x = crate::js::js_trim(s);";
    assert_eq!(imports(text), BTreeSet::from(["js".to_string(), "json".to_string()]));
}
