//! `epigraph eval extraction`: memory-object typing and entity-mention recall on labelled units.
//!
//! A labelled unit is a sentence or list item copied verbatim from a source, with its gold type
//! (one of the nine, or `NOISE` for what is not a memory object) and its entity mentions. The
//! source is run through the same [`Extractor`] the pipeline uses; the unit's predicted type is
//! the type of the extracted memory object that overlaps it most (at least half of either), or
//! `NOISE` when none does. An entity mention is recalled when an extracted mention overlaps it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use epigraph_operators::extract::{Extraction, edge};
use epigraph_operators::{EpistemicType, Extractor, GraphElement, SourceVersion};
use epigraph_schemas::SourceKind;
use serde::{Deserialize, Serialize};

use super::metrics::{ClassScores, ratio, score};

/// One labelled unit of the real-text set (`eval/extraction/real/sentences.jsonl`).
#[derive(Clone, Debug, Deserialize)]
pub struct LabelledUnit {
    /// Unit id.
    pub id: String,
    /// `peps/pep-NNNN.rst` or `slack-export/<channel>/<day>.json`, under the fixtures folder.
    pub source: String,
    /// Verbatim text.
    pub text: String,
    /// Gold type: one of the nine or `NOISE`.
    #[serde(rename = "type")]
    pub gold: String,
    /// Entity mentions.
    #[serde(default)]
    pub entities: Vec<LabelledEntity>,
    /// `dev` or `test`.
    #[serde(default)]
    pub split: String,
}

/// A labelled entity mention.
#[derive(Clone, Debug, Deserialize)]
pub struct LabelledEntity {
    /// Surface text inside the unit.
    pub text: String,
    /// Kind.
    pub kind: String,
    /// The real-world identity it refers to, when the labels say (generated corpora).
    #[serde(default)]
    pub entity_id: Option<String>,
}

/// Entity-mention recall.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MentionRecall {
    /// Gold mentions.
    pub gold: usize,
    /// Gold mentions overlapped by an extracted mention.
    pub found: usize,
    /// … of the same kind.
    pub found_typed: usize,
    /// found / gold.
    pub recall: f64,
    /// found_typed / gold.
    pub typed_recall: f64,
}

/// The report of one evaluation.
#[derive(Clone, Debug, Serialize)]
pub struct ExtractionReport {
    /// Per split (`dev`, `test`, `all`): typing scores.
    pub typing: BTreeMap<String, ClassScores>,
    /// Per split: entity-mention recall.
    pub mentions: BTreeMap<String, MentionRecall>,
    /// Units whose text could not be located in its source (should be 0).
    pub unlocated: Vec<String>,
    /// Every unit typed wrongly: id, split, gold, predicted, text.
    pub errors: Vec<TypingError>,
    /// Every gold mention not found: unit id, text, kind.
    pub missed_mentions: Vec<(String, String, String)>,
}

/// A unit typed wrongly.
#[derive(Clone, Debug, Serialize)]
pub struct TypingError {
    /// Unit id.
    pub id: String,
    /// Split.
    pub split: String,
    /// Gold type.
    pub gold: String,
    /// Predicted type.
    pub predicted: String,
    /// The unit.
    pub text: String,
}

/// The nine types, as the macro average's classes.
pub fn nine_types() -> Vec<String> {
    EpistemicType::ALL.iter().map(|t| t.name()).collect()
}

/// A source body and the units labelled in it.
#[derive(Debug)]
pub struct LabelledSource {
    /// The source as the extractor sees it.
    pub version: SourceVersion,
    /// Its labelled units.
    pub units: Vec<LabelledUnit>,
}

