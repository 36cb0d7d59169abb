//! Boilerplate: what many sources of a tenant say in the same words is a template's, not an
//! author's — the questions of a review questionnaire ("Mitigations: What can be done to stop
//! the bleeding?"), a form's fields ("Components depending on the feature gate: kubelet"),
//! instructions left in place. Such statements stay in the graph (they are in the text), but
//! take part in no judgement across statements: they supersede, contradict, answer, support
//! and block nothing, and nothing answers them.
//!
//! A statement is boilerplate when one of its keys is found in more than `max_sources`
//! sources of its tenant: its whole text, normalised, or — for a `Field: value` line whose
//! field has at least `min_field_words` words — its field. A text (or field) that names
//! something (a capitalised word inside a clause: "Going with Data Analytics for the audit log")
//! is a report on that matter however often it is repeated, never boilerplate.

use std::collections::BTreeSet;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use timely::progress::Timestamp;

use super::restated::normalised;
use crate::model::MemoryObject;
use crate::ontology::BoilerplateSpec;

/// The keys by which a statement may be boilerplate: its normalised text, and `field:` with
/// its field's when it is a `Field: value` line with a long enough field; none for what names
/// something of its own.
///
/// ```
/// use epigraph_operators::epistemic::boilerplate::keys;
/// assert_eq!(
///     keys("Components depending on the feature gate: `kubelet`", 4),
///     ["components depending on the feature gate kubelet", "field:components depending on the feature gate"]
/// );
/// // A questionnaire's question, in many documents.
/// assert_eq!(keys("Mitigations: What can be done to stop the bleeding?", 4), ["mitigations what can be done to stop the bleeding"]);
/// // "New target date for Onyx" names its matter: a report, never boilerplate.
/// assert!(keys("New target date for Onyx: August 21", 4).is_empty());
/// ```
pub fn keys(text: &str, min_field_words: usize) -> Vec<String> {
    let mut out = Vec::new();
    if !names_something(text) {
        out.push(normalised(text));
    }
    if let Some((field, _)) = text.split_once(':') {
        let normal = normalised(field);
        if !names_something(field)
            && normal.split(' ').count() >= min_field_words
            && normal.len() <= 80
        {
            out.push(format!("field:{normal}"));
        }
    }
    out
}

/// Whether a text names something: a capitalised word that does not open the text or a clause
/// ("Going with Data Analytics for the audit log", "New target date for Onyx"). A statement
/// that names its matter is a report on it, however often it is repeated; a template names
/// nothing of its own.
fn names_something(text: &str) -> bool {
    let mut opens = true;
    for word in text.split_whitespace() {
        let word = word.trim_start_matches(|c: char| !c.is_alphanumeric());
        if !opens && word.chars().next().is_some_and(char::is_uppercase) {
            return true;
        }
        opens = word.ends_with([':', '.', '?', '!']) || word.is_empty();
    }
    false
}

/// The ids of the boilerplate memory objects of `memories` (see the module docs).
pub fn ids<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    spec: BoilerplateSpec,
) -> VecCollection<'s, T, String>
where
    T: Timestamp + Lattice,
{
    let keyed = memories.flat_map(move |m| {
        keys(&m.text, spec.min_field_words)
            .into_iter()
            .map(|key| ((m.tenant.clone(), key), (m.source_id.clone(), m.id.clone())))
            .collect::<Vec<_>>()
    });
    keyed
        .reduce(move |_, input, out| {
            let sources: BTreeSet<&str> = input
                .iter()
                .map(|((source, _), _)| source.as_str())
                .collect();
            if sources.len() > spec.max_sources {
                for ((_, id), _) in input {
                    out.push((id.clone(), 1));
                }
            }
        })
        .map(|(_, id)| id)
        .distinct()
}
