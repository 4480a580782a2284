//! `-` (stdin) and pipes among the paths of `loopguard transcripts`: copied to a file first.
//!
//! Why a copy: discovery reads a file's first lines to tell what it is, and a reader goes over a
//! session's file twice (its tree, then its records), but stdin and a pipe (`<(cat x.jsonl)` is
//! `/dev/fd/63`) can be read once. Each is copied whole into a private temp directory, under a
//! name made from the argument (`stdin`, `dev-fd-63`) so that errors and the report's `file`
//! say which input they mean; its content tells its format (`loopguard-transcripts`, `sniff`).
//! The directory goes when the run ends.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The paths to read, with stdin and pipes replaced by their copies.
pub struct Spooled {
    /// The paths, in the order given.
    pub paths: Vec<PathBuf>,
    dir: Option<PathBuf>,
}

impl Spooled {
    /// Copies `-` and every path that is neither a file nor a directory (a pipe, a device).
    pub fn new(paths: &[PathBuf]) -> anyhow::Result<Spooled> {
        let mut spooled = Spooled { paths: Vec::with_capacity(paths.len()), dir: None };
        for path in paths {
            let stdin = path.as_os_str() == "-";
            // A path that cannot be read stays as given: discovery names it with its error.
            let pipe = !stdin && std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
            if !stdin && !pipe {
                spooled.paths.push(path.clone());
                continue;
            }
            let name = if stdin { "stdin".to_string() } else { copy_name(path) };
            let dir = match &spooled.dir {
                Some(dir) => dir.clone(),
                None => spooled.dir.insert(private_dir()?).clone(),
            };
            let mut copy = dir.join(&name);
            if copy.exists() {
                copy = dir.join(format!("{name}-{}", spooled.paths.len() + 1));
            }
            let what = if stdin { "stdin".to_string() } else { path.display().to_string() };
            let mut out =
                std::fs::File::create(&copy).with_context(|| format!("cannot copy {what} to {}", copy.display()))?;
            let copied = if stdin {
                std::io::copy(&mut std::io::stdin().lock(), &mut out)
            } else {
                std::fs::File::open(path).and_then(|mut input| std::io::copy(&mut input, &mut out))
            };
            copied.with_context(|| format!("cannot read the transcript on {what}"))?;
            spooled.paths.push(copy);
        }
        Ok(spooled)
    }
}

impl Drop for Spooled {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// `/dev/fd/63` → `dev-fd-63`.
fn copy_name(path: &Path) -> String {
    let text = path.to_string_lossy();
    let name: String = text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' }).collect();
    let name = name.trim_matches('-');
    if name.is_empty() {
        "input".to_string()
    } else {
        name.to_string()
    }
}

/// A new directory of this process under the system temp dir (never one that exists already).
fn private_dir() -> anyhow::Result<PathBuf> {
    let base = std::env::temp_dir();
    for n in 0..1000 {
        let dir = base.join(format!("loopguard-transcripts-{}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create a temp directory in {}", base.display())),
        }
    }
    anyhow::bail!("cannot create a temp directory in {}: every name is taken", base.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_named_after_its_argument() {
        assert_eq!(copy_name(Path::new("/dev/fd/63")), "dev-fd-63");
        assert_eq!(copy_name(Path::new("/proc/self/fd/0")), "proc-self-fd-0");
        assert_eq!(copy_name(Path::new("///")), "input");
    }
}
