//! From source versions to graph elements: typed memory objects, entity mentions, relations of
//! the closed vocabulary and claims, each with its provenance.
//!
//! [`Extractor::extract`] is pure and deterministic: one source version in, its
//! [`Extraction`] out. [`extract_graph`] runs it inside differential dataflow and aggregates
//! what spans sources (entity nodes, entity relations, mentions of entities known elsewhere in
//! the tenant), so retracting a source version retracts exactly its contributions.
//!
//! The parts, each usable alone: [`segment`] (sentences and list items with sections),
//! [`mentions`] (entity recognition), [`classify`] (epistemic typing), [`claims`] (amounts,
//! dates, counts, percentages, statuses, assignments), [`relations`] (vocabulary relations),
//! [`cues`] (compiled cue phrases).

pub mod aliases;
pub mod choice;
pub mod citations;
pub mod claims;
pub mod classify;
pub mod cues;
pub mod dates;
pub mod doclinks;
pub mod mentions;
pub mod relations;
pub mod segment;
pub mod typer;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use epigraph_schemas::{Party, SourceKind};
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use crate::model::{
    Claim, EntityNode, EpistemicType, GraphElement, MemoryObject, Provenance, Relation, SourceNode,
    SourceVersion, Standing, stable_id,
};
use crate::ontology::{Ontology, OntologyError};
use claims::{ClaimReader, title_subject};
use classify::Classifier;
use mentions::{LocalPeople, Mention, Recogniser, normalise, party_key};
use relations::RelationReader;

/// Name and version written into every element's provenance.
pub const EXTRACTOR: &str = "epigraph.rules/0.5";

/// Structural relationship types (besides the vocabulary of `ontology/relations.toml`).
pub mod edge {
    /// Memory object → the source it was read from.
    pub const DERIVED_FROM: &str = "DERIVED_FROM";
    /// Memory object → an entity it names.
    pub const MENTIONS: &str = "MENTIONS";
    /// Person → a source they wrote.
    pub const AUTHORED: &str = "AUTHORED";
    /// Person → a calendar event they attend.
    pub const ATTENDS: &str = "ATTENDS";
    /// Person → an e-mail or chat message they received or a channel they are in.
    pub const PARTICIPATES_IN: &str = "PARTICIPATES_IN";
    /// Memory object → a claim it asserts.
    pub const ASSERTS: &str = "ASSERTS";
    /// Claim → its subject entity.
    pub const ABOUT: &str = "ABOUT";
    /// Decision → the person who made it.
    pub const DECIDED_BY: &str = "DECIDED_BY";
}

/// The id of an entity node.
///
/// ```
/// use epigraph_operators::extract::entity_id;
/// assert_eq!(entity_id("t", "Person", "maya chen"), entity_id("t", "Person", "maya chen"));
/// assert_ne!(entity_id("t", "Person", "atlas"), entity_id("t", "Project", "atlas"));
/// ```
pub fn entity_id(tenant: &str, kind: &str, key: &str) -> String {
    stable_id(&["entity", tenant, kind, key])
}

/// One sighting of an entity in one source: aggregated across sources into an [`EntityNode`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Sighting {
    /// Entity id.
    pub entity_id: String,
    /// Tenant.
    pub tenant: String,
    /// Kind.
    pub kind: String,
    /// Normalised name.
    pub key: String,
    /// Surface form.
    pub surface: String,
    /// Address, for people seen in headers.
    pub address: Option<String>,
    /// Source it was seen in.
    pub source_id: String,
    /// When that source was written.
    pub seen_at: Option<i64>,
    /// Recorded time of that source's version.
    pub recorded_at: Option<i64>,
}

/// An untyped capitalised phrase of a memory object, to match against known entities.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CandidateMention {
    /// Tenant.
    pub tenant: String,
    /// Normalised phrase.
    pub key: String,
    /// The phrase as written.
    pub surface: String,
    /// Memory object it occurs in (the source node for a unit that is noise).
    pub memory_id: String,
    /// Where.
    pub provenance: Provenance,
    /// When the source was written.
    pub seen_at: Option<i64>,
    /// Recorded time of the source version.
    pub recorded_at: Option<i64>,
}

/// A statement with a relation cue in which some capitalised phrases name nothing its own
/// source knows. Once the dataflow finds them among the entities known elsewhere in the tenant,
/// its relations are read again with them ("Katherine works on Vortex", where only another
/// source says that Vortex is a project).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OpenUnit {
    /// `stable_id` of the source, its version and the unit's offset.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Source item id (provenance).
    pub source_id: String,
    /// Source version (provenance).
    pub source_version: String,
    /// When the source was written: the relations' valid time.
    pub occurred_at: Option<i64>,
    /// The unit as it stands in the body.
    pub text: String,
    /// Character offset of the unit in the body.
    pub char_offset: u32,
    /// Confidence of the unit's relations.
    pub confidence: u16,
    /// Its typed mentions: (byte start, byte end in `text`, kind, key, surface).
    pub mentions: Vec<(u32, u32, String, String, String)>,
    /// Its unknown phrases: (byte start, byte end in `text`, key, surface).
    pub open: Vec<(u32, u32, String, String)>,
}

