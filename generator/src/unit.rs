//! Memory units and the small template language they are written with.
//!
//! A template is text with one-letter placeholders in braces: `{P} works on {J}.`. Entity
//! placeholders (`P` person, `J` project, `R` product, `C` customer, `V` vendor, `I` investor,
//! `L` location, `T` topic, `M` team, `E` event, `O` a product owner, `U` our company) are
//! written in one of the entity's surface forms and recorded as mentions; value placeholders
//! (`a` action, `f` feature, `x` metric, `c` cause, `s` system, `n` small count, `N` large count,
//! `p` percentage, `$` money, `d` future date, `m` this month, `q` this quarter, `h` clock time,
//! `k` latency) draw from the vocabularies in [`crate::vocabulary`]. A binding passed by the
//! caller overrides the random choice, which is how the dynamics write specific values.

use crate::labels::Mention;
use crate::org::Organisation;
use crate::rng::SplitMix64;
use crate::time;
use crate::vocabulary::vocabulary;

/// The nine epistemic types, plus chit-chat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MemType {
    /// Something was decided.
    Decision,
    /// A rule or limit.
    Constraint,
    /// Data, numbers, measurements.
    Evidence,
    /// Background.
    Narrative,
    /// What will be done.
    Plan,
    /// A judgement.
    Evaluation,
    /// Something noticed.
    Observation,
    /// A guess about causes or outcomes.
    Hypothesis,
    /// Something asked.
    Question,
    /// Chit-chat, greetings, sign-offs.
    Noise,
}

impl MemType {
    /// The nine content types.
    pub const CONTENT: [MemType; 9] = [
        MemType::Decision,
        MemType::Constraint,
        MemType::Evidence,
        MemType::Narrative,
        MemType::Plan,
        MemType::Evaluation,
        MemType::Observation,
        MemType::Hypothesis,
        MemType::Question,
    ];

    /// The label written in `units.jsonl`.
    pub fn label(self) -> &'static str {
        match self {
            MemType::Decision => "DECISION",
            MemType::Constraint => "CONSTRAINT",
            MemType::Evidence => "EVIDENCE",
            MemType::Narrative => "NARRATIVE",
            MemType::Plan => "PLAN",
            MemType::Evaluation => "EVALUATION",
            MemType::Observation => "OBSERVATION",
            MemType::Hypothesis => "HYPOTHESIS",
            MemType::Question => "QUESTION",
            MemType::Noise => "NOISE",
        }
    }

    /// Default `(statement_type, temporal_type)` of the type.
    pub fn kinds(self) -> (&'static str, &'static str) {
        match self {
            MemType::Decision => ("fact", "static"),
            MemType::Constraint => ("fact", "static"),
            MemType::Evidence => ("fact", "dynamic"),
            MemType::Narrative => ("fact", "static"),
            MemType::Plan => ("prediction", "dynamic"),
            MemType::Evaluation => ("opinion", "dynamic"),
            MemType::Observation => ("fact", "dynamic"),
            MemType::Hypothesis => ("opinion", "dynamic"),
            MemType::Question => ("fact", "dynamic"),
            MemType::Noise => ("opinion", "atemporal"),
        }
    }
}

/// A written unit before it is placed: its text, type and mentions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The text (a sentence or a list item, without the list marker).
    pub text: String,
    /// Its type.
    pub memory_type: MemType,
    /// `fact`, `opinion` or `prediction`.
    pub statement_type: &'static str,
    /// `static`, `dynamic` or `atemporal`.
    pub temporal_type: &'static str,
    /// Entities mentioned, in order.
    pub mentions: Vec<Mention>,
    /// When it was written (ms): a unit kept through later revisions of a document keeps it.
    pub written_at: i64,
}

/// A value bound to a placeholder by the caller.
#[derive(Clone, Debug)]
pub enum Piece {
    /// An entity (index into `Organisation::entities`), written in a random surface form.
    Entity(usize),
    /// Literal text.
    Text(String),
}

/// Writes templates for one organisation at one moment.
#[derive(Debug)]
pub struct Writer<'a> {
    /// The organisation whose entities are mentioned.
    pub org: &'a mut Organisation,
    /// The random stream.
    pub rng: &'a mut SplitMix64,
    /// The simulated time of the event being written (ms).
    pub now: i64,
}

