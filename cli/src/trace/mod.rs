//! A trace (JSON Lines) through gateways, shared by `replay` and `transcripts`: [`read`] cuts it
//! into chunks of whole lines with the trace's own line numbers, [`stream`] applies them on one
//! gateway (also across a hot swap, or beside a shadow candidate), [`parallel`] on several
//! workers with output identical to one worker's.

pub mod parallel;
pub mod read;
pub mod stream;
