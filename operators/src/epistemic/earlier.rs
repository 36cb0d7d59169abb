//! The earlier statements a later one meets, source by source.
//!
//! The lifecycle rule ([`super::lifecycle`]) and the revision rule ([`super::revisions`]) read
//! a matter the same way: a later statement meets, in each other source, the statements written
//! before it, newest sources first and at most a few sources back; in each source it links to
//! the first (in reading order) statement that qualifies. [`by_source`], [`first`] and [`link`]
//! are those three steps; a rule's statement type implements [`Said`].

use std::collections::BTreeMap;

use super::judge::{Link, LinkKind};

/// A statement about one matter, as the rules that read matters source by source see it.
pub trait Said {
    /// When it was written.
    fn t_valid(&self) -> Option<i64>;
    /// Its source.
    fn source_id(&self) -> &str;
    /// Where it starts in its source.
    fn start(&self) -> u32;
    /// The memory object.
    fn memory_id(&self) -> &str;
    /// When it was recorded.
    fn recorded_at(&self) -> Option<i64>;
}

/// Implements [`Said`] for a statement type with the fields `t_valid`, `source_id`, `start`,
/// `memory_id` and `recorded_at`.
macro_rules! said_by_fields {
    ($statement:ty) => {
        impl $crate::epistemic::earlier::Said for $statement {
            fn t_valid(&self) -> Option<i64> {
                self.t_valid
            }
            fn source_id(&self) -> &str {
                &self.source_id
            }
            fn start(&self) -> u32 {
                self.start
            }
            fn memory_id(&self) -> &str {
                &self.memory_id
            }
            fn recorded_at(&self) -> Option<i64> {
                self.recorded_at
            }
        }
    };
}
pub(crate) use said_by_fields;

/// The statements of `said` before `at` that `later` (= `said[at]`) meets: of other sources,
/// written strictly before it and accepted by `meets`, grouped by source; the `lookback`
/// sources with the newest statements come first, each source's statements in input order.
///
/// ```
/// use epigraph_operators::epistemic::earlier::{Said, by_source};
///
/// struct S(&'static str, i64);
/// impl Said for S {
///     fn t_valid(&self) -> Option<i64> { Some(self.1) }
///     fn source_id(&self) -> &str { self.0 }
///     fn start(&self) -> u32 { 0 }
///     fn memory_id(&self) -> &str { self.0 }
///     fn recorded_at(&self) -> Option<i64> { None }
/// }
/// let said = [S("a", 1), S("b", 2), S("a", 3), S("c", 3), S("d", 4)];
/// let met = by_source(&said, 4, |_| true, 2);
/// let sources: Vec<Vec<(&str, i64)>> =
///     met.iter().map(|s| s.iter().map(|x| (x.0, x.1)).collect()).collect();
/// // c and a (newest 3) before b; two sources back at most.
/// assert_eq!(sources, [vec![("c", 3)], vec![("a", 1), ("a", 3)]]);
/// ```
pub fn by_source<S: Said>(
    said: &[S],
    at: usize,
    meets: impl Fn(&S) -> bool,
    lookback: usize,
) -> Vec<Vec<&S>> {
    let later = &said[at];
    let mut grouped: BTreeMap<&str, Vec<&S>> = BTreeMap::new();
    for earlier in &said[..at] {
        if earlier.source_id() != later.source_id()
            && earlier.t_valid().is_some()
            && earlier.t_valid() < later.t_valid()
            && meets(earlier)
        {
            grouped
                .entry(earlier.source_id())
                .or_default()
                .push(earlier);
        }
    }
    let mut sources: Vec<(Option<i64>, &str, Vec<&S>)> = grouped
        .into_iter()
        .map(|(source, said)| {
            (
                said.iter().map(|s| s.t_valid()).max().flatten(),
                source,
                said,
            )
        })
        .collect();
    sources.sort_by(|a, b| (b.0, b.1).cmp(&(a.0, a.1)));
    sources
        .into_iter()
        .take(lookback)
        .map(|(_, _, said)| said)
        .collect()
}

/// The first statement of one source's `said`, in reading order, that `pick` accepts.
pub fn first<'a, S: Said>(said: &[&'a S], pick: impl Fn(&S) -> bool) -> Option<&'a S> {
    said.iter()
        .filter(|s| pick(s))
        .min_by_key(|s| (s.start(), s.memory_id()))
        .copied()
}

/// The link `kind` from `later` to `to`, valid from when `later` was written, recorded when
/// the later of the two was, with `why` as its evidence.
pub fn link<S: Said>(kind: LinkKind, tenant: &str, later: &S, to: &S, why: String) -> Link {
    Link {
        kind,
        tenant: tenant.to_string(),
        from: later.memory_id().to_string(),
        to: to.memory_id().to_string(),
        t_valid: later.t_valid(),
        t_invalid: None,
        recorded_at: later.recorded_at().max(to.recorded_at()),
        evidence: vec![why],
    }
}
