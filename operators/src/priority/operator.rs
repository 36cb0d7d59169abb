//! The dataflow: per-node constants outside the loop, the graph influence inside it.

use std::sync::Arc;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::Iterate;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use timely::progress::Timestamp;

use super::config::{EdgeRole, PriorityConfig};
use super::terms::{self, Base, Core, Inbound, State};
use super::{Now, PriorityEdge, PriorityNode, PriorityWeight, Usage};

/// A node inside the dataflow: 128 bits of SHA-256 of (tenant, id), so that the loop moves
/// integers rather than strings (a collision among n nodes has probability about n²/2¹²⁹).
type Handle = u128;

/// Inbound (evidence, penalising, demoting, influence) edges of a node, summed as a difference.
type Counts = (isize, isize, isize, isize);

/// The clock is copied to this many buckets, so that joining nodes with it spreads over workers.
const BUCKETS: u8 = 64;

pub(crate) fn handle(tenant: &str, id: &str) -> Handle {
    let mut hasher = Sha256::new();
    for part in [tenant, id] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Handle::from_le_bytes(bytes)
}

fn bucket(node: Handle) -> u8 {
    (node % BUCKETS as u128) as u8
}

/// What the constants of a node are assembled from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum Part {
    Node(PriorityNode, i64),
    Inbound(isize, isize, isize, isize),
    Usage(isize),
}

/// What a node's next bracket is computed from, in one round: its constants (with difference
/// (1, 1)) and its inbound influences, whose (lower, upper) contributions are the differences
/// of one `Sum` record, so that they add up in the arrangement itself.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum Term {
    Core(Core),
    Sum,
}

/// K* of every node (OIDA Eq. 1 at its fixed point), with its terms.
///
/// `nodes` has one record per memory node, `edges` the signed edges between them, `usages`
/// the retrievals reported by the query service, `now` one clock record. Any change to any
/// input (an edge added or removed, a tick of the clock) updates exactly the priorities it
/// moves; the result at each time equals a run from scratch on that time's inputs.
///
/// ```
/// use differential_dataflow::input::Input;
/// use epigraph_operators::EpistemicType;
/// use epigraph_operators::priority::{Fixed, Now, PriorityConfig, PriorityEdge, PriorityNode, Usage, priorities};
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let node = |id: &str, memory_type| PriorityNode {
///     tenant: "t".into(), id: id.into(), memory_type, created_ms: 0, open: false, blocking: 0, stakes: None, retired: false, metadata: false };
/// let nodes = vec![node("old", EpistemicType::Decision), node("new", EpistemicType::Decision)];
/// let edges = vec![PriorityEdge { tenant: "t".into(), from: "new".into(), to: "old".into(), rel_type: "SUPERSEDES".into() }];
/// let config = PriorityConfig::bundled();
/// let captured = timely::example(move |scope| {
///     let nodes = scope.new_collection_from(nodes).1;
///     let edges = scope.new_collection_from(edges).1;
///     let usages = scope.new_collection_from(Vec::<Usage>::new()).1;
///     let now = scope.new_collection_from(vec![Now(86_400_000)]).1;
///     priorities(nodes, edges, usages, now, &config).inner.capture()
/// });
/// let mut k: Vec<_> = captured.extract().into_iter().flat_map(|(_, v)| v)
///     .map(|(w, _, _)| (w.id, w.priority.k)).collect();
/// k.sort();
/// // The superseded decision pays a_s / η = 0.5 and is demoted, not deleted.
/// assert_eq!(k, [("new".to_string(), Fixed::ONE), ("old".to_string(), Fixed(500_000))]);
/// ```
pub fn priorities<'s, T>(
    nodes: VecCollection<'s, T, PriorityNode>,
    edges: VecCollection<'s, T, PriorityEdge>,
    usages: VecCollection<'s, T, Usage>,
    now: VecCollection<'s, T, Now>,
    config: &PriorityConfig,
) -> VecCollection<'s, T, PriorityWeight>
where
    T: Timestamp + Lattice + Ord,
{
    let config = Arc::new(config.clone());
    let roles: Arc<Vec<(String, EdgeRole)>> =
        Arc::new(config.edges.iter().map(|(n, r)| (n.clone(), *r)).collect());
    let nodes = nodes
        .map(|n| (handle(&n.tenant, &n.id), n))
        .reduce(|_node, records, out| out.push((records[0].0.clone(), 1)));
    let clock = now
        .map(|Now(t)| ((), t))
        .reduce(|(), times, out| out.push((*times[times.len() - 1].0, 1)))
        .flat_map(|((), t)| (0..BUCKETS).map(move |b| (b, t)));
    let edges = valid_edges(edges, nodes.clone().map(|(node, _)| node), roles.clone());
    let inbound = inbound_counts(edges.clone(), roles.clone());
    let used = usage_sums(usages, clock.clone(), config.clone());
    let based = node_terms(nodes, clock, inbound, used, config.clone());
    let cores = based.clone().map(|(node, (base, _, _))| (node, base.core));
    let fixed = fixpoint(cores, influence_edges(edges, roles), config.clone());
    fixed.join_map(based, move |_, state, (base, tenant, id)| PriorityWeight {
        tenant: tenant.clone(),
        id: id.clone(),
        priority: terms::priority(&config, base, state),
    })
}

