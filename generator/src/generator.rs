//! The generator: a deterministic iterator of events with their labels.

use std::collections::VecDeque;

use crate::GenConfig;
use crate::doc::Doc;
use crate::dynamics::Dynamics;
use crate::labels::{EntityLabel, Event, Generated, LabelSet};
use crate::org::Organisation;
use crate::rng::SplitMix64;
use crate::time::DAY_MS;

/// How many documents and calendar entries stay revisable.
const REVISABLE: usize = 64;
/// How many chat messages and e-mails stay deletable.
const DELETABLE: usize = 256;

/// A source that may be deleted later.
#[derive(Clone, Debug)]
pub(crate) struct Deletable {
    pub kind: &'static str,
    pub source_id: String,
    pub title: String,
    pub thread_id: String,
}

/// Generates an organisation's events, one at a time, with their ground-truth labels.
///
/// Memory is O(entities): the organisation, a bounded set of matters in progress, and bounded
/// rings of revisable and deletable sources; events are produced and forgotten one by one.
///
/// ```
/// use epigraph_gen::{GenConfig, Generator};
/// let config = GenConfig { seed: 7, events: 50, ..GenConfig::default() };
/// let events: Vec<_> = Generator::new(config.clone()).collect();
/// assert_eq!(events.len(), 50);
/// assert!(events.windows(2).all(|w| w[0].event.occurred_at < w[1].event.occurred_at));
/// let again: Vec<_> = Generator::new(config).map(|g| g.event.body).collect();
/// assert_eq!(again, events.iter().map(|g| g.event.body.clone()).collect::<Vec<_>>());
/// ```
#[derive(Debug)]
pub struct Generator {
    pub(crate) config: GenConfig,
    pub(crate) rng: SplitMix64,
    pub(crate) org: Organisation,
    pub(crate) dynamics: Dynamics,
    pub(crate) line: u64,
    pub(crate) now: i64,
    gap: u64,
    pub(crate) revisable: VecDeque<Doc>,
    pub(crate) deletable: VecDeque<Deletable>,
    pub(crate) pending: VecDeque<Doc>,
    /// ADR documents by matter: `(matter, ADR number, document)`.
    pub(crate) adrs: VecDeque<(String, u32, Doc)>,
    pub(crate) next_adr: u32,
    /// Unit texts already written into the event being composed (no duplicates in a body).
    pub(crate) written: Vec<String>,
}

impl Generator {
    /// A generator for `config` (builds the organisation).
    pub fn new(config: GenConfig) -> Self {
        let mut rng = SplitMix64::new(config.seed);
        let mut org_rng = rng.fork(1);
        let org = Organisation::generate(&mut org_rng, config.events);
        let span = config.span_days.max(1) as u64 * DAY_MS as u64;
        Generator {
            dynamics: Dynamics::new(config.events),
            gap: (span / config.events.max(1)).max(2),
            now: config.start_ms,
            config,
            rng,
            org,
            line: 0,
            revisable: VecDeque::new(),
            deletable: VecDeque::new(),
            pending: VecDeque::new(),
            adrs: VecDeque::new(),
            next_adr: 1,
            written: Vec::new(),
        }
    }

    /// The organisation (entities, people, relations).
    pub fn organisation(&self) -> &Organisation {
        &self.org
    }

    /// The identity ground truth: every entity with the surface forms written so far.
    pub fn entity_labels(&self) -> Vec<EntityLabel> {
        self.org
            .entities
            .iter()
            .map(|e| EntityLabel {
                entity_id: e.id.clone(),
                kind: e.kind,
                canonical: e.forms[0].clone(),
                aliases: e
                    .forms
                    .iter()
                    .zip(&e.used)
                    .enumerate()
                    .filter(|(i, (_, used))| *i == 0 || **used)
                    .map(|(_, (form, _))| form.clone())
                    .collect(),
                addresses: e.addresses.clone(),
            })
            .collect()
    }

    /// Matters (decisions, launches, conflicts, questions) still in progress.
    pub fn active_matters(&self) -> usize {
        self.dynamics.active()
    }

    fn tick(&mut self) {
        self.now += 1 + self.rng.below(2 * self.gap) as i64;
    }

    fn delete(&mut self) -> Option<(Event, LabelSet)> {
        let index = self.rng.below(self.deletable.len() as u64) as usize;
        let gone = self.deletable.remove(index)?;
        let event = Event {
            kind: gone.kind,
            source_id: gone.source_id,
            op: "delete",
            title: gone.title,
            body: String::new(),
            occurred_at: self.now,
            authors: Vec::new(),
            participants: Vec::new(),
            thread_id: gone.thread_id,
            links: Vec::new(),
            extras: Default::default(),
        };
        Some((event, LabelSet::default()))
    }

    pub(crate) fn remember_deletable(&mut self, event: &Event, labels: &LabelSet, pinned: bool) {
        if pinned || !labels.only_units() {
            return;
        }
        if self.deletable.len() >= DELETABLE {
            self.deletable.pop_front();
        }
        self.deletable.push_back(Deletable {
            kind: event.kind,
            source_id: event.source_id.clone(),
            title: event.title.clone(),
            thread_id: event.thread_id.clone(),
        });
    }

    pub(crate) fn remember_revisable(&mut self, doc: Doc) {
        if self.revisable.len() >= REVISABLE {
            self.revisable.pop_front();
        }
        self.revisable.push_back(doc);
    }
}

impl Iterator for Generator {
    type Item = Generated;

    fn next(&mut self) -> Option<Generated> {
        if self.line >= self.config.events {
            return None;
        }
        self.tick();
        self.written.clear();
        let mut edit = false;
        let roll = self.rng.next_u64() as f64 / u64::MAX as f64;
        let (event, labels) = if let Some(doc) = self.pending.pop_front() {
            edit = true;
            self.emit_doc(doc)
        } else if roll < self.config.delete_share && !self.deletable.is_empty() {
            self.delete()?
        } else if roll < self.config.delete_share + self.config.edit_share
            && !self.revisable.is_empty()
        {
            edit = true;
            self.revise()
        } else {
            match self.rng.weighted(&self.config.kind_weights) {
                0 => self.chat(),
                1 => self.email(),
                2 => self.calendar(),
                _ => self.document(),
            }
        };
        let generated = Generated {
            line: self.line,
            event,
            edit,
            labels,
        };
        self.line += 1;
        Some(generated)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.config.events - self.line) as usize;
        (left, Some(left))
    }
}
