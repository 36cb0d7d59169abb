//! The rule-based extractor: one source version in, its [`Extraction`] out.
//!
//! [`Extractor::extract`] reads a source in steps: the source node and what its header says
//! (document links, authors), then every unit twice — first its strong mentions, so that a
//! capitalised phrase named strongly anywhere in the source is known; then, per unit, its
//! names, aliases, mentions and unknown phrases, and for a unit that is a statement its memory
//! object, relations and claims — and finally the per-source touches (configured aliases, edge
//! times).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use epigraph_schemas::{Party, SourceKind};

use super::aliases::{AliasLink, AliasReader};
use super::choice::ChoiceReader;
use super::claims::{ClaimReader, title_subject};
use super::classify::{self, Classifier, Typing};
use super::doclinks::{self, DocLink};
use super::headers::header_parties;
use super::mentions::{
    Candidate, Evidence, LocalPeople, Mention, Recogniser, normalise, party_key,
};
use super::open_units::OpenUnit;
use super::relations::RelationReader;
use super::segment::{self, Unit};
use super::sighting::{CandidateMention, Sighting, entity_id};
use super::{EXTRACTOR, edge, typer};
use crate::model::{
    Claim, EpistemicType, GraphElement, MemoryObject, Provenance, Relation, SourceNode,
    SourceVersion, Standing, UnitForm, stable_id,
};
use crate::ontology::{Ontology, OntologyError};

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
    pub aliases: Vec<AliasLink>,
    /// What a numbered document's header says about itself and the documents it replaced or
    /// that replaced it (joined across sources into `SUPERSEDES` edges between source nodes).
    pub doc_links: Vec<DocLink>,
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
///
/// [`Extractor::new`], [`Extractor::bundled`] and [`Extractor::rules`] are defined with the
/// dataflow that composes extraction, resolution and judgement (`graph`): compiling an extractor
/// also checks that the epistemic rules of its ontology compile.
#[derive(Debug)]
pub struct Extractor {
    ontology: Arc<Ontology>,
    recogniser: Recogniser,
    classifier: Classifier,
    claims: ClaimReader,
    choices: ChoiceReader,
    relations: RelationReader,
    alias_reader: AliasReader,
    /// `(kind, normalised name)` → the normalised canonical name of its `[[alias]]` group.
    configured_aliases: HashMap<(String, String), String>,
}

/// A unit's strong mentions and untyped phrases (pass 1).
type Scanned = (Vec<Mention>, Vec<Candidate>);

/// The names a source uses strongly: normalised name → (kind, key).
type LocalNames = HashMap<String, (String, String)>;

/// What every step of reading one source version shares.
struct Reading<'a> {
    /// The source, with the authors its header block names.
    source: &'a SourceVersion,
    /// Its node's id.
    node_id: &'a str,
    tenant: &'a str,
    body: &'a str,
    chars: CharIndex,
    /// How much the source is believed.
    authority: f64,
    /// Confidence of a mention: the source's authority, in thousandths.
    mention_confidence: u16,
}

impl Reading<'_> {
    /// Where `body[start..end]` is, with what confidence.
    fn provenance(&self, start: usize, end: usize, confidence: u16) -> Provenance {
        Provenance {
            source_id: self.source.source_id.clone(),
            source_version: self.source.version.clone(),
            span: (self.chars.at(start), self.chars.at(end)),
            extractor: EXTRACTOR.to_string(),
            confidence,
        }
    }

    /// A sighting of an entity in this source (no address).
    fn sighting(&self, entity_id: String, kind: String, key: String, surface: String) -> Sighting {
        Sighting {
            entity_id,
            tenant: self.tenant.to_string(),
            kind,
            key,
            surface,
            address: None,
            source_id: self.source.source_id.clone(),
            seen_at: self.source.occurred_at,
            recorded_at: self.source.recorded_at,
        }
    }
}