/// Per node: Σ a_u·2^(−τ/half-life) over its retrievals at the clock's time.
fn usage_sums<'s, T>(
    usages: VecCollection<'s, T, Usage>,
    clock: VecCollection<'s, T, (u8, i64)>,
    config: Arc<PriorityConfig>,
) -> VecCollection<'s, T, (Handle, isize)>
where
    T: Timestamp + Lattice + Ord,
{
    usages
        .map(|u| {
            let node = handle(&u.tenant, &u.id);
            (bucket(node), (node, u.at_ms))
        })
        .join_map(clock, |_, (node, at), now| (*node, (*at, *now)))
        .explode(move |(node, (at, now))| {
            Some((node, terms::usage_term(&config, at, now) as isize))
        })
        .count()
}

/// Per node: its terms at the clock's time, with its tenant and id.
fn node_terms<'s, T>(
    nodes: VecCollection<'s, T, (Handle, PriorityNode)>,
    clock: VecCollection<'s, T, (u8, i64)>,
    inbound: VecCollection<'s, T, (Handle, Counts)>,
    used: VecCollection<'s, T, (Handle, isize)>,
    config: Arc<PriorityConfig>,
) -> VecCollection<'s, T, (Handle, (Base, String, String))>
where
    T: Timestamp + Lattice + Ord,
{
    nodes
        .map(|(node, n)| (bucket(node), (node, n)))
        .join_map(clock, |_, (node, n), now| {
            (*node, Part::Node(n.clone(), *now))
        })
        .concat(inbound.map(|(node, (a, b, c, d))| (node, Part::Inbound(a, b, c, d))))
        .concat(used.map(|(node, u)| (node, Part::Usage(u))))
        .reduce(move |_node, parts, out| {
            let (mut node, mut inbound, mut u) = (None, Inbound::default(), 0);
            for (part, _) in parts {
                match part {
                    Part::Node(n, now) => node = node.or(Some((n, *now))),
                    Part::Inbound(a, b, c, d) => {
                        inbound = Inbound {
                            evidence: *a as i64,
                            penalising: *b as i64,
                            demoting: *c as i64,
                            influence: *d as i64,
                        }
                    }
                    Part::Usage(sum) => u = *sum as i64,
                }
            }
            if let Some((n, now)) = node {
                let base = terms::base(&config, n, now, inbound, u);
                out.push(((base, n.tenant.clone(), n.id.clone()), 1));
            }
        })
}

