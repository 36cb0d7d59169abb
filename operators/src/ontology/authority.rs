//! How much a source is believed, by kind and declared level.

use std::collections::BTreeMap;

use epigraph_schemas::SourceKind;
use serde::Deserialize;

/// Source authority levels.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Authority {
    /// Document sources.
    pub document: f64,
    /// E-mail.
    pub email: f64,
    /// Calendar.
    pub calendar: f64,
    /// Chat.
    pub chat: f64,
    /// Named levels an event can pick with its `authority` extra.
    #[serde(default)]
    pub levels: BTreeMap<String, f64>,
}

impl Authority {
    /// Authority of a source of this kind, or of the named level when it exists.
    ///
    /// ```
    /// use epigraph_schemas::SourceKind;
    /// let authority = &epigraph_operators::Ontology::bundled().authority;
    /// assert_eq!(authority.of(SourceKind::Chat, None), 0.6);
    /// assert_eq!(authority.of(SourceKind::Chat, Some("binding")), 1.0);
    /// assert_eq!(authority.of(SourceKind::Chat, Some("no such level")), 0.6);
    /// ```
    pub fn of(&self, kind: SourceKind, level: Option<&str>) -> f64 {
        if let Some(value) = level.and_then(|l| self.levels.get(l)) {
            return *value;
        }
        match kind {
            SourceKind::Document => self.document,
            SourceKind::Email => self.email,
            SourceKind::Calendar => self.calendar,
            SourceKind::Chat => self.chat,
        }
    }
}