impl OpenUnit {
    /// The relations its text states between its mentions once the open phrases at the given
    /// indices name `(entity id, kind)`; only those touching such a phrase (the others were
    /// read with the source).
    fn relations(
        &self,
        reader: &relations::RelationReader,
        named: &[(u32, String, String)],
    ) -> Vec<Relation> {
        let mention = |start: u32, end: u32, kind: &str, key: &str, surface: &str| Mention {
            start: start as usize,
            end: end as usize,
            surface: surface.to_string(),
            kind: kind.to_string(),
            key: key.to_string(),
            evidence: mentions::Evidence::Pattern,
        };
        let mut mentions: Vec<(Mention, String, bool)> = self
            .mentions
            .iter()
            .map(|(start, end, kind, key, surface)| {
                let id = entity_id(&self.tenant, kind, key);
                (mention(*start, *end, kind, key, surface), id, false)
            })
            .collect();
        for (i, id, kind) in named {
            if let Some((start, end, key, surface)) = self.open.get(*i as usize) {
                mentions.push((mention(*start, *end, kind, key, surface), id.clone(), true));
            }
        }
        mentions.sort_by_key(|(m, ..)| (m.start, m.end));
        let (found, ids): (Vec<Mention>, Vec<(String, bool)>) = mentions
            .into_iter()
            .map(|(m, id, named)| (m, (id, named)))
            .unzip();
        let at = |byte: usize| {
            self.char_offset
                + self
                    .text
                    .get(..byte)
                    .map_or(0, |t| t.chars().count() as u32)
        };
        reader
            .read(&self.text, &found)
            .into_iter()
            .filter(|r| ids[r.from].1 || ids[r.to].1)
            .map(|r| {
                let provenance = Provenance {
                    source_id: self.source_id.clone(),
                    source_version: self.source_version.clone(),
                    span: (at(r.span.0), at(r.span.1)),
                    extractor: EXTRACTOR.to_string(),
                    confidence: self.confidence,
                };
                let mut relation = Relation::structural(
                    &self.tenant,
                    &r.rel_type,
                    &ids[r.from].0,
                    &ids[r.to].0,
                    Some(provenance),
                );
                relation.temporal_type = Some(r.temporal);
                relation.t_valid = self.occurred_at;
                relation
            })
            .collect()
    }
}

/// Everything one source version yields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extraction {
    /// Elements owned by this source alone: its node, memory objects, claims and structural
    /// edges.
    pub elements: Vec<GraphElement>,
    /// Entity sightings (aggregated across sources into entity nodes).
    pub sightings: Vec<Sighting>,
    /// Vocabulary relations between entities (aggregated across sources).
    pub entity_relations: Vec<Relation>,
    /// Capitalised phrases to match against entities known elsewhere.
    pub candidates: Vec<CandidateMention>,
    /// Aliases stated in the text or configured (same-as evidence).
    pub aliases: Vec<aliases::AliasLink>,
    /// What a numbered document's header says about itself and the documents it replaced or
    /// that replaced it (joined across sources into `SUPERSEDES` edges between source nodes).
    pub doc_links: Vec<doclinks::DocLink>,
    /// Statements whose relations wait for names known elsewhere in the tenant.
    pub open_units: Vec<OpenUnit>,
}

impl Extraction {
    /// The memory objects among the elements.
    pub fn memories(&self) -> impl Iterator<Item = &MemoryObject> {
        self.elements.iter().filter_map(|e| match e {
            GraphElement::Memory(m) => Some(m),
            _ => None,
        })
    }

    /// The claims among the elements.
    pub fn claims(&self) -> impl Iterator<Item = &Claim> {
        self.elements.iter().filter_map(|e| match e {
            GraphElement::Claim(c) => Some(c),
            _ => None,
        })
    }
}

/// The rule-based extractor, compiled from an ontology.
#[derive(Debug)]
pub struct Extractor {
    ontology: Arc<Ontology>,
    recogniser: Recogniser,
    classifier: Classifier,
    claims: ClaimReader,
    choices: choice::ChoiceReader,
    relations: RelationReader,
    rules: Arc<crate::epistemic::Rules>,
    alias_reader: aliases::AliasReader,
    /// `(kind, normalised name)` → the normalised canonical name of its `[[alias]]` group.
    configured_aliases: HashMap<(String, String), String>,
}

impl Extractor {
    /// Compiles an extractor; fails on an invalid cue.
    pub fn new(ontology: Ontology) -> Result<Self, OntologyError> {
        Ok(Extractor {
            recogniser: Recogniser::new(&ontology),
            classifier: Classifier::new(&ontology)?,
            claims: ClaimReader::new(&ontology)?,
            choices: choice::ChoiceReader::new(),
            relations: RelationReader::new(&ontology)?,
            rules: Arc::new(crate::epistemic::Rules::new(&ontology)?),
            alias_reader: aliases::AliasReader::default(),
            configured_aliases: ontology
                .aliases
                .iter()
                .flat_map(|group| {
                    let canonical = normalise(&group.names[0]);
                    group.names[1..]
                        .iter()
                        .map(move |name| ((group.kind.clone(), normalise(name)), canonical.clone()))
                })
                .collect(),
            ontology: Arc::new(ontology),
        })
    }

