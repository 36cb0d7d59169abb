//! The matters the dynamics unfold, step by step, and how each step is written.

pub use crate::facts::{Ask, Claim, Conflict};
use crate::org::Organisation;
use crate::steps::{conflict_side, held_step, question_step};
use crate::time::{self, DAY_MS};
use crate::unit::{MemType, Piece, Unit, Writer};

/// What one step wrote.
#[derive(Debug)]
pub struct Written {
    /// The unit.
    pub unit: Unit,
    /// Its claims.
    pub claims: Vec<Claim>,
    /// Attributes on which it contradicts the matter's previous step.
    pub contradicts: Vec<&'static str>,
    /// It answers the matter's question.
    pub answers: bool,
    /// It asks the matter's question.
    pub asks: bool,
    /// It says it is held up until the matter's question is answered.
    pub held: bool,
    /// It replaces an earlier decision.
    pub superseding: bool,
    /// The matter is over.
    pub finished: bool,
}

/// A matter in progress.
#[derive(Clone, Debug)]
pub enum Track {
    /// A choice that gets reversed.
    Decision {
        /// Project entity.
        project: usize,
        /// Index into [`DECIDED`].
        thing: usize,
        /// Current option.
        current: Option<usize>,
        /// Reversals still to come.
        left: u32,
    },
    /// A launch date that slips.
    Launch {
        /// Project entity.
        project: usize,
        /// Current date (ms), 0 before the first step.
        date: i64,
        /// Slips still to come.
        left: u32,
    },
    /// Two sources disagree.
    Conflict {
        /// About what.
        kind: Conflict,
        /// Entity the values are about.
        subject: usize,
        /// The two values.
        values: [u64; 2],
        /// The first side is written.
        stated: bool,
    },
    /// A question, answered or not.
    Question {
        /// About what.
        kind: Ask,
        /// Customer, event or project entity.
        subject: usize,
        /// Feature index (budget questions).
        detail: usize,
        /// The question is written.
        asked: bool,
        /// It will be answered.
        answered: bool,
        /// Something waits on the answer: a held-up unit is written between the question and
        /// its answer.
        holds: bool,
    },
}

/// Matters decided, with their options.
pub const DECIDED: &[(&str, &[&str])] = &[
    ("message broker", &["Kafka", "Pulsar", "RabbitMQ", "NATS"]),
    (
        "CI provider",
        &["GitHub Actions", "Buildkite", "GitLab CI", "CircleCI"],
    ),
    (
        "primary database",
        &["Postgres", "CockroachDB", "MySQL", "DynamoDB"],
    ),
    (
        "hosting region",
        &["eu-central-1", "eu-west-1", "eu-north-1", "us-east-1"],
    ),
    (
        "pricing model",
        &["per-seat pricing", "usage-based pricing", "flat-rate tiers"],
    ),
    (
        "feature flag tool",
        &["LaunchDarkly", "Unleash", "an in-house flag service"],
    ),
    (
        "observability stack",
        &["Datadog", "Grafana Cloud", "Honeycomb"],
    ),
];
const FEATURES: &[&str] = &[
    "SSO",
    "the audit log",
    "offline mode",
    "bulk import",
    "the mobile app",
];

fn text(value: impl Into<String>) -> Piece {
    Piece::Text(value.into())
}

