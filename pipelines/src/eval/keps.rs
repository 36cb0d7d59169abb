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
    /// The group it was judged in (a document may be in groups of both splits).
    #[serde(default)]
    group: String,
    a: String,
    b: String,
}

#[derive(Deserialize)]
struct Label {
    #[serde(default)]
    group: String,
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
    /// Plans and the reports that close them, when the set labels them (`plans.jsonl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plans: Option<PlanScores>,
}

/// One labelled plan (`plans.jsonl`): a statement of future work in one document of a group,
/// and the later document of the group that reports it done, if any.
#[derive(Clone, Debug, Deserialize)]
struct LabelledPlan {
    group: String,
    plan_doc: String,
    plan_text: String,
    #[serde(default)]
    report_doc: Option<String>,
    /// `done`, `not_reported` or `changed`.
    outcome: String,
}

/// What `/v1/plans/overdue` decides, on labelled real text: whether the extractor types each
/// labelled plan PLAN (only those can be listed late), and whether a statement of a later
/// document of its group reports it done ([`epigraph_query::plans::reports_done`], the rule
/// that folds a plan apart as reported done).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PlanScores {
    /// Labelled plans of the split.
    pub plans: usize,
    /// Plans whose statement the extractor made a memory object of.
    pub extracted: usize,
    /// Plans whose statement it typed PLAN.
    pub typed_plan: usize,
    /// Plans labelled done (a later document of the group reports the work done).
    pub labelled_done: usize,
    /// Plans some later statement of the group reports done, by the rule.
    pub closed: usize,
    /// Closed plans labelled done, closed by a statement of the labelled report's document.
    pub closed_right: usize,
    /// closed_right / closed (1 when none is closed).
    pub precision: f64,
    /// closed_right / labelled_done (1 when none is labelled done).
    pub recall: f64,
    /// Every labelled plan with its outcome and what the rule decided.
    pub cases: Vec<PlanCase>,
}

/// One labelled plan and what the rule made of it.
#[derive(Clone, Debug, Serialize)]
pub struct PlanCase {
    /// The plan's document.
    pub plan_doc: String,
    /// The plan as labelled.
    pub plan_text: String,
    /// The type of the memory object that holds it (`None`: not extracted).
    pub typed: Option<String>,
    /// `done`, `not_reported` or `changed`, as labelled.
    pub outcome: String,
    /// The labelled report's document.
    pub report_doc: Option<String>,
    /// The first later statement that closes it by the rule: `(document, text)`.
    pub closed_by: Option<(String, String)>,
}

/// Lower-case words of letters and digits.
fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How much of `wanted`'s words `unit` holds (0–1): an extracted unit and a labelled quote
/// differ in markup and in where a sentence is cut.
fn covered(wanted: &[String], unit: &str) -> f64 {
    if wanted.is_empty() {
        return 0.0;
    }
    let have: BTreeSet<String> = plain_words(unit).into_iter().collect();
    wanted.iter().filter(|w| have.contains(*w)).count() as f64 / wanted.len() as f64
}

