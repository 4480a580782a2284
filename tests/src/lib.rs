//! Shared utilities for loopguard's cross-implementation tests.
//!
//! Why a library: the same scenario traces are checked through the host library, the CLI
//! (`cli/tests/`, which alone can see the `loopguard` binary) and the wasmtime CLI; they must
//! find the scenarios, the built component and the tools the same way, and fail the same way:
//! printing the command, status, stdout and stderr.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub mod hostile;
pub mod wave;
pub mod workload;

pub use hostile::hostile_wasm;

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// The one built policy component every test and script uses.
///
/// `host/build.rs` builds it whenever `loopguard-host` is built, which every test crate that calls
/// this depends on; the assertion names the command to build it by hand.
pub fn policy_wasm() -> PathBuf {
    let wasm = workspace_root().join("target/policy/wasm32-wasip2/release/loopguard_policy.wasm");
    assert!(
        wasm.is_file(),
        "{} is missing; build it with `cargo build -p loopguard-policy --release --target wasm32-wasip2 \
         --target-dir target/policy` (building loopguard-host does this)",
        wasm.display()
    );
    wasm
}

/// One golden trace: `examples/traces/<name>/` with a config, a trace and the expected decisions.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The directory name.
    pub name: String,
    /// `config.json5` (or `config.json`).
    pub config: PathBuf,
    /// `trace.jsonl`.
    pub trace: PathBuf,
    /// `expected.jsonl`.
    pub expected: PathBuf,
}

impl Scenario {
    /// Reads a file of the scenario, panicking with its path.
    pub fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }
}

/// Every complete scenario under `examples/traces/`, sorted by name. Directories that lack one
/// of the three files are skipped (they are being written); at least `quickstart` must exist.
pub fn scenarios() -> Vec<Scenario> {
    let root = workspace_root().join("examples/traces");
    let mut found = Vec::new();
    let entries = std::fs::read_dir(&root).unwrap_or_else(|e| panic!("cannot list {}: {e}", root.display()));
    for entry in entries.flatten() {
        let dir = entry.path();
        let config = ["config.json5", "config.json"].iter().map(|f| dir.join(f)).find(|p| p.is_file());
        let (trace, expected) = (dir.join("trace.jsonl"), dir.join("expected.jsonl"));
        if let (Some(config), true, true) = (config, trace.is_file(), expected.is_file()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            found.push(Scenario { name, config, trace, expected });
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(found.iter().any(|s| s.name == "quickstart"), "examples/traces/quickstart is missing");
    found
}

/// Compares decisions line by line and returns a readable report of the first differences.
pub fn diff_decisions(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let (e, a): (Vec<_>, Vec<_>) = (expected.lines().collect(), actual.lines().collect());
    let mut report = format!("expected {} lines, got {}\n", e.len(), a.len());
    let mut shown = 0;
    for i in 0..e.len().max(a.len()) {
        let (el, al) = (e.get(i).copied(), a.get(i).copied());
        if el != al && shown < 8 {
            let _ = writeln!(
                report,
                "output line {}:\n  expected: {}\n  actual:   {}",
                i + 1,
                el.unwrap_or("<none>"),
                al.unwrap_or("<none>")
            );
            shown += 1;
        }
    }
    if shown == 0 {
        report.push_str("(lines are equal; the difference is in line endings or a trailing newline)\n");
    }
    Some(report)
}

/// Looks for an executable on `PATH`, then in the project venv and `~/.cargo/bin` (where
/// `scripts/setup.sh` installs), so `cargo test` works without the script's `PATH`.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.push(workspace_root().join(".venv/bin"));
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// Like [`find_tool`], but a missing tool fails the test with the command that installs it.
pub fn require_tool(name: &str) -> PathBuf {
    find_tool(name).unwrap_or_else(|| {
        panic!("`{name}` is not installed (looked on PATH, .venv/bin and ~/.cargo/bin); run `bash scripts/setup.sh`, which CI runs too")
    })
}

/// A scratch directory under `target/test-tmp/`, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh empty directory whose name starts with `label`.
    pub fn new(label: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = workspace_root().join("target/test-tmp").join(format!("{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `contents` to `name` inside the directory and returns the file's path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How long a command may run before it is killed and its test fails. Far past any normal run
/// (seconds, even on a loaded machine): only a hang trips it, and the failure names the command
/// instead of leaving the suite waiting.
pub const HANG_LIMIT: Duration = Duration::from_secs(300);

/// Reads `pipe` to its end on a thread of its own (both pipes drain while the child runs).
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// A finished command with everything needed to explain a failure.
pub struct Run {
    /// The command line, for messages.
    pub command: String,
    /// The raw output.
    pub output: Output,
}

impl Run {
    /// Runs `program args…` with `stdin` (or none) and captures everything; a command still
    /// running after [`HANG_LIMIT`] is killed and fails the test.
    pub fn new<I, S>(program: &Path, args: I, stdin: Option<&[u8]>) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).env("RUST_BACKTRACE", "1");
        let command = format!("{cmd:?}");
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run {command}: {e}"));
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            let input = input.to_vec();
            // A writer thread, so that a child that answers before reading all input cannot
            // deadlock us on a full pipe.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        let stdout = drain(child.stdout.take().expect("stdout is piped"));
        let stderr = drain(child.stderr.take().expect("stderr is piped"));
        let killed_at = Instant::now() + HANG_LIMIT;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < killed_at => std::thread::sleep(Duration::from_millis(5)),
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("{command} was still running after {HANG_LIMIT:?}: killed");
                }
                Err(e) => panic!("cannot wait for {command}: {e}"),
            }
        };
        let output =
            Output { status, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() };
        Run { command, output }
    }

    /// Stdout as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// Stderr as text.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Everything about the run, for a failure message.
    pub fn describe(&self) -> String {
        let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
        let out = self.stdout();
        let out = if out.len() > 4000 {
            format!("{}… ({} bytes)", &out[..out.floor_char_boundary(4000)], out.len())
        } else {
            out
        };
        format!(
            "\n--- command: {}\n--- cwd: {cwd}\n--- status: {}\n--- stdout:\n{out}\n--- stderr:\n{}\n---",
            self.command,
            self.output.status,
            self.stderr()
        )
    }

    /// Panics (with everything) unless the command succeeded.
    pub fn success(self) -> Self {
        assert!(self.output.status.success(), "command failed{}", self.describe());
        self
    }

    /// Panics (with everything) unless the command exited with `code`.
    pub fn code(self, code: i32) -> Self {
        assert_eq!(self.output.status.code(), Some(code), "unexpected exit status{}", self.describe());
        self
    }

    /// Panics (with `why` and everything) unless `check` holds.
    pub fn check(self, check: bool, why: &str) -> Self {
        assert!(check, "{why}{}", self.describe());
        self
    }
}
