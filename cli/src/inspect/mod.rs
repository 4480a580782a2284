//! `loopguard inspect FILE.wasm` and `loopguard version`: what a policy component says about
//! itself, without deciding anything.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use loopguard_host::{Policy, HOST_VERSION};

use crate::options::PolicyArgs;

/// `loopguard inspect`: size, digest, versions and imports of a component.
pub fn inspect(file: &Path) -> anyhow::Result<()> {
    // A cache that cannot be used only costs time.
    let _ = loopguard_host::use_default_compile_cache();
    let inspection = Policy::inspect_file(file)?;
    std::io::stdout().write_all(inspection.to_string().as_bytes()).context("writing to stdout")
}

/// `loopguard version`: the CLI's, the policy's (embedded or `--policy`) and the interface's.
pub fn version(policy: Option<PathBuf>) -> anyhow::Result<()> {
    let mut instance = PolicyArgs { policy, ..PolicyArgs::default() }.policy()?.instantiate()?;
    let text = format!(
        "loopguard: {HOST_VERSION}\npolicy: {}\ninterface: {}\n",
        instance.version()?,
        instance.interface_version()?
    );
    std::io::stdout().write_all(text.as_bytes()).context("writing to stdout")
}
