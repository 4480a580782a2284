//! Prints the trace of every session under the given paths (one JSON Lines trace on stdout,
//! sessions one after another), and the errors on stderr; exits 1 if there were any.
//!
//! ```text
//! cargo run --example to_trace -- ~/.openclaw > trace.jsonl
//! loopguard replay --config config.json trace.jsonl
//! ```
use std::io::Write;

use loopguard_transcripts::{discover, Importer, TerminalProgress};

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let found = discover(&paths);
    let mut failed = !found.errors.is_empty();
    for e in &found.errors {
        eprintln!("error: {e}");
    }
    for s in &found.skipped {
        eprintln!(
            "skipped: {}{}: {}",
            s.file.display(),
            s.session_id.as_deref().map(|id| format!(" ({id})")).unwrap_or_default(),
            s.reason
        );
    }
    let mut importer = Importer::default();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for trace in importer.traces(&found.sessions).with_progress(TerminalProgress::new()) {
        for e in &trace.events {
            if e.event.write_to(&mut out).is_err() {
                return;
            }
        }
        for e in &trace.read.errors {
            eprintln!("error: {e}");
            failed = true;
        }
    }
    let _ = out.flush();
    std::process::exit(i32::from(failed));
}
