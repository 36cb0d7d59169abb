//! The priority fixpoint (`priorities`, OIDA Eq. 1) on synthetic memory graphs: the initial
//! fixpoint from scratch, then batches of 1, 100 and 10 000 edge changes absorbed
//! incrementally, then one tick of the clock (which moves every node), in one run.
//!
//! ```text
//! cargo bench --workspace --bench priority                      # 100k and 1M nodes, 1 and 2 workers
//! EPIGRAPH_PRIORITY_NODES=100000 EPIGRAPH_PRIORITY_WORKERS=2 cargo bench --workspace --bench priority
//! ```
//! Without `EPIGRAPH_PRIORITY_NODES` the bench runs itself once per size and worker count, so
//! that each run's peak memory (VmHWM) is its own. Each run prints one JSON line. Generating
//! the graph is not timed. With `EPIGRAPH_PRIORITY_CHECK=1` the result is compared with the
//! sequential reference solver (`solve`), which also reports the number of rounds.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use differential_dataflow::input::{Input, InputSession};
use epigraph_operators::EpistemicType;
use epigraph_operators::priority::{
    Now, PriorityConfig, PriorityEdge, PriorityNode, PriorityWeight, Usage, priorities, solve,
};
use timely::dataflow::ProbeHandle;

const DAY: i64 = 86_400_000;
const EDGES_PER_NODE: u64 = 5;
const BATCHES: [u64; 3] = [1, 100, 10_000];

