//! The hostile policy fixture (`tests/hostile-policy/`), built on demand for the sandbox tests.
//!
//! Why build it from the tests: the fixture must follow the real policy's sources (it depends on
//! the guest crate by path), so a stale prebuilt file would test the wrong thing; cargo's own freshness check
//! makes the second build a no-op. All variants share one target dir, so the dependencies are
//! compiled once; a file lock serializes builds across test processes, and each variant's
//! `.wasm` is copied out under its own name before the lock is released.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::{workspace_root, Run};

/// A build of the fixture: `""` (misbehaves on magic sessions only), or one of its features:
/// `major2`, `major0`, `bad-import`, `always-allow`.
pub fn hostile_wasm(feature: &str) -> PathBuf {
    static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(path) = built.get_or_insert_with(HashMap::new).get(feature) {
        return path.clone();
    }
    let root = workspace_root();
    let target = root.join("target/hostile");
    std::fs::create_dir_all(&target).unwrap_or_else(|e| panic!("cannot create {}: {e}", target.display()));
    let lock_path = target.join(".loopguard-tests.lock");
    let lock = std::fs::File::create(&lock_path).unwrap_or_else(|e| panic!("cannot open {}: {e}", lock_path.display()));
    lock.lock().unwrap_or_else(|e| panic!("cannot lock {}: {e}", lock_path.display()));
    let cargo = std::env::var_os("CARGO").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("cargo"));
    let manifest = root.join("tests/hostile-policy/Cargo.toml");
    let mut args = vec![
        "build".to_string(),
        "--release".into(),
        "--quiet".into(),
        "--target".into(),
        "wasm32-wasip2".into(),
        "--manifest-path".into(),
        manifest.display().to_string(),
        "--target-dir".into(),
        target.display().to_string(),
    ];
    if !feature.is_empty() {
        args.extend(["--features".to_string(), feature.to_string()]);
    }
    Run::new(&cargo, &args, None).success();
    let out_dir = root.join("target/hostile-wasm");
    std::fs::create_dir_all(&out_dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", out_dir.display()));
    let name = if feature.is_empty() { "hostile".to_string() } else { format!("hostile-{feature}") };
    let dest = out_dir.join(format!("{name}.wasm"));
    let from = target.join("wasm32-wasip2/release/hostile_policy.wasm");
    std::fs::copy(&from, &dest).unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", from.display(), dest.display()));
    drop(lock);
    built.get_or_insert_with(HashMap::new).insert(feature.to_string(), dest.clone());
    dest
}
