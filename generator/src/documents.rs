//! Composing calendar entries, documents and ADRs, and their revisions.

use crate::doc::{Doc, Section};
use crate::dynamics::Step;
use crate::generator::Generator;
use crate::labels::{Event, LabelSet, Party};
use crate::unit::{MemType, Unit, Writer};

const CONTEXT: &[MemType] = &[MemType::Narrative, MemType::Evidence, MemType::Observation];
const RISKS: &[MemType] = &[
    MemType::Hypothesis,
    MemType::Constraint,
    MemType::Observation,
    MemType::Evaluation,
];
const CONSEQUENCES: &[MemType] = &[MemType::Evaluation, MemType::Plan, MemType::Constraint];
const AGENDA: &[MemType] = &[
    MemType::Question,
    MemType::Plan,
    MemType::Evidence,
    MemType::Observation,
];

impl Generator {
    pub(crate) fn calendar(&mut self) -> (Event, LabelSet) {
        let source_id = format!("calendar/{}", self.line);
        let mut labels = LabelSet::default();
        let mut ctx = self.ctx(&source_id, &mut labels);
        let mut sections = vec![Section {
            heading: None,
            list: false,
            units: vec![self.content(&mut ctx, CONTEXT)],
        }];
        let agenda = (0..self.rng.range(1, 3))
            .map(|_| self.content(&mut ctx, AGENDA))
            .collect();
        sections.push(Section {
            heading: Some("Agenda:".into()),
            list: true,
            units: agenda,
        });
        for (heading, wanted) in [
            ("Decisions:", MemType::Decision),
            ("Action items:", MemType::Plan),
        ] {
            if self.rng.chance(0.4) {
                let units = (0..self.rng.range(1, 2))
                    .map(|_| self.content(&mut ctx, &[wanted]))
                    .collect();
                sections.push(Section {
                    heading: Some(heading.into()),
                    list: true,
                    units,
                });
            }
        }
        let title = self.title(&[
            "{J} weekly sync",
            "{C} QBR",
            "{M} retro",
            "Hiring committee",
            "{T} review",
            "Planning for {q}",
            "Prep for the {E}",
        ]);
        let who = self.people(2, 8);
        let participants: Vec<Party> = who.iter().map(|p| self.party(*p, false)).collect();
        let doc = Doc {
            kind: "calendar",
            thread_id: format!("calendar/{}", title.to_lowercase().replace(' ', "-")),
            source_id,
            title,
            head: Vec::new(),
            sections,
            authors: participants[..1].to_vec(),
            participants,
        };
        self.finish_doc(doc, labels)
    }

    pub(crate) fn document(&mut self) -> (Event, LabelSet) {
        let source_id = format!("docs/{}.md", self.line);
        let mut labels = LabelSet::default();
        let mut ctx = self.ctx(&source_id, &mut labels);
        // A decision step that is not an ADR's goes first into the "Decisions" list.
        let mut decided = Vec::new();
        if self.rng.chance(0.25) {
            let mut w = Writer {
                org: &mut self.org,
                rng: &mut self.rng,
                now: self.now,
            };
            if let Some(step) = self.dynamics.step(&mut w, &mut ctx, &[MemType::Decision]) {
                self.written.push(step.unit.text.clone());
                if !step.title.is_empty() {
                    return self.adr(source_id, step, labels);
                }
                decided.push(step.unit);
            }
        }
        let context = (0..self.rng.range(1, 3))
            .map(|_| self.content(&mut ctx, CONTEXT))
            .collect();
        let mut sections = vec![Section {
            heading: Some("## Context".into()),
            list: false,
            units: context,
        }];
        let lists: [(&str, &[MemType], u64); 4] = [
            ("## Decisions", &[MemType::Decision], 2),
            ("## Action items", &[MemType::Plan], 3),
            ("## Risks", RISKS, 2),
            ("## Open questions", &[MemType::Question], 2),
        ];
        for (heading, wanted, max) in lists {
            let count = self.rng.below(max + 1);
            let mut units: Vec<Unit> = std::mem::take(&mut decided);
            units.extend((0..count).map(|_| self.content(&mut ctx, wanted)));
            if !units.is_empty() {
                sections.push(Section {
                    heading: Some(heading.into()),
                    list: true,
                    units,
                });
            }
        }
        let title = self.title(&[
            "{J} project brief",
            "{C} account plan",
            "Planning notes for {q}",
            "{T} policy",
            "Post-mortem: {R} outage",
            "{R} roadmap",
            "Notes on {T}",
        ]);
        let authors = self
            .people(1, 2)
            .into_iter()
            .map(|p| self.party(p, false))
            .collect();
        let doc = Doc {
            kind: "document",
            thread_id: "docs".into(),
            source_id,
            head: vec![format!("# {title}")],
            title,
            sections,
            authors,
            participants: Vec::new(),
        };
        self.finish_doc(doc, labels)
    }