/// What the units of one source version share as they are read in turn.
#[derive(Default)]
struct Seen {
    /// Statements with the same text so far, by text (their memory ids differ by the count).
    occurrences: HashMap<String, u32>,
    /// `MENTIONS` edges drawn so far.
    mention_edges: HashSet<String>,
    /// `(memory object, key)` of the candidate mentions so far.
    candidate_keys: HashSet<(String, String)>,
}

/// One unit after its names are settled: what it names, and the ids of those entities.
struct Named<'u> {
    unit: &'u Unit,
    mentions: Vec<Mention>,
    ids: Vec<String>,
    /// Its unknown phrases: (byte start, byte end relative to the unit, key, surface).
    open_spans: Vec<(u32, u32, String, String)>,
}

impl Extractor {
    /// Compiles the extractor's readers (not the epistemic rules: see [`Extractor::new`]).
    pub(crate) fn compile(ontology: Ontology) -> Result<Self, OntologyError> {
        Ok(Extractor {
            recogniser: Recogniser::new(&ontology),
            classifier: Classifier::new(&ontology)?,
            claims: ClaimReader::new(&ontology)?,
            choices: ChoiceReader::new(),
            relations: RelationReader::new(&ontology)?,
            alias_reader: AliasReader::default(),
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

    /// The ontology it was compiled from.
    pub fn ontology(&self) -> &Ontology {
        &self.ontology
    }

    /// The rule classifier.
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    /// The reader of vocabulary relations.
    pub(crate) fn relation_reader(&self) -> &RelationReader {
        &self.relations
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
    pub fn type_unit(&self, unit: &segment::Unit, kind: SourceKind) -> Option<Typing> {
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
        // An entry naming an identifier stays a statement (the typer learned from prose).
        let memory_type = match typer.predict(&input).0 {
            Some(memory_type) => memory_type,
            None if classify::is_named_entry(&unit.text, unit.section.as_deref(), kind) => {
                typing.memory_type
            }
            None => return None,
        };
        if memory_type == typing.memory_type {
            return Some(typing);
        }
        Some(Typing {
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
        let node = source_node(source);
        let authority = self
            .ontology
            .authority
            .of(source.kind, source.authority.as_deref());
        let has_people = self.ontology.kind("Person").is_some();
        out.doc_links = doc_links(source, &node.id);
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
        let reading = Reading {
            source,
            node_id: &node.id,
            tenant: source.tenant.as_str(),
            body,
            chars: CharIndex::new(body),
            authority,
            mention_confidence: (authority * 1000.0).round() as u16,
        };
        let units = segment::units(body);
        // Pass 1: typed units and their strong mentions.
        let (scanned, local_names) = self.scan(body, &units, &people);
        // Pass 2: capitalised phrases named strongly elsewhere in the same source.
        // Units that are noise still name entities: those mentions hang off the source node.
        let mut seen = Seen::default();
        for (unit, (mentions, candidates)) in units.iter().zip(scanned) {
            self.read_unit(
                &reading,
                unit,
                (mentions, candidates),
                &local_names,
                &mut seen,
                &mut out,
            );
        }
        out.elements.insert(0, GraphElement::Source(node));
        self.finish(source, &mut out);
        out
    }

    /// Pass 1: every unit's strong mentions and untyped phrases, and the names the source uses
    /// strongly anywhere (normalised name → (kind, key)).
    fn scan(&self, body: &str, units: &[Unit], people: &LocalPeople) -> (Vec<Scanned>, LocalNames) {
        let mut scanned = Vec::with_capacity(units.len());
        let mut local_names: LocalNames = HashMap::new();
        for unit in units {
            let (mentions, candidates) = self.recogniser.scan(body, unit.start, unit.end, people);
            for m in &mentions {
                local_names
                    .entry(normalise(&body[m.start..m.end]))
                    .or_insert((m.kind.clone(), m.key.clone()));
            }
            scanned.push((mentions, candidates));
        }
        (scanned, local_names)
    }

    /// Pass 2 for one unit: its names and aliases, its mentions (off its memory object, or off
    /// the source node for noise), its unknown phrases, and, if it is a statement, the
    /// statement.
    fn read_unit(
        &self,
        r: &Reading,
        unit: &Unit,
        (mentions, candidates): Scanned,
        local_names: &LocalNames,
        seen: &mut Seen,
        out: &mut Extraction,
    ) {
        let typing = self.type_unit(unit, r.source.kind);
        let (mentions, open) = name_candidates(mentions, candidates, local_names);
        let ids: Vec<String> = mentions
            .iter()
            .map(|m| entity_id(r.tenant, &m.kind, &m.key))
            .collect();
        self.stated_aliases(r, &mentions, &ids, out);
        let memory_id = typing.map(|_| {
            let n = seen.occurrences.entry(unit.text.clone()).or_default();
            *n += 1;
            stable_id(&[
                "memory",
                r.tenant,
                &r.source.source_id,
                &unit.text,
                &n.to_string(),
            ])
        });
        let from = memory_id.as_deref().unwrap_or(r.node_id);
        mention_edges(r, from, &mentions, &ids, seen, out);
        let open_spans: Vec<(u32, u32, String, String)> = open
            .iter()
            .map(|c| {
                let rel = |b: usize| (b - unit.start) as u32;
                (rel(c.start), rel(c.end), c.key.clone(), c.surface.clone())
            })
            .collect();
        candidate_mentions(r, from, open, seen, out);
        let (Some(typing), Some(memory_id)) = (typing, memory_id) else {
            return;
        };
        let named = Named {
            unit,
            mentions,
            ids,
            open_spans,
        };
        self.read_statement(r, &named, typing, &memory_id, out);
    }

    /// Aliases the text states for the unit's mentions ("Katherine (Kat)"): a sighting of the
    /// alias and same-as evidence between the two.
    fn stated_aliases(
        &self,
        r: &Reading,
        mentions: &[Mention],
        ids: &[String],
        out: &mut Extraction,
    ) {
        for (i, start, end, surface) in self.alias_reader.read(r.body, mentions) {
            let kind = mentions[i].kind.clone();
            let key = normalise(&surface);
            let alias = entity_id(r.tenant, &kind, &key);
            out.sightings.push(r.sighting(
                alias.clone(),
                kind,
                key,
                r.body[start..end].to_string(),
            ));
            out.aliases.push(AliasLink {
                tenant: r.tenant.to_string(),
                a: ids[i].clone(),
                b: alias,
            });
        }
    }

    /// A unit that is a statement: its memory object (a decision if it states a choice in a
    /// decision's idiom), its structural edges, vocabulary relations, open unit and claims.
    fn read_statement(
        &self,
        r: &Reading,
        named: &Named,
        mut typing: Typing,
        memory_id: &str,
        out: &mut Extraction,
    ) {
        let Named {
            unit,
            mentions,
            ids,
            ..
        } = named;
        let (body, source, tenant) = (r.body, r.source, r.tenant);
        // A choice stated in a decision's own idiom ("Postgres it is for the primary
        // database", "the primary database moves from MySQL to Postgres") makes the
        // statement a decision, whatever else it looks like.
        let choice = self.choices.read(body, unit.start, unit.end, mentions);
        if choice.as_ref().is_some_and(|c| c.idiomatic)
            && !matches!(
                typing.memory_type,
                EpistemicType::Decision | EpistemicType::Plan | EpistemicType::Question
            )
        {
            typing.memory_type = EpistemicType::Decision;
        }
        let span = (r.chars.at(unit.start), r.chars.at(unit.end));
        // A statement kept through later revisions is valid from when it was written.
        let written_at = source.written_at(span.0);
        let confidence = self.classifier.confidence(&typing, r.authority);
        out.elements.push(GraphElement::Memory(MemoryObject {
            id: memory_id.to_string(),
            tenant: tenant.to_string(),
            memory_type: typing.memory_type,
            statement_type: typing.statement_type,
            temporal_type: typing.temporal_type,
            text: unit.text.clone(),
            title: source.title.clone(),
            section: unit.section.clone(),
            outline: unit.outline.clone(),
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
            header: unit.form == UnitForm::Header,
        }));
        out.elements
            .push(GraphElement::Relation(Relation::structural(
                tenant,
                edge::DERIVED_FROM,
                memory_id,
                r.node_id,
                None,
            )));
        if typing.memory_type == EpistemicType::Decision
            && let Some(person) = self.decider(body, mentions, ids, source)
        {
            out.elements
                .push(GraphElement::Relation(Relation::structural(
                    tenant,
                    edge::DECIDED_BY,
                    memory_id,
                    &person,
                    None,
                )));
        }
        self.entity_relations(r, mentions, ids, confidence, out);
        self.open_unit(r, named, confidence, out);
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
            .read(body, unit.start, unit.end, mentions, source.occurred_at)
            .into_iter()
            .chain(choice)
        {
            let (subject, subject_name) = match claim.subject {
                Some(i) => (ids[i].clone(), mentions[i].surface.clone()),
                // A chat channel's name is no subject: the message stands for itself.
                None if source.kind == SourceKind::Chat => title_subject(None, &source.source_id),
                None => title_subject(source.title.as_deref(), &source.source_id),
            };
            let id = stable_id(&[
                "claim",
                memory_id,
                &claim.attribute,
                &claim.value,
                &(claim.start - unit.start).to_string(),
            ]);
            out.elements
                .push(GraphElement::Relation(Relation::structural(
                    tenant,
                    edge::ASSERTS,
                    memory_id,
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
                memory_id: memory_id.to_string(),
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
                provenance: r.provenance(claim.start, claim.end, confidence),
            }));
        }
    }

    /// The vocabulary relations a statement states between the entities it names.
    fn entity_relations(
        &self,
        r: &Reading,
        mentions: &[Mention],
        ids: &[String],
        confidence: u16,
        out: &mut Extraction,
    ) {
        for raw in self.relations.read(r.body, mentions) {
            let (from, to) = (&ids[raw.from], &ids[raw.to]);
            let mut relation = Relation::structural(
                r.tenant,
                &raw.rel_type,
                from,
                to,
                Some(r.provenance(raw.span.0, raw.span.1, confidence)),
            );
            relation.temporal_type = Some(raw.temporal);
            relation.t_valid = r.source.occurred_at;
            out.entity_relations.push(relation);
        }
    }

    /// A statement with unknown phrases that could take part in a relation waits for names
    /// known elsewhere in the tenant.
    fn open_unit(&self, r: &Reading, named: &Named, confidence: u16, out: &mut Extraction) {
        let Named {
            unit,
            mentions,
            open_spans,
            ..
        } = named;
        let spans: Vec<(usize, usize)> = mentions
            .iter()
            .map(|m| (m.start, m.end))
            .chain(
                open_spans
                    .iter()
                    .map(|(s, e, ..)| (unit.start + *s as usize, unit.start + *e as usize)),
            )
            .collect();
        if open_spans.is_empty() || !self.relations.could_relate(r.body, &spans) {
            return;
        }
        let rel = |b: usize| (b - unit.start) as u32;
        let source = r.source;
        out.open_units.push(OpenUnit {
            id: stable_id(&[
                "open-unit",
                r.tenant,
                &source.source_id,
                &source.version,
                &unit.start.to_string(),
            ]),
            tenant: r.tenant.to_string(),
            source_id: source.source_id.clone(),
            source_version: source.version.clone(),
            occurred_at: source.occurred_at,
            text: r.body[unit.start..unit.end].to_string(),
            char_offset: r.chars.at(unit.start),
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
            open: open_spans.clone(),
        });
    }

    /// The per-source touches once every unit is read: relations deduplicated, configured
    /// aliases linked, every edge timed.
    fn finish(&self, source: &SourceVersion, out: &mut Extraction) {
        dedup_relations(&mut out.entity_relations);
        // Configured aliases: every sighting of a listed name is linked to the canonical name.
        if !self.configured_aliases.is_empty() {
            for s in &out.sightings {
                if let Some(canonical) = self
                    .configured_aliases
                    .get(&(s.kind.clone(), normalise(&s.surface)))
                {
                    out.aliases.push(AliasLink {
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

/// The node of a source version.
fn source_node(source: &SourceVersion) -> SourceNode {
    SourceNode {
        id: source.node_id(),
        tenant: source.tenant.clone(),
        source_id: source.source_id.clone(),
        kind: source.kind,
        version: source.version.clone(),
        title: source.title.clone(),
        occurred_at: source.occurred_at,
        recorded_at: source.recorded_at,
    }
}

/// What the header block of a numbered document says about itself and its neighbours.
fn doc_links(source: &SourceVersion, node_id: &str) -> Vec<DocLink> {
    let mut links = doclinks::header_links(&source.body);
    // Its folder's number names it too (`2043-…` whose header says `KEP: 1884`).
    for key in doclinks::path_keys(&source.source_id, &links) {
        links.push((key, doclinks::DocRole::Is));
    }
    // The source's title, or the one its header block gives (`Title: Suspend Jobs`).
    let title = source.title.clone().or_else(|| {
        super::segment::header_fields(&source.body)
            .into_iter()
            .find_map(|(key, value)| (key == "title").then_some(value))
    });
    links
        .into_iter()
        .map(|(key, role)| DocLink {
            tenant: source.tenant.clone(),
            node_id: node_id.to_string(),
            source_id: source.source_id.clone(),
            occurred_at: source.occurred_at,
            recorded_at: source.recorded_at,
            key,
            role,
            title: title.clone(),
        })
        .collect()
}

/// A unit's mentions, with its untyped phrases that the source names strongly elsewhere added
/// (in text order), and the phrases it does not know.
fn name_candidates(
    mut mentions: Vec<Mention>,
    candidates: Vec<Candidate>,
    local_names: &LocalNames,
) -> (Vec<Mention>, Vec<Candidate>) {
    let mut open = Vec::new();
    for c in candidates {
        match local_names.get(&c.key) {
            Some((kind, key)) => mentions.push(Mention {
                start: c.start,
                end: c.end,
                surface: c.surface,
                kind: kind.clone(),
                key: key.clone(),
                evidence: Evidence::Pattern,
            }),
            None => open.push(c),
        }
    }
    mentions.sort_by_key(|m| (m.start, m.end));
    (mentions, open)
}

/// A sighting per mention, and one `MENTIONS` edge per entity from `from` (the memory object,
/// or the source node for noise).
fn mention_edges(
    r: &Reading,
    from: &str,
    mentions: &[Mention],
    ids: &[String],
    seen: &mut Seen,
    out: &mut Extraction,
) {
    for (m, id) in mentions.iter().zip(ids) {
        out.sightings.push(r.sighting(
            id.clone(),
            m.kind.clone(),
            m.key.clone(),
            m.surface.clone(),
        ));
        let edge = Relation::structural(
            r.tenant,
            edge::MENTIONS,
            from,
            id,
            Some(r.provenance(m.start, m.end, r.mention_confidence)),
        );
        if seen.mention_edges.insert(edge.id.clone()) {
            out.elements.push(GraphElement::Relation(edge));
        }
    }
}

/// The unit's unknown phrases, once per `from` and key, to match against entities known
/// elsewhere (at half a mention's confidence).
fn candidate_mentions(
    r: &Reading,
    from: &str,
    open: Vec<Candidate>,
    seen: &mut Seen,
    out: &mut Extraction,
) {
    for c in open {
        if seen
            .candidate_keys
            .insert((from.to_string(), c.key.clone()))
        {
            out.candidates.push(CandidateMention {
                tenant: r.tenant.to_string(),
                key: c.key,
                surface: c.surface,
                memory_id: from.to_string(),
                provenance: r.provenance(c.start, c.end, r.mention_confidence / 2),
                seen_at: r.source.occurred_at,
                recorded_at: r.source.recorded_at,
            });
        }
    }
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
