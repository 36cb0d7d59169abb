//! `epigraph eval epistemics --keps <dir>`: the judged edges on real design documents, against
//! labels written blind, at the level of document pairs.
//!
//! The set (`eval/epistemics/keps/`, see its `GUIDE.md`) groups Kubernetes enhancement
//! proposals that relate to each other (`groups.jsonl`, each group fixed to the `dev` or `test`
//! split before labelling), lists every pair of a group that was judged (`judged_pairs.jsonl`)
//! and the relations that hold between them (`labels.jsonl`: `from` → `to`, relation, verbatim
//! evidence). The labeller never saw the system's rules or output.
//!
//! Each KEP of the split becomes one document: its `kep.yaml` as a header block (`KEP: 753`,
//! title, status, stage, owning SIG, dates, `Replaces:`/`Superseded-By:`) above its
//! `README.md`, dated by the header's `Last-Updated:` (else `Created:`) through the documents
//! source's
//! [`declared_date`]. All KEPs of the split are one organisation and go through `extract_graph`
//! in one in-process dataflow. Every judged edge between memory objects of two documents (or,
//! for `ANSWERS`, of one) is one predicted document pair. Scored per relation:
//! - **precision** over the predicted pairs that were judged (a pair of two KEPs of one group);
//!   predictions between KEPs of different groups are counted apart (`unjudged`), as nobody
//!   labelled them;
//! - **recall** over the labelled pairs.
//!
//! `CONTRADICTS` pairs are unordered; the other relations are directed. `SUPPORTS or BASED_ON`
//! counts a predicted `SUPPORTS` or `BASED_ON` correct when either is labelled.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use epigraph_operators::{Extractor, GraphElement, SourceVersion};
use epigraph_schemas::SourceKind;
use epigraph_sources::docs::declared_date;
use serde::{Deserialize, Serialize};

use super::epistemics::live_graph;

/// The relations the set labels, in report order.
pub const RELATIONS: [&str; 9] = [
    "SUPERSEDES",
    "CONTRADICTS",
    "SUPPORTS",
    "BASED_ON",
    "IMPLEMENTS",
    "REFINES",
    "ANSWERS",
    "RELATION_CHANGE",
    "SUPPORTS or BASED_ON",
];

/// One group of related KEPs.
#[derive(Clone, Debug, Deserialize)]
pub struct Group {
    /// `g01`, …
    pub group: String,
    /// `dev` or `test`, fixed before labelling.
    pub split: String,
    /// What the group is about.
    #[serde(default)]
    pub theme: String,
    /// Document ids: KEPs as `<sig>/<number-name>`, PEPs as `pep-NNNN` (`docs` in a PEP set's
    /// file, `keps` in a KEP set's).
    #[serde(alias = "docs")]
    pub keps: Vec<String>,
}

#[derive(Deserialize)]
struct JudgedPair {
    a: String,
    b: String,
}

#[derive(Deserialize)]
struct Label {
    from: String,
    to: String,
    relation: String,
    #[serde(default)]
    evidence_from: String,
}

/// The scores of one relation.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PairScores {
    /// Labelled document pairs.
    pub gold: usize,
    /// Predicted pairs among the judged ones.
    pub predicted: usize,
    /// Predicted pairs that are labelled.
    pub correct: usize,
    /// correct / predicted (1 when nothing was predicted).
    pub precision: f64,
    /// correct / gold (1 when nothing is labelled).
    pub recall: f64,
    /// Predicted pairs between KEPs of different groups (nobody judged them).
    pub unjudged: usize,
    /// Predicted pairs that are labelled, with one statement pair that drew each (what a rule
    /// change must keep).
    pub hits: Vec<PairExample>,
    /// Predicted pairs that are not labelled, with one statement pair that drew each.
    pub false_positives: Vec<PairExample>,
    /// Labelled pairs not predicted, with the labeller's evidence.
    pub misses: Vec<PairExample>,
}

