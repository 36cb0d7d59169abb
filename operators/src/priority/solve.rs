//! A plain sequential solver of the same fixed point, for tests, audits and the benchmark's
//! round counts. It applies the same integer rounds as the dataflow, so results are identical.

use std::collections::{BTreeMap, BTreeSet};

use super::config::PriorityConfig;
use super::terms::{self, Inbound, State};
use super::{Now, Priority, PriorityEdge, PriorityNode, Usage};

/// The fixed point of a whole graph at one `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// K* and its terms per (tenant, id).
    pub weights: BTreeMap<(String, String), Priority>,
    /// Rounds that changed some node before nothing changed.
    pub rounds: u32,
}

/// The fixed point of [`super::priorities`], computed sequentially (Jacobi rounds from [0, 1]).
///
/// ```
/// use epigraph_operators::EpistemicType;
/// use epigraph_operators::priority::{Fixed, Now, PriorityConfig, PriorityNode, solve};
/// let question = PriorityNode { tenant: "t".into(), id: "q".into(), memory_type: EpistemicType::Question,
///     created_ms: 0, open: true, blocking: 1, stakes: None, retired: false, metadata: false };
/// let solution = solve(&PriorityConfig::bundled(), &[question], &[], &[], Now(0));
/// // h = 1 · 0.2; K* = η(s + h) / η = 0.3 + 0.2
/// assert_eq!(solution.weights[&("t".into(), "q".into())].k, Fixed(500_000));
/// ```
pub fn solve(
    config: &PriorityConfig,
    nodes: &[PriorityNode],
    edges: &[PriorityEdge],
    usages: &[Usage],
    now: Now,
) -> Solution {
    let mut unique: BTreeMap<(String, String), &PriorityNode> = BTreeMap::new();
    for node in nodes {
        let key = (node.tenant.clone(), node.id.clone());
        let kept = unique.entry(key).or_insert(node);
        if node < *kept {
            *kept = node;
        }
    }
    let index: BTreeMap<&(String, String), usize> =
        unique.keys().enumerate().map(|(i, k)| (k, i)).collect();
    let find = |tenant: &str, id: &str| index.get(&(tenant.to_string(), id.to_string())).copied();
    let mut inbound = vec![Inbound::default(); unique.len()];
    let mut influences: Vec<Vec<(usize, i64)>> = vec![Vec::new(); unique.len()];
    let distinct: BTreeSet<&PriorityEdge> = edges.iter().collect();
    for edge in distinct {
        let Some(role) = config.edges.get(&edge.rel_type) else {
            continue;
        };
        let (Some(from), Some(to)) = (find(&edge.tenant, &edge.from), find(&edge.tenant, &edge.to))
        else {
            continue;
        };
        if from == to {
            continue;
        }
        let coefficient = role.coefficient.0;
        if role.demotes {
            inbound[to].demoting += 1;
            if coefficient != 0 {
                inbound[from].influence += 1;
                influences[from].push((to, coefficient));
            }
        } else {
            inbound[to].evidence += role.evidence as i64;
            inbound[to].penalising += role.penalises as i64;
            if coefficient != 0 {
                inbound[to].influence += 1;
                influences[to].push((from, coefficient));
            }
        }
    }
    let mut used = vec![0i64; unique.len()];
    for usage in usages {
        if let Some(i) = find(&usage.tenant, &usage.id) {
            used[i] += terms::usage_term(config, usage.at_ms, now.0);
        }
    }
    let bases: Vec<_> = unique
        .values()
        .enumerate()
        .map(|(i, node)| terms::base(config, node, now.0, inbound[i], used[i]))
        .collect();
    let mut states = vec![State::START; unique.len()];
    let mut rounds = 0;
    loop {
        let next: Vec<State> = (0..states.len())
            .map(|i| {
                let sum = influences[i].iter().fold((0, 0), |(lo, hi), (j, c)| {
                    let (l, h) = terms::influence(config, *c, states[*j].lo, states[*j].hi);
                    (lo + l, hi + h)
                });
                terms::step(config, &bases[i].core, sum)
            })
            .collect();
        if next == states {
            break;
        }
        states = next;
        rounds += 1;
    }
    let weights = unique
        .keys()
        .enumerate()
        .map(|(i, key)| (key.clone(), terms::priority(config, &bases[i], &states[i])))
        .collect();
    Solution { weights, rounds }
}