/// Scores the labelled plans of `groups` against the extracted memory objects: a plan is
/// closed by the first later statement of its group that carries it out (an `IMPLEMENTS` edge
/// into the plan's statement, `implements` as (from, to) memory ids) or says its work was done
/// (`reports_done`), as `/v1/plans/overdue` closes it.
fn evaluate_plans(
    plans: &[LabelledPlan],
    groups: &[Group],
    memories: &[&epigraph_operators::MemoryObject],
    dated: &BTreeMap<String, Option<i64>>,
    implements: &BTreeSet<(String, String)>,
) -> PlanScores {
    let mut scores = PlanScores::default();
    for plan in plans {
        let Some(group) = groups.iter().find(|g| g.group == plan.group) else {
            continue;
        };
        scores.plans += 1;
        let wanted = plain_words(&plan.plan_text);
        let holder = memories
            .iter()
            .filter(|m| m.source_id == plan.plan_doc)
            .map(|m| (covered(&wanted, &m.text), m))
            .filter(|(c, _)| *c >= 0.6)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, m)| *m);
        let typed = holder.map(|m| m.memory_type.name());
        if holder.is_some() {
            scores.extracted += 1;
        }
        if typed.as_deref() == Some("PLAN") {
            scores.typed_plan += 1;
        }
        let written = dated.get(&plan.plan_doc).copied().flatten();
        let later = |doc: &str| {
            doc != plan.plan_doc
                && match (written, dated.get(doc).copied().flatten()) {
                    (Some(a), Some(b)) => b > a,
                    _ => false,
                }
        };
        let mut candidates: Vec<&&epigraph_operators::MemoryObject> = memories
            .iter()
            .filter(|m| group.keps.contains(&m.source_id) && later(&m.source_id))
            .collect();
        candidates.sort_by_key(|m| (dated.get(&m.source_id).copied().flatten(), m.span.0));
        let carries_out = |m: &epigraph_operators::MemoryObject| {
            holder.is_some_and(|h| implements.contains(&(m.id.clone(), h.id.clone())))
        };
        let closed_by = candidates
            .iter()
            .find(|m| carries_out(m))
            .or_else(|| {
                candidates
                    .iter()
                    .find(|m| epigraph_query::plans::reports_done(&plan.plan_text, &m.text))
            })
            .map(|m| (m.source_id.clone(), m.text.clone()));
        let done = plan.outcome == "done";
        if done {
            scores.labelled_done += 1;
        }
        if let Some((doc, _)) = &closed_by {
            scores.closed += 1;
            if done && plan.report_doc.as_deref() == Some(doc.as_str()) {
                scores.closed_right += 1;
            }
        }
        scores.cases.push(PlanCase {
            plan_doc: plan.plan_doc.clone(),
            plan_text: plan.plan_text.clone(),
            typed,
            outcome: plan.outcome.clone(),
            report_doc: plan.report_doc.clone(),
            closed_by,
        });
    }
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    scores.precision = ratio(scores.closed_right, scores.closed);
    scores.recall = ratio(scores.closed_right, scores.labelled_done);
    scores
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

/// One labelled document of a set: a PEP (`pep-NNNN`, a `.rst` file under `root`), a text
/// document (`<id>.txt` under `root`, as Django's release notes `django-4.0`) or a KEP
/// (`<sig>/<number-name>`, a folder under `root`).
pub fn labelled_document(root: &Path, id: &str) -> Result<(String, String)> {
    let text_file = root.join(format!("{id}.txt"));
    if id.starts_with("pep-") {
        pep_document(root, id)
    } else if text_file.is_file() {
        text_document(&text_file, id)
    } else {
        kep_document(root, id)
    }
}

/// A text document verbatim, titled by its first line that is not blank, a reStructuredText
/// directive (`.. currentmodule:: numpy`) nor an underline of `=`, `-`, `#` or `*` (a
/// reStructuredText or Markdown title).
///
/// ```no_run
/// let (title, text) = epigraph::eval::keps::text_document(
///     std::path::Path::new("tests/fixtures/django-releases/django-4.0.txt"), "django-4.0").unwrap();
/// assert_eq!(title, "Django 4.0 release notes");
/// assert!(text.contains("*December 7, 2021*"));
/// ```
pub fn text_document(path: &Path, id: &str) -> Result<(String, String)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let title = text
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        // Not a reStructuredText directive or comment (`.. currentmodule:: numpy`).
        .find(|l| {
            !l.is_empty()
                && !l.starts_with("..")
                && !l.chars().all(|c| matches!(c, '=' | '-' | '*' | '~'))
        })
        .map(str::to_string)
        .unwrap_or_else(|| id.to_string());
    Ok((title, text))
}