/// A document pair with the statements behind it.
#[derive(Clone, Debug, Serialize)]
pub struct PairExample {
    /// From document.
    pub from: String,
    /// To document.
    pub to: String,
    /// The statement (predicted) or the evidence quote (labelled) on the `from` side.
    pub from_text: String,
    /// The statement on the `to` side (predicted only).
    pub to_text: String,
    /// How many statement pairs drew it (predicted only; 0 for a miss).
    pub statements: usize,
    /// Why they were drawn, as the edges say (the cues; predicted only).
    pub why: BTreeSet<String>,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct KepReport {
    /// `dev` or `test`.
    pub split: String,
    /// Groups and KEPs of the split.
    pub groups: usize,
    /// KEPs ingested.
    pub documents: usize,
    /// Memory objects extracted, and how many per type.
    pub memories: usize,
    /// Memory objects per type.
    pub memory_types: BTreeMap<String, usize>,
    /// Judged document pairs of the split.
    pub judged_pairs: usize,
    /// Per relation (see [`RELATIONS`]).
    pub relations: BTreeMap<String, PairScores>,
}

/// A KEP as one document: its `kep.yaml` as a header above its `README.md`.
///
/// ```no_run
/// let (title, text) = epigraph::eval::keps::kep_document(
///     std::path::Path::new("tests/fixtures/keps/keps"), "sig-node/753-sidecar-containers").unwrap();
/// assert!(text.starts_with("KEP: 753\nTitle: Sidecar Containers\n"));
/// ```
pub fn kep_document(root: &Path, id: &str) -> Result<(String, String)> {
    let dir = root.join(id);
    let yaml_path = dir.join("kep.yaml");
    let yaml = std::fs::read_to_string(&yaml_path)
        .with_context(|| format!("reading {}", yaml_path.display()))?;
    let meta: serde_yaml_ng::Value = serde_yaml_ng::from_str(&yaml)
        .with_context(|| format!("parsing {}", yaml_path.display()))?;
    let readme_path = dir.join("README.md");
    let readme = std::fs::read_to_string(&readme_path)
        .with_context(|| format!("reading {}", readme_path.display()))?;
    let field = |key: &str| -> Option<String> {
        match meta.get(key)? {
            serde_yaml_ng::Value::String(s) => Some(s.clone()),
            serde_yaml_ng::Value::Number(n) => Some(n.to_string()),
            serde_yaml_ng::Value::Sequence(items) => {
                let items: Vec<String> = items
                    .iter()
                    .filter_map(|v| match v {
                        serde_yaml_ng::Value::String(s) => Some(s.clone()),
                        serde_yaml_ng::Value::Number(n) => Some(n.to_string()),
                        _ => None,
                    })
                    .collect();
                (!items.is_empty()).then(|| items.join(", "))
            }
            _ => None,
        }
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
    };
    let title = field("title").unwrap_or_else(|| id.to_string());
    // A header block as numbered documents write it (`PEP: 8`, `Status: Final`): one
    // `Key: value` line each from the first line on, keys without spaces.
    let mut header = String::new();
    for (label, key) in [
        ("KEP", "kep-number"),
        ("Title", "title"),
        ("Status", "status"),
        ("Stage", "stage"),
        ("Owning-SIG", "owning-sig"),
        ("Participating-SIGs", "participating-sigs"),
        ("Created", "creation-date"),
        ("Last-Updated", "last-updated"),
        ("Replaces", "replaces"),
        ("Superseded-By", "superseded-by"),
        ("Latest-Milestone", "latest-milestone"),
    ] {
        if let Some(value) = field(key) {
            header.push_str(&format!("{label}: {value}\n"));
        }
    }
    Ok((title, format!("{header}\n{readme}")))
}

/// A PEP as one document: its reStructuredText file verbatim (the RFC 822 header block with
/// `Status:`, `Created:`, `Replaces:`/`Superseded-By:`, `Resolution:` above the body), titled by
/// its `Title:` header. The documents source reads a `.rst` file the same way.
///
/// ```no_run
/// let (title, text) = epigraph::eval::keps::pep_document(
///     std::path::Path::new("tests/fixtures/peps"), "pep-0008").unwrap();
/// assert_eq!(title, "Style Guide for Python Code");
/// assert!(text.starts_with("PEP: 8\n"));
/// ```
pub fn pep_document(root: &Path, id: &str) -> Result<(String, String)> {
    let path = root.join(format!("{id}.rst"));
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let title = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .find_map(|l| l.strip_prefix("Title:"))
        .map(|t| t.trim().to_string())
        .unwrap_or_else(|| id.to_string());
    Ok((title, text))
}

/// One labelled document of a set: a PEP (`pep-NNNN`, a `.rst` file under `root`) or a KEP
/// (`<sig>/<number-name>`, a folder under `root`).
pub fn labelled_document(root: &Path, id: &str) -> Result<(String, String)> {
    if id.starts_with("pep-") {
        pep_document(root, id)
    } else {
        kep_document(root, id)
    }
}

/// Reads the set's groups.
pub fn read_groups(dir: &Path) -> Result<Vec<Group>> {
    read_lines(&dir.join("groups.jsonl"))
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{}:{}", path.display(), i + 1))
        })
        .collect()
}

