//! The composition root: the dataflow from live source versions to the judged graph.
//!
//! [`extract_graph_with_verdicts`] runs the extractor over every source version
//! ([`crate::extract`]), aggregates what spans sources (entity nodes, entity relations,
//! mentions of entities known elsewhere in the tenant, recurring phrases, `SUPERSEDES` edges
//! between numbered documents), resolves identities into `SAME_AS` edges ([`crate::resolve`]),
//! draws citation edges and judges time, supersession, contradiction and answers
//! ([`crate::epistemic`]). Nothing else in the crate imports from here.
//!
//! It also compiles the [`Extractor`] ([`Extractor::new`]), because an extractor must only be
//! made from an ontology whose epistemic rules compile too.

use std::collections::BTreeSet;
use std::sync::Arc;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use crate::epistemic::amend::{Amendment, amended};
use crate::epistemic::citations::citation_edges;
use crate::epistemic::review::Review;
use crate::epistemic::tenure::{Tenure, relation_ends, with_ends};
use crate::epistemic::{Rules, relate_reviewed};
use crate::extract::aliases::AliasLink;
use crate::extract::doclinks::{DocLink, DocRole, document_supersessions};
use crate::extract::open_units::relations_of_open_units;
use crate::extract::sighting::aggregate_entity;
use crate::extract::{CandidateMention, Extractor, OpenUnit, Sighting, edge, entity_id};
use crate::model::{GraphElement, Relation, SourceVersion, Standing};
use crate::ontology::{Ontology, OntologyError};
use crate::resolve::{Verdict, resolve_identities};

impl Extractor {
    /// Compiles an extractor; fails on an invalid cue (of its readers or of the epistemic rules
    /// of the ontology, which [`Extractor::rules`] compiles).
    pub fn new(ontology: Ontology) -> Result<Self, OntologyError> {
        let extractor = Extractor::compile(ontology)?;
        Rules::new(extractor.ontology())?;
        Ok(extractor)
    }

    /// The extractor of the bundled ontology.
    pub fn bundled() -> Self {
        Self::new(Ontology::bundled()).expect("the bundled ontology compiles (tested)")
    }

    /// The supersession, contradiction and answer rules of its ontology.
    pub fn rules(&self) -> Arc<Rules> {
        Arc::new(
            Rules::new(self.ontology())
                .expect("the rules compiled when the extractor was (Extractor::new)"),
        )
    }
}

/// What the per-source stage of [`extract_graph`] emits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum Extracted {
    Element(GraphElement),
    Sighting(Sighting),
    EntityRelation(Relation),
    Candidate(CandidateMention),
    Alias(AliasLink),
    DocLink(DocLink),
    OpenUnit(OpenUnit),
    /// A link a note asserts from one of its memory objects.
    Declared(Review),
}

/// The dataflow stage: live source versions to graph elements.
///
/// - per source: its node, memory objects, claims and structural edges;
/// - per entity: one [`EntityNode`](crate::model::EntityNode) aggregating every sighting in the
///   tenant;
/// - per vocabulary relation between two entities: one edge, with the number of sources that
///   state it and the provenance of the earliest;
/// - per capitalised phrase that names an entity known anywhere in the tenant: a `MENTIONS` edge;
/// - per entity resolved to another: a `SAME_AS` edge to its canonical entity ([`crate::resolve`]);
/// - the judgements of [`crate::epistemic::relate`] over all of it, and citation edges.
///
/// ```
/// use std::sync::Arc;
/// use differential_dataflow::input::Input;
/// use epigraph_operators::{GraphElement, SourceVersion, extract::Extractor, graph::extract_graph};
/// use epigraph_schemas::SourceKind;
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let a = SourceVersion::new("t", "a", SourceKind::Document, "Borealis is a Kestrel Capital project.");
/// let b = SourceVersion::new("t", "b", SourceKind::Chat, "Kestrel Capital called again today.");
/// let extractor = Arc::new(Extractor::bundled());
/// let captured = timely::example(move |scope| {
///     let docs = scope.new_collection_from(vec![a, b]).1;
///     extract_graph(docs, extractor).inner.capture()
/// });
/// let elements: Vec<_> = captured.extract().into_iter().flat_map(|(_, v)| v).map(|(e, _, _)| e).collect();
/// let kestrel: Vec<_> = elements.iter().filter_map(|e| match e {
///     GraphElement::Entity(n) if n.name == "Kestrel Capital" => Some(n.sources), _ => None }).collect();
/// assert_eq!(kestrel, [2]);
/// ```
pub fn extract_graph<'s, T>(
    sources: VecCollection<'s, T, SourceVersion>,
    extractor: Arc<Extractor>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let verdicts = sources.clone().flat_map(|_| None::<Verdict>);
    extract_graph_with_verdicts(sources, verdicts, extractor)
}

