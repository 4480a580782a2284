//! Copies the real policy's WIT glue (`guest/src/component.rs`) into `OUT_DIR` with three edits,
//! so that this fixture answers exactly like the real policy except where it misbehaves on
//! purpose: the core gateway becomes `crate::hostile::Gateway`, the stateless `replay` export goes
//! through `crate::hostile::replay`, and the WIT path is relative to this crate.

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let glue = dir.join("../../guest/src/component.rs");
    println!("cargo:rerun-if-changed={}", glue.display());
    println!("cargo:rerun-if-changed=../../guest/src");
    println!("cargo:rerun-if-changed=../../wit");
    let text = std::fs::read_to_string(&glue).unwrap_or_else(|e| panic!("cannot read {}: {e}", glue.display()));
    let mut out: String =
        text.lines().filter(|l| !l.trim_start().starts_with("//!")).map(|l| format!("{l}\n")).collect();
    for (from, to) in [
        ("use crate::gateway::Gateway as Core;", "use crate::hostile::Gateway as Core;"),
        ("crate::replay::replay(", "crate::hostile::replay("),
        ("path: \"../wit\"", "path: \"../../wit\""),
    ] {
        assert!(
            out.contains(from),
            "guest/src/component.rs no longer contains `{from}`; update tests/hostile-policy/build.rs to match it"
        );
        out = out.replace(from, to);
    }
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out_dir.join("component.rs"), out).expect("write OUT_DIR/component.rs");
}
