//! Static templates: several phrasings per memory type, not all with an obvious keyword, the
//! vocabularies they draw from, chit-chat, and the sentences that state true relations.

use crate::labels::RelationLabel;
use crate::rng::SplitMix64;
use crate::unit::{MemType, Piece, Unit, Writer};
pub use crate::vocabulary::vocabulary;

const DECISION: &[&str] = &[
    "We decided to {a}.",
    "Approved: {a} for {J}.",
    "{P} signed off on the plan to {a}.",
    "Final call from the review: we {a} starting {d}.",
    "Agreed with {C} to {a} before the renewal.",
    "Going with {V} for {f}.",
    "The {M} will own {f} from now on.",
    "Let's go ahead and {a}.",
];
const CONSTRAINT: &[&str] = &[
    "{J} must not exceed {$} in cloud spend per month.",
    "SOC 2 sign-off is required before {J} ships to {C}.",
    "Deliverables for {C} are due no later than {d}.",
    "Latency has to stay under {k} ms at p99 for {R}.",
    "We cannot store {C} data outside {L}.",
    "Legal says any change to {T} needs two approvals.",
    "Headcount for the {M} is capped at {n} until {q}.",
    "The contract with {V} forbids publishing their benchmark numbers.",
];
const EVIDENCE: &[&str] = &[
    "The data shows {x} up {p} since {m}.",
    "Benchmarks show {N} events per second on {R}.",
    "{C} opened {n} support tickets last month.",
    "Load test results: p99 of {k} ms with {N} concurrent users.",
    "Last quarter {C} spent {$} with us.",
    "Survey: {p} of respondents asked for {f}.",
    "The numbers are in: {x} improved by {p} after the {R} release.",
];
const NARRATIVE: &[&str] = &[
    "{J} started as a side project in {L}.",
    "Background: {C} came to us through {P}.",
    "For context, {f} was built during the {E}.",
    "Some history: {R} was the first thing we sold to {C}.",
    "A while back the {M} handled {T} on their own.",
    "Before {J}, everything ran on a single server in {L}.",
];
const PLAN: &[&str] = &[
    "We will roll out {f} to {C} next sprint.",
    "Next quarter we plan to {a}.",
    "{P} is going to take over {f} by {d}.",
    "Target date for the {R} beta is {d}.",
    "The plan is to {a} after the {E}.",
    "{P} to draft the {C} proposal by {d}.",
    "By {d} we should have {f} in front of {C}.",
];
const EVALUATION: &[&str] = &[
    "{R} works well under load.",
    "{f} is too slow for {C}'s volumes.",
    "The pilot with {C} was a success.",
    "Honestly the {V} integration has been a disappointment.",
    "Solid quarter for the {M}.",
    "I think {f} is the best thing we shipped this year.",
    "{P} did a great job on {T}.",
];
const OBSERVATION: &[&str] = &[
    "Noticed {x} spiking on {R} this morning.",
    "Seeing errors from the {V} API since {h}.",
    "{C}'s traffic dropped overnight.",
    "The nightly build failed twice this week.",
    "FYI {s} restarted three times after the deploy.",
    "Heads up: {P} is out until {d}.",
    "{x} looks flat since we launched {f}.",
];
const HYPOTHESIS: &[&str] = &[
    "We believe {x} is driven by {c}.",
    "Probably {c} caused the spike on {R}.",
    "It might be {c}.",
    "My guess is {C} will renew if we ship {f}.",
    "I suspect {s} is the bottleneck.",
    "Could be that {c} is hurting {x}.",
];
const QUESTION: &[&str] = &[
    "Does anyone know who maintains {f}?",
    "Open question: do we need {C}'s approval for {T}?",
    "TBD: who presents at the {E}.",
    "Do we have numbers on {x} for {m}?",
    "Has anyone heard back from {V}?",
    "What's the status of {J}?",
];

/// Chit-chat.
pub const NOISE: &[&str] = &[
    "thanks!",
    "lol",
    "on it 👍",
    "brb",
    "👍",
    "ok",
    "sounds good",
    "+1",
    "haha nice",
    "morning all",
    "ty",
    "will do",
    "np",
    "🎉",
    "nice one",
    "omw",
    "ack",
    "coffee?",
    "back",
    "gotcha, thanks",
];

/// A unit of a content type written with one of its static templates.
pub fn static_unit(w: &mut Writer<'_>, memory_type: MemType) -> Unit {
    let templates = match memory_type {
        MemType::Decision => DECISION,
        MemType::Constraint => CONSTRAINT,
        MemType::Evidence => EVIDENCE,
        MemType::Narrative => NARRATIVE,
        MemType::Plan => PLAN,
        MemType::Evaluation => EVALUATION,
        MemType::Observation => OBSERVATION,
        MemType::Hypothesis => HYPOTHESIS,
        MemType::Question => QUESTION,
        MemType::Noise => NOISE,
    };
    let template = *w.rng.pick(templates);
    let bindings = stable_values(w, template);
    w.unit(memory_type, template, &bindings)
}

