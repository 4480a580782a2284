//! Compiled policies kept on disk for short-lived processes (the CLI, the Python package, tests).
//!
//! Why not wasmtime's own cache (`Config::cache`): it stores each compiled component
//! zstd-compressed and keys it by a sha256 of the component's bytes, so every start paid a sha256
//! of the ~1 MB policy, a decompression of its compiled code into fresh memory and a copy of that
//! into executable memory: ~10 ms of `loopguard replay`'s start-up (perf: zstd, page faults and
//! memcpy; 96 M instructions). Here the compiled form is written uncompressed, once, under the
//! policy's blake3 digest (already computed for the pin and the report), and mapped straight from
//! the file (`Component::deserialize_file`): only the pages that run are read.
//!
//! Bounded: at most [`MAX_FILES`] compiled policies; writing one more removes the least recently
//! written.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use wasmtime::component::Component;
use wasmtime::Engine;

/// Where compiled policies go, once set ([`use_dir`]).
static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Compiled policies kept at most (each a few MB).
pub const MAX_FILES: usize = 16;

/// Keeps compiled policies in `dir` from now on. Fails if `dir` cannot be made, or if another
/// directory was set before (one per process).
pub fn use_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    if DIR.get_or_init(|| dir.to_path_buf()) != dir {
        return Err(std::io::Error::other("another compile cache directory is already in use"));
    }
    Ok(())
}

/// The component for `bytes` (whose blake3 digest is `digest`): mapped from the cache if it holds
/// it, else compiled (and written to the cache, if there is one; a cache that cannot be written
/// only costs the next process the compilation).
pub fn component(engine: &Engine, bytes: &[u8], digest: &blake3::Hash) -> wasmtime::Result<Component> {
    match DIR.get() {
        Some(dir) => cached(dir, engine, bytes, digest),
        None => Component::new(engine, bytes),
    }
}

/// [`component`] with the cache in `dir`.
fn cached(dir: &Path, engine: &Engine, bytes: &[u8], digest: &blake3::Hash) -> wasmtime::Result<Component> {
    let file = dir.join(file_name(engine, digest));
    // SAFETY: `deserialize_file` runs the machine code in the file, so the file must have been
    // written by `Engine::precompile_component` and not changed since. It is: only this module
    // writes the cache directory (in a private temporary file, renamed into place when whole), and
    // the directory is the user's own, trusted as wasmtime's own cache directory is. wasmtime
    // checks the file's header (its version, the target, the engine's settings) and refuses a
    // file made for another engine, which is then compiled again below.
    if let Ok(component) = unsafe { Component::deserialize_file(engine, &file) } {
        return Ok(component);
    }
    let compiled = engine.precompile_component(bytes)?;
    let _ = write(dir, &file, &compiled);
    // SAFETY: the bytes were made by `precompile_component` of this engine just above.
    unsafe { Component::deserialize(engine, &compiled) }
}

/// `<digest>-<engine>.cwasm`: the engine part tells apart the settings and wasmtime versions
/// whose compiled code differs (`Engine::precompile_compatibility_hash`).
fn file_name(engine: &Engine, digest: &blake3::Hash) -> String {
    // SipHash with fixed keys: the same name in every process of the same build.
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{}-{:016x}.cwasm", digest.to_hex(), hasher.finish())
}

/// Writes `compiled` to `file` whole or not at all, then removes the oldest compiled policies
/// past [`MAX_FILES`].
fn write(dir: &Path, file: &Path, compiled: &[u8]) -> std::io::Result<()> {
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, compiled)?;
    std::fs::rename(&tmp, file).inspect_err(|_| drop(std::fs::remove_file(&tmp)))?;
    let mut kept: Vec<(std::time::SystemTime, PathBuf)> = compiled_files(dir)?
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    kept.sort();
    let extra = kept.len().saturating_sub(MAX_FILES);
    for (_, old) in kept.into_iter().take(extra) {
        let _ = std::fs::remove_file(old);
    }
    Ok(())
}

/// The compiled policies in `dir` (the `.cwasm` files; not the temporary ones being written).
fn compiled_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let paths = std::fs::read_dir(dir)?.filter_map(|e| e.ok()).map(|e| e.path());
    Ok(paths.filter(|p| p.extension().is_some_and(|x| x == "cwasm")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component: the preamble alone.
    const EMPTY: &[u8] = b"\0asm\x0d\0\x01\0";

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("loopguard-cache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_compiled_policy_is_written_once_and_mapped_after() {
        let (dir, engine, digest) = (scratch("once"), Engine::default(), blake3::hash(EMPTY));
        cached(&dir, &engine, EMPTY, &digest).unwrap();
        let files = compiled_files(&dir).unwrap();
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].to_string_lossy().contains(digest.to_hex().as_str()));
        let written = std::fs::metadata(&files[0]).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        cached(&dir, &engine, EMPTY, &digest).unwrap();
        assert_eq!(std::fs::metadata(&files[0]).unwrap().modified().unwrap(), written, "mapped, not written again");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_corrupt_compiled_file_is_compiled_again_and_replaced() {
        let (dir, engine, digest) = (scratch("corrupt"), Engine::default(), blake3::hash(EMPTY));
        let file = dir.join(file_name(&engine, &digest));
        std::fs::write(&file, b"not machine code").unwrap();
        cached(&dir, &engine, EMPTY, &digest).unwrap();
        let written = std::fs::read(&file).unwrap();
        assert!(written.starts_with(b"\x7fELF"), "replaced by a compiled component");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn past_the_cap_the_oldest_compiled_files_go() {
        let (dir, engine, digest) = (scratch("cap"), Engine::default(), blake3::hash(EMPTY));
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for i in 0..MAX_FILES + 3 {
            let f = std::fs::File::create(dir.join(format!("old-{i:02}.cwasm"))).unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i as u64)).unwrap();
        }
        cached(&dir, &engine, EMPTY, &digest).unwrap();
        let files = compiled_files(&dir).unwrap();
        assert_eq!(files.len(), MAX_FILES);
        assert!(files.contains(&dir.join(file_name(&engine, &digest))), "the new one stays");
        let gone = (0..MAX_FILES + 3).filter(|i| !files.contains(&dir.join(format!("old-{i:02}.cwasm"))));
        assert_eq!(gone.collect::<Vec<_>>(), [0, 1, 2, 3], "the four oldest go");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