/// The dates of a document folder's `dates.tsv`, if it has one: `<id>\t<YYYY-MM-DD>[\t…]` per
/// line (`#` comments), each day at midnight UTC in milliseconds. A document whose text declares
/// no date (NumPy's release notes) is dated by it, as the documents source would date a file by
/// its modification time.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("dates.tsv"), "# id\tdate\nnumpy-1.20\t2021-01-30\t1.20.0\n").unwrap();
/// let dates = epigraph::eval::keps::document_dates(dir.path()).unwrap();
/// assert_eq!(dates["numpy-1.20"], 1_611_964_800_000);
/// assert!(epigraph::eval::keps::document_dates(&dir.path().join("none")).unwrap().is_empty());
/// ```
pub fn document_dates(root: &Path) -> Result<BTreeMap<String, i64>> {
    let path = root.join("dates.tsv");
    if !path.is_file() {
        return Ok(BTreeMap::new());
    }
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut dates = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split('\t');
        let (Some(id), Some(day)) = (fields.next(), fields.next()) else {
            bail!("{}:{}: expected <id>\\t<YYYY-MM-DD>", path.display(), n + 1);
        };
        let day = chrono::NaiveDate::parse_from_str(day.trim(), "%Y-%m-%d")
            .with_context(|| format!("{}:{}: the date {day:?}", path.display(), n + 1))?;
        let millis = day
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc()
            .timestamp_millis();
        dates.insert(id.trim().to_string(), millis);
    }
    Ok(dates)
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
    let mut dated: BTreeMap<String, Option<i64>> = BTreeMap::new();
    let listed = document_dates(root)?;
    for kep in group_of.keys() {
        let (title, text) = labelled_document(root, kep)?;
        let mut version = SourceVersion::new("keps", kep, SourceKind::Document, &text);
        version.title = Some(title);
        version.occurred_at = declared_date(&text).or_else(|| listed.get(*kep).copied());
        dated.insert(kep.to_string(), version.occurred_at);
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

    // A pair or label belongs to the split by its group; one of a set that does not name groups
    // on its lines, by its documents. (Django's release notes are in groups of both splits: a
    // test group's labels must not count in the dev split.)
    let in_split = |group: &str, doc: &str| {
        if group.is_empty() {
            group_of.contains_key(doc)
        } else {
            groups.iter().any(|g| g.group == group)
        }
    };
    let judged: BTreeSet<(String, String)> =
        read_lines::<JudgedPair>(&dir.join("judged_pairs.jsonl"))?
            .into_iter()
            .filter(|p| in_split(&p.group, &p.a))
            .map(|p| unordered(&p.a, &p.b))
            .collect();
    let labels: Vec<Label> = read_lines::<Label>(&dir.join("labels.jsonl"))?
        .into_iter()
        .filter(|l| in_split(&l.group, &l.from))
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
    let plans_file = dir.join("plans.jsonl");
    let plans = if plans_file.is_file() {
        let labelled: Vec<LabelledPlan> = read_lines(&plans_file)?;
        let objects: Vec<&epigraph_operators::MemoryObject> = graph
            .iter()
            .filter_map(|e| match e {
                GraphElement::Memory(m) => Some(m),
                _ => None,
            })
            .collect();
        let implements: BTreeSet<(String, String)> = graph
            .iter()
            .filter_map(|e| match e {
                GraphElement::Relation(r) if r.rel_type == "IMPLEMENTS" => {
                    Some((r.from.clone(), r.to.clone()))
                }
                _ => None,
            })
            .collect();
        Some(evaluate_plans(
            &labelled,
            &groups,
            &objects,
            &dated,
            &implements,
        ))
    } else {
        None
    };
    Ok(KepReport {
        split: split.to_string(),
        groups: groups.len(),
        documents,
        memories,
        memory_types,
        judged_pairs: judged.len(),
        relations,
        plans,
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

    /// A set of text documents (release notes, dated by the line under their title) with
    /// labelled plans: the plan of 1.0 is reported done in 1.1, the other plan is not, and the
    /// report is matched to its plan by the rule that folds plans apart.
    #[test]
    fn a_release_note_is_titled_past_its_directives_and_dated_by_the_folders_dates() {
        let docs = tempfile::tempdir().unwrap();
        std::fs::write(
            docs.path().join("numpy-1.20.txt"),
            ".. currentmodule:: numpy\n\n==========================\nNumPy 1.20.0 Release Notes\n==========================\nText.\n",
        )
        .unwrap();
        let (title, text) =
            text_document(&docs.path().join("numpy-1.20.txt"), "numpy-1.20").unwrap();
        assert_eq!(title, "NumPy 1.20.0 Release Notes");
        assert_eq!(declared_date(&text), None, "the note declares no date");
        std::fs::write(docs.path().join("dates.tsv"), "numpy-1.20\t2021-01-30\n").unwrap();
        assert_eq!(
            document_dates(docs.path()).unwrap().get("numpy-1.20"),
            Some(&1_611_964_800_000)
        );
        std::fs::write(docs.path().join("dates.tsv"), "numpy-1.20\tJanuary\n").unwrap();
        let err = document_dates(docs.path()).unwrap_err();
        assert!(format!("{err:#}").contains("dates.tsv:1"), "{err:#}");
    }

    #[test]
    fn text_documents_and_their_labelled_plans_are_scored() {
        let docs = tempfile::tempdir().unwrap();
        std::fs::write(
            docs.path().join("atlas-1.0.txt"),
            "======================\nAtlas 1.0 release notes\n======================\n\n*March 2, 2021*\n\nThe Slack connector will ship in Atlas 1.1.\n\nThe audit export will be released in Atlas 1.2.\n",
        )
        .unwrap();
        std::fs::write(
            docs.path().join("atlas-1.1.txt"),
            "Atlas 1.1 release notes\n=======================\n\n*June 1, 2021*\n\nThe Slack connector shipped to every workspace.\n",
        )
        .unwrap();
        let (title, text) = text_document(&docs.path().join("atlas-1.0.txt"), "atlas-1.0").unwrap();
        assert_eq!(title, "Atlas 1.0 release notes");
        assert!(
            declared_date(&text).is_some(),
            "the date line under the title"
        );
        let set = tempfile::tempdir().unwrap();
        let write = |name: &str, lines: &[&str]| {
            std::fs::write(set.path().join(name), lines.join("\n")).unwrap()
        };
        write(
            "groups.jsonl",
            &[r#"{"group":"a1","split":"dev","docs":["atlas-1.0","atlas-1.1"]}"#],
        );
        write(
            "judged_pairs.jsonl",
            &[r#"{"group":"a1","a":"atlas-1.0","b":"atlas-1.1"}"#],
        );
        write("labels.jsonl", &[]);
        write(
            "plans.jsonl",
            &[
                r#"{"group":"a1","plan_doc":"atlas-1.0","plan_text":"The Slack connector will ship in Atlas 1.1.","report_doc":"atlas-1.1","outcome":"done"}"#,
                r#"{"group":"a1","plan_doc":"atlas-1.0","plan_text":"The audit export will be released in Atlas 1.2.","report_doc":null,"outcome":"not_reported"}"#,
            ],
        );
        let report = evaluate_keps(
            Arc::new(Extractor::bundled()),
            set.path(),
            docs.path(),
            "dev",
        )
        .unwrap();
        assert_eq!(report.documents, 2);
        let plans = report.plans.expect("plans are labelled");
        assert_eq!((plans.plans, plans.labelled_done), (2, 1), "{plans:#?}");
        assert_eq!(plans.extracted, 2, "{plans:#?}");
        assert_eq!((plans.closed, plans.closed_right), (1, 1), "{plans:#?}");
        assert_eq!(
            plans.cases[0]
                .closed_by
                .as_ref()
                .map(|(doc, _)| doc.as_str()),
            Some("atlas-1.1")
        );
        assert!(plans.cases[1].closed_by.is_none());
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
