//! The retrievals in force: the usage term of the priorities weighs a retrieval by
//! 2^(−age / half-life), so records older than a few half-lives only cost memory. They are
//! retracted from the dataflow once older than the horizon, which keeps the collection bounded.

use std::collections::BTreeSet;

use epigraph_operators::priority::Usage;

/// Usage records younger than `horizon_ms` at the clock's `now`.
#[derive(Debug)]
pub struct UsageWindow {
    horizon_ms: i64,
    live: BTreeSet<(i64, Usage)>,
}

impl UsageWindow {
    /// A window keeping records for `horizon_ms` (e.g. ten half-lives: they weigh < 0.1 %).
    pub fn new(horizon_ms: i64) -> Self {
        UsageWindow {
            horizon_ms,
            live: BTreeSet::new(),
        }
    }

    /// The dataflow updates for `new` records at `now`: each record not already past the
    /// horizon is inserted; every live record that has passed it is retracted.
    ///
    /// ```
    /// use epigraph::runtime::usage::UsageWindow;
    /// use epigraph_operators::priority::Usage;
    /// let used = |at: i64| Usage { tenant: "t".into(), id: "m".into(), at_ms: at };
    /// let mut window = UsageWindow::new(100);
    /// assert_eq!(window.advance(vec![used(50), used(5)], 120), [(used(50), 1)], "5 is too old");
    /// assert_eq!(window.advance(vec![], 149), []);
    /// assert_eq!(window.advance(vec![], 151), [(used(50), -1)]);
    /// assert_eq!(window.len(), 0);
    /// ```
    pub fn advance(&mut self, new: Vec<Usage>, now: i64) -> Vec<(Usage, isize)> {
        let cutoff = now.saturating_sub(self.horizon_ms);
        let mut updates = Vec::new();
        for usage in new {
            if usage.at_ms >= cutoff && self.live.insert((usage.at_ms, usage.clone())) {
                updates.push((usage, 1));
            }
        }
        while let Some(first) = self.live.first()
            && first.0 < cutoff
        {
            let (_, usage) = self.live.pop_first().expect("checked");
            updates.push((usage, -1));
        }
        updates
    }

    /// Records in force.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}