    /// The extractor of the bundled ontology.
    pub fn bundled() -> Self {
        Self::new(Ontology::bundled()).expect("the bundled ontology compiles (tested)")
    }

    /// The ontology it was compiled from.
    pub fn ontology(&self) -> &Ontology {
        &self.ontology
    }

    /// The supersession, contradiction and answer rules of its ontology.
    pub fn rules(&self) -> Arc<crate::epistemic::Rules> {
        self.rules.clone()
    }

    /// The rule classifier.
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    /// What the learned typer reads about a unit: its text, section, form, source kind and the
    /// rule scores.
    pub fn typer_input<'a>(
        &self,
        unit: &'a segment::Unit,
        kind: SourceKind,
        rule_type: EpistemicType,
    ) -> typer::TyperInput<'a> {
        typer::TyperInput {
            text: &unit.text,
            section: unit.section.as_deref(),
            kind,
            form: unit.form,
            rule_scores: self
                .classifier
                .type_scores(&unit.text, unit.section.as_deref()),
            rule_type,
        }
    }

    /// The typing of a unit: the rules' (`None`: noise), then, when the ontology ships a learned
    /// typer, its arg-max over the rule scores and the unit's words. The learned typer can turn a
    /// unit into noise but never revives one the rules call noise. A type the rules did not
    /// choose keeps no cue score (its confidence is that of an uncued unit).
    pub fn type_unit(&self, unit: &segment::Unit, kind: SourceKind) -> Option<classify::Typing> {
        let Some(typer) = &self.ontology.typer else {
            return self
                .classifier
                .classify(&unit.text, unit.section.as_deref(), kind);
        };
        let (typing, rule_scores) =
            self.classifier
                .classify_scored(&unit.text, unit.section.as_deref(), kind)?;
        let input = typer::TyperInput {
            text: &unit.text,
            section: unit.section.as_deref(),
            kind,
            form: unit.form,
            rule_scores,
            rule_type: typing.memory_type,
        };
        let memory_type = typer.predict(&input).0?;
        if memory_type == typing.memory_type {
            return Some(typing);
        }
        Some(classify::Typing {
            memory_type,
            statement_type: self.classifier.statement_type(memory_type, &unit.text),
            temporal_type: self.classifier.temporal_type(memory_type),
            score: 0,
        })
    }

    /// Everything one source version yields.
    ///
    /// ```
    /// use epigraph_operators::{EpistemicType, SourceVersion, extract::Extractor};
    /// use epigraph_schemas::SourceKind;
    /// let doc = SourceVersion::new("acme", "atlas.md", SourceKind::Document,
    ///     "## Decisions\n\n- We decided that Maya Chen works on the Atlas project.\n- Who owns billing?\n");
    /// let extraction = Extractor::bundled().extract(&doc);
    /// let types: Vec<_> = extraction.memories().map(|m| m.memory_type).collect();
    /// assert_eq!(types, [EpistemicType::Decision, EpistemicType::Question]);
    /// assert_eq!(extraction.entity_relations[0].rel_type, "WORKS_ON");
    /// ```
    pub fn extract(&self, source: &SourceVersion) -> Extraction {
        let mut out = Extraction::default();
        let node = SourceNode {
            id: source.node_id(),
            tenant: source.tenant.clone(),
            source_id: source.source_id.clone(),
            kind: source.kind,
            version: source.version.clone(),
            title: source.title.clone(),
            occurred_at: source.occurred_at,
            recorded_at: source.recorded_at,
        };
        let tenant = source.tenant.as_str();
        let authority = self
            .ontology
            .authority
            .of(source.kind, source.authority.as_deref());
        let has_people = self.ontology.kind("Person").is_some();
        out.doc_links = doclinks::header_links(&source.body)
            .into_iter()
            .map(|(key, role)| doclinks::DocLink {
                tenant: source.tenant.clone(),
                node_id: node.id.clone(),
                source_id: source.source_id.clone(),
                occurred_at: source.occurred_at,
                recorded_at: source.recorded_at,
                key,
                role,
            })
            .collect();
        // Authors named in a header block (PEPs, ADRs, RFCs) count like header authors.
        let header_authors = header_parties(&source.body);
        let mut with_headers;
        let source = if header_authors.is_empty() {
            source
        } else {
            with_headers = source.clone();
            with_headers.authors.extend(header_authors);
            &with_headers
        };
        if has_people {
            self.party_edges(source, &node.id, &mut out);
        }
        let parties: Vec<&Party> = if has_people {
            source.authors.iter().chain(&source.participants).collect()
        } else {
            Vec::new()
        };
        let people = LocalPeople::new(&parties);
        let body = source.body.as_str();
        let chars = CharIndex::new(body);
        let units = segment::units(body);
        // Pass 1: typed units and their strong mentions.
        let mut scanned = Vec::with_capacity(units.len());
        let mut local_names: HashMap<String, (String, String)> = HashMap::new();
        for unit in &units {
            let (mentions, candidates) = self.recogniser.scan(body, unit.start, unit.end, &people);
            for m in &mentions {
                local_names
                    .entry(normalise(&body[m.start..m.end]))
                    .or_insert((m.kind.clone(), m.key.clone()));
            }
            scanned.push((mentions, candidates));
        }
        // Pass 2: capitalised phrases named strongly elsewhere in the same source.
        // Units that are noise still name entities: those mentions hang off the source node.
        let mut occurrences: HashMap<String, u32> = HashMap::new();
        let mut mention_edges: HashSet<String> = HashSet::new();
        let mut candidate_keys: HashSet<(String, String)> = HashSet::new();
        let provenance = |start: usize, end: usize, confidence: u16| Provenance {
            source_id: source.source_id.clone(),
            source_version: source.version.clone(),
            span: (chars.at(start), chars.at(end)),
            extractor: EXTRACTOR.to_string(),
            confidence,
        };
        let mention_confidence = (authority * 1000.0).round() as u16;
        for (unit, (mentions, candidates)) in units.iter().zip(scanned) {
            let typing = self.type_unit(unit, source.kind);
            let (mut mentions, mut open) = (mentions, Vec::new());
            for c in candidates {
                match local_names.get(&c.key) {
                    Some((kind, key)) => mentions.push(Mention {
                        start: c.start,
                        end: c.end,
                        surface: c.surface,
                        kind: kind.clone(),
                        key: key.clone(),
                        evidence: mentions::Evidence::Pattern,
                    }),
                    None => open.push(c),
                }
            }
            mentions.sort_by_key(|m| (m.start, m.end));
            let ids: Vec<String> = mentions
                .iter()
                .map(|m| entity_id(tenant, &m.kind, &m.key))
                .collect();
            for (i, start, end, surface) in self.alias_reader.read(body, &mentions) {
                let kind = mentions[i].kind.clone();
                let key = normalise(&surface);
                let alias = entity_id(tenant, &kind, &key);
                out.sightings.push(Sighting {
                    entity_id: alias.clone(),
                    tenant: tenant.to_string(),
                    kind,
                    key,
                    surface: body[start..end].to_string(),
                    address: None,
                    source_id: source.source_id.clone(),
                    seen_at: source.occurred_at,
                    recorded_at: source.recorded_at,
                });
                out.aliases.push(aliases::AliasLink {
                    tenant: tenant.to_string(),
                    a: ids[i].clone(),
                    b: alias,
                });
            }
            let memory_id = typing.map(|_| {
                let n = occurrences.entry(unit.text.clone()).or_default();
                *n += 1;
                stable_id(&[
                    "memory",
                    tenant,
                    &source.source_id,
                    &unit.text,
                    &n.to_string(),
                ])
            });
            let from = memory_id.as_deref().unwrap_or(&node.id);
            for (m, id) in mentions.iter().zip(&ids) {
                out.sightings.push(Sighting {
                    entity_id: id.clone(),
                    tenant: tenant.to_string(),
                    kind: m.kind.clone(),
                    key: m.key.clone(),
                    surface: m.surface.clone(),
                    address: None,
                    source_id: source.source_id.clone(),
                    seen_at: source.occurred_at,
                    recorded_at: source.recorded_at,
                });
                let edge = Relation::structural(
                    tenant,
                    edge::MENTIONS,
                    from,
                    id,
                    Some(provenance(m.start, m.end, mention_confidence)),
                );
                if mention_edges.insert(edge.id.clone()) {
                    out.elements.push(GraphElement::Relation(edge));
                }
            }
            let open_spans: Vec<(u32, u32, String, String)> = open
                .iter()
                .map(|c| {
                    let rel = |b: usize| (b - unit.start) as u32;
                    (rel(c.start), rel(c.end), c.key.clone(), c.surface.clone())
                })
                .collect();
            for c in open {
                if candidate_keys.insert((from.to_string(), c.key.clone())) {
                    out.candidates.push(CandidateMention {
                        tenant: tenant.to_string(),
                        key: c.key,
                        surface: c.surface,
                        memory_id: from.to_string(),
                        provenance: provenance(c.start, c.end, mention_confidence / 2),
                        seen_at: source.occurred_at,
                        recorded_at: source.recorded_at,
                    });
                }
            }
            let (Some(mut typing), Some(memory_id)) = (typing, memory_id) else {
                continue;
            };
            // A choice stated in a decision's own idiom ("Postgres it is for the primary
            // database", "the primary database moves from MySQL to Postgres") makes the
            // statement a decision, whatever else it looks like.
            let choice = self.choices.read(body, unit.start, unit.end, &mentions);
            if choice.as_ref().is_some_and(|c| c.idiomatic)
                && !matches!(
                    typing.memory_type,
                    EpistemicType::Decision | EpistemicType::Plan | EpistemicType::Question
                )
            {
                typing.memory_type = EpistemicType::Decision;
            }
            let span = (chars.at(unit.start), chars.at(unit.end));
            // A statement kept through later revisions is valid from when it was written.
            let written_at = source.written_at(span.0);
            let confidence = self.classifier.confidence(&typing, authority);
            out.elements.push(GraphElement::Memory(MemoryObject {
                id: memory_id.clone(),
                tenant: tenant.to_string(),
                memory_type: typing.memory_type,
                statement_type: typing.statement_type,
                temporal_type: typing.temporal_type,
                text: unit.text.clone(),
                title: source.title.clone(),
                section: unit.section.clone(),
                source_id: source.source_id.clone(),
                source_version: source.version.clone(),
                span,
                extractor: EXTRACTOR.to_string(),
                confidence,
                t_valid: written_at,
                t_invalid: None,
                standing: if typing.memory_type == EpistemicType::Question {
                    Standing::Open
                } else {
                    Standing::Current
                },
                recorded_at: source.recorded_at,
            }));
            out.elements
                .push(GraphElement::Relation(Relation::structural(
                    tenant,
                    edge::DERIVED_FROM,
                    &memory_id,
                    &node.id,
                    None,
                )));
            if typing.memory_type == EpistemicType::Decision
                && let Some(person) = self.decider(body, &mentions, &ids, source)
            {
                out.elements
                    .push(GraphElement::Relation(Relation::structural(
                        tenant,
                        edge::DECIDED_BY,
                        &memory_id,
                        &person,
                        None,
                    )));
            }
            for r in self.relations.read(body, &mentions) {
                let (from, to) = (&ids[r.from], &ids[r.to]);
                let mut relation = Relation::structural(
                    tenant,
                    &r.rel_type,
                    from,
                    to,
                    Some(provenance(r.span.0, r.span.1, confidence)),
                );
                relation.temporal_type = Some(r.temporal);
                relation.t_valid = source.occurred_at;
                out.entity_relations.push(relation);
            }
            let spans: Vec<(usize, usize)> = mentions
                .iter()
                .map(|m| (m.start, m.end))
                .chain(
                    open_spans
                        .iter()
                        .map(|(s, e, ..)| (unit.start + *s as usize, unit.start + *e as usize)),
                )
                .collect();
            if !open_spans.is_empty() && self.relations.could_relate(body, &spans) {
                let rel = |b: usize| (b - unit.start) as u32;
                out.open_units.push(OpenUnit {
                    id: stable_id(&[
                        "open-unit",
                        tenant,
                        &source.source_id,
                        &source.version,
                        &unit.start.to_string(),
                    ]),
                    tenant: tenant.to_string(),
                    source_id: source.source_id.clone(),
                    source_version: source.version.clone(),
                    occurred_at: source.occurred_at,
                    text: body[unit.start..unit.end].to_string(),
                    char_offset: chars.at(unit.start),
                    confidence,
                    mentions: mentions
                        .iter()
                        .map(|m| {
                            (
                                rel(m.start),
                                rel(m.end),
                                m.kind.clone(),
                                m.key.clone(),
                                m.surface.clone(),
                            )
                        })
                        .collect(),
                    open: open_spans,
                });
            }
            // A decision (or plan) also claims its choice on a matter ("Postgres as the primary
            // database"), so a later decision on the same matter is judged like a changed value.
            let choice = choice
                .filter(|_| {
                    matches!(
                        typing.memory_type,
                        EpistemicType::Decision | EpistemicType::Plan
                    )
                })
                .map(|c| c.claim);
            for claim in self
                .claims
                .read(body, unit.start, unit.end, &mentions, source.occurred_at)
                .into_iter()
                .chain(choice)
            {
                let (subject, subject_name) = match claim.subject {
                    Some(i) => (ids[i].clone(), mentions[i].surface.clone()),
                    // A chat channel's name is no subject: the message stands for itself.
                    None if source.kind == SourceKind::Chat => {
                        title_subject(None, &source.source_id)
                    }
                    None => title_subject(source.title.as_deref(), &source.source_id),
                };
                let id = stable_id(&[
                    "claim",
                    &memory_id,
                    &claim.attribute,
                    &claim.value,
                    &(claim.start - unit.start).to_string(),
                ]);
                out.elements
                    .push(GraphElement::Relation(Relation::structural(
                        tenant,
                        edge::ASSERTS,
                        &memory_id,
                        &id,
                        None,
                    )));
                if claim.subject.is_some() {
                    out.elements
                        .push(GraphElement::Relation(Relation::structural(
                            tenant,
                            edge::ABOUT,
                            &id,
                            &subject,
                            None,
                        )));
                }
                let temporal_type = self
                    .ontology
                    .attributes
                    .iter()
                    .find(|a| claim.attribute.split(':').next() == Some(a.name.as_str()))
                    .and_then(|a| a.temporal)
                    .unwrap_or(typing.temporal_type);
                out.elements.push(GraphElement::Claim(Claim {
                    id,
                    tenant: tenant.to_string(),
                    memory_id: memory_id.clone(),
                    subject,
                    subject_name,
                    attribute: claim.attribute,
                    value: claim.value,
                    unit: claim.unit,
                    qualifier: claim.qualifier,
                    temporal_type,
                    t_valid: written_at,
                    t_invalid: None,
                    standing: Standing::Current,
                    recorded_at: source.recorded_at,
                    provenance: provenance(claim.start, claim.end, confidence),
                }));
            }
        }
        out.elements.insert(0, GraphElement::Source(node));
        dedup_relations(&mut out.entity_relations);
        // Configured aliases: every sighting of a listed name is linked to the canonical name.
        if !self.configured_aliases.is_empty() {
            for s in &out.sightings {
                if let Some(canonical) = self
                    .configured_aliases
                    .get(&(s.kind.clone(), normalise(&s.surface)))
                {
                    out.aliases.push(aliases::AliasLink {
                        tenant: s.tenant.clone(),
                        a: entity_id(&s.tenant, &s.kind, canonical),
                        b: s.entity_id.clone(),
                    });
                }
            }
        }
        out.aliases.sort();
        out.aliases.dedup();
        // Every edge read from this version is valid from when it was written and recorded
        // when the version was.
        let edges = out.elements.iter_mut().filter_map(|e| match e {
            GraphElement::Relation(r) => Some(r),
            _ => None,
        });
        for relation in edges.chain(out.entity_relations.iter_mut()) {
            relation.t_valid = relation.t_valid.or(source.occurred_at);
            relation.recorded_at = source.recorded_at;
        }
        out
    }

    /// People of the headers: a sighting each, and their edge to the source node.
    fn party_edges(&self, source: &SourceVersion, node_id: &str, out: &mut Extraction) {
        let tenant = source.tenant.as_str();
        let participant_edge = if source.kind == SourceKind::Calendar {
            edge::ATTENDS
        } else {
            edge::PARTICIPATES_IN
        };
        let mut edges = BTreeSet::new();
        let groups = [
            (&source.authors, edge::AUTHORED),
            (&source.participants, participant_edge),
        ];
        for (parties, rel_type) in groups {
            for party in parties {
                let Some((key, surface)) = party_key(party) else {
                    continue;
                };
                let id = entity_id(tenant, "Person", &key);
                out.sightings.push(Sighting {
                    entity_id: id.clone(),
                    tenant: tenant.to_string(),
                    kind: "Person".into(),
                    key,
                    surface,
                    address: party.address.as_ref().map(|a| a.trim().to_lowercase()),
                    source_id: source.source_id.clone(),
                    seen_at: source.occurred_at,
                    recorded_at: source.recorded_at,
                });
                if edges.insert((rel_type, id.clone())) {
                    out.elements
                        .push(GraphElement::Relation(Relation::structural(
                            tenant, rel_type, &id, node_id, None,
                        )));
                }
            }
        }
    }

    /// Who made a decision: a person named right after "by" or right before a decision verb,
    /// else the source's only author.
    fn decider(
        &self,
        body: &str,
        mentions: &[Mention],
        ids: &[String],
        source: &SourceVersion,
    ) -> Option<String> {
        const VERBS: [&str; 7] = [
            " decided",
            " approved",
            " accepted",
            " pronounced",
            " signed off",
            " chose",
            " rejected",
        ];
        for (m, id) in mentions.iter().zip(ids) {
            if m.kind != "Person" {
                continue;
            }
            let before = body[..m.start].trim_end().to_lowercase();
            let after = body[m.end..].to_lowercase();
            if before.ends_with(" by") || VERBS.iter().any(|v| after.starts_with(v)) {
                return Some(id.clone());
            }
        }
        let mut authors = source.authors.iter().filter_map(party_key);
        match (authors.next(), authors.next()) {
            (Some((key, _)), None) => Some(entity_id(&source.tenant, "Person", &key)),
            _ => None,
        }
    }
}

