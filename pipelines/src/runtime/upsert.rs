//! The upsert state: at most one live version per Kafka key.

use std::collections::HashMap;

use epigraph_operators::SourceVersion;
use epigraph_schemas::{Op, SourceEvent};

/// The live version per key, so a new version can retract its predecessor.
#[derive(Debug, Default)]
pub struct UpsertState {
    live: HashMap<String, SourceVersion>,
}

impl UpsertState {
    /// Apply an event; returns the differential updates it causes (none for a re-sent version).
    pub fn apply(&mut self, event: &SourceEvent) -> Vec<(SourceVersion, isize)> {
        let key = event.key();
        match event.op {
            Op::Upsert => {
                let next = SourceVersion::from_event(event);
                // Re-sent unchanged (whatever its ingestion time): the first recording stands.
                if let Some(live) = self.live.get(&key) {
                    let mut resent = next.clone();
                    resent.recorded_at = live.recorded_at;
                    if *live == resent {
                        return Vec::new();
                    }
                }
                let mut updates = Vec::with_capacity(2);
                if let Some(previous) = self.live.insert(key, next.clone()) {
                    updates.push((previous, -1));
                }
                updates.push((next, 1));
                updates
            }
            Op::Delete => self.remove(&key),
        }
    }

    /// Remove a key (a delete event or a Kafka null tombstone).
    pub fn remove(&mut self, key: &str) -> Vec<(SourceVersion, isize)> {
        self.live
            .remove(key)
            .map(|previous| vec![(previous, -1)])
            .unwrap_or_default()
    }

    /// The live versions.
    pub fn versions(&self) -> impl Iterator<Item = &SourceVersion> {
        self.live.values()
    }

    /// How many keys are live.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no key is live.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use epigraph_schemas::SourceKind;

    use super::*;

    #[test]
    fn versions_replace_each_other_and_tombstones_retract() {
        let mut state = UpsertState::default();
        let v1 = SourceEvent::upsert("t", SourceKind::Document, "a", None, "one".into(), 1);
        let v2 = SourceEvent::upsert("t", SourceKind::Document, "a", None, "two".into(), 2);
        assert_eq!(state.apply(&v1).len(), 1);
        assert!(state.apply(&v1).is_empty(), "a re-sent version is a no-op");
        let mut later = v1.clone();
        later.ingested_at += 60_000;
        assert!(
            state.apply(&later).is_empty(),
            "also when ingested again later: the first recorded time stands"
        );
        let edit = state.apply(&v2);
        assert_eq!(
            edit.iter()
                .map(|(v, d)| (v.body.as_str(), *d))
                .collect::<Vec<_>>(),
            [("one", -1), ("two", 1)]
        );
        let gone = state.apply(&SourceEvent::tombstone("t", SourceKind::Document, "a", 3));
        assert_eq!(
            gone.iter()
                .map(|(v, d)| (v.body.as_str(), *d))
                .collect::<Vec<_>>(),
            [("two", -1)]
        );
        assert!(state.is_empty());
        assert!(state.remove("t/a").is_empty());
    }
}