/// splitmix64: the i-th random number of a stream, without state, so that every worker can
/// generate its own share of the graph.
fn random(stream: u64, i: u64) -> u64 {
    let mut z = (stream << 40 ^ i).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Pick by weight: `table` lists (item, weight).
fn pick<T: Copy>(table: &[(T, u64)], r: u64) -> T {
    let total: u64 = table.iter().map(|(_, w)| w).sum();
    let mut at = r % total;
    for (item, weight) in table {
        if at < *weight {
            return *item;
        }
        at -= weight;
    }
    table[0].0
}

const TYPES: [(EpistemicType, u64); 9] = [
    (EpistemicType::Observation, 20),
    (EpistemicType::Evidence, 15),
    (EpistemicType::Narrative, 15),
    (EpistemicType::Plan, 10),
    (EpistemicType::Evaluation, 10),
    (EpistemicType::Question, 10),
    (EpistemicType::Decision, 8),
    (EpistemicType::Hypothesis, 7),
    (EpistemicType::Constraint, 5),
];

const KINDS: [(&str, u64); 11] = [
    ("SUPPORTS", 25),
    ("CONTRADICTS", 12),
    ("BASED_ON", 10),
    ("PRECEDES", 10),
    ("IMPLEMENTS", 8),
    ("REFINES", 8),
    ("SUPERSEDES", 8),
    ("DERIVES_FROM", 5),
    ("ENABLES", 5),
    ("BLOCKS", 5),
    ("ANSWERS", 4),
];

fn id(i: u64) -> String {
    format!("m{i:08}")
}

fn node(i: u64) -> PriorityNode {
    let memory_type = pick(&TYPES, random(1, i));
    let r = random(2, i);
    PriorityNode {
        tenant: "bench".into(),
        id: id(i),
        memory_type,
        created_ms: (r % 365) as i64 * DAY,
        open: memory_type == EpistemicType::Question && !r.is_multiple_of(3),
        blocking: (r >> 20) as u32 % 3,
        stakes: None,
        retired: false,
        metadata: false,
    }
}

/// The i-th edge of stream `stream` (3: the graph, 4: added later).
fn edge(stream: u64, i: u64, nodes: u64) -> PriorityEdge {
    let r = random(stream, i);
    PriorityEdge {
        tenant: "bench".into(),
        from: id(r % nodes),
        to: id((r >> 24) % nodes),
        rel_type: pick(&KINDS, r >> 48).into(),
    }
}

fn usage(i: u64, nodes: u64) -> Usage {
    let r = random(5, i);
    Usage {
        tenant: "bench".into(),
        id: id(r % nodes),
        at_ms: 365 * DAY - ((r >> 32) % (30 * DAY as u64)) as i64,
    }
}

/// Peak and current resident memory of this process, MiB.
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| (kb / 1024.0).round())
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let Some(nodes) = env("EPIGRAPH_PRIORITY_NODES") else {
        // One process per run, so that VmHWM is the run's own.
        let exe = std::env::current_exe().expect("own path");
        for (nodes, workers) in [(100_000, 1), (100_000, 2), (1_000_000, 1), (1_000_000, 2)] {
            let status = Command::new(&exe)
                .env("EPIGRAPH_PRIORITY_NODES", nodes.to_string())
                .env("EPIGRAPH_PRIORITY_WORKERS", workers.to_string())
                .status()
                .expect("the bench runs itself");
            assert!(
                status.success(),
                "{nodes} nodes, {workers} workers: {status}"
            );
        }
        return;
    };
    let workers = env("EPIGRAPH_PRIORITY_WORKERS").unwrap_or(2) as usize;
    let edges = nodes * EDGES_PER_NODE;
    let usages = nodes / 2;
    let report = Arc::new(Mutex::new(Vec::<(String, f64)>::new()));
    let (shared, outputs) = (report.clone(), Arc::new(Mutex::new(Vec::new())));
    let captured = outputs.clone();
    let check = env("EPIGRAPH_PRIORITY_CHECK") == Some(1);
    timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index() as u64, worker.peers() as u64);
        let mine = move |i: &u64| i % peers == index;
        let config = PriorityConfig::bundled();
        let probe = ProbeHandle::new();
        let captured = captured.clone();
        let mut inputs = worker.dataflow::<u64, _, _>(|scope| {
            let (nodes, n) = scope.new_collection::<PriorityNode, isize>();
            let (edges, e) = scope.new_collection::<PriorityEdge, isize>();
            let (usages, u) = scope.new_collection::<Usage, isize>();
            let (now, t) = scope.new_collection::<Now, isize>();
            let out = priorities(n, e, u, t, &config);
            if check {
                out.inspect(move |(w, _, d)| captured.lock().unwrap().push((w.clone(), *d)))
                    .probe_with(&probe);
            } else {
                out.probe_with(&probe);
            }
            Inputs {
                nodes,
                edges,
                usages,
                now,
                epoch: 0,
            }
        });
        let record = |name: &str, value: f64| {
            if index == 0 {
                shared.lock().unwrap().push((name.to_string(), value));
            }
        };
        // The graph, generated outside the clock.
        let my_nodes: Vec<_> = (0..nodes).filter(mine).map(node).collect();
        let my_edges: Vec<_> = (0..edges).filter(mine).map(|i| edge(3, i, nodes)).collect();
        let my_usages: Vec<_> = (0..usages).filter(mine).map(|i| usage(i, nodes)).collect();
        record("rss_after_generation_mib", memory_mib().1);
        let started = Instant::now();
        my_nodes.into_iter().for_each(|n| inputs.nodes.insert(n));
        my_edges.into_iter().for_each(|e| inputs.edges.insert(e));
        my_usages.into_iter().for_each(|u| inputs.usages.insert(u));
        if index == 0 {
            inputs.now.insert(Now(365 * DAY));
        }
        let sealed = inputs.seal();
        worker.step_while(|| probe.less_than(&sealed));
        record("initial_s", started.elapsed().as_secs_f64());
        record("peak_after_initial_mib", memory_mib().0);
        // Batches of edge changes: half new edges, half removals of existing ones.
        let (mut added, mut removed) = (0, 0);
        for batch in BATCHES {
            let started = Instant::now();
            for k in 0..batch {
                if k % 2 == 0 {
                    if mine(&added) {
                        inputs.edges.insert(edge(4, added, nodes));
                    }
                    added += 1;
                } else {
                    if mine(&removed) {
                        inputs.edges.remove(edge(3, removed, nodes));
                    }
                    removed += 1;
                }
            }
            let sealed = inputs.seal();
            worker.step_while(|| probe.less_than(&sealed));
            record(
                &format!("changes_{batch}_s"),
                started.elapsed().as_secs_f64(),
            );
        }
        // One day passes: every Δt, h and u moves.
        let started = Instant::now();
        if index == 0 {
            inputs.now.remove(Now(365 * DAY));
            inputs.now.insert(Now(366 * DAY));
        }
        let sealed = inputs.seal();
        worker.step_while(|| probe.less_than(&sealed));
        record("clock_tick_s", started.elapsed().as_secs_f64());
        record("peak_mib", memory_mib().0);
    })
    .expect("timely runs");
    let report = report.lock().unwrap().clone();
    let value = |name: &str| {
        report
            .iter()
            .find(|(n, _)| n == name)
            .map_or(f64::NAN, |(_, v)| *v)
    };
    let initial = value("initial_s");
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    let mut fields = vec![
        format!("\"nodes\": {nodes}"),
        format!("\"edges\": {edges}"),
        format!("\"usages\": {usages}"),
        format!("\"workers\": {workers}"),
    ];
    for (name, v) in &report {
        fields.push(format!("\"{name}\": {}", round(*v)));
    }
    for batch in BATCHES {
        let ratio = value(&format!("changes_{batch}_s")) / initial;
        fields.push(format!("\"ratio_{batch}_to_scratch\": {}", round(ratio)));
    }
    if check {
        let graph_nodes: Vec<_> = (0..nodes).map(node).collect();
        let mut graph_edges: Vec<_> = (0..edges).map(|i| edge(3, i, nodes)).collect();
        let changed: u64 = BATCHES.iter().sum();
        let (added, removed) = (changed.div_ceil(2), changed / 2);
        graph_edges.drain(..removed as usize);
        graph_edges.extend((0..added).map(|i| edge(4, i, nodes)));
        let graph_usages: Vec<_> = (0..usages).map(|i| usage(i, nodes)).collect();
        let config = PriorityConfig::bundled();
        let reference = solve(
            &config,
            &graph_nodes,
            &graph_edges,
            &graph_usages,
            Now(366 * DAY),
        );
        let mut net = std::collections::BTreeMap::<PriorityWeight, isize>::new();
        for (w, d) in outputs.lock().unwrap().drain(..) {
            *net.entry(w).or_default() += d;
        }
        net.retain(|_, d| *d != 0);
        let same = net.len() == reference.weights.len()
            && net.keys().all(|w| {
                reference.weights.get(&(w.tenant.clone(), w.id.clone())) == Some(&w.priority)
            });
        fields.push(format!("\"reference_rounds\": {}", reference.rounds));
        fields.push(format!("\"equals_reference\": {same}"));
    }
    println!("{{{}}}", fields.join(", "));
}

/// The four inputs of `priorities` and the epoch they are at.
struct Inputs {
    nodes: InputSession<u64, PriorityNode, isize>,
    edges: InputSession<u64, PriorityEdge, isize>,
    usages: InputSession<u64, Usage, isize>,
    now: InputSession<u64, Now, isize>,
    epoch: u64,
}

impl Inputs {
    /// Seals the current epoch on every input; the epoch to wait for.
    fn seal(&mut self) -> u64 {
        self.epoch += 1;
        self.nodes.advance_to(self.epoch);
        self.edges.advance_to(self.epoch);
        self.usages.advance_to(self.epoch);
        self.now.advance_to(self.epoch);
        self.nodes.flush();
        self.edges.flush();
        self.usages.flush();
        self.now.flush();
        self.epoch
    }
}
