//! `epigraph eval retrieval <dir>`: a BEIR-format folder (`corpus.jsonl`, `queries.jsonl`,
//! `qrels/test.tsv`, optionally `state.jsonl`) ingested through the real path — BEIR connector →
//! Kafka → `epigraph run` → Neo4j and LanceDB — into a fresh tenant, then every query asked of
//! `GET /v1/search?level=source` on an in-process query service, scored with nDCG@1/5/10,
//! recall@5/10/100, MAP@10 and, for state-sensitive queries, how often the current document
//! ranks above the superseded one.
//!
//! The metrics follow `eval/retrieval/README.md` (the same definitions as
//! `eval/retrieval/bm25_baseline.py`, checked against pytrec_eval): relevant means a qrel score
//! above 0; nDCG uses linear gain `rel / log2(rank + 1)` and the ideal ranking of all the
//! query's qrels; MAP@10 divides by the number of relevant documents; queries without a
//! relevant document are skipped.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// A BEIR-format evaluation set.
#[derive(Clone, Debug, Default)]
pub struct BeirSet {
    /// Queries: id and text, in file order.
    pub queries: Vec<(String, String)>,
    /// Query id → its `metadata.kind`, when given (`state`, `lookup`, …).
    pub kinds: HashMap<String, String>,
    /// Query id → document id → graded relevance.
    pub qrels: HashMap<String, HashMap<String, i64>>,
    /// State-sensitive pairs.
    pub state: Vec<StatePair>,
    /// Documents in the corpus.
    pub documents: usize,
}

/// A query whose current document must rank above a superseded one.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct StatePair {
    /// Query id.
    pub query_id: String,
    /// The current document.
    pub current: String,
    /// The superseded document.
    pub superseded: String,
}

impl BeirSet {
    /// Read the folder.
    pub fn load(dir: &Path) -> Result<Self> {
        #[derive(Deserialize)]
        struct Query {
            #[serde(rename = "_id")]
            id: String,
            text: String,
            #[serde(default)]
            metadata: Option<serde_json::Value>,
        }
        let read = |name: &str| -> Result<String> {
            std::fs::read_to_string(dir.join(name))
                .with_context(|| format!("reading {}", dir.join(name).display()))
        };
        let mut set = BeirSet {
            documents: read("corpus.jsonl")?
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count(),
            ..Default::default()
        };
        for (n, line) in read("queries.jsonl")?.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let q: Query =
                serde_json::from_str(line).with_context(|| format!("queries.jsonl:{}", n + 1))?;
            if let Some(kind) = q
                .metadata
                .as_ref()
                .and_then(|m| m.get("kind"))
                .and_then(|k| k.as_str())
            {
                set.kinds.insert(q.id.clone(), kind.to_string());
            }
            set.queries.push((q.id, q.text));
        }
        for (n, line) in read("qrels/test.tsv")?.lines().enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            if n == 0 && fields.first() == Some(&"query-id") || line.trim().is_empty() {
                continue;
            }
            let [query, doc, score] = fields[..] else {
                bail!(
                    "qrels/test.tsv:{}: expected three tab-separated fields",
                    n + 1
                );
            };
            let score: i64 = score
                .trim()
                .parse()
                .with_context(|| format!("qrels/test.tsv:{}: score", n + 1))?;
            set.qrels
                .entry(query.to_string())
                .or_default()
                .insert(doc.to_string(), score);
        }
        if dir.join("state.jsonl").is_file() {
            for (n, line) in read("state.jsonl")?.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                set.state.push(
                    serde_json::from_str(line).with_context(|| format!("state.jsonl:{}", n + 1))?,
                );
            }
        }
        Ok(set)
    }
}

/// nDCG@k with linear gain.
///
/// ```
/// use std::collections::{BTreeMap, HashMap};
/// use epigraph::eval::retrieval::ndcg;
/// let qrels = HashMap::from([("a".to_string(), 2), ("b".to_string(), 1)]);
/// let ideal = ["a".to_string(), "b".to_string()];
/// assert!((ndcg(&ideal, &qrels, 10) - 1.0).abs() < 1e-12);
/// let swapped = ["b".to_string(), "a".to_string()];
/// let expected = (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2());
/// assert!((ndcg(&swapped, &qrels, 10) - expected).abs() < 1e-12);
/// ```
pub fn ndcg(ranking: &[String], qrels: &HashMap<String, i64>, k: usize) -> f64 {
    let dcg: f64 = ranking
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, doc)| {
            qrels.get(doc).copied().unwrap_or(0).max(0) as f64 / (i as f64 + 2.0).log2()
        })
        .sum();
    let mut ideal: Vec<i64> = qrels.values().copied().filter(|r| *r > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, rel)| *rel as f64 / (i as f64 + 2.0).log2())
        .sum();
    if idcg == 0.0 { 0.0 } else { dcg / idcg }
}

