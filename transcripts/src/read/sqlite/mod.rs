//! OpenClaw 2026.x agent stores: `agents/<agentId>/agent/openclaw-agent.sqlite`.
//!
//! Why read-only, and why two passes: the operator runs this against the live gateway's
//! database, so it must never take a write lock or need write access (the connection is
//! `SQLITE_OPEN_READ_ONLY` with `mode=ro`, `query_only` on, both passes in one read
//! transaction so they see one snapshot while the gateway appends), and a store can be far
//! larger than memory, so a session is read as a stream twice: first only the tree facts of
//! each row (`navigation_json` for compressed rows, so they are not decompressed), to find the
//! active branch; then the rows on that branch, decoded one at a time.
//!
//! [`store`] opens the store, [`list`] lists its sessions, [`archives`] reads the archive
//! tables, [`read`] streams a session in the two passes, and [`decode`] decompresses one row.

mod archives;
mod decode;
mod list;
mod read;
mod store;

pub(super) use store::{is_sqlite, open_read_only, sqlite_err, Store};
