//! `epigraph llm …`: the optional model extractor.
//!
//! - `propose --tenant T`: reads the tenant's memory objects and entities through the query
//!   core, sends the units `[llm] units` selects to the model, and turns what its validated
//!   answers add into proposals sent to `epigraph serve` (`POST /v1/proposals` with the agent
//!   token of `[llm] server_token`): a type other than the memory object's → an `edit`; an edge
//!   to another memory object shown → a `judgement` asserting it. Prints a JSON report.
//! - `eval`: the memory-type accuracy of the rules alone and with the model's types, on the
//!   hand-labelled real set (docs/llm.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use epigraph_operators::{Extractor, SourceVersion};
use epigraph_query::graph::{GraphReader, MAX_ROWS, MemoryCard};
use epigraph_schemas::SourceKind;
use epigraph_schemas::proposals::ExtractionCost;
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::EpigraphConfig;
use crate::llm::metrics::LlmMetrics;
use crate::llm::{Extraction, LlmExtractor, UnitPrompt};

/// The agent name on every proposal of the extractor.
pub const AGENT: &str = "epigraph-llm";

/// `epigraph llm …`.
#[derive(Debug, Subcommand)]
pub enum LlmAction {
    /// Send the tenant's memory objects (those `[llm] units` selects) to the model and propose
    /// what its validated answers add: edits of the type, asserted edges between memory
    /// objects. Prints a JSON report.
    Propose {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// Most memory objects read (by descending priority; default and most 1,000).
        #[arg(long)]
        limit: Option<usize>,
        /// Serve `GET /metrics` here while running (e.g. 127.0.0.1:9470).
        #[arg(long)]
        metrics_listen: Option<String>,
    },
    /// Memory-type accuracy on the hand-labelled real set: the rules alone, and with the
    /// model's type for the units `[llm] units` selects. Prints JSON.
    Eval {
        /// The labelled units (JSON lines).
        #[arg(long, default_value = "eval/extraction/real/sentences.jsonl")]
        labels: PathBuf,
        /// Folder the units' `source` paths are relative to.
        #[arg(long, default_value = "tests/fixtures")]
        fixtures: PathBuf,
        /// `dev` or `test` (read the test split once).
        #[arg(long, default_value = "dev")]
        split: String,
    },
}

