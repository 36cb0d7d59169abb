//! How each step of a conflict or a question is phrased, and one-off metric readings.

use crate::facts::{Ask, Claim, Conflict};
use crate::time::{self, DAY_MS};
use crate::unit::{MemType, Piece, Unit, Writer, money};

const STATUSES: &[(&str, &str)] = &[
    ("on_track", "on track"),
    ("blocked", "blocked"),
    ("at_risk", "at risk"),
];
const METRICS: &[(&str, &str)] = &[
    ("signup conversion", "signup_conversion"),
    ("the error rate", "error_rate"),
    ("trial-to-paid conversion", "trial_to_paid"),
    ("churn", "churn_rate"),
    ("uptime", "uptime"),
];

fn text(value: impl Into<String>) -> Piece {
    Piece::Text(value.into())
}

pub fn conflict_side(
    w: &mut Writer<'_>,
    kind: Conflict,
    subject: usize,
    value: u64,
    side: usize,
    id: String,
) -> (Unit, Vec<Claim>, Vec<&'static str>) {
    let claim = |attribute, value: String, unit| Claim {
        subject: id.clone(),
        attribute,
        value,
        unit,
    };
    let pick = |w: &mut Writer<'_>, options: [&'static str; 2]| *w.rng.pick(&options);
    match kind {
        Conflict::Funding => {
            let (ask, cap) = (value / 1_000_000_000, value % 1_000_000_000);
            let template = if side == 0 {
                pick(
                    w,
                    [
                        "Term sheet from {I}: {A} SAFE at a {B} cap.",
                        "{I}'s term sheet came in: {A} on a SAFE, {B} valuation cap.",
                    ],
                )
            } else {
                pick(
                    w,
                    [
                        "Per the internal memo, {I} is in for {A} at a {B} cap.",
                        "Internal memo: the {I} round is {A} with a {B} cap.",
                    ],
                )
            };
            let binds = [
                ('I', Piece::Entity(subject)),
                ('A', text(money(ask, '€'))),
                ('B', text(money(cap, '€'))),
            ];
            let unit = w.unit(MemType::Evidence, template, &binds);
            let claims = vec![
                claim("ask_amount", ask.to_string(), "EUR"),
                claim("valuation_cap", cap.to_string(), "EUR"),
            ];
            (unit, claims, vec!["ask_amount", "valuation_cap"])
        }
        Conflict::Headcount => {
            let template = if side == 0 {
                pick(
                    w,
                    ["The {M} is {n} people today.", "Headcount on the {M}: {n}."],
                )
            } else {
                pick(
                    w,
                    [
                        "HR's sheet has the {M} at {n} people.",
                        "We have {n} people on the {M}, last I checked.",
                    ],
                )
            };
            let unit = w.unit(
                MemType::Evidence,
                template,
                &[
                    ('M', Piece::Entity(subject)),
                    ('n', text(value.to_string())),
                ],
            );
            (
                unit,
                vec![claim("headcount", value.to_string(), "count")],
                vec!["headcount"],
            )
        }
        Conflict::Budget => {
            let template = if side == 0 {
                pick(
                    w,
                    [
                        "The {J} budget is {$} for the year.",
                        "{J} has a budget of {$} this year.",
                    ],
                )
            } else {
                pick(
                    w,
                    [
                        "Finance has {J} at {$} for this year.",
                        "The finance sheet puts the {J} budget at {$}.",
                    ],
                )
            };
            let binds = [
                ('J', Piece::Entity(subject)),
                ('$', text(money(value, '$'))),
            ];
            let unit = w.unit(MemType::Evidence, template, &binds);
            (
                unit,
                vec![claim("budget", value.to_string(), "USD")],
                vec!["budget"],
            )
        }
        Conflict::Status => {
            let (code, words) = STATUSES[value as usize];
            let template = if side == 0 {
                pick(w, ["{J} is {S}.", "Status for {J}: {S}."])
            } else {
                pick(
                    w,
                    [
                        "From what I see {J} is {S} right now.",
                        "The steering deck lists {J} as {S}.",
                    ],
                )
            };
            let unit = w.unit(
                MemType::Observation,
                template,
                &[('J', Piece::Entity(subject)), ('S', text(words))],
            );
            (
                unit,
                vec![claim("status", code.to_string(), "status")],
                vec!["status"],
            )
        }
    }
}