/// Recall@k: relevant documents in the top k over all relevant documents.
///
/// ```
/// use std::collections::{BTreeMap, HashMap};
/// use epigraph::eval::retrieval::recall;
/// let qrels = HashMap::from([("a".to_string(), 2), ("b".to_string(), 1), ("c".to_string(), 0)]);
/// assert_eq!(recall(&["a".to_string(), "c".to_string()], &qrels, 5), 0.5);
/// ```
pub fn recall(ranking: &[String], qrels: &HashMap<String, i64>, k: usize) -> f64 {
    let relevant = qrels.values().filter(|r| **r > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranking
        .iter()
        .take(k)
        .filter(|d| qrels.get(*d).is_some_and(|r| *r > 0))
        .count();
    found as f64 / relevant as f64
}

/// Average precision over the top k, divided by all relevant documents (pytrec_eval
/// `map_cut_k`).
///
/// ```
/// use std::collections::{BTreeMap, HashMap};
/// use epigraph::eval::retrieval::average_precision;
/// let qrels = HashMap::from([("a".to_string(), 1), ("b".to_string(), 1)]);
/// let ranking = ["x".to_string(), "a".to_string()];
/// assert_eq!(average_precision(&ranking, &qrels, 10), 0.25);
/// ```
pub fn average_precision(ranking: &[String], qrels: &HashMap<String, i64>, k: usize) -> f64 {
    let relevant = qrels.values().filter(|r| **r > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let mut hits = 0;
    let mut sum = 0.0;
    for (i, doc) in ranking.iter().take(k).enumerate() {
        if qrels.get(doc).is_some_and(|r| *r > 0) {
            hits += 1;
            sum += hits as f64 / (i + 1) as f64;
        }
    }
    sum / relevant as f64
}

/// Whether the current document ranks strictly above the superseded one (a document missing
/// from the ranking ranks last; both missing is a failure).
///
/// ```
/// use epigraph::eval::retrieval::current_first;
/// let ranking = ["new".to_string(), "old".to_string()];
/// assert!(current_first(&ranking, "new", "old"));
/// assert!(!current_first(&ranking, "old", "new"));
/// assert!(current_first(&ranking, "new", "gone"));
/// assert!(!current_first(&ranking, "x", "y"));
/// ```
pub fn current_first(ranking: &[String], current: &str, superseded: &str) -> bool {
    let rank = |doc: &str| ranking.iter().position(|d| d == doc);
    match (rank(current), rank(superseded)) {
        (Some(c), Some(s)) => c < s,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The scores of one system on one set.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RetrievalScores {
    /// Which system.
    pub system: String,
    /// Queries with at least one relevant document.
    pub queries: usize,
    /// nDCG@1.
    #[serde(rename = "ndcg@1")]
    pub ndcg_1: f64,
    /// nDCG@5.
    #[serde(rename = "ndcg@5")]
    pub ndcg_5: f64,
    /// nDCG@10.
    #[serde(rename = "ndcg@10")]
    pub ndcg_10: f64,
    /// Recall@5.
    #[serde(rename = "recall@5")]
    pub recall_5: f64,
    /// Recall@10.
    #[serde(rename = "recall@10")]
    pub recall_10: f64,
    /// Recall@100.
    #[serde(rename = "recall@100")]
    pub recall_100: f64,
    /// MAP@10.
    #[serde(rename = "map@10")]
    pub map_10: f64,
    /// State-sensitive pairs.
    pub state_pairs: usize,
    /// Share of them where the current document ranks above the superseded one.
    pub state_current_first: f64,
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Score rankings (query id → ranked document ids) against a set.
pub fn score(
    system: &str,
    set: &BeirSet,
    rankings: &HashMap<String, Vec<String>>,
) -> RetrievalScores {
    let mut s = RetrievalScores {
        system: system.to_string(),
        ..Default::default()
    };
    let empty = Vec::new();
    for (id, _) in &set.queries {
        let Some(qrels) = set.qrels.get(id) else {
            continue;
        };
        if !qrels.values().any(|r| *r > 0) {
            continue;
        }
        let ranking = rankings.get(id).unwrap_or(&empty);
        s.queries += 1;
        s.ndcg_1 += ndcg(ranking, qrels, 1);
        s.ndcg_5 += ndcg(ranking, qrels, 5);
        s.ndcg_10 += ndcg(ranking, qrels, 10);
        s.recall_5 += recall(ranking, qrels, 5);
        s.recall_10 += recall(ranking, qrels, 10);
        s.recall_100 += recall(ranking, qrels, 100);
        s.map_10 += average_precision(ranking, qrels, 10);
    }
    let n = s.queries.max(1) as f64;
    for value in [
        &mut s.ndcg_1,
        &mut s.ndcg_5,
        &mut s.ndcg_10,
        &mut s.recall_5,
        &mut s.recall_10,
        &mut s.recall_100,
        &mut s.map_10,
    ] {
        *value = round4(*value / n);
    }
    let wins = set
        .state
        .iter()
        .filter(|p| {
            current_first(
                rankings.get(&p.query_id).unwrap_or(&empty),
                &p.current,
                &p.superseded,
            )
        })
        .count();
    s.state_pairs = set.state.len();
    s.state_current_first = round4(wins as f64 / set.state.len().max(1) as f64);
    s
}

/// The report of `epigraph eval retrieval`.
#[derive(Clone, Debug, Serialize)]
pub struct RetrievalReport {
    /// The folder.
    pub set: String,
    /// The fresh tenant the corpus was ingested into.
    pub tenant: String,
    /// Documents in the corpus.
    pub documents: usize,
    /// Memory objects the pipeline made of them.
    pub memory_objects: usize,
    /// Seconds spent ingesting (publish + run until idle).
    pub ingest_seconds: f64,
    /// Median search latency, ms.
    pub search_p50_ms: f64,
    /// Scores of each system asked (`/v1/search?level=source`, the given mode): `fused` (the
    /// three document signals, φ applied), `unmodulated` (the same, `modulate=false`: what
    /// the graph adds), `memory` (documents by their memory objects alone, φ applied: the
    /// ranking before the fusion).
    pub systems: Vec<RetrievalScores>,
    /// nDCG@10 per query kind (`metadata.kind` of the queries) and system, with the number of
    /// queries.
    pub ndcg10_by_kind: BTreeMap<String, BTreeMap<String, f64>>,
    /// nDCG@10 per query and system.
    pub per_query: BTreeMap<String, BTreeMap<String, f64>>,
    /// The baselines, when `--baseline` ran them: `bm25_baseline.py` (whole documents) and
    /// `chunk_hybrid_baseline.py` (chunk BM25, dense, hybrid min-max and RRF), one score line
    /// each.
    pub baseline: Option<Vec<serde_json::Value>>,
    /// Per state pair: whether epigraph ranked the current document first.
    pub state_failures: Vec<StatePair>,
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RetrievalOptions {
    /// Results asked per query (at least 100 for recall@100).
    pub k: usize,
    /// Tenant to ingest into (default: a fresh `eval-<set>-<time>`).
    pub tenant: Option<String>,
    /// `hybrid`, `text` or `vector`.
    pub mode: String,
    /// Python interpreter to run `eval/retrieval/bm25_baseline.py` with.
    pub baseline_python: Option<std::path::PathBuf>,
    /// Skip ingestion (the tenant already holds the corpus).
    pub skip_ingest: bool,
    /// Systems to ask, in order: `fused`, `unmodulated`, `memory`.
    pub systems: Vec<String>,
    /// Write each system's top 20 per query here (JSON), for error analysis.
    pub rankings_out: Option<std::path::PathBuf>,
}

/// A tenant name for a set: `eval-<folder>-<unix seconds>`.
///
/// ```
/// let t = epigraph::eval::retrieval::fresh_tenant(std::path::Path::new("eval/retrieval/PEPs set"));
/// assert!(t.starts_with("eval-peps-set-"));
/// assert!(epigraph_schemas::topics::valid_tenant(&t));
/// ```
pub fn fresh_tenant(dir: &Path) -> String {
    let name: String = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("eval-{}-{secs}", name.trim_matches('-'))
}

/// Run the whole evaluation.
pub async fn evaluate_retrieval(
    config: &crate::config::EpigraphConfig,
    dir: &Path,
    options: &RetrievalOptions,
) -> Result<RetrievalReport> {
    let set = BeirSet::load(dir)?;
    let tenant = options.tenant.clone().unwrap_or_else(|| fresh_tenant(dir));
    epigraph_sources::scan::check_tenant(&tenant)?;
    let started = std::time::Instant::now();
    if !options.skip_ingest {
        let scan =
            epigraph_sources::beir::read_corpus(dir, &tenant, config.kafka.dead_letter_max_bytes)?;
        eprintln!(
            "eval retrieval: publishing {} documents into tenant {tenant}",
            scan.events.len()
        );
        crate::publish::publish(config, scan).await?;
        eprintln!("eval retrieval: running the pipeline until idle");
        crate::runtime::run(
            config.clone(),
            crate::runtime::RunOptions { until_idle: true },
        )
        .await?;
    }
    let ingest_seconds = started.elapsed().as_secs_f64();

    let mut serve_config = config.clone();
    serve_config.serve.report_usage = false;
    serve_config.serve.tokens.clear();
    serve_config.serve.max_k = serve_config.serve.max_k.max(options.k);
    let memory_objects = crate::serve::open_state(&serve_config)
        .await?
        .lance_rows(&format!("tenant = '{tenant}'"))
        .await
        .unwrap_or(0);
    if options.systems.is_empty() {
        bail!("no system to evaluate (--systems fused,unmodulated,memory)");
    }
    let client = reqwest::Client::new();
    let mut runs: Vec<(String, HashMap<String, Vec<String>>)> = Vec::new();
    let mut latencies = Vec::new();
    for system in &options.systems {
        let mut config = serve_config.clone();
        if system == "memory" {
            // Today's path before the fusion: documents by their memory objects alone.
            config.serve.rank.source_chunk_weight = 0.0;
            config.serve.rank.source_document_weight = 0.0;
        }
        let modulate = if system == "unmodulated" {
            "false"
        } else {
            "true"
        };
        let state = crate::serve::open_state(&config).await?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server =
            tokio::spawn(async move { axum::serve(listener, crate::serve::router(state)).await });
        let bar = crate::publish::progress_bar(set.queries.len() as u64, "querying");
        let mut rankings = HashMap::new();
        for (id, text) in &set.queries {
            let t = std::time::Instant::now();
            let response = client
                .get(format!("http://{addr}/v1/search"))
                .query(&[
                    ("q", text.as_str()),
                    ("k", &options.k.to_string()),
                    ("level", "source"),
                    ("mode", options.mode.as_str()),
                    ("modulate", modulate),
                    ("tenant", tenant.as_str()),
                ])
                .send()
                .await?;
            if system == "fused" {
                latencies.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            let status = response.status();
            let body: serde_json::Value = response.json().await?;
            if !status.is_success() {
                bail!("query {id}: {status}: {body}");
            }
            let ranking: Vec<String> = body["results"]
                .as_array()
                .map(|results| {
                    results
                        .iter()
                        .filter_map(|r| r["source_id"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            rankings.insert(id.clone(), ranking);
            bar.inc(1);
        }
        bar.finish_and_clear();
        server.abort();
        runs.push((system.clone(), rankings));
    }
    latencies.sort_by(f64::total_cmp);
    let search_p50_ms = latencies.get(latencies.len() / 2).copied().unwrap_or(0.0);
    let name = |system: &str| match system {
        "fused" => format!("epigraph-{}", options.mode),
        other => format!("epigraph-{}-{other}", options.mode),
    };
    let systems: Vec<RetrievalScores> = runs
        .iter()
        .map(|(system, rankings)| score(&name(system), &set, rankings))
        .collect();
    let mut ndcg10_by_kind: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut kind_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_query: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let empty = Vec::new();
    for (id, _) in &set.queries {
        let Some(qrels) = set.qrels.get(id) else {
            continue;
        };
        if !qrels.values().any(|r| *r > 0) {
            continue;
        }
        let kind = set.kinds.get(id).cloned().unwrap_or_else(|| "all".into());
        *kind_counts.entry(kind.clone()).or_default() += 1;
        for (system, rankings) in &runs {
            let value = ndcg(rankings.get(id).unwrap_or(&empty), qrels, 10);
            *ndcg10_by_kind
                .entry(kind.clone())
                .or_default()
                .entry(system.clone())
                .or_default() += value;
            per_query
                .entry(id.clone())
                .or_default()
                .insert(system.clone(), round4(value));
        }
    }
    for (kind, values) in &mut ndcg10_by_kind {
        let n = kind_counts.get(kind).copied().unwrap_or(1).max(1) as f64;
        for value in values.values_mut() {
            *value = round4(*value / n);
        }
        values.insert("queries".into(), n);
    }
    let fused = runs
        .iter()
        .find(|(system, _)| system == "fused")
        .map(|(_, r)| r)
        .unwrap_or(&runs[0].1);
    let state_failures = set
        .state
        .iter()
        .filter(|p| {
            !current_first(
                fused.get(&p.query_id).map(Vec::as_slice).unwrap_or(&[]),
                &p.current,
                &p.superseded,
            )
        })
        .cloned()
        .collect();
    if let Some(path) = &options.rankings_out {
        let top: BTreeMap<&str, BTreeMap<&str, Vec<&String>>> = runs
            .iter()
            .map(|(system, rankings)| {
                (
                    system.as_str(),
                    rankings
                        .iter()
                        .map(|(q, r)| (q.as_str(), r.iter().take(20).collect()))
                        .collect(),
                )
            })
            .collect();
        std::fs::write(path, serde_json::to_string(&top)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let baseline = match &options.baseline_python {
        Some(python) => Some(run_baselines(python, dir)?),
        None => None,
    };
    Ok(RetrievalReport {
        set: dir.display().to_string(),
        tenant,
        documents: set.documents,
        memory_objects,
        ingest_seconds: round4(ingest_seconds),
        search_p50_ms: round4(search_p50_ms),
        systems,
        ndcg10_by_kind,
        per_query,
        baseline,
        state_failures,
    })
}

/// Run `bm25_baseline.py` and `chunk_hybrid_baseline.py` on the folder; every JSON line they
/// print (one per system).
fn run_baselines(python: &Path, dir: &Path) -> Result<Vec<serde_json::Value>> {
    let mut lines = Vec::new();
    let here = std::env::current_dir().context("reading the working directory")?;
    for script in ["bm25_baseline.py", "chunk_hybrid_baseline.py"] {
        let script = baseline_script(script, &here)?;
        let output = std::process::Command::new(python)
            .arg(&script)
            .arg(dir)
            .output()
            .with_context(|| format!("running {} {}", python.display(), script.display()))?;
        if !output.status.success() {
            bail!(
                "{} failed: {}",
                script.display(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            if line.trim_start().starts_with('{') {
                lines.push(serde_json::from_str(line).context("reading a baseline's JSON")?);
            }
        }
    }
    Ok(lines)
}

/// Where a baseline script is: `eval/retrieval/<name>` under the working directory (a checkout,
/// wherever the binary came from), else in the checkout the binary was built from.
fn baseline_script(name: &str, working_dir: &Path) -> Result<std::path::PathBuf> {
    let candidates = [
        working_dir.join("eval/retrieval").join(name),
        epigraph_schemas::manifest_dir!()
            .join("../eval/retrieval")
            .join(name),
    ];
    match candidates.iter().find(|path| path.is_file()) {
        Some(path) => Ok(path.clone()),
        None => bail!(
            "the baseline script {name} is neither at {} nor at {}: run from the repository root",
            candidates[0].display(),
            candidates[1].display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_scripts_are_found_under_the_working_directory_first() {
        let checkout = tempfile::tempdir().unwrap();
        let folder = checkout.path().join("eval/retrieval");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("bm25_baseline.py"), "").unwrap();
        assert_eq!(
            baseline_script("bm25_baseline.py", checkout.path()).unwrap(),
            folder.join("bm25_baseline.py")
        );
        // Elsewhere, the checkout the binary was built from.
        let elsewhere = tempfile::tempdir().unwrap();
        let found = baseline_script("bm25_baseline.py", elsewhere.path()).unwrap();
        assert!(
            found.ends_with("eval/retrieval/bm25_baseline.py"),
            "{found:?}"
        );
        assert!(found.is_file());
        let missing = baseline_script("no_such_baseline.py", elsewhere.path()).unwrap_err();
        assert!(
            missing.to_string().contains("run from the repository root"),
            "{missing}"
        );
    }

    #[test]
    fn scores_average_over_queries_with_relevant_documents() {
        let set = BeirSet {
            queries: vec![
                ("q1".into(), "a".into()),
                ("q2".into(), "b".into()),
                ("q3".into(), "none".into()),
            ],
            qrels: HashMap::from([
                ("q1".to_string(), HashMap::from([("d1".to_string(), 2)])),
                ("q2".to_string(), HashMap::from([("d2".to_string(), 1)])),
            ]),
            state: vec![StatePair {
                query_id: "q1".into(),
                current: "d1".into(),
                superseded: "d3".into(),
            }],
            documents: 3,
            ..Default::default()
        };
        let rankings = HashMap::from([
            ("q1".to_string(), vec!["d1".to_string(), "d3".to_string()]),
            ("q2".to_string(), vec!["d3".to_string()]),
        ]);
        let s = score("x", &set, &rankings);
        assert_eq!(s.queries, 2);
        assert_eq!(s.ndcg_10, 0.5);
        assert_eq!(s.recall_100, 0.5);
        assert_eq!(s.state_current_first, 1.0);
    }
}
