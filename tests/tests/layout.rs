//! No source file of the project is over 400 lines (a house rule: one concept per file).
//! `guest/tests/layout.rs` checks the guest's `src/` together with its map and import circles;
//! this walks the whole project (the guest's tests and examples, every other crate, package,
//! test, script and example), so that a file that grows past the rule fails a test instead of
//! waiting for a reader to notice.

use std::path::{Path, PathBuf};

/// Longest a source file may be.
const MAX_LINES: usize = 400;

/// Source files by extension: Rust, JavaScript, Python, shell, WIT.
const SOURCE: &[&str] = &["rs", "js", "mjs", "cjs", "ts", "py", "sh", "wit"];

/// Directories that hold no hand-written source: build output, installed dependencies, jco's
/// generated bindings, virtual environments, VCS data, the OpenClaw package the tests install.
const SKIP: &[&str] = &["target", "node_modules", "generated", ".venv", "venv", ".git", "dist", "__pycache__"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !SKIP.contains(&name.as_str()) && !name.starts_with('.') {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| SOURCE.iter().any(|s| e == *s)) {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_of_the_project_is_over_400_lines() {
    let mut files = Vec::new();
    for top in ["host", "transcripts", "packages", "tests", "scripts", "examples", "fuzz", "wit", "guest"] {
        sources(&root().join(top), &mut files);
    }
    assert!(files.len() > 100, "the walk found only {} source files: is the root right?", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).ok()?.lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", f.strip_prefix(root()).unwrap_or(f).display()))
        })
        .collect();
    assert!(long.is_empty(), "split these files (at most {MAX_LINES} lines each): {long:?}");
}