pub fn question_step(
    w: &mut Writer<'_>,
    kind: Ask,
    subject: usize,
    feature: &str,
    answer: bool,
) -> (Unit, Vec<Claim>) {
    let id = w.org.entities[subject].id.clone();
    let binds_of = |key| vec![(key, Piece::Entity(subject)), ('f', text(feature))];
    let pick = |w: &mut Writer<'_>, options: &[&'static str]| *w.rng.pick(options);
    if !answer {
        let (key, options): (char, &[&str]) = match kind {
            Ask::Owner => (
                'C',
                &[
                    "Who owns the {C} renewal?",
                    "Open question: who is driving the {C} renewal?",
                    "TBD: owner for the {C} renewal.",
                ],
            ),
            Ask::Date => (
                'E',
                &[
                    "When is the {E} happening?",
                    "Open question: the date for the {E}.",
                ],
            ),
            Ask::Budget => (
                'J',
                &[
                    "Do we have budget for {f} in {J}?",
                    "Is there money for {f} on {J} this year?",
                ],
            ),
            Ask::Retention => (
                'J',
                &[
                    "What's the retention window for {J} logs?",
                    "Open question: how long do we keep {J} logs?",
                ],
            ),
        };
        let template = pick(w, options);
        return (
            w.unit(MemType::Question, template, &binds_of(key)),
            Vec::new(),
        );
    }
    let claim = |subject: String, attribute, value: String, unit| {
        vec![Claim {
            subject,
            attribute,
            value,
            unit,
        }]
    };
    match kind {
        Ask::Owner => {
            let person = w.org.someone(w.rng);
            let entity = w.org.people[person].entity;
            let template = pick(
                w,
                &[
                    "{P} will own the {C} renewal.",
                    "Re the {C} renewal: {P} is driving it.",
                ],
            );
            let mut binds = binds_of('C');
            binds.push(('P', Piece::Entity(entity)));
            let value = w.org.entities[entity].id.clone();
            (
                w.unit(MemType::Decision, template, &binds),
                claim(String::new(), "owner", value, "entity"),
            )
        }
        Ask::Date => {
            let date = w.now + w.rng.range(10, 60) as i64 * DAY_MS;
            let template = pick(
                w,
                &["The {E} is set for {d}.", "We landed on {d} for the {E}."],
            );
            let mut binds = binds_of('E');
            binds.push(('d', text(time::spoken_date(date))));
            (
                w.unit(MemType::Plan, template, &binds),
                claim(id, "date", time::iso_date(date), "date"),
            )
        }
        Ask::Budget => {
            let amount = w.rng.range(2, 30) * 10_000;
            let template = pick(
                w,
                &[
                    "On {f} for {J}: {$} is set aside.",
                    "Yes, {J} has {$} earmarked for {f}.",
                ],
            );
            let mut binds = binds_of('J');
            binds.push(('$', text(money(amount, '$'))));
            (
                w.unit(MemType::Evidence, template, &binds),
                claim(String::new(), "budget", amount.to_string(), "USD"),
            )
        }
        Ask::Retention => {
            let days = *w.rng.pick(&[30u64, 60, 90, 180, 365]);
            let template = pick(
                w,
                &[
                    "Retention for {J} logs is {n} days, per legal.",
                    "Legal says we keep {J} logs for {n} days.",
                ],
            );
            let mut binds = binds_of('J');
            binds.push(('n', text(days.to_string())));
            (
                w.unit(MemType::Constraint, template, &binds),
                claim(id, "retention_days", days.to_string(), "count"),
            )
        }
    }
}

/// A unit saying that work waits on the answer to a question: it names the question's subject
/// and shares a word with the question ("renewal", the feature, "logs").
pub fn held_step(w: &mut Writer<'_>, kind: Ask, subject: usize, feature: &str) -> Unit {
    let (key, options): (char, &[&str]) = match kind {
        Ask::Owner => (
            'C',
            &[
                "The {C} renewal paperwork is on hold until we know who owns it.",
                "Heads up: the {C} renewal quote is blocked until someone decides who drives the renewal.",
            ],
        ),
        Ask::Budget => (
            'J',
            &[
                "Work on {f} for {J} is on hold until we know the budget.",
                "We can't start {f} for {J} until the budget is settled; it is blocked for now.",
            ],
        ),
        Ask::Retention | Ask::Date => (
            'J',
            &[
                "The {J} log cleanup job is blocked until we know how long we keep the logs.",
                "Purging old {J} logs is on hold pending the retention answer.",
            ],
        ),
    };
    let template = *w.rng.pick(options);
    let binds = [(key, Piece::Entity(subject)), ('f', text(feature))];
    w.unit(MemType::Observation, template, &binds)
}

/// A one-off metric reading with a percentage claim on a product.
pub fn reading(w: &mut Writer<'_>) -> (Unit, Claim) {
    let (words, attribute) = *w.rng.pick(METRICS);
    let product = w.rng.pick(&w.org.products).0;
    let pct = w.rng.range(1, 99);
    let template = *w.rng.pick(&[
        "According to the dashboard, {x} on {R} is at {p} this week.",
        "This month {x} for {R} came in at {p}.",
    ]);
    let binds = [
        ('x', text(words)),
        ('R', Piece::Entity(product)),
        ('p', text(format!("{pct}%"))),
    ];
    let unit = w.unit(MemType::Evidence, template, &binds);
    let subject = w.org.entities[product].id.clone();
    (
        unit,
        Claim {
            subject,
            attribute,
            value: pct.to_string(),
            unit: "%",
        },
    )
}