/// Header fields that name authors.
const AUTHOR_FIELDS: [&str; 6] = [
    "author",
    "authors",
    "bdfl-delegate",
    "pep-delegate",
    "owner",
    "deciders",
];

/// People named in the header block: `Name <address>`, `address (Name)` or `Name`, separated
/// by commas.
///
/// ```
/// use epigraph_operators::extract::header_parties;
/// let people = header_parties("PEP: 1\nAuthor: Barry Warsaw <barry@python.org>, jeremy@alum.mit.edu (Jeremy Hylton)\n\nBody");
/// assert_eq!(people[0].name.as_deref(), Some("Barry Warsaw"));
/// assert_eq!(people[1].address.as_deref(), Some("jeremy@alum.mit.edu"));
/// assert_eq!(people[1].name.as_deref(), Some("Jeremy Hylton"));
/// ```
pub fn header_parties(body: &str) -> Vec<Party> {
    let mut parties = Vec::new();
    for (key, value) in segment::header_fields(body) {
        if !AUTHOR_FIELDS.contains(&key.as_str()) {
            continue;
        }
        for item in split_outside_brackets(&value) {
            let item = item.trim();
            let (name, address) =
                if let (Some(open), Some(close)) = (item.find('<'), item.rfind('>')) {
                    (
                        item[..open].trim().to_string(),
                        Some(item[open + 1..close].trim().to_string()),
                    )
                } else if let (Some(open), Some(close)) = (item.find('('), item.rfind(')')) {
                    (
                        item[open + 1..close].trim().to_string(),
                        Some(item[..open].trim().to_string()),
                    )
                } else if item.contains('@') {
                    (String::new(), Some(item.to_string()))
                } else {
                    (item.to_string(), None)
                };
            let name = name.trim_matches('"').trim().to_string();
            if name.is_empty() && address.is_none() {
                continue;
            }
            parties.push(Party {
                name: (!name.is_empty()).then_some(name),
                address: address.filter(|a| !a.is_empty()),
            });
        }
    }
    parties
}

