//! The subcommands.

mod events;
mod generate;
mod ingest;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use crate::config::EpigraphConfig;
use crate::runtime::{RunOptions, run};

/// epigraph: a live epistemic memory for organisations.
#[derive(Debug, Parser)]
#[command(name = "epigraph", version, about)]
pub struct Cli {
    /// Configuration file (default: ./epigraph.toml when present). `EPIGRAPH_*` variables
    /// override it, e.g. `EPIGRAPH_KAFKA__BOOTSTRAP=host:9092`.
    #[arg(long, global = true, env = "EPIGRAPH_CONFIG")]
    pub config: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Publish a source to Kafka.
    Ingest {
        /// Which source.
        #[command(subcommand)]
        source: ingest::IngestSource,
    },
    /// Consume the event topics into the dataflow and write Neo4j and LanceDB.
    Run {
        /// Exit once every topic is drained and everything is written.
        #[arg(long)]
        until_idle: bool,
        /// Timely worker threads (overrides `run.workers`).
        #[arg(long)]
        workers: Option<usize>,
    },
    /// Serve the query API.
    Serve {
        /// Listen address (overrides `serve.listen`), e.g. 127.0.0.1:8080.
        #[arg(long)]
        listen: Option<String>,
    },
    /// Generate a synthetic, labelled organisation: `<dir>/events.jsonl` (webhook events, for
    /// `epigraph ingest events`), `<dir>/labels/*.jsonl` (ground truth) and `manifest.json`.
    /// Same seed and scale, same bytes.
    Gen {
        /// Output folder (created if missing; files in it are overwritten).
        dir: PathBuf,
        /// Seed of the random stream.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Number of events to write (the organisation grows with its square root).
        #[arg(long, default_value_t = 1000)]
        scale: u64,
    },
    /// Avro schemas.
    Schemas {
        /// What to do with them.
        #[command(subcommand)]
        action: SchemasAction,
    },
}

/// `epigraph schemas …`.
#[derive(Debug, Subcommand)]
pub enum SchemasAction {
    /// Write the .avsc files into a folder (for a schema registry).
    Export {
        /// Target folder (created if missing).
        dir: PathBuf,
    },
}

/// Run a parsed command line.
pub async fn execute(cli: Cli) -> Result<()> {
    let mut config =
        EpigraphConfig::load(cli.config.as_deref()).context("loading the configuration")?;
    match cli.command {
        Command::Ingest { source } => ingest::ingest(&config, source).await,
        Command::Run {
            until_idle,
            workers,
        } => {
            if let Some(workers) = workers {
                config.run.workers = workers;
            }
            let report = run(config, RunOptions { until_idle }).await?;
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
        Command::Serve { listen } => crate::serve::serve(config, listen).await,
        Command::Gen { dir, seed, scale } => generate::generate(&dir, seed, scale),
        Command::Schemas {
            action: SchemasAction::Export { dir },
        } => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            for (name, text) in epigraph_schemas::schema_files() {
                let path = dir.join(name);
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
                println!("{}", path.display());
            }
            Ok(())
        }
    }
}
