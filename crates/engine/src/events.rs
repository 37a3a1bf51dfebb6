//! The engine's messages for the server log: database state changes (online, offline with the
//! cause, recovery pending or suspect with the reason, recovery with its figures).
//!
//! The engine does not write a log of its own: whoever embeds it passes an [`EventLog`] in
//! [`DatabaseConfig::events`](crate::DatabaseConfig::events), and `walden serve` writes each
//! event as a timestamped line of its error log, as SQL Server's errorlog has them. Without one
//! (tests, the embedded shell) events are dropped; the states stay visible in
//! `sys.databases`.

use std::fmt;
use std::sync::Arc;

/// How much an event matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventLevel {
    /// A normal state change (a database came online, recovery figures).
    Info,
    /// Something an operator may want to look at, which the engine worked around.
    Warn,
    /// A database went offline or could not be opened.
    Error,
}

type Sink = dyn Fn(EventLevel, &str) + Send + Sync;

/// Where the engine's events go; cloning shares the sink.
#[derive(Clone, Default)]
pub struct EventLog(Option<Arc<Sink>>);

impl EventLog {
    /// Events go to `sink`, called on whatever thread made the change (so it must be quick
    /// and must not call back into the engine).
    pub fn new(sink: impl Fn(EventLevel, &str) + Send + Sync + 'static) -> Self {
        EventLog(Some(Arc::new(sink)))
    }

    /// Reports an event.
    pub fn emit(&self, level: EventLevel, message: &str) {
        if let Some(sink) = &self.0 {
            sink(level, message);
        }
    }
}

impl fmt::Debug for EventLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "EventLog(sink)" } else { "EventLog(none)" })
    }
}
