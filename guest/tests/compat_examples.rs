//! Every example trace under the `openclaw-2026.9` profile: replayed with the example's config plus
//! `loopguard.compat: "openclaw-2026.9"`, the decisions must be `expected-openclaw-2026.9.jsonl`,
//! which is the real openclaw 2026.9.6 package's output (tests/oracle/examples.mjs runs the
//! driver to write it). An example without that file says in its README why the package cannot
//! run it.

use std::path::{Path, PathBuf};

use loopguard_policy::replay::replay;
use serde_json::Value;

const EXPECTED: &str = "expected-openclaw-2026.9.jsonl";

fn examples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/traces");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("examples/traces is readable")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("trace.jsonl").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "the example traces are missing");
    dirs
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn config_with_compat(dir: &Path) -> String {
    let file = ["config.json5", "config.json"].iter().map(|f| dir.join(f)).find(|p| p.is_file()).expect("a config");
    let mut doc: Value = json5::from_str(&read(&file)).expect("a valid config");
    let obj = doc.as_object_mut().expect("an object");
    let lg = obj.entry("loopguard").or_insert_with(|| Value::Object(Default::default()));
    lg.as_object_mut().expect("an object").insert("compat".into(), "openclaw-2026.9".into());
    doc.to_string()
}

#[test]
fn every_example_replays_like_openclaw_2026_9_6_or_says_why_it_cannot() {
    let mut compared = 0;
    for dir in examples() {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let expected = dir.join(EXPECTED);
        if !expected.is_file() {
            let readme = read(&dir.join("README.md"));
            assert!(readme.contains(EXPECTED), "{name}: no {EXPECTED}, and its README does not say why");
            continue;
        }
        let got = replay(&config_with_compat(&dir), &read(&dir.join("trace.jsonl")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = read(&expected);
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "{name}: decision {} differs from openclaw 2026.9.6", i + 1);
        }
        assert_eq!(got.lines().count(), want.lines().count(), "{name}: number of decisions");
        compared += 1;
    }
    assert!(compared >= 8, "only {compared} examples were compared");
}