/// [`extract_graph`] with human identity verdicts (see [`crate::resolve`]): the entities are
/// also resolved into `SAME_AS` edges to their canonical entity.
pub fn extract_graph_with_verdicts<'s, T>(
    sources: VecCollection<'s, T, SourceVersion>,
    verdicts: VecCollection<'s, T, Verdict>,
    extractor: Arc<Extractor>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let reviews = sources.clone().flat_map(|_| None::<Review>);
    extract_graph_reviewed(sources, verdicts, reviews, extractor)
}

/// [`extract_graph_with_verdicts`] with reviewers' verdicts on the epistemic judgements (see
/// [`crate::epistemic::review`]): rejected edges are retracted with what followed from them,
/// confirmed ones are marked `review: "confirmed"`, asserted ones drawn.
pub fn extract_graph_reviewed<'s, T>(
    sources: VecCollection<'s, T, SourceVersion>,
    verdicts: VecCollection<'s, T, Verdict>,
    reviews: VecCollection<'s, T, Review>,
    extractor: Arc<Extractor>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let amendments = sources.clone().flat_map(|_| None::<Amendment>);
    extract_graph_governed(sources, verdicts, reviews, amendments, extractor)
}

/// [`extract_graph_reviewed`] with amendments of memory objects ([`crate::epistemic::amend`]),
/// applied before anything is judged; notes written through proposals (sources with a
/// [`crate::model::Note`]) take their declared type and assert their declared links.
pub fn extract_graph_governed<'s, T>(
    sources: VecCollection<'s, T, SourceVersion>,
    verdicts: VecCollection<'s, T, Verdict>,
    reviews: VecCollection<'s, T, Review>,
    amendments: VecCollection<'s, T, Amendment>,
    extractor: Arc<Extractor>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let rules = extractor.rules();
    let reader = extractor.clone();
    let tenure = Tenure::new(extractor.ontology());
    let ontology_recurring = extractor
        .ontology()
        .recurring
        .as_ref()
        .map(|r| (r.kind.clone(), r.min_sources));
    let extracted = sources.flat_map(move |source| {
        let mut x = extractor.extract(&source);
        let mut declared = Vec::new();
        if let Some(note) = &source.note {
            for element in &mut x.elements {
                if let GraphElement::Memory(m) = element {
                    m.memory_type = note.memory_type;
                    m.standing = if note.memory_type == crate::model::EpistemicType::Question {
                        Standing::Open
                    } else {
                        Standing::Current
                    };
                    m.extractor = format!("proposal {} by {}", note.proposal, note.proposer);
                    for (relation, to) in &note.links {
                        declared.push(Extracted::Declared(Review {
                            tenant: m.tenant.clone(),
                            rel_type: relation.clone(),
                            from: m.id.clone(),
                            to: to.clone(),
                            verdict: epigraph_schemas::feedback::ReviewVerdict::Assert,
                        }));
                    }
                }
            }
        }
        x.elements
            .into_iter()
            .map(Extracted::Element)
            .chain(x.sightings.into_iter().map(Extracted::Sighting))
            .chain(
                x.entity_relations
                    .into_iter()
                    .map(Extracted::EntityRelation),
            )
            .chain(x.candidates.into_iter().map(Extracted::Candidate))
            .chain(x.aliases.into_iter().map(Extracted::Alias))
            .chain(x.doc_links.into_iter().map(Extracted::DocLink))
            .chain(x.open_units.into_iter().map(Extracted::OpenUnit))
            .chain(declared)
            .collect::<Vec<_>>()
    });
    let reviews = reviews.concat(extracted.clone().flat_map(|x| match x {
        Extracted::Declared(r) => Some(r),
        _ => None,
    }));
    let elements = amended(
        extracted.clone().flat_map(|x| match x {
            Extracted::Element(e) => Some(e),
            _ => None,
        }),
        amendments,
    );
    let sightings = extracted.clone().flat_map(|x| match x {
        Extracted::Sighting(s) => Some(s),
        _ => None,
    });
    let sightings_for_resolution = sightings.clone();
    let stated_aliases = extracted.clone().flat_map(|x| match x {
        Extracted::Alias(link) => Some(link),
        _ => None,
    });
    let entities = sightings
        .clone()
        .map(|s| (s.entity_id.clone(), s))
        .reduce(|_id, input, output| output.push((aggregate_entity(input), 1)))
        .map(|(_, node)| GraphElement::Entity(node));
    let open_units = extracted.clone().flat_map(|x| match x {
        Extracted::OpenUnit(u) => Some(u),
        _ => None,
    });
    let named = sightings
        .clone()
        .map(|s| ((s.tenant, s.key), (s.entity_id, s.kind)))
        .distinct();
    let stated_relations = extracted
        .clone()
        .flat_map(|x| match x {
            Extracted::EntityRelation(r) => Some(r),
            _ => None,
        })
        .concat(relations_of_open_units(open_units, named, reader));
    let ends = relation_ends(stated_relations.clone(), &tenure);
    let entity_relations = with_ends(
        stated_relations
            .map(|r| (r.id.clone(), r))
            .reduce(|_id, input, output| output.push((aggregate_relation(input), 1)))
            .map(|(_, relation)| relation),
        ends,
    )
    .map(GraphElement::Relation);
    let known = sightings
        .map(|s| ((s.tenant, s.key), s.entity_id))
        .distinct();
    let doc_links = extracted.clone().flat_map(|x| match x {
        Extracted::DocLink(link) => Some(link),
        _ => None,
    });
    let candidates = extracted.flat_map(|x| match x {
        Extracted::Candidate(c) => Some(((c.tenant.clone(), c.key.clone()), c)),
        _ => None,
    });
    // Untyped phrases recurring in enough sources become entities of the fallback kind.
    let recurring_elements = match ontology_recurring {
        Some((kind, min_sources)) => {
            let recurring_keys = candidates
                .clone()
                .map(|(key, c)| (key, c.provenance.source_id))
                .distinct()
                .map(|(key, _)| key)
                .count()
                .filter(move |(_, n)| *n >= min_sources as isize)
                .map(|(key, _)| (key, ()))
                .antijoin(known.clone().map(|(key, _)| key).distinct())
                .map(|(key, ())| key);
            let recurring = candidates.clone().semijoin(recurring_keys);
            let fallback_kind = kind.clone();
            let sightings = recurring.clone().map(move |((tenant, key), c)| Sighting {
                entity_id: entity_id(&tenant, &fallback_kind, &key),
                tenant,
                kind: fallback_kind.clone(),
                key,
                surface: c.surface,
                address: None,
                source_id: c.provenance.source_id,
                seen_at: c.seen_at,
                recorded_at: c.recorded_at,
            });
            let entities = sightings
                .map(|s| (s.entity_id.clone(), s))
                .reduce(|_id, input, output| output.push((aggregate_entity(input), 1)))
                .map(|(_, node)| GraphElement::Entity(node));
            let mentions = recurring.map(move |((tenant, key), c)| {
                GraphElement::Relation(Relation::structural(
                    &tenant,
                    edge::MENTIONS,
                    &c.memory_id,
                    &entity_id(&tenant, &kind, &key),
                    Some(c.provenance),
                ))
            });
            Some(entities.concat(mentions))
        }
        None => None,
    };
    let candidate_mentions = candidates.join_map(known, |(tenant, _), candidate, entity| {
        GraphElement::Relation(Relation::structural(
            tenant,
            edge::MENTIONS,
            &candidate.memory_id,
            entity,
            Some(candidate.provenance.clone()),
        ))
    });
    let identities = resolve_identities(sightings_for_resolution, verdicts, stated_aliases);
    let memories = elements.clone().flat_map(|e| match e {
        GraphElement::Memory(m) => Some(m),
        _ => None,
    });
    let numbered = doc_links
        .clone()
        .filter(|l| l.role == DocRole::Is)
        .map(|l| (l.tenant, l.source_id))
        .distinct();
    let cited = citation_edges(memories, doc_links.clone(), rules.clone());
    let all = elements
        .concat(document_supersessions(doc_links))
        .concat(cited)
        .concat(entities)
        .concat(entity_relations)
        .concat(candidate_mentions)
        .concat(identities);
    let all = match recurring_elements {
        Some(recurring) => all.concat(recurring),
        None => all,
    };
    relate_reviewed(all, rules, reviews, numbered)
}

/// One relation from all the sources that state it: the earliest statement's (by valid time,
/// then provenance), with the number of sources as its support.
fn aggregate_relation(input: &[(&Relation, isize)]) -> Relation {
    let mut sources = BTreeSet::new();
    for (relation, _) in input {
        if let Some(p) = &relation.provenance {
            sources.insert(p.source_id.as_str());
        }
    }
    let earliest = input
        .iter()
        .map(|(r, _)| *r)
        .min_by(|a, b| {
            (a.t_valid.unwrap_or(i64::MAX), &a.provenance)
                .cmp(&(b.t_valid.unwrap_or(i64::MAX), &b.provenance))
        })
        .expect("reduce input is never empty");
    let mut relation = earliest.clone();
    relation.support = sources.len().max(1) as u32;
    relation.recorded_at = input.iter().filter_map(|(r, _)| r.recorded_at).min();
    relation
}

#[cfg(test)]
mod tests;