/// Reads the labelled units and builds their sources from the fixtures folder.
pub(crate) fn load_real(labels: &Path, fixtures: &Path) -> Result<Vec<LabelledSource>> {
    let text =
        std::fs::read_to_string(labels).with_context(|| format!("reading {}", labels.display()))?;
    let mut by_source: BTreeMap<String, LabelledSource> = BTreeMap::new();
    let mut slack_days: HashMap<PathBuf, Vec<(String, String)>> = HashMap::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let unit: LabelledUnit = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a labelled unit", labels.display(), n + 1))?;
        let path = fixtures.join(&unit.source);
        let (source_id, kind, body) = if unit.source.ends_with(".json") {
            let messages = match slack_days.get(&path) {
                Some(m) => m,
                None => {
                    let raw = std::fs::read_to_string(&path)
                        .with_context(|| format!("reading {}", path.display()))?;
                    let parsed: Vec<serde_json::Value> = serde_json::from_str(&raw)
                        .with_context(|| format!("parsing {}", path.display()))?;
                    let messages = parsed
                        .iter()
                        .filter_map(|m| {
                            let text = m.get("text")?.as_str()?.to_string();
                            let ts = m.get("ts").and_then(|t| t.as_str()).unwrap_or("");
                            Some((ts.to_string(), text))
                        })
                        .collect();
                    slack_days.entry(path.clone()).or_insert(messages)
                }
            };
            let Some((ts, body)) = messages.iter().find(|(_, t)| t.contains(&unit.text)) else {
                bail!("{}: text not found in {}", unit.id, path.display());
            };
            (
                format!("{}#{ts}", unit.source),
                SourceKind::Chat,
                body.clone(),
            )
        } else {
            let body = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            (unit.source.clone(), SourceKind::Document, body)
        };
        by_source
            .entry(source_id.clone())
            .or_insert_with(|| {
                let mut version = SourceVersion::new("eval", &source_id, kind, &body);
                version.title = Path::new(&unit.source)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned());
                LabelledSource {
                    version,
                    units: Vec::new(),
                }
            })
            .units
            .push(unit);
    }
    Ok(by_source.into_values().collect())
}

/// Evaluates the extractor on the real-text set.
pub fn evaluate_real(
    extractor: &Extractor,
    labels: &Path,
    fixtures: &Path,
) -> Result<ExtractionReport> {
    Ok(evaluate(extractor, &load_real(labels, fixtures)?))
}

/// Evaluates the extractor on a generated corpus (`epigraph gen`): the live version of every
/// source at the end of `events.jsonl`, against `labels/units.jsonl` and `labels/entities.jsonl`.
/// Units are split `dev`/`test` by a hash of their source id.
pub fn evaluate_generated(extractor: &Extractor, dir: &Path) -> Result<ExtractionReport> {
    Ok(evaluate(extractor, &load_generated(dir)?))
}

