//! epigraph-gen: seeded, labelled synthetic organisations.
//!
//! A [`Generator`] invents an organisation (people with nicknames and several addresses,
//! teams, projects, products, customers, vendors, investors, places, topics) and a year of
//! what its people write: chat messages (much of it chit-chat), e-mails, calendar entries and
//! Markdown documents (some of them ADRs), with edits and deletes. Each event is exactly a
//! `POST /v1/ingest` webhook body. Alongside, it labels the ground truth an evaluation needs:
//! every memory unit with its type, the entities (identity truth), attribute/value claims,
//! supersessions, contradictions, answered questions and stated relations.
//!
//! Same seed and scale, same bytes: all randomness comes from one [`rng::SplitMix64`] stream
//! and nothing iterates a hash map.
//!
//! Map of the crate:
//! - [`rng`]: the PRNG; [`time`]: simulated calendar;
//! - [`names`], [`org`]: the organisation;
//! - [`unit`], [`templates`], [`vocabulary`]: memory units, their phrasings and the words they draw on;
//! - [`dynamics`], [`tracks`], [`steps`], [`facts`]: matters unfolding over time (the epistemic ground
//!   truth) and how their steps are phrased;
//! - [`doc`], `compose`, `documents`, [`generator`]: events of each kind, edits, deletes;
//! - [`labels`]: the records written; [`writer`]: streaming them to a folder.
//!
//! ```
//! use epigraph_gen::{GenConfig, Generator};
//! let mut generator = Generator::new(GenConfig { seed: 1, events: 200, ..GenConfig::default() });
//! let first = generator.next().unwrap();
//! let line = serde_json::to_string(&first.event).unwrap();
//! assert!(line.starts_with("{\"kind\":"));
//! for unit in &first.labels.units {
//!     assert!(first.event.body.contains(&unit.text));
//! }
//! ```

mod compose;
pub mod doc;
mod documents;
pub mod dynamics;
pub mod facts;
pub mod generator;
pub mod labels;
pub mod names;
pub mod org;
pub mod rng;
pub mod steps;
pub mod templates;
pub mod time;
pub mod tracks;
pub mod unit;
pub mod vocabulary;
pub mod writer;

#[cfg(test)]
mod tests;

pub use generator::Generator;
pub use writer::{Manifest, WriteError, write_corpus};

/// What to generate. Every field has a default; `seed` and `events` are the usual knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct GenConfig {
    /// Seed of the random stream: the same seed and config give byte-identical output.
    /// Default 0.
    pub seed: u64,
    /// Number of events (lines of `events.jsonl`), exactly. Also sizes the organisation (about
    /// `0.8 · √events + 14` people). Default 1000.
    pub events: u64,
    /// `occurred_at` of the simulated start, ms since the Unix epoch. Default 2026-01-05T00:00Z.
    pub start_ms: i64,
    /// Length of the simulated period in days; events are spread evenly with jitter and
    /// strictly increasing times. Default 365.
    pub span_days: u32,
    /// Relative weights of chat, e-mail, calendar and document events. Default `[55, 20, 10, 15]`.
    pub kind_weights: [u32; 4],
    /// Share of chat messages that are pure chit-chat (`NOISE`), 0–1. Default 0.45.
    pub noise_share: f64,
    /// Share of content units that try to advance a matter (decision, launch, conflict,
    /// question) instead of a static template, 0–1. Default 0.2.
    pub dynamics_share: f64,
    /// Share of events that revise an earlier document or calendar entry, 0–1. Default 0.03.
    pub edit_share: f64,
    /// Share of events that delete an earlier chat message or e-mail, 0–1. Default 0.015.
    pub delete_share: f64,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            seed: 0,
            events: 1000,
            start_ms: time::DEFAULT_START_MS,
            span_days: 365,
            kind_weights: [55, 20, 10, 15],
            noise_share: 0.45,
            dynamics_share: 0.2,
            edit_share: 0.03,
            delete_share: 0.015,
        }
    }
}