/// Evaluates one split of the set in `dir` over the KEPs under `root`.
pub fn evaluate_keps(
    extractor: Arc<Extractor>,
    dir: &Path,
    root: &Path,
    split: &str,
) -> Result<KepReport> {
    let groups: Vec<Group> = read_groups(dir)?
        .into_iter()
        .filter(|g| g.split == split)
        .collect();
    if groups.is_empty() {
        bail!("no group of split {split:?} in {}", dir.display());
    }
    let group_of: BTreeMap<&str, &str> = groups
        .iter()
        .flat_map(|g| g.keps.iter().map(|k| (k.as_str(), g.group.as_str())))
        .collect();
    let mut versions = Vec::new();
    for kep in group_of.keys() {
        let (title, text) = labelled_document(root, kep)?;
        let mut version = SourceVersion::new("keps", kep, SourceKind::Document, &text);
        version.title = Some(title);
        version.occurred_at = declared_date(&text);
        version.recorded_at = version.occurred_at;
        versions.push(version);
    }
    let documents = versions.len();
    let graph = live_graph(versions, extractor);

    let mut source_of: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    let mut memory_types: BTreeMap<String, usize> = BTreeMap::new();
    for e in &graph {
        match e {
            GraphElement::Memory(m) => {
                source_of.insert(&m.id, (&m.source_id, &m.text));
                *memory_types.entry(m.memory_type.name()).or_default() += 1;
            }
            // Documents replaced by others (their headers' `Replaces:`) are edges between
            // source nodes.
            GraphElement::Source(n) => {
                source_of.insert(&n.id, (&n.source_id, n.title.as_deref().unwrap_or("")));
            }
            _ => {}
        }
    }
    let memories = memory_types.values().sum();
    // Predicted document pairs per relation, with one statement pair behind each.
    let mut predicted: BTreeMap<&str, DocPairs> = BTreeMap::new();
    for e in &graph {
        let GraphElement::Relation(r) = e else {
            continue;
        };
        let (Some((from, from_text)), Some((to, to_text))) =
            (source_of.get(r.from.as_str()), source_of.get(r.to.as_str()))
        else {
            continue;
        };
        let Some(relation) = RELATIONS.iter().find(|x| **x == r.rel_type) else {
            continue;
        };
        if from == to && *relation != "ANSWERS" {
            continue;
        }
        let key = if *relation == "CONTRADICTS" && to < from {
            (to.to_string(), from.to_string())
        } else {
            (from.to_string(), to.to_string())
        };
        let pair = predicted
            .entry(relation)
            .or_default()
            .entry(key)
            .or_insert_with(|| {
                (
                    from_text.to_string(),
                    to_text.to_string(),
                    0,
                    BTreeSet::new(),
                )
            });
        pair.2 += 1;
        pair.3.extend(r.evidence.iter().cloned());
    }
    let mut combined = DocPairs::new();
    for (key, (a, b, n, why)) in ["SUPPORTS", "BASED_ON"]
        .iter()
        .filter_map(|r| predicted.get(r))
        .flat_map(|m| m.iter())
    {
        let pair = combined
            .entry(key.clone())
            .or_insert_with(|| (a.clone(), b.clone(), 0, BTreeSet::new()));
        pair.2 += n;
        pair.3.extend(why.iter().cloned());
    }
    predicted.insert("SUPPORTS or BASED_ON", combined);

    let judged: BTreeSet<(String, String)> =
        read_lines::<JudgedPair>(&dir.join("judged_pairs.jsonl"))?
            .into_iter()
            .filter(|p| group_of.contains_key(p.a.as_str()))
            .map(|p| unordered(&p.a, &p.b))
            .collect();
    let labels: Vec<Label> = read_lines::<Label>(&dir.join("labels.jsonl"))?
        .into_iter()
        .filter(|l| group_of.contains_key(l.from.as_str()))
        .collect();
    let mut relations = BTreeMap::new();
    for relation in RELATIONS {
        let wanted: Vec<&str> = if relation == "SUPPORTS or BASED_ON" {
            vec!["SUPPORTS", "BASED_ON"]
        } else {
            vec![relation]
        };
        let mut gold: BTreeMap<(String, String), String> = BTreeMap::new();
        for l in labels
            .iter()
            .filter(|l| wanted.contains(&l.relation.as_str()))
        {
            let key = if relation == "CONTRADICTS" {
                unordered(&l.from, &l.to)
            } else {
                (l.from.clone(), l.to.clone())
            };
            gold.entry(key).or_insert_with(|| l.evidence_from.clone());
        }
        let empty = BTreeMap::new();
        let guessed = predicted.get(relation).unwrap_or(&empty);
        let is_judged = |(a, b): &(String, String)| {
            a == b && group_of.contains_key(a.as_str()) || judged.contains(&unordered(a, b))
        };
        let in_judged: Vec<_> = guessed.iter().filter(|(k, _)| is_judged(k)).collect();
        let correct = in_judged
            .iter()
            .filter(|(k, _)| gold.contains_key(*k))
            .count();
        let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        relations.insert(
            relation.to_string(),
            PairScores {
                gold: gold.len(),
                predicted: in_judged.len(),
                correct,
                precision: ratio(correct, in_judged.len()),
                recall: ratio(correct, gold.len()),
                unjudged: guessed.len() - in_judged.len(),
                hits: examples(&in_judged, |k| gold.contains_key(k)),
                false_positives: examples(&in_judged, |k| !gold.contains_key(k)),
                misses: gold
                    .iter()
                    .filter(|(k, _)| !guessed.contains_key(*k))
                    .map(|((from, to), evidence)| PairExample {
                        from: from.clone(),
                        to: to.clone(),
                        from_text: evidence.clone(),
                        to_text: String::new(),
                        statements: 0,
                        why: BTreeSet::new(),
                    })
                    .collect(),
            },
        );
    }
    Ok(KepReport {
        split: split.to_string(),
        groups: groups.len(),
        documents,
        memories,
        memory_types,
        judged_pairs: judged.len(),
        relations,
    })
}