impl Track {
    /// A new matter whose first step is one of the `wanted` types.
    pub fn start(w: &mut Writer<'_>, wanted: &[MemType]) -> Option<Track> {
        let org = &*w.org;
        let rng = &mut *w.rng;
        // (weight, track): conflicts come in four sorts, so each weighs less.
        let mut options: Vec<(u32, Track)> = Vec::new();
        let project = rng.pick(&org.projects).0;
        if wanted.contains(&MemType::Decision) {
            let thing = rng.below(DECIDED.len() as u64) as usize;
            let left = rng.range(1, 2) as u32;
            options.push((
                6,
                Track::Decision {
                    project,
                    thing,
                    current: None,
                    left,
                },
            ));
        }
        if wanted.contains(&MemType::Plan) {
            options.push((
                4,
                Track::Launch {
                    project,
                    date: 0,
                    left: rng.range(1, 3) as u32,
                },
            ));
        }
        let conflict = |kind, subject, values| {
            (
                1,
                Track::Conflict {
                    kind,
                    subject,
                    values,
                    stated: false,
                },
            )
        };
        if wanted.contains(&MemType::Evidence) {
            let (ask, cap) = (rng.range(15, 50) * 10_000, rng.range(15, 60) * 100_000);
            let other = [
                ask + rng.range(1, 15) * 10_000,
                cap + rng.range(1, 8) * 100_000,
            ];
            let funding = [
                ask * 1_000_000_000 + cap,
                other[0] * 1_000_000_000 + other[1],
            ];
            options.push(conflict(
                Conflict::Funding,
                *rng.pick(&org.investors),
                funding,
            ));
            let n = rng.range(4, 30);
            options.push(conflict(
                Conflict::Headcount,
                rng.pick(&org.teams).0,
                [n, n + rng.range(1, 5)],
            ));
            let b = rng.range(10, 90) * 10_000;
            options.push(conflict(
                Conflict::Budget,
                project,
                [b, b + rng.range(2, 20) * 10_000],
            ));
        }
        if wanted.contains(&MemType::Observation) {
            let first = rng.below(3);
            let values = [first, (first + rng.range(1, 2)) % 3];
            options.push(conflict(Conflict::Status, project, values));
        }
        if wanted.contains(&MemType::Question) {
            let (kind, subject) = match rng.below(4) {
                0 => (Ask::Owner, *rng.pick(&org.customers)),
                1 => (Ask::Date, *rng.pick(&org.events)),
                2 => (Ask::Budget, project),
                _ => (Ask::Retention, project),
            };
            let detail = rng.below(FEATURES.len() as u64) as usize;
            let answered = rng.chance(0.75);
            // Date questions have no words of their own to share with what waits on them.
            let holds = !matches!(kind, Ask::Date) && rng.chance(0.4);
            options.push((
                6,
                Track::Question {
                    kind,
                    subject,
                    detail,
                    asked: false,
                    answered,
                    holds,
                },
            ));
        }
        // Narrow requests (a "Risks" list) should not start a matter every time.
        let weights: Vec<u32> = options.iter().map(|(w, _)| *w).chain([10]).collect();
        let index = rng.weighted(&weights);
        (index < options.len()).then(|| options.swap_remove(index).1)
    }

    /// What the matter is about, for keeping one matter per subject at a time: two launch
    /// tracks of one project at once would be one launch date written twice.
    pub fn key(&self) -> Option<String> {
        match self {
            Track::Decision { project, thing, .. } => Some(format!("decision/{project}/{thing}")),
            Track::Launch { project, .. } => Some(format!("launch/{project}")),
            Track::Conflict { kind, subject, .. } => Some(format!("conflict/{subject}/{kind:?}")),
            Track::Question { .. } => None,
        }
    }