fn split_outside_brackets(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in value.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&value[start..]);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

fn dedup_relations(relations: &mut Vec<Relation>) {
    relations.sort_by(|a, b| a.id.cmp(&b.id).then(a.provenance.cmp(&b.provenance)));
    relations.dedup_by(|later, first| later.id == first.id);
}

/// Byte to character offsets of a body, in O(1) for ASCII bodies.
struct CharIndex {
    table: Option<Vec<u32>>,
}

impl CharIndex {
    fn new(body: &str) -> Self {
        if body.is_ascii() {
            return CharIndex { table: None };
        }
        let mut table = vec![0u32; body.len() + 1];
        let mut count = 0u32;
        for (byte, c) in body.char_indices() {
            for slot in &mut table[byte..byte + c.len_utf8()] {
                *slot = count;
            }
            count += 1;
        }
        table[body.len()] = count;
        CharIndex { table: Some(table) }
    }

    fn at(&self, byte: usize) -> u32 {
        match &self.table {
            None => byte as u32,
            Some(table) => table[byte],
        }
    }
}

/// The civil year of a time in ms since the Unix epoch (proleptic Gregorian, UTC).
///
/// ```
/// assert_eq!(epigraph_operators::extract::year_of(1_780_000_000_000), 2026);
/// assert_eq!(epigraph_operators::extract::year_of(0), 1970);
/// ```
pub fn year_of(ms: i64) -> i32 {
    civil_date(ms).0
}