/// One line of a generated `events.jsonl` (the webhook format).
#[derive(Deserialize)]
struct GeneratedEvent {
    kind: String,
    source_id: String,
    op: String,
    title: String,
    body: String,
    occurred_at: i64,
    #[serde(default)]
    authors: Vec<epigraph_schemas::Party>,
    #[serde(default)]
    participants: Vec<epigraph_schemas::Party>,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    extras: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct GeneratedUnit {
    source_id: String,
    text: String,
    #[serde(rename = "type")]
    gold: String,
    #[serde(default)]
    entities: Vec<GeneratedMention>,
    version: u64,
}

#[derive(Deserialize)]
struct GeneratedMention {
    text: String,
    entity_id: String,
}

#[derive(Deserialize)]
struct GeneratedEntity {
    entity_id: String,
    kind: String,
}

pub(crate) fn load_generated(dir: &Path) -> Result<Vec<LabelledSource>> {
    let read = |name: &str| -> Result<String> {
        let path = dir.join(name);
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
    };
    // The live version of each source: (line index, event), or none after a delete.
    let mut live: BTreeMap<String, Option<(u64, GeneratedEvent)>> = BTreeMap::new();
    for (n, line) in read("events.jsonl")?.lines().enumerate() {
        let event: GeneratedEvent = serde_json::from_str(line)
            .with_context(|| format!("events.jsonl:{}: not an event", n + 1))?;
        let id = event.source_id.clone();
        let slot = (event.op != "delete").then_some((n as u64, event));
        live.insert(id, slot);
    }
    let mut kinds: HashMap<String, String> = HashMap::new();
    for line in read("labels/entities.jsonl")?.lines() {
        let entity: GeneratedEntity =
            serde_json::from_str(line).context("labels/entities.jsonl")?;
        kinds.insert(entity.entity_id, entity.kind);
    }
    let mut units: HashMap<String, Vec<LabelledUnit>> = HashMap::new();
    for (n, line) in read("labels/units.jsonl")?.lines().enumerate() {
        let unit: GeneratedUnit = serde_json::from_str(line).context("labels/units.jsonl")?;
        let is_live = matches!(live.get(&unit.source_id), Some(Some((v, _))) if *v == unit.version);
        if !is_live {
            continue;
        }
        let split =
            if epigraph_operators::stable_id(&[&unit.source_id]).as_bytes()[0].is_multiple_of(2) {
                "dev"
            } else {
                "test"
            };
        units
            .entry(unit.source_id.clone())
            .or_default()
            .push(LabelledUnit {
                id: format!("gen-{}", n + 1),
                source: unit.source_id,
                text: unit.text,
                gold: unit.gold,
                entities: unit
                    .entities
                    .into_iter()
                    .map(|m| LabelledEntity {
                        kind: kinds.get(&m.entity_id).cloned().unwrap_or_default(),
                        text: m.text,
                        entity_id: Some(m.entity_id),
                    })
                    .collect(),
                split: split.to_string(),
            });
    }
    let mut sources = Vec::new();
    for (source_id, slot) in live {
        let Some((_, event)) = slot else { continue };
        let kind = SourceKind::parse(&event.kind).unwrap_or(SourceKind::Document);
        let mut version = SourceVersion::new("gen", &source_id, kind, &event.body);
        version.title = Some(event.title);
        version.occurred_at = Some(event.occurred_at);
        version.authors = event.authors;
        version.participants = event.participants;
        version.thread_id = event.thread_id;
        version.written = event
            .extras
            .get("written")
            .map(|w| epigraph_operators::model::WrittenSpan::parse(w))
            .unwrap_or_default();
        sources.push(LabelledSource {
            units: units.remove(&source_id).unwrap_or_default(),
            version,
        });
    }
    Ok(sources)
}

/// Writes, for every labelled unit, what the learned typer reads about the extractor's unit that
/// overlaps it most (text, section, kind, form, rule scores and type, feature strings), one JSON
/// object per line: the training input of `eval/extraction/train_typer.py`. Units no extracted
/// unit overlaps are written with `"matched": false`.
pub fn dump_typer_features(
    extractor: &Extractor,
    sources: &[LabelledSource],
    out: &Path,
) -> Result<usize> {
    use epigraph_operators::extract::{segment, typer};
    let mut lines = String::new();
    let mut n = 0;
    for source in sources {
        let body = &source.version.body;
        let kind = source.version.kind;
        let units = segment::units(body);
        for labelled in &source.units {
            let Some(start) = body.find(&labelled.text) else {
                continue;
            };
            let end = start + labelled.text.len();
            let best = units
                .iter()
                .filter_map(|u| {
                    let overlap = end.min(u.end).saturating_sub(start.max(u.start));
                    let enough = overlap * 2 >= end - start || overlap * 2 >= u.end - u.start;
                    (overlap > 0 && enough).then_some((overlap, u))
                })
                .max_by_key(|(overlap, _)| *overlap)
                .map(|(_, u)| u);
            let mut record = serde_json::json!({
                "id": labelled.id,
                "source": labelled.source,
                "split": labelled.split,
                "gold": labelled.gold,
                "kind": kind.as_str(),
                "matched": best.is_some(),
            });
            if let Some(unit) = best {
                let typing =
                    extractor
                        .classifier()
                        .classify(&unit.text, unit.section.as_deref(), kind);
                let rule_type = typing.map_or(EpistemicType::Narrative, |t| t.memory_type);
                let input = extractor.typer_input(unit, kind, rule_type);
                let form = match unit.form {
                    segment::UnitForm::Header => "header",
                    segment::UnitForm::ListItem => "list",
                    segment::UnitForm::Sentence => "sentence",
                };
                record["text"] = unit.text.clone().into();
                record["section"] = unit.section.clone().into();
                record["form"] = form.into();
                record["rule_type"] = typing
                    .map_or("NOISE".to_string(), |t| t.memory_type.name())
                    .into();
                record["rule_scores"] = input.rule_scores.to_vec().into();
                record["features"] = typer::feature_strings(&input).into();
            }
            lines.push_str(&record.to_string());
            lines.push('\n');
            n += 1;
        }
    }
    std::fs::write(out, lines).with_context(|| format!("writing {}", out.display()))?;
    Ok(n)
}

/// Scores the extractor on labelled sources. With `EPIGRAPH_TYPER_FEATURES=<file>` set, also
/// writes the learned typer's inputs there ([`dump_typer_features`]).
pub fn evaluate(extractor: &Extractor, sources: &[LabelledSource]) -> ExtractionReport {
    if let Ok(path) = std::env::var("EPIGRAPH_TYPER_FEATURES") {
        match dump_typer_features(extractor, sources, Path::new(&path)) {
            Ok(n) => eprintln!("typer features of {n} units written to {path}"),
            Err(e) => eprintln!("typer features not written: {e:#}"),
        }
    }
    let extractions: Vec<Extraction> = sources
        .iter()
        .map(|s| extractor.extract(&s.version))
        .collect();
    // Entities known anywhere in the set: what the dataflow's join would match candidates to.
    let mut known: HashMap<(String, String), String> = HashMap::new();
    let mut kinds: HashMap<String, String> = HashMap::new();
    for x in &extractions {
        for s in &x.sightings {
            known
                .entry((s.tenant.clone(), s.key.clone()))
                .or_insert(s.kind.clone());
            kinds.insert(s.entity_id.clone(), s.kind.clone());
        }
    }
    // … and untyped phrases recurring in enough sources, as the dataflow's fallback does.
    if let Some(recurring) = &extractor.ontology().recurring {
        let mut sources_of: HashMap<(String, String), HashSet<&str>> = HashMap::new();
        for x in &extractions {
            for c in &x.candidates {
                sources_of
                    .entry((c.tenant.clone(), c.key.clone()))
                    .or_default()
                    .insert(c.provenance.source_id.as_str());
            }
        }
        for (key, sources) in sources_of {
            if sources.len() >= recurring.min_sources as usize {
                known.entry(key).or_insert(recurring.kind.clone());
            }
        }
    }
    let mut pairs: Vec<(String, String, String)> = Vec::new();
    let mut recall: BTreeMap<String, MentionRecall> = BTreeMap::new();
    let mut unlocated = Vec::new();
    let mut errors = Vec::new();
    let mut missed = Vec::new();
    for (source, x) in sources.iter().zip(&extractions) {
        let body = &source.version.body;
        let mut mention_spans: Vec<((u32, u32), String)> = Vec::new();
        for e in &x.elements {
            if let GraphElement::Relation(r) = e
                && r.rel_type == edge::MENTIONS
                && let Some(p) = &r.provenance
            {
                let kind = kinds.get(&r.to).cloned().unwrap_or_default();
                mention_spans.push((p.span, kind));
            }
        }
        for c in &x.candidates {
            if let Some(kind) = known.get(&(c.tenant.clone(), c.key.clone())) {
                mention_spans.push((c.provenance.span, kind.clone()));
            }
        }
        for unit in &source.units {
            let Some(byte) = body.find(&unit.text) else {
                unlocated.push(unit.id.clone());
                continue;
            };
            let start = body[..byte].chars().count() as u32;
            let end = start + unit.text.chars().count() as u32;
            let predicted = best_overlap(x, (start, end));
            if predicted != unit.gold {
                errors.push(TypingError {
                    id: unit.id.clone(),
                    split: unit.split.clone(),
                    gold: unit.gold.clone(),
                    predicted: predicted.clone(),
                    text: unit.text.split_whitespace().collect::<Vec<_>>().join(" "),
                });
            }
            for split in [unit.split.as_str(), "all"] {
                pairs.push((split.to_string(), unit.gold.clone(), predicted.clone()));
                let r = recall.entry(split.to_string()).or_default();
                for entity in &unit.entities {
                    r.gold += 1;
                    let Some(at) = unit.text.find(&entity.text) else {
                        continue;
                    };
                    let s = start + unit.text[..at].chars().count() as u32;
                    let e = s + entity.text.chars().count() as u32;
                    let hits: Vec<&String> = mention_spans
                        .iter()
                        .filter(|((a, b), _)| *a < e && s < *b)
                        .map(|(_, k)| k)
                        .collect();
                    if !hits.is_empty() {
                        r.found += 1;
                    } else if split == "all" {
                        missed.push((unit.id.clone(), entity.text.clone(), entity.kind.clone()));
                    }
                    if hits.iter().any(|k| **k == entity.kind) {
                        r.found_typed += 1;
                    }
                }
            }
        }
    }
    for r in recall.values_mut() {
        r.recall = ratio(r.found, r.gold);
        r.typed_recall = ratio(r.found_typed, r.gold);
    }
    let nine = nine_types();
    let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
    let mut typing = BTreeMap::new();
    let splits: HashSet<&str> = pairs.iter().map(|(s, ..)| s.as_str()).collect();
    for split in splits {
        let scores = score(
            pairs
                .iter()
                .filter(|(s, ..)| s == split)
                .map(|(_, g, p)| (g.clone(), p.clone())),
            &nine,
        );
        typing.insert(split.to_string(), scores);
    }
    ExtractionReport {
        typing,
        mentions: recall,
        unlocated,
        errors,
        missed_mentions: missed,
    }
}

/// The type of the memory object overlapping `span` most (at least half of the span or of the
/// object), or `NOISE`.
pub fn best_overlap(x: &Extraction, (start, end): (u32, u32)) -> String {
    x.memories()
        .filter_map(|m| {
            let overlap = end.min(m.span.1).saturating_sub(start.max(m.span.0));
            let enough = overlap * 2 >= end - start || overlap * 2 >= m.span.1 - m.span.0;
            (overlap > 0 && enough).then_some((overlap, m.memory_type.name()))
        })
        .max_by_key(|(overlap, _)| *overlap)
        .map_or_else(|| "NOISE".to_string(), |(_, t)| t)
}
