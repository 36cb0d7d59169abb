//! Epistemic dynamics with ground truth: matters that unfold over several events.
//!
//! - a **decision** on a matter is later reversed by a newer decision (a supersession);
//! - a **launch** date slips, possibly more than once (claims on `launch_date` supersede);
//! - a **conflict**: two sources state different values for the same attribute at about the
//!   same time (a contradiction: term sheet vs memo, headcount, status, budget);
//! - a **question** is asked and, most of the time, answered later by a unit naming its matter;
//!   sometimes a unit in between says that work waits on the answer (a block).
//!
//! Every claim goes through one registry keyed by `(subject, attribute)`: a claim whose value
//! differs from the current ones supersedes each of them (both sides of a standing conflict),
//! unless it is the second side of a conflict, which stands next to the first. The
//! number of active matters is capped, so memory does not grow with the number of events.

use std::collections::HashMap;

use crate::labels::{ClaimLabel, LabelSet, SupersessionLabel, TextRef};
use crate::tracks::{self, Track};
use crate::unit::{MemType, Unit, Writer};

/// Where a unit is being written.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The source being composed.
    pub source_id: &'a str,
    /// Its line index in `events.jsonl`.
    pub line: u64,
    /// Its `occurred_at`.
    pub now: i64,
    /// The labels the event introduces.
    pub labels: &'a mut LabelSet,
    /// Set when a later label will point into this source (it must not be deleted).
    pub pinned: bool,
}

impl Ctx<'_> {
    fn here(&self, unit: &Unit) -> TextRef {
        TextRef {
            source_id: self.source_id.to_string(),
            text: unit.text.clone(),
        }
    }
}

/// One matter in progress.
#[derive(Debug)]
pub struct Matter {
    /// `matter:N`.
    pub id: String,
    /// What is unfolding.
    pub track: Track,
    /// The line from which the next step may be written.
    pub due: u64,
    /// Source of the previous step (the next step goes to another source).
    pub last_source: String,
    /// The previous step's unit.
    pub last: Option<TextRef>,
    /// The matter's question, once asked.
    pub question: Option<TextRef>,
}

/// What a step wrote, for composers that shape a document around it (ADRs).
#[derive(Debug)]
pub struct Step {
    /// The unit (already labelled in the context's claims etc., not yet in its units).
    pub unit: Unit,
    /// The matter.
    pub matter: String,
    /// A title for the matter, e.g. `Message broker for Atlas`.
    pub title: String,
    /// True for a decision that replaced an earlier one.
    pub superseding: bool,
}

