//! `walden.toml`: the server's optional configuration file. Every setting can also come from
//! a flag or a `WALDEN_*` variable; a flag wins over its variable, which wins over the file,
//! which wins over the default (see `docs/serve.md`, "Configuration").

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file read when neither `--config` nor `WALDEN_CONFIG` names one, if it exists.
pub const DEFAULT_CONFIG_FILE: &str = "walden.toml";

/// The settings a `walden.toml` may hold. Unknown keys are refused, so that a misspelt
/// setting is an error at start rather than silently ignored.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Address to listen on.
    pub listen: Option<String>,
    /// TCP port.
    pub port: Option<u16>,
    /// Data directory; relative paths are taken from the file's directory.
    pub data: Option<PathBuf>,
    /// The `sa` login's password.
    pub sa_password: Option<String>,
    /// Connections served at once.
    pub max_connections: Option<usize>,
    /// `off` or `self-signed`.
    pub tls: Option<String>,
    /// PEM certificate chain for TLS; relative to the file's directory.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key for TLS; relative to the file's directory.
    pub tls_key: Option<PathBuf>,
    /// Seconds a new connection may take to log in before it is closed.
    pub login_timeout_secs: Option<u64>,
    /// Seconds a new connection may take to send its PRELOGIN before it is closed.
    pub prelogin_timeout_secs: Option<u64>,
    /// Connections that have not finished logging in kept at once.
    pub max_pending_logins: Option<usize>,
    /// Threads that run requests, at most.
    pub max_worker_threads: Option<usize>,
    /// The buffer pool's size in MB, shared by every database.
    pub max_server_memory_mb: Option<u64>,
    /// The most one query's sort or hash holds in MB before it spills to disk.
    pub max_query_memory_mb: Option<u64>,
}

impl FileConfig {
    /// Reads `explicit` (which must exist), or `walden.toml` in the current directory if it
    /// exists, or nothing. Returns the settings and the file they came from.
    pub fn load(explicit: Option<&Path>) -> Result<(FileConfig, Option<PathBuf>), String> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            None => {
                let default = PathBuf::from(DEFAULT_CONFIG_FILE);
                if !default.exists() {
                    return Ok((FileConfig::default(), None));
                }
                default
            }
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut config =
            FileConfig::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        config.resolve_paths(path.parent().unwrap_or(Path::new(".")));
        Ok((config, Some(path)))
    }

    /// Parses the text of a `walden.toml`.
    pub fn parse(text: &str) -> Result<FileConfig, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Makes the file's relative paths relative to the directory holding it, so that the
    /// server reads the same files whatever directory it is started from.
    fn resolve_paths(&mut self, base: &Path) {
        for path in [&mut self.data, &mut self.tls_cert, &mut self.tls_key].into_iter().flatten() {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_parses_and_unknown_keys_are_refused() {
        let text = r#"
            listen = "0.0.0.0"
            port = 14330
            data = "db"
            sa_password = "secret"
            max_connections = 8
            tls = "self-signed"
            tls_cert = "/etc/walden/cert.pem"
            tls_key = "key.pem"
            login_timeout_secs = 5
            prelogin_timeout_secs = 2
            max_pending_logins = 16
            max_server_memory_mb = 512
            max_query_memory_mb = 64
        "#;
        let mut config = FileConfig::parse(text).expect("valid");
        config.resolve_paths(Path::new("/srv/walden"));
        assert_eq!(config.listen.as_deref(), Some("0.0.0.0"));
        assert_eq!(config.port, Some(14330));
        assert_eq!(config.data, Some(PathBuf::from("/srv/walden/db")));
        assert_eq!(config.sa_password.as_deref(), Some("secret"));
        assert_eq!(config.max_connections, Some(8));
        assert_eq!(config.tls.as_deref(), Some("self-signed"));
        assert_eq!(config.tls_cert, Some(PathBuf::from("/etc/walden/cert.pem")));
        assert_eq!(config.tls_key, Some(PathBuf::from("/srv/walden/key.pem")));
        assert_eq!(config.login_timeout_secs, Some(5));
        assert_eq!(config.prelogin_timeout_secs, Some(2));
        assert_eq!(config.max_pending_logins, Some(16));
        assert_eq!(config.max_server_memory_mb, Some(512));
        assert_eq!(config.max_query_memory_mb, Some(64));

        let error = FileConfig::parse("prot = 1433").expect_err("misspelt key");
        assert!(error.contains("prot"), "{error}");
        let error = FileConfig::parse("port = \"x\"").expect_err("wrong type");
        assert!(error.contains("port"), "{error}");
        let error = FileConfig::parse("max_server_memory_mb = -1").expect_err("negative");
        assert!(error.contains("max_server_memory_mb"), "{error}");
        let error = FileConfig::parse("max_server_memory_mb = \"1GB\"").expect_err("unit");
        assert!(error.contains("max_server_memory_mb"), "{error}");
        assert_eq!(FileConfig::parse("").expect("empty"), FileConfig::default());
    }
}
