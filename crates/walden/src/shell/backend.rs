//! Where batches run. The shell only needs to hand over a batch's text and receive what it
//! produces, so an embedded instance and a TDS connection ([`super::remote::Remote`]) are
//! interchangeable.

use std::path::Path;
use std::sync::Arc;

use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Output, Session};

/// Runs batches.
pub trait Backend {
    /// Runs one batch (text between `GO` lines, variables already substituted), reporting
    /// its results, row counts and messages to `out`. Errors of the batch arrive as messages;
    /// the shell decides whether to go on. `Err` is a failure of the backend itself (the
    /// connection to a server was lost, a value could not be received), worded for a
    /// `Sqlcmd: Error:` line; it counts as an error of the batch.
    fn execute(&mut self, batch: &str, out: &mut dyn Output) -> Result<(), String>;

    /// Ends the connection; for the embedded instance, shuts the engine down cleanly.
    fn close(&mut self) -> Result<(), String>;
}

/// A session on an instance opened in this process.
pub struct Embedded {
    instance: Arc<Instance>,
    session: Session,
}

impl std::fmt::Debug for Embedded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedded").finish_non_exhaustive()
    }
}

impl Embedded {
    /// Opens (or creates) the instance in `dir`.
    pub fn open(dir: &Path) -> Result<Embedded, String> {
        let instance = Instance::open(dir, InstanceConfig::default())
            .map_err(|e| format!("cannot open the data directory {}: {e}", dir.display()))?;
        let session = Session::new(Arc::clone(&instance));
        Ok(Embedded { instance, session })
    }
}

impl Backend for Embedded {
    fn execute(&mut self, batch: &str, out: &mut dyn Output) -> Result<(), String> {
        // Like a connection the server closed after a severity 20+ error.
        if self.session.terminated() {
            return Err("the session was ended by a severe error (severity 20 or more)".into());
        }
        self.session.execute_batch(batch, out);
        Ok(())
    }

    fn close(&mut self) -> Result<(), String> {
        self.instance.close().map_err(|e| format!("closing the instance: {e}"))
    }
}
