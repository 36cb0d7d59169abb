//! `epigraph llm eval`: what the model extractor adds to memory-object typing, on the
//! hand-labelled real set (`eval/extraction/real/sentences.jsonl`).
//!
//! Every source is run through the rules (the same [`Extractor`] the pipeline uses); a unit's
//! rules type is the type of the memory object overlapping it most, as `epigraph eval
//! extraction` reads it, or `NOISE`. A unit with a memory object that `[llm] units` selects
//! (by the object's confidence) is sent to the model with up to `max_neighbours` other memory
//! objects of its source; an accepted answer's type replaces the rules' type (what an applied
//! `edit` proposal would do), a refused one leaves it. Both typings are scored against the
//! gold labels of one split.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use epigraph_operators::Extractor;
use epigraph_operators::model::MemoryObject;
use serde_json::{Value, json};

use super::extraction::{load_real, nine_types};
use super::metrics::score;
use crate::llm::{LlmExtractor, UnitPrompt};

/// The memory object overlapping `[start, end)` most (at least half of the span or of the
/// object), as [`super::extraction::best_overlap`] chooses it.
fn best<'a>(memories: &[&'a MemoryObject], (start, end): (u32, u32)) -> Option<&'a MemoryObject> {
    memories
        .iter()
        .filter_map(|m| {
            let overlap = end.min(m.span.1).saturating_sub(start.max(m.span.0));
            let enough = overlap * 2 >= end - start || overlap * 2 >= m.span.1 - m.span.0;
            (overlap > 0 && enough).then_some((overlap, *m))
        })
        .max_by_key(|(overlap, _)| *overlap)
        .map(|(_, m)| m)
}

/// Score the rules alone and with the model's types on `split`.
pub async fn evaluate(
    extractor: &LlmExtractor,
    rules: &Extractor,
    labels: &Path,
    fixtures: &Path,
    split: &str,
) -> Result<Value> {
    let config = extractor.config();
    let sources = load_real(labels, fixtures)?;
    let total: usize = sources
        .iter()
        .map(|s| s.units.iter().filter(|u| u.split == split).count())
        .sum();
    let bar = crate::publish::progress_bar(total as u64, "llm eval");
    let started = Instant::now();
    let (mut rules_pairs, mut llm_pairs) = (Vec::new(), Vec::new());
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    let mut rejections: BTreeMap<String, u64> = BTreeMap::new();
    let mut changes = Vec::new();
    for source in &sources {
        let x = rules.extract(&source.version);
        let mut memories: Vec<&MemoryObject> = x.memories().collect();
        memories.sort_by_key(|m| m.span);
        let body = &source.version.body;
        for unit in source.units.iter().filter(|u| u.split == split) {
            bar.inc(1);
            *counts.entry("units").or_default() += 1;
            let Some(byte) = body.find(&unit.text) else {
                *counts.entry("unlocated").or_default() += 1;
                continue;
            };
            let start = body[..byte].chars().count() as u32;
            let end = start + unit.text.chars().count() as u32;
            let memory = best(&memories, (start, end));
            let by_rules = memory.map_or("NOISE".to_string(), |m| m.memory_type.name());
            let mut with_llm = by_rules.clone();
            if let Some(m) = memory.filter(|m| config.selects(m.confidence)) {
                let at = memories.iter().position(|o| o.id == m.id).unwrap_or(0);
                let mut near: Vec<&&MemoryObject> =
                    memories.iter().filter(|o| o.id != m.id).collect();
                near.sort_by_key(|o| {
                    let i = memories.iter().position(|p| p.id == o.id).unwrap_or(0);
                    i.abs_diff(at)
                });
                let prompt = UnitPrompt {
                    text: m.text.clone(),
                    source_kind: source.version.kind.as_str().to_string(),
                    title: source.version.title.clone(),
                    section: m.section.clone(),
                    neighbours: near
                        .iter()
                        .take(config.max_neighbours)
                        .enumerate()
                        .map(|(i, o)| (format!("m{}", i + 1), o.memory_type.name(), o.text.clone()))
                        .collect(),
                    entities: Vec::new(),
                };
                let extraction = extractor.extract(&prompt).await?;
                let o = &extraction.outcome;
                *counts.entry("sent").or_default() += 1;
                if extraction.cached {
                    *counts.entry("cached").or_default() += 1;
                } else {
                    *counts.entry("calls").or_default() += u64::from(o.calls);
                    *counts.entry("prompt_tokens").or_default() += o.prompt_tokens;
                    *counts.entry("completion_tokens").or_default() += o.completion_tokens;
                    *counts.entry("call_ms").or_default() += o.latency_ms;
                }
                for code in &o.rejection_codes {
                    *rejections.entry(code.clone()).or_default() += 1;
                }
                match &o.answer {
                    Some(answer) => {
                        *counts.entry("accepted").or_default() += 1;
                        if !o.dropped.is_empty() {
                            *counts.entry("salvaged").or_default() += 1;
                        }
                        with_llm = answer.memory_type.clone();
                    }
                    None => *counts.entry("fallbacks").or_default() += 1,
                }
                if with_llm != by_rules {
                    changes.push(json!({"id": unit.id, "gold": unit.gold, "rules": by_rules,
                                        "llm": with_llm}));
                }
            }
            rules_pairs.push((unit.gold.clone(), by_rules));
            llm_pairs.push((unit.gold.clone(), with_llm));
        }
    }
    bar.finish_and_clear();
    let nine = nine_types();
    let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
    let fixed = changes.iter().filter(|c| c["llm"] == c["gold"]).count();
    let broken = changes.iter().filter(|c| c["rules"] == c["gold"]).count();
    let rules_scores = score(rules_pairs, &nine);
    let llm_scores = score(llm_pairs, &nine);
    Ok(json!({
        "split": split,
        "model": extractor.model(),
        "units_selection": config.units,
        "min_confidence": config.min_confidence,
        "counts": counts,
        "wall_seconds": started.elapsed().as_secs_f64(),
        "rejections": rejections,
        "rules": {"accuracy": rules_scores.accuracy, "macro_f1": rules_scores.macro_f1},
        "with_llm": {"accuracy": llm_scores.accuracy, "macro_f1": llm_scores.macro_f1},
        "changed": changes.len(),
        "changed_to_right": fixed,
        "changed_from_right": broken,
        "changes": changes,
    }))
}
