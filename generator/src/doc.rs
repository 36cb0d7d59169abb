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
        self.render_with_times().0
    }

    /// The body, and where each unit sits in it (in characters, as the `written` extra counts
    /// them) with when it was written.
    ///
    /// ```
    /// use epigraph_gen::doc::{Doc, Section};
    /// use epigraph_gen::unit::{MemType, Unit};
    /// let unit = |text: &str, at: i64| Unit { text: text.into(), memory_type: MemType::Plan,
    ///     statement_type: "prediction", temporal_type: "dynamic", mentions: vec![], written_at: at };
    /// let doc = Doc { kind: "document", source_id: "d".into(), title: "T".into(),
    ///     head: vec!["# T".into()], sections: vec![Section { heading: Some("## Plan".into()),
    ///     list: true, units: vec![unit("Ship it.", 1), unit("Ship later.", 2)] }],
    ///     authors: vec![], participants: vec![], thread_id: "x".into() };
    /// let (body, times) = doc.render_with_times();
    /// assert_eq!(&body[times[1].0..times[1].1], "Ship later.");
    /// assert_eq!(times[1].2, 2);
    /// ```
    pub fn render_with_times(&self) -> (String, Vec<(usize, usize, i64)>) {
        let mut body = String::new();
        let mut chars = 0usize;
        let mut times = Vec::new();
        let push = |body: &mut String, chars: &mut usize, text: &str| {
            body.push_str(text);
            *chars += text.chars().count();
            *chars
        };
        for (i, line) in self.head.iter().enumerate() {
            if i > 0 {
                push(&mut body, &mut chars, "\n\n");
            }
            push(&mut body, &mut chars, line);
        }
        let mut first_block = self.head.is_empty();
        for section in &self.sections {
            let heading = section.heading.clone().unwrap_or_default();
            if heading.is_empty() && section.units.is_empty() {
                if !first_block {
                    push(&mut body, &mut chars, "\n\n");
                }
                first_block = false;
                continue;
            }
            if !first_block {
                push(&mut body, &mut chars, "\n\n");
            }
            first_block = false;
            push(&mut body, &mut chars, &heading);
            if section.units.is_empty() {
                continue;
            }
            if !heading.is_empty() {
                push(
                    &mut body,
                    &mut chars,
                    if self.kind == "calendar" {
                        "\n"
                    } else {
                        "\n\n"
                    },
                );
            }
            for (j, unit) in section.units.iter().enumerate() {
                if j > 0 {
                    push(&mut body, &mut chars, if section.list { "\n" } else { " " });
                }
                if section.list {
                    push(&mut body, &mut chars, "- ");
                }
                let start = chars;
                let end = push(&mut body, &mut chars, &unit.text);
                times.push((start, end, unit.written_at));
            }
        }
        body.push('\n');
        (body, times)
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
        let (body, times) = self.render_with_times();
        let mut extras = std::collections::BTreeMap::new();
        // A revised version says when each of its units was written.
        if times.iter().any(|(_, _, at)| *at < now) {
            let spans: Vec<String> = times
                .iter()
                .map(|(start, end, at)| format!("{start}-{end}@{at}"))
                .collect();
            extras.insert("written".to_string(), spans.join(";"));
        }
        Event {
            kind: self.kind,
            source_id: self.source_id.clone(),
            op: "upsert",
            title: self.title.clone(),
            body,
            occurred_at: now,
            authors: self.authors.clone(),
            participants: self.participants.clone(),
            thread_id: self.thread_id.clone(),
            links: Vec::new(),
            extras,
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