/// `(year, month, day)` of a time in ms since the Unix epoch (proleptic Gregorian, UTC), by
/// Howard Hinnant's days-to-civil.
///
/// ```
/// assert_eq!(epigraph_operators::extract::civil_date(1_767_603_600_000), (2026, 1, 5));
/// ```
pub fn civil_date(ms: i64) -> (i32, u32, u32) {
    let days = ms.div_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        (yoe + era * 400 + i64::from(month <= 2)) as i32,
        month as u32,
        day as u32,
    )
}

/// What the per-source stage of [`extract_graph`] emits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum Extracted {
    Element(GraphElement),
    Sighting(Sighting),
    EntityRelation(Relation),
    Candidate(CandidateMention),
    Alias(aliases::AliasLink),
    DocLink(doclinks::DocLink),
    OpenUnit(OpenUnit),
}

/// The dataflow stage: live source versions to graph elements.
///
/// - per source: its node, memory objects, claims and structural edges;
/// - per entity: one [`EntityNode`] aggregating every sighting in the tenant;
/// - per vocabulary relation between two entities: one edge, with the number of sources that
///   state it and the provenance of the earliest;
/// - per capitalised phrase that names an entity known anywhere in the tenant: a `MENTIONS` edge;
/// - per entity resolved to another: a `SAME_AS` edge to its canonical entity ([`crate::resolve`]).
///
/// ```
/// use std::sync::Arc;
/// use differential_dataflow::input::Input;
/// use epigraph_operators::{GraphElement, SourceVersion, extract::{Extractor, extract_graph}};
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
    let verdicts = sources
        .clone()
        .flat_map(|_| None::<crate::resolve::Verdict>);
    extract_graph_with_verdicts(sources, verdicts, extractor)
}