/// Run `epigraph llm …`.
pub async fn llm(config: &EpigraphConfig, action: LlmAction) -> Result<()> {
    let ontology = config.ontology.load().context("loading the ontology")?;
    let metrics = Arc::new(LlmMetrics::new(&config.llm.model));
    let extractor = LlmExtractor::new(&config.llm, &ontology, metrics.clone())?;
    let rules = Extractor::new(ontology)?;
    let report = match action {
        LlmAction::Propose {
            tenant,
            limit,
            metrics_listen,
        } => {
            epigraph_sources::scan::check_tenant(&tenant)?;
            if let Some(listen) = metrics_listen {
                let shown = metrics.clone();
                super::follower_metrics::serve_text(&listen, move || shown.render()).await?;
            }
            propose(config, &extractor, &rules, &tenant, limit).await?
        }
        LlmAction::Eval {
            labels,
            fixtures,
            split,
        } => crate::eval::llm::evaluate(&extractor, &rules, &labels, &fixtures, &split).await?,
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

/// The confidence (thousandths) the rules give a memory object's text read on its own (the
/// graph keeps the type, not the confidence), and the type they give it then.
pub(crate) fn rules_confidence(rules: &Extractor, tenant: &str, card: &MemoryCard) -> u16 {
    let kind = card
        .source_kind
        .as_deref()
        .and_then(SourceKind::parse)
        .unwrap_or(SourceKind::Document);
    let mut version = SourceVersion::new(tenant, &card.source_id, kind, &card.text);
    version.title = card.title.clone();
    let extraction = rules.extract(&version);
    extraction
        .memories()
        .max_by_key(|m| m.span.1 - m.span.0)
        .map_or(0, |m| m.confidence)
}

/// The cost figures written on a proposal.
pub(crate) fn cost_of(extractor: &LlmExtractor, extraction: &Extraction) -> ExtractionCost {
    let o = &extraction.outcome;
    ExtractionCost {
        model: Some(extractor.model().to_string()),
        calls: o.calls,
        prompt_tokens: o.prompt_tokens,
        completion_tokens: o.completion_tokens,
        latency_ms: o.latency_ms,
        cost: extractor.cost(o.prompt_tokens, o.completion_tokens),
        cached: extraction.cached,
        key: Some(extraction.key.clone()),
    }
}

/// What `propose` did.
#[derive(Debug, Default, Serialize)]
struct ProposeReport {
    tenant: String,
    model: String,
    memory_objects: usize,
    sent: usize,
    skipped_confident: usize,
    cached: usize,
    calls: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    latency_ms: u64,
    cost: f64,
    accepted: usize,
    /// Of the accepted: kept on the last try without their faulty relations and edges.
    salvaged: usize,
    fallbacks: usize,
    /// Per refused answer: the memory object and the reason.
    rejections: Vec<Value>,
    /// Per relation or edge a salvaged answer lost: the memory object and the reason.
    dropped: Vec<Value>,
    proposals_created: Vec<String>,
    proposals_duplicate: usize,
    proposals_refused: Vec<Value>,
    /// Relations between entities the answers stated (validated; no proposal writes them).
    entity_relations: usize,
}

/// A client of `epigraph serve`'s proposals.
struct Desk {
    http: reqwest::Client,
    base: String,
    tenant: String,
    token: Option<String>,
}

impl Desk {
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let url = format!("{}{path}", self.base.trim_end_matches('/'),);
        let request = self
            .http
            .request(method, url)
            .query(&[("tenant", self.tenant.as_str())]);
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// The changes this agent proposed already and that are not rejected, withdrawn or
    /// conflicted (as JSON text, to compare).
    async fn open_changes(&self) -> Result<BTreeSet<String>> {
        let response = self
            .request(reqwest::Method::GET, "/v1/proposals")
            .query(&[("limit", "500")])
            .send()
            .await
            .context("listing proposals")?;
        let status = response.status();
        let body: Value = response.json().await.context("reading proposals")?;
        if !status.is_success() {
            bail!("listing proposals: {status}: {body}");
        }
        let mut changes = BTreeSet::new();
        for p in body["proposals"].as_array().into_iter().flatten() {
            let live = matches!(
                p["state"].as_str(),
                Some("proposed" | "approved" | "applied")
            );
            if live && p["proposal"]["proposer"]["agent"] == AGENT {
                changes.insert(p["proposal"]["change"].to_string());
            }
        }
        Ok(changes)
    }

    /// Propose; the created proposal or the server's refusal.
    async fn propose(&self, body: &Value) -> Result<std::result::Result<Value, Value>> {
        let response = self
            .request(reqwest::Method::POST, "/v1/proposals")
            .json(body)
            .send()
            .await
            .context("sending a proposal")?;
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            Ok(Ok(answer))
        } else if status.is_client_error() && status.as_u16() != 401 && status.as_u16() != 403 {
            Ok(Err(json!({"status": status.as_u16(), "error": answer})))
        } else {
            bail!("proposing: {status}: {answer}")
        }
    }
}

async fn propose(
    config: &EpigraphConfig,
    extractor: &LlmExtractor,
    rules: &Extractor,
    tenant: &str,
    limit: Option<usize>,
) -> Result<Value> {
    let llm = &config.llm;
    let graph = GraphReader::new(epigraph_sinks::neo4j::connect_graph(&config.neo4j)?);
    let mut cards = graph
        .priorities(tenant, &[], limit.unwrap_or(MAX_ROWS), None)
        .await?;
    cards.sort_by(|a, b| (&a.source_id, &a.id).cmp(&(&b.source_id, &b.id)));
    let entities: Vec<(String, String)> = graph
        .entities(tenant, "", false, llm.max_entities, None)
        .await?
        .into_iter()
        .map(|e| (e.name, e.kind))
        .collect();
    let desk = Desk {
        http: reqwest::Client::new(),
        base: llm.server.clone(),
        tenant: tenant.to_string(),
        token: llm.server_token.clone().filter(|t| !t.is_empty()),
    };
    let mut known = desk.open_changes().await?;
    let mut by_source: BTreeMap<&str, Vec<&MemoryCard>> = BTreeMap::new();
    for card in &cards {
        by_source.entry(&card.source_id).or_default().push(card);
    }
    let mut report = ProposeReport {
        tenant: tenant.into(),
        model: llm.model.clone(),
        memory_objects: cards.len(),
        ..ProposeReport::default()
    };
    let bar = crate::publish::progress_bar(cards.len() as u64, "llm");
    for card in &cards {
        bar.inc(1);
        let confidence = rules_confidence(rules, tenant, card);
        if !llm.selects(confidence) {
            report.skipped_confident += 1;
            continue;
        }
        let neighbours: Vec<&MemoryCard> = by_source[card.source_id.as_str()]
            .iter()
            .filter(|c| c.id != card.id)
            .take(llm.max_neighbours)
            .copied()
            .collect();
        let unit = UnitPrompt {
            text: card.text.clone(),
            source_kind: card
                .source_kind
                .clone()
                .unwrap_or_else(|| "document".into()),
            title: card.title.clone(),
            section: card.section.clone(),
            neighbours: neighbours
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("m{}", i + 1), c.memory_type.name(), c.text.clone()))
                .collect(),
            entities: entities.clone(),
        };
        let extraction = extractor.extract(&unit).await?;
        report.sent += 1;
        let o = &extraction.outcome;
        if extraction.cached {
            report.cached += 1;
        } else {
            report.calls += u64::from(o.calls);
            report.prompt_tokens += o.prompt_tokens;
            report.completion_tokens += o.completion_tokens;
            report.latency_ms += o.latency_ms;
            report.cost += extractor.cost(o.prompt_tokens, o.completion_tokens);
        }
        for reason in &o.rejections {
            report.rejections.push(
                json!({"memory_object": card.id, "reason": reason, "cached": extraction.cached}),
            );
        }
        let Some(answer) = &o.answer else {
            report.fallbacks += 1;
            continue;
        };
        report.accepted += 1;
        if !o.dropped.is_empty() {
            report.salvaged += 1;
        }
        for reason in &o.dropped {
            report.dropped.push(
                json!({"memory_object": card.id, "reason": reason, "cached": extraction.cached}),
            );
        }
        report.entity_relations += answer.relations.len();
        let mut read = vec![card.id.clone()];
        read.extend(neighbours.iter().map(|c| c.id.clone()));
        let mut changes: Vec<(&str, Value, String)> = Vec::new();
        if answer.memory_type != card.memory_type.name() {
            changes.push((
                "edit",
                json!({"kind": "edit", "node": card.id, "memory_type": answer.memory_type}),
                format!(
                    "{AGENT} ({}) read the unit and types it {} where the rules typed it {} \
                     (their confidence on the unit alone: {:.2})",
                    llm.model,
                    answer.memory_type,
                    card.memory_type,
                    f64::from(confidence) / 1000.0
                ),
            ));
        }
        for edge in &answer.edges {
            let Some(target) = edge
                .to
                .strip_prefix('m')
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| neighbours.get(n.wrapping_sub(1)))
            else {
                continue;
            };
            changes.push((
                "judgement",
                json!({"kind": "judgement", "relation": edge.edge, "from": card.id,
                       "to": target.id, "verdict": "assert"}),
                format!(
                    "{AGENT} ({}) read the unit next to {} and finds that it {} it",
                    llm.model, target.id, edge.edge
                ),
            ));
        }
        let cost = cost_of(extractor, &extraction);
        for (kind, change, why) in changes {
            if !known.insert(change.to_string()) {
                report.proposals_duplicate += 1;
                extractor.metrics().proposal(kind, "duplicate");
                continue;
            }
            let body = json!({
                "change": change, "why": why, "read": read, "agent": AGENT,
                "model": llm.model, "extraction": cost,
            });
            match desk.propose(&body).await? {
                Ok(view) => {
                    extractor.metrics().proposal(kind, "created");
                    report
                        .proposals_created
                        .push(view["id"].as_str().unwrap_or_default().to_string());
                }
                Err(refusal) => {
                    extractor.metrics().proposal(kind, "refused");
                    report
                        .proposals_refused
                        .push(json!({"change": change, "refusal": refusal}));
                }
            }
        }
    }
    bar.finish_and_clear();
    Ok(serde_json::to_value(report)?)
}
