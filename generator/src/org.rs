//! The organisation: people, teams, projects, products, external organisations, places, topics
//! and events, with the true relations between them and every surface form each may be written
//! as. Its size grows with the square root of the number of events, so memory is O(entities).

use std::collections::HashSet;

use serde::Serialize;

use crate::names;
use crate::rng::SplitMix64;

/// What an entity is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum EntityKind {
    /// A person.
    Person,
    /// A company: ours, a customer, a vendor or an investor.
    Organization,
    /// An internal project (codename).
    Project,
    /// A product.
    Product,
    /// A city.
    Location,
    /// A subject of discussion.
    Topic,
    /// A team.
    Team,
    /// A named happening (board meeting, offsite).
    Event,
}

/// One entity and the ways it may be written.
#[derive(Clone, Debug)]
pub struct Entity {
    /// Stable id, e.g. `person:17`.
    pub id: String,
    /// What it is.
    pub kind: EntityKind,
    /// Surface forms; the first is the canonical name.
    pub forms: Vec<String>,
    /// Weights of the forms when a text mentions the entity.
    pub weights: Vec<u32>,
    /// E-mail addresses, chat handles or domains.
    pub addresses: Vec<String>,
    /// Which forms have been written at least once (for the `aliases` label).
    pub used: Vec<bool>,
}

/// A person's place in the organisation (indices into [`Organisation::entities`] and
/// [`Organisation::people`]).
#[derive(Clone, Debug)]
pub struct Person {
    /// The person's entity.
    pub entity: usize,
    /// Full name.
    pub name: String,
    /// First name or nickname, as used in greetings.
    pub short: String,
    /// Work e-mail.
    pub email: String,
    /// Chat handle, when the person uses chat under a handle.
    pub handle: Option<String>,
    /// The team entity.
    pub team: usize,
    /// The manager (index into `people`), none for the CEO.
    pub manager: Option<usize>,
    /// Project entities the person works on.
    pub projects: Vec<usize>,
}

/// The generated organisation.
#[derive(Clone, Debug, Default)]
pub struct Organisation {
    /// Our company's name.
    pub company: String,
    /// Our e-mail domain.
    pub domain: String,
    /// Every entity.
    pub entities: Vec<Entity>,
    /// People (their entities are in `entities`).
    pub people: Vec<Person>,
    /// Team entities, with the person leading each.
    pub teams: Vec<(usize, usize)>,
    /// Project entities, with their location entity.
    pub projects: Vec<(usize, usize)>,
    /// Product entities, with the organisation entity owning each.
    pub products: Vec<(usize, usize)>,
    /// Our company's entity.
    pub us: usize,
    /// Customer organisation entities.
    pub customers: Vec<usize>,
    /// Vendor organisation entities.
    pub vendors: Vec<usize>,
    /// Investor organisation entities.
    pub investors: Vec<usize>,
    /// Location entities.
    pub locations: Vec<usize>,
    /// Topic entities.
    pub topics: Vec<usize>,
    /// Event entities.
    pub events: Vec<usize>,
}

fn scaled(base: f64, factor: f64, lo: usize, hi: usize) -> usize {
    ((base * factor) as usize).clamp(lo, hi)
}

impl Organisation {
    /// An organisation sized for a corpus of about `events` events.
    pub fn generate(rng: &mut SplitMix64, events: u64) -> Self {
        let people = scaled((events as f64).sqrt(), 0.8, 10, 2500) + 4;
        let mut org = Organisation::default();
        let mut taken = HashSet::new();
        org.company = rng.pick(names::COMPANIES).to_string();
        org.domain = format!("{}.example", org.company.to_lowercase());
        let forms = vec![org.company.clone(), format!("{} Ltd", org.company)];
        org.us = org.add(
            EntityKind::Organization,
            "org",
            forms,
            vec![org.domain.clone()],
        );
        for name in rng_subset(
            rng,
            names::LOCATIONS,
            scaled(people as f64, 1.0 / 40.0, 3, 20),
        ) {
            let id = org.add(EntityKind::Location, "location", vec![name.into()], vec![]);
            org.locations.push(id);
        }
        for name in rng_subset(rng, names::TOPICS, scaled(people as f64, 0.5, 8, 20)) {
            let id = org.add(EntityKind::Topic, "topic", vec![name.into()], vec![]);
            org.topics.push(id);
        }
        for name in names::ORG_EVENTS {
            let bare = name.trim_start_matches("the ").to_string();
            let id = org.add(EntityKind::Event, "event", vec![bare], vec![]);
            org.events.push(id);
        }
        org.add_companies(rng, people, &mut taken);
        org.add_people(rng, people);
        org
    }

    fn add(
        &mut self,
        kind: EntityKind,
        prefix: &str,
        forms: Vec<String>,
        addresses: Vec<String>,
    ) -> usize {
        let index = self.entities.len();
        let weights = (0..forms.len())
            .map(|i| if i == 0 { 3 } else { 1 })
            .collect();
        self.entities.push(Entity {
            id: format!("{prefix}:{index}"),
            kind,
            used: vec![false; forms.len()],
            forms,
            weights,
            addresses,
        });
        index
    }

