//! One session of a transcript store: read it, replay it on each config's gateway, fold the
//! decisions into its report row.

use std::sync::Arc;

use loopguard_transcripts::{Importer, SessionInfo, SessionRow, SessionStats, SessionTally, SessionTrace};

use crate::report::model::SessionView;
use loopguard_host::Error;
use loopguard_host::SwappableGateway;

/// What a worker hands back for one session.
pub(super) struct SessionDone {
    /// Counts (for the progress bar).
    pub stats: SessionStats,
    /// Error lines, each naming the file, the session and the row or line.
    pub errors: Vec<String>,
    /// The trace (`--trace`) or one report row per config.
    pub body: Body,
}

pub(super) enum Body {
    Trace(Vec<u8>),
    /// One row per config, and (for `loopguard report`) the session's calls and verdicts.
    Rows(Vec<SessionRow>, Option<SessionView>),
}

/// Reads `info` and replays it on every gateway (none: the trace only).
pub(super) fn run(
    importer: &mut Importer,
    info: &Arc<SessionInfo>,
    gateways: &[SwappableGateway],
    trace_only: bool,
    keep_view: bool,
) -> SessionDone {
    let trace = importer.read_trace(info);
    let mut errors: Vec<String> = trace.read.errors.iter().map(ToString::to_string).collect();
    if trace.read.errors_dropped > 0 {
        errors.push(format!(
            "{}: session {}: {} more errors not shown",
            info.file.display(),
            info.session_id,
            trace.read.errors_dropped
        ));
    }
    let body = if trace_only {
        Body::Trace(trace.trace_text().into_bytes())
    } else {
        let (rows, decisions): (Vec<SessionRow>, Vec<String>) =
            gateways.iter().map(|g| row(g, &trace, &mut errors)).unzip();
        let view = keep_view.then(|| SessionView::new(&trace, &rows, &decisions));
        Body::Rows(rows, view)
    };
    SessionDone { stats: trace.read.stats.clone(), errors, body }
}

/// The session's report row under one gateway, and the decision lines it was made from. An event the policy refuses is reported (with
/// the row or line it came from) and left out, and the session replayed without it: one bad
/// record loses nothing else.
fn row(gateway: &SwappableGateway, trace: &SessionTrace, errors: &mut Vec<String>) -> (SessionRow, String) {
    let info = &trace.info;
    let mut lines: Vec<Vec<u8>> = trace
        .events
        .iter()
        .map(|e| {
            let mut line = Vec::new();
            e.event.write_line(&mut line);
            line
        })
        .collect();
    let mut tally = SessionTally::new(info);
    let mut refused = 0u64;
    let decisions = loop {
        let text = String::from_utf8(lines.concat()).unwrap_or_default();
        match gateway.apply_events(&text, 1) {
            Ok(d) => break Some(d),
            Err(e) => {
                let where_ = refused_line(&e).filter(|n| (1..=lines.len()).contains(n));
                let location =
                    where_.map(|n| format!(": {}", trace.events[n - 1].reference.location)).unwrap_or_default();
                let message = format!(
                    "{}: session {}{location}: the policy refused the event: {e}",
                    info.file.display(),
                    info.session_id
                );
                refused += 1;
                // The same refusal under the other config is said once.
                if !errors.contains(&message) {
                    errors.push(message);
                }
                match where_ {
                    // Blank lines keep the numbering of the others.
                    Some(n) => lines[n - 1] = b"\n".to_vec(),
                    None => break None,
                }
            }
        }
    };
    for line in decisions.as_deref().unwrap_or("").lines() {
        let event = number(line).and_then(|n| trace.events.get(n.wrapping_sub(1)));
        let Some(event) = event else { continue };
        if let Err(e) = tally.observe(&event.reference, line) {
            errors.push(format!("{}: {e}", info.file.display()));
        }
    }
    tally.set_read(&trace.read);
    let mut row = tally.finish();
    row.read_errors += refused;
    (row, decisions.unwrap_or_default())
}

/// The trace line a policy error names (`line 3: args` → 3).
fn refused_line(e: &Error) -> Option<usize> {
    let Error::Policy { path, .. } = e else { return None };
    let rest = path.strip_prefix("line ")?;
    rest[..rest.find(':').unwrap_or(rest.len())].parse().ok()
}

/// The `line` of a decision line.
fn number(decision: &str) -> Option<usize> {
    let rest = decision.strip_prefix("{\"line\":")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}