/// The value placeholders of a filler template, drawn from a stream seeded by the template and
/// what it is about (its other placeholders), so that a filler says the same thing every time
/// it is written about the same subject: "Target date for the DataLine beta is March 1" is
/// never followed by "… is March 9". The labels track no supersession or contradiction between
/// fillers, so fillers must not make any. Dates are absolute (days after the default start);
/// a person is a value when something else is the subject ("{P} to draft the {C} proposal").
fn stable_values(w: &mut Writer<'_>, template: &str) -> Vec<(char, Piece)> {
    const VALUES: &[char] = &['n', 'N', 'p', '$', 'd', 'k', 'h'];
    let keys: Vec<char> = template
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.chars().next())
        .collect();
    let is_value = |k: char| {
        VALUES.contains(&k) || (k == 'P' && keys.iter().any(|o| *o != 'P' && !VALUES.contains(o)))
    };
    let mut bindings = Vec::new();
    let mut about = template.to_string();
    for &key in keys
        .iter()
        .filter(|k| !is_value(**k) && !matches!(k, 'm' | 'q'))
    {
        let piece = w.draw(key);
        match &piece {
            Piece::Entity(e) => about.push_str(&format!("|{key}{e}")),
            Piece::Text(t) => about.push_str(&format!("|{key}{t}")),
        }
        bindings.push((key, piece));
    }
    let mut stable = crate::rng::SplitMix64::new(fnv1a(about.as_bytes()));
    let mut values = Writer {
        org: &mut *w.org,
        rng: &mut stable,
        now: crate::time::DEFAULT_START_MS,
    };
    for &key in keys.iter().filter(|k| is_value(**k)) {
        let piece = match key {
            'd' => Piece::Text(crate::time::spoken_date(
                crate::time::DEFAULT_START_MS
                    + values.rng.range(30, 400) as i64 * crate::time::DAY_MS,
            )),
            other => values.draw(other),
        };
        bindings.push((key, piece));
    }
    bindings
}

/// 64-bit FNV-1a: a stable hash for seeding.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A sentence stating one of the organisation's true relations (a static NARRATIVE), with its
/// relation triple (`source_id` and `text` are filled in by the caller).
pub fn relation_unit(w: &mut Writer<'_>) -> (Unit, RelationLabel) {
    let org = &*w.org;
    let rng: &mut SplitMix64 = w.rng;
    let person = org.someone(rng);
    let p = org.people[person].clone();
    let (template, predicate, subject, object) = match rng.below(8) {
        0 | 1 => {
            let project = *rng.pick(&p.projects);
            let t = *rng.pick(&["{P} works on {J}.", "{P} is on the {J} project these days."]);
            (t, "works_on", p.entity, project)
        }
        2 if p.manager.is_some() => {
            let boss = org.people[p.manager.unwrap_or(0)].entity;
            let t = *rng.pick(&["{P} reports to {Q}.", "{P}'s manager is {Q}."]);
            (t, "reports_to", p.entity, boss)
        }
        3 => {
            let t = *rng.pick(&["{P} is a member of the {M}.", "{P} sits in the {M}."]);
            (t, "member_of", p.entity, p.team)
        }
        4 => {
            let (team, lead) = *rng.pick(&org.teams);
            let t = *rng.pick(&["{P} manages the {M}.", "{P} runs the {M}."]);
            (t, "manages", org.people[lead].entity, team)
        }
        5 => {
            let (product, owner) = *rng.pick(&org.products);
            let t = *rng.pick(&["{O} owns {R}.", "{R} is a product of {O}."]);
            (t, "owns", owner, product)
        }
        6 => {
            let (project, location) = *rng.pick(&org.projects);
            let t = *rng.pick(&["{J} is located in {L}.", "The {J} team is based in {L}."]);
            (t, "located_in", project, location)
        }
        _ if rng.chance(0.3) => {
            let investor = *rng.pick(&org.investors);
            (
                "{I} invested in {U} last year.",
                "invests_in",
                investor,
                org.us,
            )
        }
        _ => {
            let customer = *rng.pick(&org.customers);
            let t = *rng.pick(&[
                "{C} is a customer of {U}.",
                "{C} has been buying from {U} for a while.",
            ]);
            (t, "customer_of", customer, org.us)
        }
    };
    let (subject_key, object_key) = keys(template);
    let unit = w.unit(
        MemType::Narrative,
        template,
        &[
            (subject_key, Piece::Entity(subject)),
            (object_key, Piece::Entity(object)),
        ],
    );
    let relation = RelationLabel {
        source_id: String::new(),
        text: unit.text.clone(),
        subject: w.org.entities[subject].id.clone(),
        predicate,
        object: w.org.entities[object].id.clone(),
    };
    (unit, relation)
}

/// The placeholders of a relation template, subject first (the subject may be written second).
fn keys(template: &str) -> (char, char) {
    let placeholders: Vec<char> = template
        .split('{')
        .skip(1)
        .filter_map(|s| s.chars().next())
        .collect();
    match template {
        t if t.starts_with("{R} is a product of") => ('O', 'R'),
        _ => (placeholders[0], placeholders[1]),
    }
}