    /// The `(subject id, attribute)` keys its claims will use (empty subject: the matter).
    pub fn claim_keys(&self, org: &Organisation) -> Vec<(String, &'static str)> {
        match self {
            Track::Conflict { kind, subject, .. } => {
                let id = org.entities[*subject].id.clone();
                let attributes: &[&'static str] = match kind {
                    Conflict::Funding => &["ask_amount", "valuation_cap"],
                    Conflict::Headcount => &["headcount"],
                    Conflict::Status => &["status"],
                    Conflict::Budget => &["budget"],
                };
                attributes.iter().map(|a| (id.clone(), *a)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The type of the next step.
    pub fn next_type(&self) -> MemType {
        match self {
            Track::Decision { .. } => MemType::Decision,
            Track::Launch { .. } => MemType::Plan,
            Track::Conflict {
                kind: Conflict::Status,
                ..
            } => MemType::Observation,
            Track::Conflict { .. } => MemType::Evidence,
            Track::Question { asked: false, .. } => MemType::Question,
            Track::Question { holds: true, .. } => MemType::Observation,
            Track::Question { kind, .. } => match kind {
                Ask::Owner => MemType::Decision,
                Ask::Date => MemType::Plan,
                Ask::Budget => MemType::Evidence,
                Ask::Retention => MemType::Constraint,
            },
        }
    }

    /// The id of what the matter's claims are about, for contradiction labels.
    pub fn subject_id(&self, org: &Organisation, matter: &str) -> String {
        match self {
            Track::Conflict { subject, .. } => org.entities[*subject].id.clone(),
            _ => matter.to_string(),
        }
    }

    /// A short title (used for ADR documents).
    pub fn title(&self, org: &Organisation) -> String {
        match self {
            Track::Decision { project, thing, .. } => {
                let thing = DECIDED[*thing].0;
                let mut title = format!("{thing} for {}", org.entities[*project].forms[0]);
                title[..1].make_ascii_uppercase();
                title
            }
            _ => String::new(),
        }
    }

    /// Write the next step.
    pub fn advance(&mut self, w: &mut Writer<'_>) -> Written {
        let mut written = Written {
            unit: Unit {
                text: String::new(),
                memory_type: MemType::Noise,
                statement_type: "",
                temporal_type: "",
                mentions: Vec::new(),
                written_at: w.now,
            },
            claims: Vec::new(),
            contradicts: Vec::new(),
            answers: false,
            asks: false,
            held: false,
            superseding: false,
            finished: false,
        };
        let claim = |subject: String, attribute, value: String, unit| Claim {
            subject,
            attribute,
            value,
            unit,
        };
        match self {
            Track::Decision {
                project,
                thing,
                current,
                left,
            } => {
                let (what, choices) = DECIDED[*thing];
                let mut pick = w.rng.below(choices.len() as u64) as usize;
                let mut binds = vec![('J', Piece::Entity(*project)), ('t', text(what))];
                let template = if let Some(old) = *current {
                    if pick == old {
                        pick = (pick + 1) % choices.len();
                    }
                    binds.push(('z', text(choices[old])));
                    *left -= 1;
                    written.superseding = true;
                    written.finished = *left == 0;
                    *w.rng.pick(&[
                        "Change of plan: the {J} {t} moves from {z} to {o}.",
                        "We are reversing the earlier call on the {J} {t}: {o} instead of {z}.",
                        "Update on the {J} {t}: we now go with {o}, replacing {z}.",
                        "Scratch {z} for the {J} {t}; {P} approved {o} today.",
                    ])
                } else {
                    *w.rng.pick(&[
                        "We decided to use {o} as the {t} for {J}.",
                        "Decision: {J} goes with {o} for the {t}.",
                        "Approved: {o} as the {J} {t}.",
                        "After the bake-off, {o} it is for the {J} {t}.",
                    ])
                };
                *current = Some(pick);
                binds.push(('o', text(choices[pick])));
                let mut unit = w.unit(MemType::Decision, template, &binds);
                unit.temporal_type = "dynamic";
                written.unit = unit;
                // One registry entry per project and choice, across matters: a later matter on
                // the same choice replaces the last decision of the earlier one.
                let subject = format!("{}/{what}", w.org.entities[*project].id);
                written.claims.push(claim(
                    subject,
                    "decision",
                    choices[pick].to_string(),
                    "choice",
                ));
            }
            Track::Launch {
                project,
                date,
                left,
            } => {
                let template = if *date == 0 {
                    *date = w.now + w.rng.range(30, 120) as i64 * DAY_MS;
                    *w.rng.pick(&[
                        "{J} launch is planned for {d}.",
                        "Target launch for {J}: {d}.",
                        "We are aiming to launch {J} on {d}.",
                    ])
                } else {
                    *date = (*date).max(w.now) + w.rng.range(14, 60) as i64 * DAY_MS;
                    *left -= 1;
                    written.finished = *left == 0;
                    *w.rng.pick(&[
                        "{J} launch moved to {d}.",
                        "Heads up, the {J} launch slips to {d}.",
                        "New target date for {J}: {d}, because of {c}.",
                        "{J} won't make the old date; launch is now {d}.",
                    ])
                };
                let binds = [
                    ('J', Piece::Entity(*project)),
                    ('d', text(time::spoken_date(*date))),
                ];
                written.unit = w.unit(MemType::Plan, template, &binds);
                let id = w.org.entities[*project].id.clone();
                written
                    .claims
                    .push(claim(id, "launch_date", time::iso_date(*date), "date"));
            }
            Track::Conflict {
                kind,
                subject,
                values,
                stated,
            } => {
                let side = usize::from(*stated);
                let value = values[side];
                let id = w.org.entities[*subject].id.clone();
                let (unit, claims, attributes) = conflict_side(w, *kind, *subject, value, side, id);
                written.unit = unit;
                written.claims = claims;
                if *stated {
                    written.contradicts = attributes;
                    written.finished = true;
                }
                *stated = true;
            }
            Track::Question {
                kind,
                subject,
                detail,
                asked: true,
                holds: holds @ true,
                answered,
            } => {
                written.unit = held_step(w, *kind, *subject, FEATURES[*detail]);
                written.held = true;
                written.finished = !*answered;
                *holds = false;
            }
            Track::Question {
                kind,
                subject,
                detail,
                asked,
                answered,
                holds,
            } => {
                let (unit, claims) = question_step(w, *kind, *subject, FEATURES[*detail], *asked);
                written.unit = unit;
                written.claims = claims;
                written.answers = *asked;
                written.asks = !*asked;
                written.finished = *asked || (!*answered && !*holds);
                *asked = true;
            }
        }
        written
    }
}
