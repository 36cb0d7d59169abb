use serde::{Deserialize, Serialize};

/// How epigraph reaches Neo4j.
///
/// ```toml
/// [neo4j]
/// uri = "bolt://127.0.0.1:7687"
/// user = "neo4j"
/// password = ""
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Neo4jConfig {
    /// Bolt URI. Default `bolt://127.0.0.1:7687` (the local script's server).
    pub uri: String,
    /// User name. Default `neo4j`.
    pub user: String,
    /// Password; empty when the server runs without authentication (the local script's
    /// default). Prefer the `EPIGRAPH_NEO4J__PASSWORD` variable over the file.
    pub password: String,
    /// Database name. Default `neo4j`.
    pub database: String,
    /// Rows per `UNWIND` statement. Default 1000.
    pub batch_rows: usize,
    /// Rows per transaction: an epoch larger than this (the first restore of a big record) is
    /// written in several transactions, in order, so that it stays under the server's
    /// transaction memory limit (`dbms.memory.transaction.total.max`). Default 20,000.
    pub transaction_rows: usize,
    /// Pooled connections. Default 8.
    pub max_connections: usize,
}

impl std::fmt::Debug for Neo4jConfig {
    /// Everything but the password, which shows as `<redacted>` when set.
    ///
    /// ```
    /// use epigraph_sinks::neo4j::Neo4jConfig;
    /// let config = Neo4jConfig { password: "hunter2".into(), ..Neo4jConfig::default() };
    /// let shown = format!("{config:?}");
    /// assert!(shown.contains("<redacted>") && shown.contains("bolt://") && !shown.contains("hunter2"));
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let password = if self.password.is_empty() {
            ""
        } else {
            "<redacted>"
        };
        f.debug_struct("Neo4jConfig")
            .field("uri", &self.uri)
            .field("user", &self.user)
            .field("password", &password)
            .field("database", &self.database)
            .field("batch_rows", &self.batch_rows)
            .field("transaction_rows", &self.transaction_rows)
            .field("max_connections", &self.max_connections)
            .finish()
    }
}

impl Default for Neo4jConfig {
    fn default() -> Self {
        Neo4jConfig {
            uri: "bolt://127.0.0.1:7687".into(),
            user: "neo4j".into(),
            password: String::new(),
            database: "neo4j".into(),
            batch_rows: 1000,
            transaction_rows: 20_000,
            max_connections: 8,
        }
    }
}
