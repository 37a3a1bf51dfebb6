//! `walden serve` as a child process on port 0, stopped when the test ends, however it ends.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::PASSWORD;

/// `walden serve --port 0 --data <data>` with the test password; the caller adds flags and
/// variables.
pub fn serve_command(data: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_walden"));
    command.args(["serve", "--port", "0", "--data"]).arg(data);
    command.env("WALDEN_SA_PASSWORD", PASSWORD);
    command
}

/// A running `walden serve`, SIGKILLed when dropped (a failed assertion included), with what
/// it wrote on stderr.
pub struct Server {
    pub child: Child,
    pub port: u16,
    /// Every stderr line so far: a thread keeps reading them, so that the server never blocks
    /// on a full pipe.
    log: Arc<Mutex<Vec<String>>>,
    /// The data directory, when the server owns it (removed when dropped).
    _data: Option<tempfile::TempDir>,
}

impl Server {
    /// A server on a fresh data directory, with `extra` flags.
    pub fn start(extra: &[&str]) -> Server {
        Server::start_with(extra, &[])
    }

    /// A server on a fresh data directory, with `extra` flags and `env` variables.
    pub fn start_with(extra: &[&str], env: &[(&str, &str)]) -> Server {
        let data = tempfile::tempdir().unwrap();
        let mut command = serve_command(&data.path().join("data"));
        command.args(extra).envs(env.iter().copied());
        Server::spawn(command, Some(data))
    }

    /// Runs `command` (a `walden serve` on port 0) and waits for the port it reports on stderr
    /// in its "listening on <address>:<port>" line.
    pub fn spawn(mut command: Command, data: Option<tempfile::TempDir>) -> Server {
        let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(Vec::new()));
        let port = loop {
            let line = lines.next().expect("server exited before listening").unwrap();
            let port = line
                .split_once("listening on ")
                .map(|(_, addr)| addr.rsplit(':').next().unwrap().parse().unwrap());
            log.lock().unwrap().push(line);
            if let Some(port) = port {
                break port;
            }
        };
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Server { child, port, log, _data: data }
    }

    /// The stderr lines written so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// The stderr lines written before "listening on": the start-up report.
    pub fn startup(&self) -> Vec<String> {
        let log = self.log.lock().unwrap();
        log.iter().take_while(|l| !l.contains("listening on ")).cloned().collect()
    }

    /// Waits up to a few seconds for a stderr line containing `text`.
    pub fn logged(&self, text: &str) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if self.log.lock().unwrap().iter().any(|l| l.contains(text)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
