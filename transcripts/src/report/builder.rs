//! Summing session rows into a [`Report`].

use super::decision::DecisionError;
use super::rows::{Report, SessionRow, Summary};
use super::tally::SessionTally;
use crate::read::SessionTrace;

/// Collects session rows.
#[derive(Debug, Default)]
pub struct ReportBuilder {
    rows: Vec<SessionRow>,
}

impl ReportBuilder {
    /// An empty report.
    pub fn new() -> Self {
        ReportBuilder::default()
    }

    /// Adds a finished row.
    pub fn add_row(&mut self, row: SessionRow) {
        self.rows.push(row);
    }

    /// Adds a whole session: its events and the replay's decision lines for them.
    pub fn add_trace<S: AsRef<str>>(&mut self, trace: &SessionTrace, decisions: &[S]) -> Result<(), DecisionError> {
        let mut tally = SessionTally::new(&trace.info);
        if decisions.len() != trace.events.len() {
            return Err(DecisionError {
                session: trace.info.session_id.clone(),
                index: decisions.len() as u64,
                reason: format!("{} decisions for {} events", decisions.len(), trace.events.len()),
            });
        }
        for (event, decision) in trace.events.iter().zip(decisions) {
            tally.observe(&event.reference, decision.as_ref())?;
        }
        tally.set_read(&trace.read);
        self.rows.push(tally.finish());
        Ok(())
    }

    /// The report.
    pub fn finish(self) -> Report {
        let mut s = Summary::default();
        for row in &self.rows {
            s.sessions += 1;
            s.tool_calls += row.tool_calls;
            s.sessions_with_warnings += u64::from(row.warnings > 0);
            s.sessions_with_blocks += u64::from(row.blocks > 0);
            s.sessions_with_aborts += u64::from(row.aborts > 0);
            s.sessions_with_gateway_blocks += u64::from(row.gateway_block.is_some());
            s.read_errors += row.read_errors;
            for (name, c) in &row.by_detector {
                let d = s.by_detector.entry(name.clone()).or_default();
                d.sessions_warned += u64::from(c.warnings > 0);
                d.sessions_blocked += u64::from(c.blocks > 0);
                d.sessions_aborted += u64::from(c.aborts > 0);
                d.decisions.warnings += c.warnings;
                d.decisions.blocks += c.blocks;
                d.decisions.aborts += c.aborts;
            }
        }
        Report { rows: self.rows, summary: s }
    }
}
