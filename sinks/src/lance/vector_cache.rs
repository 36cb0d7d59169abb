//! What the LanceDB writer and the vector filler share: the tables that get vectors behind
//! their rows, the cache of vectors by text hash, and the observer of the vector side. A leaf:
//! both `sink` and `vectors` use it, it uses neither.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::rows::memory_schema;

/// Receives the vector side's measurements (the runtime's Prometheus metrics implement it).
pub trait VectorObserver: Send + Sync + std::fmt::Debug {
    /// Rows waiting for a vector and how long the oldest of them has waited (since it was
    /// written), measured at the start of every pass of the filler.
    fn backlog(&self, rows: usize, oldest: Duration);
    /// `texts` distinct texts were run through the model in one batch that took `took`.
    fn embedded(&self, texts: usize, took: Duration);
    /// `rows` rows got a vector from the cache (a row or recent text with the same hash)
    /// instead of the model.
    fn reused(&self, rows: usize);
}

/// Vectors by text hash, least recently used evicted (in bulk, a tenth at a time).
#[derive(Debug, Default)]
pub(crate) struct VectorCache {
    capacity: usize,
    tick: u64,
    entries: HashMap<String, (Arc<Vec<f32>>, u64)>,
}

impl VectorCache {
    pub(crate) fn new(capacity: usize) -> Self {
        VectorCache {
            capacity,
            ..VectorCache::default()
        }
    }

    pub(crate) fn get(&mut self, hash: &str) -> Option<Arc<Vec<f32>>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(hash).map(|(vector, used)| {
            *used = tick;
            vector.clone()
        })
    }

    pub(crate) fn put(&mut self, hash: String, vector: Arc<Vec<f32>>) {
        if self.capacity == 0 {
            return;
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&hash) {
            let mut ticks: Vec<u64> = self.entries.values().map(|(_, t)| *t).collect();
            let evict = (self.capacity / 10).max(1).min(ticks.len());
            let (_, cutoff, _) = ticks.select_nth_unstable(evict - 1);
            let cutoff = *cutoff;
            self.entries.retain(|_, (_, t)| *t > cutoff);
        }
        self.tick += 1;
        self.entries.insert(hash, (vector, self.tick));
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A table whose rows get vectors behind them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The `memory` table (memory objects).
    Memory = 0,
    /// The `chunks` table (source text in chunks).
    Chunks = 1,
}

impl Target {
    /// The table's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Target::Memory => "memory",
            Target::Chunks => "chunks",
        }
    }

    pub(crate) fn schema(self) -> lancedb::arrow::arrow_schema::SchemaRef {
        match self {
            Target::Memory => memory_schema(),
            Target::Chunks => super::chunks::chunks_schema(),
        }
    }
}