/// [`extract_graph`] with human identity verdicts (see [`crate::resolve`]): the entities are
/// also resolved into `SAME_AS` edges to their canonical entity.
pub fn extract_graph_with_verdicts<'s, T>(
    sources: VecCollection<'s, T, SourceVersion>,
    verdicts: VecCollection<'s, T, crate::resolve::Verdict>,
    extractor: Arc<Extractor>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let rules = extractor.rules();
    let reader = extractor.clone();
    let ontology_recurring = extractor
        .ontology()
        .recurring
        .as_ref()
        .map(|r| (r.kind.clone(), r.min_sources));
    let extracted = sources.flat_map(move |source| {
        let x = extractor.extract(&source);
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
            .collect::<Vec<_>>()
    });
    let elements = extracted.clone().flat_map(|x| match x {
        Extracted::Element(e) => Some(e),
        _ => None,
    });
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
    let entity_relations = extracted
        .clone()
        .flat_map(|x| match x {
            Extracted::EntityRelation(r) => Some(r),
            _ => None,
        })
        .concat(relations_of_open_units(open_units, named, reader))
        .map(|r| (r.id.clone(), r))
        .reduce(|_id, input, output| output.push((aggregate_relation(input), 1)))
        .map(|(_, relation)| GraphElement::Relation(relation));
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
    let identities =
        crate::resolve::resolve_identities(sightings_for_resolution, verdicts, stated_aliases);
    let memories = elements.clone().flat_map(|e| match e {
        GraphElement::Memory(m) => Some(m),
        _ => None,
    });
    let cited = citations::citation_edges(memories, doc_links.clone(), rules.clone());
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
    crate::epistemic::relate(all, rules)
}

