//! Documents and calendar entries kept in memory while they may still be revised: a head
//! (title, ADR status) and sections of units, rendered as Markdown or as a plain description.

use crate::labels::{Event, Party, UnitLabel};
use crate::unit::Unit;

/// A section: a heading and its units, as prose or as a list.
#[derive(Clone, Debug)]
pub struct Section {
    /// `## Context` (Markdown) or `Agenda:` (calendar); none for a leading paragraph.
    pub heading: Option<String>,
    /// Render the units as `- ` list items instead of a paragraph.
    pub list: bool,
    /// The units.
    pub units: Vec<Unit>,
}

/// A revisable source.
#[derive(Clone, Debug)]
pub struct Doc {
    /// `document` or `calendar`.
    pub kind: &'static str,
    /// Source id.
    pub source_id: String,
    /// Title.
    pub title: String,
    /// Lines before the sections (`# Title`, `Status: Accepted`); not units.
    pub head: Vec<String>,
    /// The sections.
    pub sections: Vec<Section>,
    /// Authors or organiser.
    pub authors: Vec<Party>,
    /// Attendees.
    pub participants: Vec<Party>,
    /// Folder or calendar series.
    pub thread_id: String,
}

impl Doc {
    /// The body: head lines and sections separated by blank lines.
    ///
    /// ```
    /// use epigraph_gen::doc::{Doc, Section};
    /// let doc = Doc { kind: "document", source_id: "d".into(), title: "T".into(),
    ///     head: vec!["# T".into()], sections: vec![Section { heading: Some("## Risks".into()),
    ///     list: true, units: vec![] }], authors: vec![], participants: vec![], thread_id: "x".into() };
    /// assert_eq!(doc.render(), "# T\n\n## Risks\n");
    /// ```
    pub fn render(&self) -> String {
        let mut blocks: Vec<String> = self.head.clone();
        for section in &self.sections {
            let mut block = section.heading.clone().unwrap_or_default();
            let body = if section.list {
                section
                    .units
                    .iter()
                    .map(|u| format!("- {}", u.text))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                section
                    .units
                    .iter()
                    .map(|u| u.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            match (block.is_empty(), body.is_empty(), self.kind) {
                (true, _, _) => block = body,
                (false, true, _) => {}
                (false, false, "calendar") => block = format!("{block}\n{body}"),
                (false, false, _) => block = format!("{block}\n\n{body}"),
            }
            blocks.push(block);
        }
        let mut body = blocks.join("\n\n");
        body.push('\n');
        body
    }

    /// Every unit, labelled for the version at `line`.
    pub fn unit_labels(&self, line: u64) -> Vec<UnitLabel> {
        self.sections
            .iter()
            .flat_map(|s| &s.units)
            .map(|u| label(&self.source_id, u, line))
            .collect()
    }

    /// The upsert event of this version.
    pub fn event(&self, now: i64) -> Event {
        Event {
            kind: self.kind,
            source_id: self.source_id.clone(),
            op: "upsert",
            title: self.title.clone(),
            body: self.render(),
            occurred_at: now,
            authors: self.authors.clone(),
            participants: self.participants.clone(),
            thread_id: self.thread_id.clone(),
            links: Vec::new(),
            extras: Default::default(),
        }
    }
}

/// The label of one unit of one version.
pub fn label(source_id: &str, unit: &Unit, line: u64) -> UnitLabel {
    UnitLabel {
        source_id: source_id.to_string(),
        text: unit.text.clone(),
        memory_type: unit.memory_type.label(),
        statement_type: unit.statement_type,
        temporal_type: unit.temporal_type,
        entities: unit.mentions.clone(),
        version: line,
    }
}