/// `(subject id, attribute)`.
type ClaimKey = (String, &'static str);
/// A current claim: where it was written, its value and when.
type Current = (TextRef, String, i64);

/// All matters in progress and the claim registry.
#[derive(Debug)]
pub struct Dynamics {
    matters: Vec<Matter>,
    next_id: u64,
    max_active: usize,
    max_delay: u64,
    /// Lines written per simulated day (the corpus spans a year).
    lines_per_day: u64,
    /// Per `(subject, attribute)`: the unit holding the current value, the value, and when.
    /// The current claims of each key: one, or both sides of a standing contradiction.
    registry: HashMap<ClaimKey, Vec<Current>>,
}

/// The two sides of a conflict are written within this many days (a contradiction), and a new
/// conflict on the same subject starts only this long after its last claim (so that it reads as
/// an update of the old value, not as a third side): the pipeline's contradiction window is 30
/// days.
const CONFLICT_DAYS: u64 = 20;
const CONFLICT_COOLDOWN_MS: i64 = 45 * crate::time::DAY_MS;

impl Dynamics {
    /// Dynamics for a corpus of `events` events.
    pub fn new(events: u64) -> Self {
        Dynamics {
            matters: Vec::new(),
            next_id: 1,
            max_active: (6 + events / 5_000).min(400) as usize,
            max_delay: 4 + 3 * (events as f64).sqrt() as u64,
            lines_per_day: (events / 365).max(1),
            registry: HashMap::new(),
        }
    }

    /// Matters in progress.
    pub fn active(&self) -> usize {
        self.matters.len()
    }

    /// Write a unit of one of the `wanted` types by advancing a due matter, or by starting a new
    /// one; `None` when nothing fits.
    pub fn step(
        &mut self,
        w: &mut Writer<'_>,
        ctx: &mut Ctx<'_>,
        wanted: &[MemType],
    ) -> Option<Step> {
        let due = self.matters.iter().position(|m| {
            m.due <= ctx.line
                && m.last_source != ctx.source_id
                && wanted.contains(&m.track.next_type())
        });
        let mut matter = match due {
            Some(index) => self.matters.swap_remove(index),
            None => {
                if self.matters.len() >= self.max_active {
                    return if w.rng.chance(0.3) {
                        self.reading(w, ctx, wanted)
                    } else {
                        None
                    };
                }
                let track = Track::start(w, wanted)?;
                let busy = track.key().is_some_and(|key| {
                    self.matters
                        .iter()
                        .any(|m| m.track.key().as_ref() == Some(&key))
                });
                let recent = track.claim_keys(w.org).iter().any(|key| {
                    self.registry.get(key).is_some_and(|current| {
                        current
                            .iter()
                            .any(|(_, _, at)| ctx.now - at < CONFLICT_COOLDOWN_MS)
                    })
                });
                if busy || recent {
                    return None;
                }
                let id = format!("matter:{}", self.next_id);
                self.next_id += 1;
                Matter {
                    id,
                    track,
                    due: 0,
                    last_source: String::new(),
                    last: None,
                    question: None,
                }
            }
        };
        let written = matter.track.advance(w);
        let here = ctx.here(&written.unit);
        let second_side = !written.contradicts.is_empty();
        for claim in &written.claims {
            self.claim(ctx, &here, &matter.id, claim, !second_side);
        }
        if let Some(previous) = &matter.last {
            for attribute in &written.contradicts {
                ctx.labels
                    .contradictions
                    .push(crate::labels::ContradictionLabel {
                        a: previous.clone(),
                        b: here.clone(),
                        subject: matter.track.subject_id(w.org, &matter.id),
                        attribute: attribute.to_string(),
                    });
            }
        }
        if written.asks {
            matter.question = Some(here.clone());
        }
        if let (true, Some(question)) = (written.answers, &matter.question) {
            ctx.labels.answers.push(crate::labels::AnswerLabel {
                question: question.clone(),
                answer: here.clone(),
            });
        }
        if let (true, Some(question)) = (written.held, &matter.question) {
            ctx.labels.blocks.push(crate::labels::BlockLabel {
                question: question.clone(),
                blocked: here.clone(),
            });
        }
        ctx.pinned = true;
        let step = Step {
            unit: written.unit,
            matter: matter.id.clone(),
            title: matter.track.title(w.org),
            superseding: written.superseding,
        };
        if !written.finished {
            let delay = match matter.track {
                Track::Conflict { .. } => self
                    .max_delay
                    .min(CONFLICT_DAYS * self.lines_per_day)
                    .max(4),
                _ => self.max_delay,
            };
            matter.due = ctx.line + w.rng.range(3, delay);
            matter.last_source = ctx.source_id.to_string();
            matter.last = Some(here);
            self.matters.push(matter);
        }
        Some(step)
    }

    /// A one-off metric reading (EVIDENCE with a percentage claim).
    fn reading(
        &mut self,
        w: &mut Writer<'_>,
        ctx: &mut Ctx<'_>,
        wanted: &[MemType],
    ) -> Option<Step> {
        if !wanted.contains(&MemType::Evidence) {
            return None;
        }
        let (unit, claim) = crate::steps::reading(w);
        let here = ctx.here(&unit);
        self.claim(ctx, &here, "", &claim, true);
        Some(Step {
            unit,
            matter: String::new(),
            title: String::new(),
            superseding: false,
        })
    }

    fn claim(
        &mut self,
        ctx: &mut Ctx<'_>,
        here: &TextRef,
        matter: &str,
        claim: &tracks::Claim,
        supersede: bool,
    ) {
        let subject = if claim.subject.is_empty() {
            matter.to_string()
        } else {
            claim.subject.clone()
        };
        ctx.labels.claims.push(ClaimLabel {
            source_id: here.source_id.clone(),
            text: here.text.clone(),
            subject: subject.clone(),
            attribute: claim.attribute.to_string(),
            value: claim.value.clone(),
            unit: claim.unit,
            valid_from: ctx.now,
        });
        let key = (subject, claim.attribute);
        let matter = if claim.attribute == "decision" {
            key.0.clone()
        } else {
            format!("{}/{}", key.0, key.1)
        };
        let current = self.registry.entry(key).or_default();
        if supersede {
            // A new claim replaces every current claim of its key that says something else:
            // both sides of a standing contradiction, not only the last one written.
            for (older, value, _) in current.iter() {
                if *value != claim.value && older != here {
                    ctx.labels.supersessions.push(SupersessionLabel {
                        newer: here.clone(),
                        older: older.clone(),
                        matter: matter.clone(),
                    });
                }
            }
            current.retain(|(older, value, _)| *value == claim.value && older != here);
        }
        current.push((here.clone(), claim.value.clone(), ctx.now));
        // Restatements of one value agree; a handful is enough to label against.
        if current.len() > 8 {
            current.remove(0);
        }
    }
}