/// The predicted pairs of `pairs` that `keep` keeps, as examples.
fn examples(
    pairs: &[(&(String, String), &DrawnBy)],
    keep: impl Fn(&(String, String)) -> bool,
) -> Vec<PairExample> {
    pairs
        .iter()
        .filter(|(k, _)| keep(k))
        .map(|((from, to), (a, b, n, why))| PairExample {
            from: from.clone(),
            to: to.clone(),
            from_text: a.clone(),
            to_text: b.clone(),
            statements: *n,
            why: why.clone(),
        })
        .collect()
}

/// One statement pair that drew a document pair (from and to texts), how many did, and why.
type DrawnBy = (String, String, usize, BTreeSet<String>);

/// Document pairs, each with what drew it.
type DocPairs = BTreeMap<(String, String), DrawnBy>;

fn unordered(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// The KEP fixtures' default location in the repository.
pub fn default_root() -> PathBuf {
    PathBuf::from("tests/fixtures/keps/keps")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        epigraph_schemas::manifest_dir!().join("../tests/fixtures/keps/keps")
    }

    #[test]
    fn a_kep_is_its_header_above_its_readme_dated_by_its_last_update() {
        let (title, text) = kep_document(&root(), "sig-scheduling/5832-decouple-podgroup-api")
            .expect("the fixture reads");
        assert_eq!(title, "Decouple PodGroup API");
        assert!(
            text.starts_with("KEP: 5832\nTitle: Decouple PodGroup API\n"),
            "{}",
            &text[..200]
        );
        assert!(text.contains("\nReplaces: /keps/sig-scheduling/583-coscheduling\n"));
        // No `last-updated` in its kep.yaml: dated by its creation.
        let created = chrono::NaiveDate::from_ymd_opt(2026, 1, 23)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|d| d.and_utc().timestamp_millis());
        assert_eq!(declared_date(&text), created);
    }

    /// A one-group set: 5832's `kep.yaml` says it replaces 583; both documents go through the
    /// whole path (header block, document keys, the dataflow) and the pair is scored.
    #[test]
    fn a_header_replacement_is_scored_as_a_document_pair() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (
            "sig-scheduling/583-coscheduling",
            "sig-scheduling/5832-decouple-podgroup-api",
        );
        std::fs::write(
            dir.path().join("groups.jsonl"),
            format!(r#"{{"group":"g1","split":"dev","keps":["{a}","{b}"]}}"#),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("judged_pairs.jsonl"),
            format!(r#"{{"group":"g1","a":"{a}","b":"{b}"}}"#),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("labels.jsonl"),
            format!(r#"{{"group":"g1","from":"{b}","to":"{a}","relation":"SUPERSEDES"}}"#),
        )
        .unwrap();
        let report =
            evaluate_keps(Arc::new(Extractor::bundled()), dir.path(), &root(), "dev").unwrap();
        assert_eq!(report.documents, 2);
        let supersedes = &report.relations["SUPERSEDES"];
        assert_eq!(
            (supersedes.gold, supersedes.correct),
            (1, 1),
            "{supersedes:#?}"
        );
        assert!(
            evaluate_keps(Arc::new(Extractor::bundled()), dir.path(), &root(), "test").is_err()
        );
    }

    /// A PEP set names its documents `docs`: 102's header says it is superseded by 101, the
    /// pair goes through the same path and is scored.
    #[test]
    fn a_pep_set_reads_rst_files_and_scores_their_header_replacement() {
        let peps = epigraph_schemas::manifest_dir!().join("../tests/fixtures/peps");
        let (title, text) = pep_document(&peps, "pep-0102").expect("the fixture reads");
        assert_eq!(title, "Doing Python Micro Releases");
        assert!(text.starts_with("PEP: 102\n"));
        assert!(
            declared_date(&text).is_some(),
            "Created: 09-Jan-2002 is a date"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("groups.jsonl"),
            r#"{"group":"p1","split":"dev","docs":["pep-0101","pep-0102"]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("judged_pairs.jsonl"),
            r#"{"group":"p1","a":"pep-0101","b":"pep-0102"}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("labels.jsonl"),
            r#"{"group":"p1","from":"pep-0101","to":"pep-0102","relation":"SUPERSEDES"}"#,
        )
        .unwrap();
        let report =
            evaluate_keps(Arc::new(Extractor::bundled()), dir.path(), &peps, "dev").unwrap();
        assert_eq!(report.documents, 2);
        let supersedes = &report.relations["SUPERSEDES"];
        assert_eq!(supersedes.gold, 1, "{supersedes:#?}");
        assert_eq!(supersedes.correct, 1, "{supersedes:#?}");
    }
}