impl Writer<'_> {
    /// Write `template` as a unit of `memory_type`, with `bindings` overriding placeholders.
    pub fn unit(
        &mut self,
        memory_type: MemType,
        template: &str,
        bindings: &[(char, Piece)],
    ) -> Unit {
        let (statement_type, temporal_type) = memory_type.kinds();
        let mut text = String::with_capacity(template.len() + 32);
        let mut mentions = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            text.push_str(&rest[..open]);
            let key = rest[open + 1..].chars().next().expect("placeholder key");
            rest = &rest[open + 1 + key.len_utf8() + 1..];
            let piece = match bindings.iter().find(|(k, _)| *k == key) {
                Some((_, piece)) => piece.clone(),
                None => self.draw(key),
            };
            match piece {
                Piece::Entity(entity) => {
                    let (form, entity_id) = self.org.form(self.rng, entity);
                    text.push_str(&form);
                    mentions.push(Mention {
                        text: form,
                        entity_id,
                    });
                }
                Piece::Text(value) => text.push_str(&value),
            }
        }
        text.push_str(rest);
        // Sentences start with a capital, unless they start with a mention ("churn is …").
        let starts_with_mention = mentions.first().is_some_and(|m| text.starts_with(&m.text));
        if memory_type != MemType::Noise
            && !starts_with_mention
            && text.starts_with(|c: char| c.is_ascii_lowercase())
        {
            text[..1].make_ascii_uppercase();
        }
        Unit {
            text,
            memory_type,
            statement_type,
            temporal_type,
            mentions,
            written_at: self.now,
        }
    }

    /// A random value for a placeholder.
    pub fn draw(&mut self, key: char) -> Piece {
        let org = &*self.org;
        let rng = &mut *self.rng;
        let entity = match key {
            'P' => Some(org.people[org.someone(rng)].entity),
            'J' => Some(rng.pick(&org.projects).0),
            'R' => Some(rng.pick(&org.products).0),
            'C' => Some(*rng.pick(&org.customers)),
            'V' => Some(*rng.pick(&org.vendors)),
            'I' => Some(*rng.pick(&org.investors)),
            'L' => Some(*rng.pick(&org.locations)),
            'T' => Some(*rng.pick(&org.topics)),
            'M' => Some(rng.pick(&org.teams).0),
            'E' => Some(*rng.pick(&org.events)),
            'U' => Some(org.us),
            _ => None,
        };
        if let Some(entity) = entity {
            return Piece::Entity(entity);
        }
        let now = self.now;
        Piece::Text(match key {
            'n' => rng.range(2, 40).to_string(),
            'N' => (rng.range(12, 900) * 100).to_string(),
            'p' => format!("{}%", rng.range(2, 95)),
            '$' => money(
                rng.range(2, 90) * 10_000,
                if rng.chance(0.5) { '€' } else { '$' },
            ),
            'd' => time::spoken_date(now + rng.range(7, 120) as i64 * time::DAY_MS),
            'm' => time::month_name(now).to_string(),
            'q' => time::quarter(now),
            'h' => format!("{}:{:02}", rng.range(7, 18), rng.below(60)),
            'k' => (rng.range(8, 90) * 10).to_string(),
            other => rng.pick(vocabulary(other)).to_string(),
        })
    }
}

/// `€320K`, `$1.25M`, `€2.2M`: how amounts are written.
///
/// ```
/// assert_eq!(epigraph_gen::unit::money(320_000, '€'), "€320K");
/// assert_eq!(epigraph_gen::unit::money(2_200_000, '€'), "€2.2M");
/// assert_eq!(epigraph_gen::unit::money(1_250_000, '$'), "$1.25M");
/// ```
pub fn money(amount: u64, currency: char) -> String {
    if amount >= 1_000_000 {
        let millions = format!("{:.2}", amount as f64 / 1e6);
        let trimmed = millions.trim_end_matches('0').trim_end_matches('.');
        format!("{currency}{trimmed}M")
    } else {
        format!("{currency}{}K", amount / 1000)
    }
}
