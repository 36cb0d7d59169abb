//! The same statement in two sources: a memory object whose text, normalised (case, spacing,
//! punctuation), is the text of a memory object of another, earlier source restates it and
//! gets a `SAME_STATEMENT` edge to the earliest one. A copy is not independent evidence, so it
//! is no `SUPPORTS` (K's evidence term does not count it); search can fold the copies together.
//!
//! Boilerplate is not corroboration: a text found in more than `max_sources` sources (a
//! template's headings and instructions) draws nothing, nor does a text of fewer than
//! `min_words` words ("Sounds good, thanks!").

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use timely::progress::Timestamp;

use super::judge::{Link, LinkKind};
use crate::model::MemoryObject;
use crate::ontology::RestatedSpec;

/// A statement's text, normalised for comparison: lower case, letters and digits only, words
/// joined by single spaces.
///
/// ```
/// use epigraph_operators::epistemic::restated::normalised;
/// assert_eq!(normalised("The  launch is on **June 3**."), "the launch is on june 3");
/// ```
pub fn normalised(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `SAME_STATEMENT` links from each restating memory object to the earliest one of another source
/// with the same normalised text (see the module docs).
pub fn links<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    spec: RestatedSpec,
) -> VecCollection<'s, T, Link>
where
    T: Timestamp + Lattice,
{
    memories
        .flat_map(move |m| {
            let text = normalised(&m.text);
            (spec.enabled && text.split(' ').count() >= spec.min_words).then_some((
                (m.tenant, text),
                (m.t_valid, m.recorded_at, m.source_id, m.id),
            ))
        })
        .reduce(move |(tenant, _), input, out| {
            let sources: std::collections::BTreeSet<&str> =
                input.iter().map(|((_, _, s, _), _)| s.as_str()).collect();
            if sources.len() < 2 || sources.len() > spec.max_sources {
                return;
            }
            // Input is sorted: the first is the earliest written.
            let ((t0, r0, first_source, first), _) = input[0];
            for ((t, r, source, id), _) in &input[1..] {
                if source != first_source {
                    out.push((
                        Link {
                            kind: LinkKind::SameStatement,
                            tenant: tenant.clone(),
                            from: id.clone(),
                            to: first.clone(),
                            t_valid: (*t).max(*t0),
                            t_invalid: None,
                            recorded_at: (*r).max(*r0),
                            evidence: vec![super::why::COPY.to_string()],
                        },
                        1,
                    ));
                }
            }
        })
        .map(|(_, link)| link)
}