/// `(from, to, role index)` of every configured edge between two distinct existing nodes, once.
fn valid_edges<'s, T>(
    edges: VecCollection<'s, T, PriorityEdge>,
    present: VecCollection<'s, T, Handle>,
    roles: Arc<Vec<(String, EdgeRole)>>,
) -> VecCollection<'s, T, (Handle, Handle, u8)>
where
    T: Timestamp + Lattice + Ord,
{
    edges
        .flat_map(move |e| {
            let role = roles.iter().position(|(name, _)| *name == e.rel_type)?;
            let (from, to) = (handle(&e.tenant, &e.from), handle(&e.tenant, &e.to));
            (from != to).then_some(((from, to, role as u8), ()))
        })
        .distinct()
        .map(|((from, to, role), ())| (from, (to, role)))
        .semijoin(present.clone())
        .map(|(from, (to, role))| (to, (from, role)))
        .semijoin(present)
        .map(|(to, (from, role))| (from, to, role))
}

/// Per node: inbound evidence, penalising, demoting and influence edges.
fn inbound_counts<'s, T>(
    edges: VecCollection<'s, T, (Handle, Handle, u8)>,
    roles: Arc<Vec<(String, EdgeRole)>>,
) -> VecCollection<'s, T, (Handle, Counts)>
where
    T: Timestamp + Lattice + Ord,
{
    edges
        .explode(move |(from, to, role)| {
            let role = roles[role as usize].1;
            let influences = (role.coefficient.0 != 0) as isize;
            let (at_target, at_source) = if role.demotes {
                ((0, 0, 1, 0), (0, 0, 0, influences))
            } else {
                let counts = (
                    role.evidence as isize,
                    role.penalises as isize,
                    0,
                    influences,
                );
                (counts, (0, 0, 0, 0))
            };
            [(to, at_target), (from, at_source)]
                .into_iter()
                .filter(|(_, c)| *c != (0, 0, 0, 0))
        })
        .count()
}

/// `(j, (i, COEFF))` for every edge through which j's priority acts on i's.
fn influence_edges<'s, T>(
    edges: VecCollection<'s, T, (Handle, Handle, u8)>,
    roles: Arc<Vec<(String, EdgeRole)>>,
) -> VecCollection<'s, T, (Handle, (Handle, i64))>
where
    T: Timestamp + Lattice + Ord,
{
    edges.flat_map(move |(from, to, role)| {
        let role = roles[role as usize].1;
        let coefficient = role.coefficient.0;
        match (coefficient, role.demotes) {
            (0, _) => None,
            (_, true) => Some((to, (from, coefficient))),
            (_, false) => Some((from, (to, coefficient))),
        }
    })
}

/// The bracket of every node at the fixed point.
fn fixpoint<'s, T>(
    cores: VecCollection<'s, T, (Handle, Core)>,
    influence: VecCollection<'s, T, (Handle, (Handle, i64))>,
    config: Arc<PriorityConfig>,
) -> VecCollection<'s, T, (Handle, State)>
where
    T: Timestamp + Lattice + Ord,
{
    let influence = influence.arrange_by_key();
    let start = cores.clone().map(|(node, _)| (node, State::START));
    start.iterate(|scope, state| {
        let influence = influence.enter(scope);
        let cores = cores
            .enter(scope)
            .explode(|(node, core)| Some(((node, Term::Core(core)), (1, 1))));
        let (on_edge, on_node) = (config.clone(), config);
        state
            .arrange_by_key()
            .join_core(influence, move |_from, state, (to, coefficient)| {
                let (lo, hi) = terms::influence(&on_edge, *coefficient, state.lo, state.hi);
                Some((*to, (lo as isize, hi as isize)))
            })
            .explode(|(to, sum)| Some(((to, Term::Sum), sum)))
            .concat(cores)
            .reduce(move |_node, terms, out| {
                let (mut core, mut sum) = (None, (0, 0));
                for (term, diff) in terms {
                    match term {
                        Term::Core(c) => core = Some(c),
                        Term::Sum => sum = (diff.0 as i64, diff.1 as i64),
                    }
                }
                if let Some(core) = core {
                    out.push((terms::step(&on_node, core, sum), 1isize));
                }
            })
    })
}
