//! The subcommands.

mod caldav;
pub mod dlq;
mod events;
mod feedback;
mod follower_metrics;
mod generate;
mod imap;
pub(crate) mod ingest;
pub mod llm;
mod topic;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use crate::config::EpigraphConfig;
use crate::runtime::{RunOptions, run};

/// The message of an error and its causes, joined by `": "`, as `{:#}` prints it, but without
/// a cause whose text the message before it already ends with (a typed error that shows its
/// source *and* names it as its source would otherwise print the OS error twice).
///
/// ```
/// use anyhow::Context;
/// let os = std::io::Error::other("No space left on device");
/// #[derive(Debug, thiserror::Error)]
/// #[error("state/docs/a.json.tmp: {source}")]
/// struct Io { #[source] source: std::io::Error }
/// let error = anyhow::Error::from(Io { source: os }).context("saving the manifest");
/// assert_eq!(
///     epigraph::cli::describe(&error),
///     "saving the manifest: state/docs/a.json.tmp: No space left on device"
/// );
/// assert_eq!(format!("{error:#}").matches("No space").count(), 2);
/// ```
pub fn describe(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.is_empty() {
            text = cause;
        } else if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

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
    /// Publish a reviewer's identity verdict on two entities, or review of a judgement
    /// (confirm, reject), to the feedback topic, or withdraw it.
    Feedback {
        /// The verdict.
        #[command(subcommand)]
        action: feedback::FeedbackAction,
    },
    /// Inspect the dead letters (what was refused, why, the raw item) and replay them after a
    /// fix.
    Dlq {
        /// What to do.
        #[command(subcommand)]
        action: dlq::DlqAction,
    },
    /// Consume the event topics into the dataflow and write Neo4j and LanceDB.
    Run {
        /// Exit once every topic is drained and everything is written.
        #[arg(long)]
        until_idle: bool,
        /// Timely worker threads (overrides `run.workers`; per process in a cluster).
        #[arg(long)]
        workers: Option<usize>,
        /// `host:port` of every process of a multi-process dataflow, comma-separated, the same
        /// list everywhere (overrides `run.cluster.addresses`).
        #[arg(long, value_delimiter = ',')]
        cluster: Option<Vec<String>>,
        /// This process's index in the cluster (overrides `run.cluster.process`): 0 drives
        /// (Kafka, sinks); any other runs as a compute peer until the driver finishes.
        #[arg(long)]
        process: Option<usize>,
    },
    /// Rebuild the views: delete everything Neo4j and LanceDB hold (of one tenant), then
    /// restore both from the durable record (the compacted topics) and exit when caught up.
    Rebuild {
        /// Only this tenant's nodes and rows (the default: everything).
        #[arg(long)]
        tenant: Option<String>,
    },
    /// Serve the query API.
    Serve {
        /// Listen address (overrides `serve.listen`), e.g. 127.0.0.1:8080.
        #[arg(long)]
        listen: Option<String>,
    },
    /// Run the extractor on one text and print what it yields (memory objects with their type,
    /// claims, entity mentions, relations) as JSON: to see why a sentence is typed the way it is.
    Extract {
        /// A file, or `-` for standard input.
        input: PathBuf,
        /// Source kind the text comes from: chat, email, calendar or document.
        #[arg(long, default_value = "document")]
        kind: String,
    },
    /// Measure quality on labelled data.
    Eval {
        /// Which evaluation.
        #[command(subcommand)]
        what: EvalCommand,
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
    /// The optional model extractor (`[llm]`): its answers become proposals.
    Llm {
        /// What to do.
        #[command(subcommand)]
        action: llm::LlmAction,
    },
    /// Avro schemas.
    Schemas {
        /// What to do with them.
        #[command(subcommand)]
        action: SchemasAction,
    },
}

/// `epigraph eval …`.
#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Supersession, contradiction and answered questions on a generated corpus (`epigraph
    /// gen`): precision/recall of the judged edges against its labels; prints JSON.
    ///
    /// With `--keps <dir>` (alias `--set`): on a blind-labelled set of real design documents,
    /// per relation at the document-pair level, for one split (read the `test` split once, at
    /// the end of a change): the Kubernetes enhancement proposals (`eval/epistemics/keps*`) or
    /// the Python enhancement proposals (`eval/epistemics/peps`, with `--kep-root
    /// tests/fixtures/peps`).
    Epistemics {
        /// The generated corpus folder.
        #[arg(long, required_unless_present = "keps", conflicts_with = "keps")]
        generated: Option<PathBuf>,
        /// The labelled set (`groups.jsonl`, `judged_pairs.jsonl`, `labels.jsonl`).
        #[arg(long, visible_alias = "set")]
        keps: Option<PathBuf>,
        /// With `--keps`: the split, `dev` or `test`.
        #[arg(long, default_value = "dev")]
        split: String,
        /// With `--keps`: the folder holding the documents: KEPs as
        /// `<sig>/<number-name>/{README.md,kep.yaml}`, PEPs as `pep-NNNN.rst`.
        #[arg(
            long,
            visible_alias = "doc-root",
            default_value = "tests/fixtures/keps/keps"
        )]
        kep_root: PathBuf,
    },
    /// Identity resolution on a generated corpus (`epigraph gen`): pairwise and B-cubed
    /// precision/recall/F1 of the resolved mentions, next to no resolution; prints JSON.
    Identity {
        /// The generated corpus folder.
        #[arg(long)]
        generated: PathBuf,
    },
    /// Vocabulary relations (`WORKS_ON`, `MANAGES`, …) on a generated corpus (`epigraph gen`):
    /// precision and recall per predicate against its relation labels; prints JSON.
    Relations {
        /// The generated corpus folder.
        #[arg(long)]
        generated: PathBuf,
    },
    /// Memory-object typing (per-type precision/recall/F1, macro-F1) and entity-mention recall
    /// on a labelled set of real sentences; prints JSON (and a table with `--table`).
    Extraction {
        /// The labelled units (JSON lines).
        #[arg(default_value = "eval/extraction/real/sentences.jsonl")]
        labels: PathBuf,
        /// Evaluate on a generated corpus folder (`epigraph gen`) instead.
        #[arg(long, conflicts_with = "labels")]
        generated: Option<PathBuf>,
        /// Folder the units' `source` paths are relative to.
        #[arg(long, default_value = "tests/fixtures")]
        fixtures: PathBuf,
        /// Also print per-split tables.
        #[arg(long)]
        table: bool,
    },
    /// Retrieval quality on a BEIR-format folder (`corpus.jsonl`, `queries.jsonl`,
    /// `qrels/test.tsv`, optional `state.jsonl`): the corpus is ingested through Kafka and the
    /// pipeline into a fresh tenant, every query asked of `/v1/search?level=source`; prints
    /// nDCG@1/5/10, recall@5/10/100, MAP@10 and state-sensitive ordering as JSON.
    Retrieval {
        /// The BEIR folder.
        dir: PathBuf,
        /// Results asked per query.
        #[arg(long, default_value_t = 100)]
        k: usize,
        /// Tenant (default: a fresh `eval-<folder>-<time>`).
        #[arg(long)]
        tenant: Option<String>,
        /// Retrievers: hybrid, text or vector.
        #[arg(long, default_value = "hybrid")]
        mode: String,
        /// Also run the BM25 baseline (`eval/retrieval/bm25_baseline.py`) with the project's
        /// Python environment (`deploy/local/python.sh`).
        #[arg(long)]
        baseline: bool,
        /// Python interpreter for the baseline (default: `$EPIGRAPH_HOME/venv/bin/python`).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Do not ingest: the tenant already holds the corpus.
        #[arg(long, requires = "tenant")]
        skip_ingest: bool,
        /// Systems to ask: `fused` (documents by memory objects, chunks and document BM25),
        /// `unmodulated` (the same without φ), `memory` (by memory objects alone).
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "fused,unmodulated,memory"
        )]
        systems: Vec<String>,
        /// Write each system's top 20 documents per query to this JSON file.
        #[arg(long)]
        rankings_out: Option<PathBuf>,
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
        Command::Feedback { action } => feedback::feedback(&config, action).await,
        Command::Dlq { action } => dlq::dlq(&config, action).await,
        Command::Llm { action } => llm::llm(&config, action).await,
        Command::Rebuild { tenant } => {
            if let Some(tenant) = &tenant {
                epigraph_sources::scan::check_tenant(tenant)?;
            }
            let cleared = crate::runtime::clear_views(&config, tenant.as_deref()).await?;
            let report = run(config, RunOptions { until_idle: true }).await?;
            println!(
                "{}",
                serde_json::json!({"cleared_nodes": cleared, "tenant": tenant, "run": report})
            );
            Ok(())
        }
        Command::Run {
            until_idle,
            workers,
            cluster,
            process,
        } => {
            if let Some(workers) = workers {
                config.run.workers = workers;
            }
            if let Some(addresses) = cluster {
                config.run.cluster.addresses = addresses;
            }
            if let Some(process) = process {
                config.run.cluster.process = process;
            }
            if !config.run.cluster.addresses.is_empty()
                && config.run.cluster.process >= config.run.cluster.addresses.len()
            {
                anyhow::bail!(
                    "--process {} is not an index of the {} cluster addresses",
                    config.run.cluster.process,
                    config.run.cluster.addresses.len()
                );
            }
            if !crate::runtime::dataflow::Topology::of(&config.run).is_driver() {
                tokio::task::spawn_blocking(move || crate::runtime::run_peer(&config)).await??;
                println!(
                    "{}",
                    serde_json::json!({"peer": true, "process": process, "done": true})
                );
                return Ok(());
            }
            let report = run(config, RunOptions { until_idle }).await?;
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
        Command::Serve { listen } => crate::serve::serve(config, listen).await,
        Command::Extract { input, kind } => {
            let body = if input.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&input)
                    .with_context(|| format!("reading {}", input.display()))?
            };
            let kind = epigraph_schemas::SourceKind::parse(&kind)
                .with_context(|| format!("unknown kind {kind:?}"))?;
            let ontology = config.ontology.load().context("loading the ontology")?;
            let extractor = epigraph_operators::Extractor::new(ontology)?;
            let source = epigraph_operators::SourceVersion::new("cli", "input", kind, &body);
            let extraction = extractor.extract(&source);
            for element in &extraction.elements {
                println!("{}", serde_json::to_string(element)?);
            }
            for relation in &extraction.entity_relations {
                println!("{}", serde_json::to_string(relation)?);
            }
            Ok(())
        }
        Command::Gen { dir, seed, scale } => generate::generate(&dir, seed, scale),
        Command::Eval {
            what:
                EvalCommand::Epistemics {
                    generated,
                    keps,
                    split,
                    kep_root,
                },
        } => {
            let extractor = extractor(&config)?;
            let report = match (generated, keps) {
                (Some(generated), _) => serde_json::to_value(
                    crate::eval::epistemics::evaluate_epistemics(extractor, &generated)?,
                )?,
                (None, Some(keps)) => serde_json::to_value(crate::eval::keps::evaluate_keps(
                    extractor, &keps, &kep_root, &split,
                )?)?,
                (None, None) => anyhow::bail!("give --generated <dir> or --keps <dir>"),
            };
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        Command::Eval {
            what:
                EvalCommand::Retrieval {
                    dir,
                    k,
                    tenant,
                    mode,
                    baseline,
                    python,
                    skip_ingest,
                    systems,
                    rankings_out,
                },
        } => {
            if let Some(bad) = systems
                .iter()
                .find(|s| !["fused", "unmodulated", "memory"].contains(&s.as_str()))
            {
                anyhow::bail!("--systems: {bad:?} is not fused, unmodulated or memory");
            }
            if !["hybrid", "text", "vector"].contains(&mode.as_str()) {
                anyhow::bail!("--mode must be hybrid, text or vector");
            }
            let baseline_python = (baseline || python.is_some()).then(|| {
                python.unwrap_or_else(|| {
                    epigraph_sinks::embed::default_home().join("venv/bin/python")
                })
            });
            let options = crate::eval::retrieval::RetrievalOptions {
                k,
                tenant,
                mode,
                baseline_python,
                skip_ingest,
                systems,
                rankings_out,
            };
            let report =
                crate::eval::retrieval::evaluate_retrieval(&config, &dir, &options).await?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        Command::Eval {
            what: EvalCommand::Relations { generated },
        } => {
            let report =
                crate::eval::relations::evaluate_relations(extractor(&config)?, &generated)?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        Command::Eval {
            what: EvalCommand::Identity { generated },
        } => {
            let report = crate::eval::identity::evaluate_identity(extractor(&config)?, &generated)?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        Command::Eval {
            what:
                EvalCommand::Extraction {
                    labels,
                    generated,
                    fixtures,
                    table,
                },
        } => {
            let ontology = config.ontology.load().context("loading the ontology")?;
            let extractor = epigraph_operators::Extractor::new(ontology)?;
            let report = match generated {
                Some(dir) => crate::eval::extraction::evaluate_generated(&extractor, &dir)?,
                None => crate::eval::extraction::evaluate_real(&extractor, &labels, &fixtures)?,
            };
            if table {
                for (split, scores) in &report.typing {
                    let m = &report.mentions[split];
                    eprintln!(
                        "== {split}: entity mentions {}/{} found (recall {:.3}, typed {:.3})\n{}",
                        m.found,
                        m.gold,
                        m.recall,
                        m.typed_recall,
                        crate::eval::metrics::table(scores)
                    );
                }
            }
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
        Command::Schemas {
            action: SchemasAction::Export { dir },
        } => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            for (name, text) in epigraph_schemas::schema_files() {
                let path = dir.join(&name);
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
                println!("{}", path.display());
            }
            Ok(())
        }
    }
}

/// The extractor of the configured ontology, for the evaluations.
fn extractor(config: &EpigraphConfig) -> Result<std::sync::Arc<epigraph_operators::Extractor>> {
    let ontology = config.ontology.load().context("loading the ontology")?;
    Ok(std::sync::Arc::new(epigraph_operators::Extractor::new(
        ontology,
    )?))
}
