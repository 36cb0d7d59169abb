//! Composing chat messages and e-mails out of units, and the helpers every kind shares
//! (content units, parties, titles). Documents and calendar entries are in `documents`.

use crate::doc::label;
use crate::dynamics::Ctx;
use crate::generator::Generator;
use crate::labels::{Event, LabelSet, Party};
use crate::templates::{self, NOISE};
use crate::unit::{MemType, Piece, Unit, Writer};

/// Relative weights of the nine content types in chat and e-mail.
const CHAT_TYPES: [u32; 9] = [8, 4, 8, 5, 10, 12, 16, 10, 16];

impl Generator {
    pub(crate) fn writer(&mut self) -> Writer<'_> {
        Writer {
            org: &mut self.org,
            rng: &mut self.rng,
            now: self.now,
        }
    }

    /// A content unit of one of the `wanted` types: a dynamics step, a relation or a static
    /// template, never a text already written into this event.
    pub(crate) fn content(&mut self, ctx: &mut Ctx<'_>, wanted: &[MemType]) -> Unit {
        if self.rng.chance(self.config.dynamics_share) {
            let mut w = Writer {
                org: &mut self.org,
                rng: &mut self.rng,
                now: self.now,
            };
            if let Some(step) = self.dynamics.step(&mut w, ctx, wanted) {
                self.written.push(step.unit.text.clone());
                return step.unit;
            }
        }
        let weights: Vec<u32> = wanted
            .iter()
            .map(|t| CHAT_TYPES[MemType::CONTENT.iter().position(|c| c == t).unwrap_or(0)])
            .collect();
        for attempt in 0..4 {
            let memory_type = wanted[self.rng.weighted(&weights)];
            let mut w = self.writer();
            let unit = if memory_type == MemType::Narrative && w.rng.chance(0.5) {
                let (unit, mut relation) = templates::relation_unit(&mut w);
                if self.written.contains(&unit.text) && attempt < 3 {
                    continue;
                }
                relation.source_id = ctx.source_id.to_string();
                ctx.labels.relations.push(relation);
                unit
            } else {
                templates::static_unit(&mut w, memory_type)
            };
            if !self.written.contains(&unit.text) || attempt == 3 {
                self.written.push(unit.text.clone());
                return unit;
            }
        }
        unreachable!("the last attempt returns")
    }

    pub(crate) fn party(&mut self, person: usize, chat: bool) -> Party {
        let p = &self.org.people[person];
        let personal = self.org.entities[p.entity]
            .addresses
            .get(1)
            .filter(|a| a.contains('@'));
        let address = match (&p.handle, chat, personal) {
            (Some(handle), true, _) => handle.clone(),
            (_, false, Some(private)) if self.rng.chance(0.15) => private.clone(),
            _ => p.email.clone(),
        };
        let name = if chat && self.rng.chance(0.3) {
            p.short.clone()
        } else {
            p.name.clone()
        };
        Party { name, address }
    }

    /// Between `lo` and `hi` distinct people (fewer on a rare repeat draw, never none).
    pub(crate) fn people(&mut self, lo: u64, hi: u64) -> Vec<usize> {
        let count = self.rng.range(lo, hi);
        let mut chosen: Vec<usize> = Vec::new();
        for _ in 0..count {
            let person = self.org.someone(&mut self.rng);
            if !chosen.contains(&person) {
                chosen.push(person);
            }
        }
        chosen
    }

    pub(crate) fn title(&mut self, options: &[&str]) -> String {
        let template = *self.rng.pick(options);
        self.writer().unit(MemType::Noise, template, &[]).text
    }

    pub(crate) fn chat(&mut self) -> (Event, LabelSet) {
        let channel = match self.rng.below(4) {
            0 => "general".to_string(),
            1 => self.org.entities[self.rng.pick(&self.org.projects).0].forms[0].to_lowercase(),
            2 => self.org.entities[self.rng.pick(&self.org.teams).0].forms[0]
                .to_lowercase()
                .replace(' ', "-"),
            _ => "random".to_string(),
        };
        let source_id = format!("chat/{channel}/{}", self.line);
        let mut labels = LabelSet::default();
        let mut ctx = self.ctx(&source_id, &mut labels);
        let units: Vec<Unit> = if self.rng.chance(self.config.noise_share) {
            let noise = *self.rng.pick(NOISE);
            vec![self.writer().unit(MemType::Noise, noise, &[])]
        } else {
            let count = if self.rng.chance(0.25) { 2 } else { 1 };
            (0..count)
                .map(|_| self.content(&mut ctx, &MemType::CONTENT))
                .collect()
        };
        let pinned = ctx.pinned;
        let author = self.org.someone(&mut self.rng);
        let event = Event {
            kind: "chat",
            source_id: source_id.clone(),
            op: "upsert",
            title: format!("#{channel}"),
            body: units
                .iter()
                .map(|u| u.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            occurred_at: self.now,
            authors: vec![self.party(author, true)],
            participants: Vec::new(),
            thread_id: format!("chat/{channel}"),
            links: Vec::new(),
            extras: Default::default(),
        };
        labels.units = units
            .iter()
            .map(|u| label(&source_id, u, self.line))
            .collect();
        self.remember_deletable(&event, &labels, pinned);
        (event, labels)
    }

    pub(crate) fn email(&mut self) -> (Event, LabelSet) {
        let who = self.people(2, 5);
        let source_id = format!("email/{:016x}@{}", self.rng.next_u64(), self.org.domain);
        let mut labels = LabelSet::default();
        let mut ctx = self.ctx(&source_id, &mut labels);
        let greeting = if who.len() == 2 {
            let entity = self.org.people[who[1]].entity;
            self.writer()
                .unit(MemType::Noise, "Hi {P},", &[('P', Piece::Entity(entity))])
        } else {
            let text = *self.rng.pick(&["Hi all,", "Hi team,", "Hello everyone,"]);
            self.writer().unit(MemType::Noise, text, &[])
        };
        let mut paragraphs: Vec<Vec<Unit>> = vec![vec![greeting]];
        for _ in 0..self.rng.range(1, 3) {
            let count = self.rng.range(1, 2);
            paragraphs.push(
                (0..count)
                    .map(|_| self.content(&mut ctx, &MemType::CONTENT))
                    .collect(),
            );
        }
        let sender = self.org.people[who[0]].entity;
        let sign = *self.rng.pick(&["Best, {P}", "Thanks, {P}", "Cheers, {P}"]);
        paragraphs.push(vec![self.writer().unit(
            MemType::Noise,
            sign,
            &[('P', Piece::Entity(sender))],
        )]);
        let pinned = ctx.pinned;
        let title = self.title(&[
            "{J} update",
            "Quick question about {T}",
            "{C} renewal",
            "Notes from the {E}",
            "Re: {R} pricing",
            "Follow-up: {J}",
            "Weekly summary",
        ]);
        let authors = vec![self.party(who[0], false)];
        let participants = who[1..].iter().map(|p| self.party(*p, false)).collect();
        let body = paragraphs
            .iter()
            .map(|p| {
                p.iter()
                    .map(|u| u.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        let thread = self.rng.below((self.config.events / 50).max(10));
        let event = Event {
            kind: "email",
            source_id: source_id.clone(),
            op: "upsert",
            title,
            body: format!("{body}\n"),
            occurred_at: self.now,
            authors,
            participants,
            thread_id: format!("email/thread-{thread}"),
            links: Vec::new(),
            extras: Default::default(),
        };
        labels.units = paragraphs
            .iter()
            .flatten()
            .map(|u| label(&source_id, u, self.line))
            .collect();
        self.remember_deletable(&event, &labels, pinned);
        (event, labels)
    }

    pub(crate) fn ctx<'a>(&self, source_id: &'a str, labels: &'a mut LabelSet) -> Ctx<'a> {
        Ctx {
            source_id,
            line: self.line,
            now: self.now,
            labels,
            pinned: false,
        }
    }
}
