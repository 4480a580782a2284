//! Builds the policy component so that the `loopguard` binary and library carry a default policy.
//!
//! Where the policy comes from, in this order:
//! - `LOOPGUARD_POLICY_WASM=<file>`: that file (a policy built elsewhere);
//! - inside this repository: `scripts/build-policy.sh`, the reproducible build every script and
//!   test reads (`target/policy/wasm32-wasip2/release/loopguard_policy.wasm`). Why a nested cargo:
//!   the guest is a `wasm32-wasip2` component and the host is native; cargo cannot build one
//!   package for two targets in one invocation, and the nested build uses its own target dir so
//!   that it never waits on the lock the outer cargo holds;
//! - in the published crate (no `../guest`): `policy/loopguard_policy.wasm`, shipped in the
//!   package by `scripts/dist.sh`.
//!
//! `LOOPGUARD_SKIP_GUEST=1` embeds an empty policy instead (for working on the host while the
//! guest does not build); `Policy::embedded()` then fails with a load error. Never set it in CI.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.parent().expect("host/ lives inside the workspace").to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    for watched in ["guest/src", "guest/Cargo.toml", "wit", "Cargo.lock", "scripts/build-policy.sh"] {
        println!("cargo:rerun-if-changed={}", workspace.join(watched).display());
    }
    println!("cargo:rerun-if-changed={}", manifest_dir.join("policy").display());
    println!("cargo:rerun-if-env-changed=LOOPGUARD_SKIP_GUEST");
    println!("cargo:rerun-if-env-changed=LOOPGUARD_POLICY_WASM");

    emit_wit_version(&manifest_dir.join("wit").join("policy.wit"));

    let embedded = out_dir.join("loopguard_policy.wasm");
    if env::var_os("LOOPGUARD_SKIP_GUEST").is_some_and(|v| v == "1") {
        println!("cargo:warning=LOOPGUARD_SKIP_GUEST=1: embedding an EMPTY policy; the binary cannot replay");
        std::fs::write(&embedded, b"").expect("write empty policy");
        return;
    }

    if let Some(file) = env::var_os("LOOPGUARD_POLICY_WASM") {
        let file = PathBuf::from(file);
        copy(&file, &embedded, "LOOPGUARD_POLICY_WASM names a file that cannot be read");
        return;
    }
    let script = workspace.join("scripts").join("build-policy.sh");
    if !workspace.join("guest").join("Cargo.toml").is_file() || !script.is_file() {
        // The published crate: the policy shipped inside it.
        let shipped = manifest_dir.join("policy").join("loopguard_policy.wasm");
        copy(&shipped, &embedded, "this package should ship policy/loopguard_policy.wasm; reinstall it");
        return;
    }
    let target_dir = workspace.join("target").join("policy");
    let wasm = target_dir.join("wasm32-wasip2").join("release").join("loopguard_policy.wasm");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new("bash");
    cmd.current_dir(&workspace).arg(&script).arg(&target_dir);
    scrub_env(&mut cmd);
    cmd.env("CARGO", &cargo);

    let by_hand = format!("bash scripts/build-policy.sh {}", target_dir.display());
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("could not run cargo for the policy component ({e}); run by hand: {by_hand}"));
    if !status.success() {
        panic!(
            "building the policy component failed ({status}); run by hand to see why: {by_hand} \
             (rustup target add wasm32-wasip2 if the target is missing)"
        );
    }
    copy(&wasm, &embedded, &format!("the policy build succeeded but its output is missing; run by hand: {by_hand}"));
}

/// Exposes the WIT package version as `LOOPGUARD_WIT_VERSION`, so that the version the host
/// checks at load is always the one its bindings were generated from.
fn emit_wit_version(wit: &Path) {
    let text = std::fs::read_to_string(wit).unwrap_or_else(|e| panic!("cannot read {}: {e}", wit.display()));
    let version = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("package loopguard:policy@"))
        .and_then(|rest| rest.strip_suffix(';'))
        .unwrap_or_else(|| panic!("{} has no `package loopguard:policy@<version>;` line", wit.display()));
    println!("cargo:rustc-env=LOOPGUARD_WIT_VERSION={version}");
}

/// Removes what the outer cargo set for this build script and would mislead the nested build:
/// wrappers (clippy runs through `RUSTC_WORKSPACE_WRAPPER`), host rustflags (a `-C target-cpu`
/// is wrong for wasm), the outer target dir, and the per-package `CARGO_*` variables.
fn scrub_env(cmd: &mut Command) {
    const EXACT: &[&str] = &[
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_ENCODED_RUSTDOCFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_MAKEFLAGS",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_CRATE_NAME",
        "CARGO_LLVM_COV",
        "CLIPPY_ARGS",
        "OUT_DIR",
        "TARGET",
        "HOST",
        "PROFILE",
        "OPT_LEVEL",
        "DEBUG",
        "NUM_JOBS",
    ];
    const PREFIXES: &[&str] =
        &["CARGO_PKG_", "CARGO_CFG_", "CARGO_FEATURE_", "CARGO_MANIFEST_", "CARGO_BIN_", "__CARGO", "CARGO_LLVM_COV_"];
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if EXACT.contains(&key) || PREFIXES.iter().any(|p| key.starts_with(p)) {
            cmd.env_remove(key);
        }
    }
}

fn copy(from: &Path, to: &Path, hint: &str) {
    if let Err(e) = std::fs::copy(from, to) {
        panic!("cannot read the policy {} ({e}): {hint}", from.display());
    }
}