    /// An architecture decision record around a decision step; an ADR it supersedes is revised
    /// to say so (emitted as the next event).
    fn adr(&mut self, source_id: String, step: Step, mut labels: LabelSet) -> (Event, LabelSet) {
        let number = self.next_adr;
        self.next_adr += 1;
        let mut ctx = self.ctx(&source_id, &mut labels);
        let context = (0..self.rng.range(1, 2))
            .map(|_| self.content(&mut ctx, CONTEXT))
            .collect();
        let consequences = (0..self.rng.range(1, 2))
            .map(|_| self.content(&mut ctx, CONSEQUENCES))
            .collect();
        let title = format!("ADR-{number:03}: {}", step.title);
        let authors = self
            .people(1, 1)
            .into_iter()
            .map(|p| self.party(p, false))
            .collect();
        let doc = Doc {
            kind: "document",
            source_id: source_id.clone(),
            head: vec![format!("# {title}"), "Status: Accepted".into()],
            title,
            sections: vec![
                Section {
                    heading: Some("## Context".into()),
                    list: false,
                    units: context,
                },
                Section {
                    heading: Some("## Decision".into()),
                    list: false,
                    units: vec![step.unit],
                },
                Section {
                    heading: Some("## Consequences".into()),
                    list: true,
                    units: consequences,
                },
            ],
            authors,
            participants: Vec::new(),
            thread_id: "docs/adr".into(),
        };
        if let Some(index) = self.adrs.iter().position(|(m, _, _)| *m == step.matter) {
            let (_, _, mut old) = self.adrs.remove(index).expect("index is in range");
            if step.superseding {
                old.head[1] = format!("Status: Superseded by ADR-{number:03}");
                self.pending.push_back(old);
            }
        }
        if self.adrs.len() >= 64 {
            self.adrs.pop_front();
        }
        self.adrs.push_back((step.matter, number, doc.clone()));
        let event = doc.event(self.now);
        labels.units = doc.unit_labels(self.line);
        (event, labels)
    }

    fn finish_doc(&mut self, doc: Doc, mut labels: LabelSet) -> (Event, LabelSet) {
        let event = doc.event(self.now);
        labels.units = doc.unit_labels(self.line);
        self.remember_revisable(doc);
        (event, labels)
    }

    /// A new version of a revisable source: one more unit in one of its sections.
    pub(crate) fn revise(&mut self) -> (Event, LabelSet) {
        let index = self.rng.below(self.revisable.len() as u64) as usize;
        let mut doc = self.revisable.remove(index).expect("index is in range");
        self.written = doc
            .sections
            .iter()
            .flat_map(|s| &s.units)
            .map(|u| u.text.clone())
            .collect();
        let mut labels = LabelSet::default();
        let source_id = doc.source_id.clone();
        let mut ctx = self.ctx(&source_id, &mut labels);
        let section = self.rng.below(doc.sections.len() as u64) as usize;
        let wanted: Vec<MemType> = match doc.sections[section].heading.as_deref() {
            Some("## Decisions" | "Decisions:" | "## Decision") => vec![MemType::Decision],
            Some("## Action items" | "Action items:") => vec![MemType::Plan],
            Some("## Open questions") => vec![MemType::Question],
            Some("## Risks") => RISKS.to_vec(),
            Some("Agenda:") => AGENDA.to_vec(),
            _ => CONTEXT.to_vec(),
        };
        let unit = self.content(&mut ctx, &wanted);
        doc.sections[section].units.push(unit);
        let event = doc.event(self.now);
        labels.units = doc.unit_labels(self.line);
        self.remember_revisable(doc);
        (event, labels)
    }

    /// A pending new version (an ADR marked superseded).
    pub(crate) fn emit_doc(&mut self, doc: Doc) -> (Event, LabelSet) {
        let labels = LabelSet {
            units: doc.unit_labels(self.line),
            ..LabelSet::default()
        };
        (doc.event(self.now), labels)
    }
}