    fn add_companies(&mut self, rng: &mut SplitMix64, people: usize, taken: &mut HashSet<String>) {
        for _ in 0..scaled(people as f64, 1.0 / 15.0, 4, 200) {
            let name = compound(rng, taken, names::NAME_TAILS, "");
            let domain = format!("{}.example", name.to_lowercase());
            let id = self.add(EntityKind::Organization, "org", vec![name], vec![domain]);
            self.customers.push(id);
        }
        for _ in 0..scaled(people as f64, 1.0 / 40.0, 3, 150) {
            let name = compound(rng, taken, names::VENDOR_TAILS, " ");
            let domain = format!("{}.example", name.replace(' ', "").to_lowercase());
            let id = self.add(EntityKind::Organization, "org", vec![name], vec![domain]);
            self.vendors.push(id);
        }
        for _ in 0..scaled(people as f64, 1.0 / 150.0, 2, 40) {
            let name = loop {
                let name = format!(
                    "{} {}",
                    rng.pick(names::INVESTOR_HEADS),
                    rng.pick(names::INVESTOR_TAILS)
                );
                if taken.insert(name.clone()) {
                    break name;
                }
            };
            let id = self.add(EntityKind::Organization, "org", vec![name], vec![]);
            self.investors.push(id);
        }
        for _ in 0..scaled(people as f64, 1.0 / 30.0, 2, 150) {
            let name = compound(rng, taken, names::NAME_TAILS, "");
            let owner = if rng.chance(0.7) {
                self.us
            } else {
                *rng.pick(&self.vendors)
            };
            let id = self.add(EntityKind::Product, "product", vec![name], vec![]);
            self.products.push((id, owner));
        }
        for name in rng_subset(
            rng,
            names::CODENAMES,
            scaled(people as f64, 1.0 / 12.0, 3, 62),
        ) {
            let forms = vec![name.to_string(), format!("Project {name}")];
            let id = self.add(EntityKind::Project, "project", forms, vec![]);
            let location = *rng.pick(&self.locations);
            self.projects.push((id, location));
        }
    }

    fn add_people(&mut self, rng: &mut SplitMix64, count: usize) {
        let team_names = rng_subset(rng, names::TEAMS, scaled(count as f64, 1.0 / 8.0, 3, 20));
        let mut names_taken = HashSet::new();
        for index in 0..count {
            let (first, nick, last) = loop {
                let (first, nick) = *rng.pick(names::FIRST_NAMES);
                let last = *rng.pick(names::LAST_NAMES);
                if names_taken.insert((first, last)) {
                    break (first, nick, last);
                }
            };
            let name = format!("{first} {last}");
            let login = format!("{}.{}", first, last.replace(['\'', ' '], ""))
                .to_lowercase()
                .replace(['ø', 'ö'], "o");
            let email = format!("{login}@{}", self.domain);
            let mut forms = vec![name.clone(), first.to_string()];
            let mut weights = vec![8, 5];
            if !nick.is_empty() {
                forms.push(nick.to_string());
                weights.push(4);
            }
            forms.push(format!("{}. {last}", &first[..1]));
            weights.push(2);
            let mut addresses = vec![email.clone()];
            if rng.chance(0.4) {
                addresses.push(format!("{login}{}@mailbox.example", rng.range(1, 99)));
            }
            let handle = rng.chance(0.7).then(|| {
                let short = if nick.is_empty() { first } else { nick };
                format!("@{}{}", short.to_lowercase(), &last[..1].to_lowercase())
            });
            addresses.extend(handle.clone());
            let entity = self.add(EntityKind::Person, "person", forms, addresses);
            self.entities[entity].weights = weights;
            let projects = (0..rng.range(1, 2))
                .map(|_| rng.pick(&self.projects).0)
                .collect::<HashSet<_>>();
            let mut projects: Vec<usize> = projects.into_iter().collect();
            projects.sort_unstable();
            // Managers come first: person i reports to someone hired before them.
            let manager = (index > 0).then(|| rng.below(index.min(1 + count / 6) as u64) as usize);
            self.people.push(Person {
                entity,
                name,
                short: if nick.is_empty() { first } else { nick }.to_string(),
                email,
                handle,
                team: 0,
                manager,
                projects,
            });
        }
        for (t, name) in team_names.iter().enumerate() {
            let forms = vec![format!("{name} team"), format!("{name} group")];
            let team = self.add(EntityKind::Team, "team", forms, vec![]);
            // Leads are the first people after the CEO, one per team.
            let lead = (1 + t) % count;
            self.teams.push((team, lead));
        }
        for index in 0..count {
            let team = self.teams[rng.below(self.teams.len() as u64) as usize].0;
            self.people[index].team = team;
        }
        for &(team, lead) in &self.teams.clone() {
            self.people[lead].team = team;
        }
    }

    /// Write `entity` in one of its forms (weighted), remembering that the form was used.
    pub fn form(&mut self, rng: &mut SplitMix64, entity: usize) -> (String, String) {
        let e = &mut self.entities[entity];
        let index = rng.weighted(&e.weights);
        e.used[index] = true;
        (e.forms[index].clone(), e.id.clone())
    }

    /// Write `entity` by its canonical name.
    pub fn canonical(&mut self, entity: usize) -> (String, String) {
        let e = &mut self.entities[entity];
        e.used[0] = true;
        (e.forms[0].clone(), e.id.clone())
    }

    /// A random person (index into `people`).
    pub fn someone(&self, rng: &mut SplitMix64) -> usize {
        rng.below(self.people.len() as u64) as usize
    }
}

/// `count` distinct items of `pool` in a seeded order.
fn rng_subset<'a>(rng: &mut SplitMix64, pool: &[&'a str], count: usize) -> Vec<&'a str> {
    let mut items = pool.to_vec();
    rng.shuffle(&mut items);
    items.truncate(count.min(pool.len()));
    items
}

/// A fresh `<head><glue><tail>` name.
fn compound(
    rng: &mut SplitMix64,
    taken: &mut HashSet<String>,
    tails: &[&str],
    glue: &str,
) -> String {
    loop {
        let name = format!("{}{glue}{}", rng.pick(names::NAME_HEADS), rng.pick(tails));
        if taken.insert(name.clone()) {
            return name;
        }
    }
}