/// `SUPERSEDES` edges between the source nodes of numbered documents, from what their headers
/// say: a document whose `Superseded-By:` names a key is replaced by the document with that key,
/// and a document whose `Replaces:` names a key replaces it. Valid from when the newer one was
/// written.
fn document_supersessions<'s, T>(
    links: VecCollection<'s, T, doclinks::DocLink>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    use doclinks::DocRole;
    let owners = links
        .clone()
        .filter(|l| l.role == DocRole::Is)
        .map(|l| ((l.tenant.clone(), l.key.clone()), l));
    let references = links
        .filter(|l| l.role != DocRole::Is)
        .map(|l| ((l.tenant.clone(), l.key.clone()), l));
    references
        .join_map(owners, |(tenant, _), reference, owner| {
            let (newer, older) = match reference.role {
                DocRole::SupersededBy => (owner, reference),
                _ => (reference, owner),
            };
            (
                tenant.clone(),
                newer.node_id.clone(),
                older.node_id.clone(),
                newer.occurred_at,
                newer.recorded_at.max(older.recorded_at),
            )
        })
        .filter(|(_, newer, older, ..)| newer != older)
        .distinct()
        .map(|(tenant, newer, older, t_valid, recorded_at)| {
            let mut edge = Relation::structural(&tenant, "SUPERSEDES", &newer, &older, None);
            edge.t_valid = t_valid;
            edge.recorded_at = recorded_at;
            GraphElement::Relation(edge)
        })
}

/// A name known in a tenant: ((tenant, key), (entity id, kind)).
type KnownName = ((String, String), (String, String));

/// What an open unit's relations are read from: the unit, or one of its phrases found among
/// the tenant's entities (its index, the entity id and kind).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum OpenPart {
    Unit(OpenUnit),
    Named(u32, String, String),
}

/// The relations of open units whose phrases name entities known elsewhere in the tenant
/// (`named`: (tenant, key) → (entity id, kind)). A phrase naming entities of several kinds
/// takes the first by kind and id.
fn relations_of_open_units<'s, T>(
    units: VecCollection<'s, T, OpenUnit>,
    named: VecCollection<'s, T, KnownName>,
    extractor: Arc<Extractor>,
) -> VecCollection<'s, T, Relation>
where
    T: Timestamp + Lattice,
{
    let asks = units.clone().flat_map(|u| {
        u.open
            .iter()
            .enumerate()
            .map(|(i, (_, _, key, _))| ((u.tenant.clone(), key.clone()), (u.id.clone(), i as u32)))
            .collect::<Vec<_>>()
    });
    let answers = asks.join_map(named, |_, (unit, i), (id, kind)| {
        (unit.clone(), OpenPart::Named(*i, id.clone(), kind.clone()))
    });
    units
        .map(|u| (u.id.clone(), OpenPart::Unit(u)))
        .concat(answers)
        .reduce(move |_unit, parts, output| {
            let mut unit = None;
            let mut named: Vec<(u32, String, String)> = Vec::new();
            for (part, _) in parts {
                match part {
                    OpenPart::Unit(u) => unit = Some(u),
                    OpenPart::Named(i, id, kind) => {
                        if named.last().is_none_or(|(j, ..)| j != i) {
                            named.push((*i, id.clone(), kind.clone()));
                        }
                    }
                }
            }
            let Some(unit) = unit else { return };
            if named.is_empty() {
                return;
            }
            let mut found = unit.relations(&extractor.relations, &named);
            found.sort();
            found.dedup();
            for relation in found {
                output.push((relation, 1));
            }
        })
        .map(|(_, relation)| relation)
}

fn aggregate_entity(input: &[(&Sighting, isize)]) -> EntityNode {
    let first = input[0].0;
    let mut surfaces: BTreeMap<&str, isize> = BTreeMap::new();
    let mut addresses = BTreeSet::new();
    let mut sources = BTreeSet::new();
    let mut mentions = 0isize;
    let mut t_valid: Option<i64> = None;
    let mut recorded_at: Option<i64> = None;
    let earliest = |a: Option<i64>, b: Option<i64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    for (sighting, count) in input {
        t_valid = earliest(t_valid, sighting.seen_at);
        recorded_at = earliest(recorded_at, sighting.recorded_at);
        *surfaces.entry(sighting.surface.as_str()).or_default() += count;
        if let Some(address) = &sighting.address {
            addresses.insert(address.clone());
        }
        sources.insert(sighting.source_id.as_str());
        mentions += count;
    }
    let name = surfaces
        .iter()
        .max_by(|(a, na), (b, nb)| {
            let words = |s: &str| s.split_whitespace().count();
            (words(a), **na)
                .cmp(&(words(b), **nb))
                .then_with(|| b.cmp(a))
        })
        .map(|(s, _)| s.to_string())
        .unwrap_or_default();
    EntityNode {
        id: first.entity_id.clone(),
        tenant: first.tenant.clone(),
        kind: first.kind.clone(),
        name,
        aliases: surfaces.keys().map(|s| s.to_string()).collect(),
        addresses: addresses.into_iter().collect(),
        mentions: mentions.max(0) as u32,
        sources: sources.len() as u32,
        t_valid,
        recorded_at,
    }
}

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
