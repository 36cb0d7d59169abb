use std::collections::BTreeMap;

use differential_dataflow::input::Input;
use timely::dataflow::operators::capture::{Capture, Extract};

use super::*;

const DAY: i64 = 86_400_000;

/// The updates of one epoch.
#[derive(Clone, Debug, Default)]
struct Epoch {
    nodes: Vec<(PriorityNode, isize)>,
    edges: Vec<(PriorityEdge, isize)>,
    usages: Vec<(Usage, isize)>,
    now: Vec<(Now, isize)>,
}

type Weights = BTreeMap<(String, String), Priority>;

/// Runs one dataflow over the epochs; the net priorities after each.
fn run(config: &PriorityConfig, epochs: Vec<Epoch>) -> Vec<Weights> {
    let n = epochs.len();
    let config = config.clone();
    let captured = timely::execute_directly(move |worker| {
        let (mut nodes, mut edges, mut usages, mut now, captured) =
            worker.dataflow::<u64, _, _>(|scope| {
                let (n_in, nodes) = scope.new_collection::<PriorityNode, isize>();
                let (e_in, edges) = scope.new_collection::<PriorityEdge, isize>();
                let (u_in, usages) = scope.new_collection::<Usage, isize>();
                let (t_in, now) = scope.new_collection::<Now, isize>();
                let out = priorities(nodes, edges, usages, now, &config)
                    .consolidate()
                    .inner
                    .capture();
                (n_in, e_in, u_in, t_in, out)
            });
        for (t, epoch) in epochs.into_iter().enumerate() {
            let t = t as u64;
            nodes.advance_to(t);
            edges.advance_to(t);
            usages.advance_to(t);
            now.advance_to(t);
            epoch
                .nodes
                .into_iter()
                .for_each(|(x, d)| nodes.update(x, d));
            epoch
                .edges
                .into_iter()
                .for_each(|(x, d)| edges.update(x, d));
            epoch
                .usages
                .into_iter()
                .for_each(|(x, d)| usages.update(x, d));
            epoch.now.into_iter().for_each(|(x, d)| now.update(x, d));
        }
        nodes.close();
        edges.close();
        usages.close();
        now.close();
        while worker.step() {}
        captured
    });
    let mut at: Vec<Vec<(PriorityWeight, isize)>> = vec![Vec::new(); n];
    for (_, updates) in captured.extract() {
        for (w, t, d) in updates {
            at[t as usize].push((w, d));
        }
    }
    let mut net: BTreeMap<PriorityWeight, isize> = BTreeMap::new();
    let mut out = Vec::new();
    for updates in at {
        for (w, d) in updates {
            *net.entry(w).or_default() += d;
        }
        net.retain(|_, d| *d != 0);
        let mut weights = Weights::new();
        for (w, d) in &net {
            assert_eq!(*d, 1, "one priority per node: {w:?}");
            let previous = weights.insert((w.tenant.clone(), w.id.clone()), w.priority);
            assert!(previous.is_none(), "one priority per node: {w:?}");
        }
        out.push(weights);
    }
    out
}

fn node(id: &str, memory_type: EpistemicType, created_ms: i64, open: bool) -> PriorityNode {
    PriorityNode {
        tenant: "t".into(),
        id: id.into(),
        memory_type,
        created_ms,
        open,
        blocking: 0,
        stakes: None,
        retired: false,
        metadata: false,
    }
}

fn edge(from: &str, to: &str, rel_type: &str) -> PriorityEdge {
    PriorityEdge {
        tenant: "t".into(),
        from: from.into(),
        to: to.into(),
        rel_type: rel_type.into(),
    }
}

fn key(id: &str) -> (String, String) {
    ("t".into(), id.into())
}

/// The records of a multiset, each as often as it is present.
fn live<D: Clone>(multiset: &BTreeMap<D, isize>) -> Vec<D> {
    multiset
        .iter()
        .flat_map(|(x, d)| std::iter::repeat_n(x, (*d).max(0) as usize))
        .cloned()
        .collect()
}

fn insert<D>(items: Vec<D>) -> Vec<(D, isize)> {
    items.into_iter().map(|x| (x, 1)).collect()
}

/// η·k = η·(s + h + u + e + g) − c − decay when k is not clamped, up to the rounding of the
/// bracket (a few millionths of η).
fn assert_explained(p: &Priority) {
    let eta = 100_000i128;
    let forces = (p.s.0 + p.h.0 + p.u.0 + p.e.0 + p.g.0) as i128;
    let rhs = eta * forces / 1_000_000 - p.c.0 as i128 - p.decay.0 as i128;
    let lhs = eta * p.k.0 as i128 / 1_000_000;
    if p.k > Fixed::ZERO && p.k < Fixed::ONE {
        assert!((lhs - rhs).abs() <= 2, "η·k = {lhs}, terms = {rhs}: {p:?}");
    }
}

#[test]
fn proposition_1_an_open_question_overtakes_an_observation_exactly_past_the_threshold() {
    let config = PriorityConfig::bundled();
    // At age 1 day (Δt = 1), h = 1/30 · 0.3 + S · 0.5 = 0.01 + S/2.
    let question = |stakes: i64| PriorityNode {
        stakes: Some(Fixed(stakes)),
        ..node("q", EpistemicType::Question, 0, true)
    };
    let observation = node("o", EpistemicType::Observation, 0, false);
    let epochs = vec![
        Epoch {
            nodes: insert(vec![question(6_080), observation]),
            now: insert(vec![Now(DAY)]),
            ..Epoch::default()
        },
        Epoch {
            nodes: vec![(question(6_080), -1), (question(6_100), 1)],
            ..Epoch::default()
        },
    ];
    let result = run(&config, epochs);
    let (below, above) = (&result[0], &result[1]);
    // K_O* = η s_O / (η + λ_O) = 0.04 / 0.115 = 0.3478261
    let o = below[&key("o")];
    assert_eq!(
        (o.k, o.k_upper, o.dt),
        (Fixed(347_826), Fixed(347_827), Fixed::ONE)
    );
    assert_eq!(above[&key("o")], o);
    // h = 0.01304 < 3/230: K_Q* = 0.1 · 0.31304 / 0.09 = 0.3478222 < K_O*
    let q = below[&key("q")];
    assert_eq!(
        (q.h, q.k, q.k_upper),
        (Fixed(13_040), Fixed(347_822), Fixed(347_823))
    );
    assert!(q.k_upper < o.k);
    // h = 0.01305 > 3/230: K_Q* = 0.1 · 0.31305 / 0.09 = 0.3478333 > K_O*
    let q = above[&key("q")];
    assert_eq!(
        (q.h, q.k, q.k_upper),
        (Fixed(13_050), Fixed(347_833), Fixed(347_834))
    );
    assert!(q.k > o.k_upper);
    // The decay force of the growing question is negative: λ_Q·Δt·K = −0.01 · 0.347833.
    assert_eq!(q.decay, Fixed(-3_479));
    assert_explained(&q);
    assert_explained(&o);
}

#[test]
fn a_contradicted_node_drops() {
    let config = PriorityConfig::bundled();
    let nodes = vec![
        node("a", EpistemicType::Evidence, 0, false),
        node("b", EpistemicType::Evidence, 0, false),
    ];
    let contradiction = edge("a", "b", "CONTRADICTS");
    let result = run(
        &config,
        vec![
            Epoch {
                nodes: insert(nodes),
                now: insert(vec![Now(DAY)]),
                ..Epoch::default()
            },
            Epoch {
                edges: insert(vec![contradiction]),
                ..Epoch::default()
            },
        ],
    );
    let (before, after) = (result[0][&key("b")], result[1][&key("b")]);
    // Alone: 0.08 / 0.102 = 0.7843137.
    assert_eq!(before.k, Fixed(784_313));
    assert_eq!(after.c, Fixed(10_000));
    assert!(after.g < Fixed::ZERO, "{after:?}");
    assert!(after.k_upper < before.k, "{before:?} → {after:?}");
    // (0.08 + 0.1·g − 0.01) / 0.102 = 0.6091950 with g = −0.2 · 0.6 · tanh(0.7843137)
    // = −0.0786211 (floats: f64 tanh); the bracket holds it.
    assert_eq!(after.g, Fixed(-78_622));
    assert_eq!((after.k, after.k_upper), (Fixed(609_194), Fixed(609_196)));
    assert_eq!(
        result[1][&key("a")],
        result[0][&key("a")],
        "the contradicting node is untouched"
    );
    assert_explained(&after);
}

#[test]
fn a_superseded_decision_drops_below_its_successor() {
    let config = PriorityConfig::bundled();
    let plans = vec![
        node("old", EpistemicType::Plan, 0, false),
        node("new", EpistemicType::Plan, 10 * DAY, false),
        node("d1", EpistemicType::Decision, 0, false),
        node("d2", EpistemicType::Decision, DAY, false),
    ];
    let result = run(
        &config,
        vec![
            Epoch {
                nodes: insert(plans),
                now: insert(vec![Now(10 * DAY)]),
                ..Epoch::default()
            },
            Epoch {
                edges: insert(vec![
                    edge("new", "old", "SUPERSEDES"),
                    edge("d2", "d1", "SUPERSEDES"),
                ]),
                ..Epoch::default()
            },
        ],
    );
    let (before, after) = (&result[0], &result[1]);
    assert_eq!(
        before[&key("d1")].k,
        before[&key("d2")].k,
        "two decisions at the prior 1"
    );
    assert_eq!(after[&key("d1")].k, Fixed(500_000), "(η·1 − a_s) / η");
    assert_eq!(after[&key("d2")].k, Fixed::ONE);
    assert!(after[&key("old")].k_upper < before[&key("old")].k);
    assert!(after[&key("old")].k_upper < after[&key("new")].k);
    assert!(
        after[&key("new")].g > Fixed::ZERO,
        "the successor inherits influence"
    );
    assert!(after[&key("new")].k > before[&key("new")].k);
    for p in after.values() {
        assert_explained(p);
    }
}

#[test]
fn an_answered_question_stops_rising_as_time_passes() {
    let config = PriorityConfig::bundled();
    let open = PriorityNode {
        blocking: 0,
        ..node("open", EpistemicType::Question, 0, true)
    };
    let answered = node("answered", EpistemicType::Question, 0, false);
    let mut epochs = vec![Epoch {
        nodes: insert(vec![open, answered]),
        now: insert(vec![Now(0)]),
        ..Epoch::default()
    }];
    for day in [1, 3, 10, 20] {
        let previous = epochs
            .last()
            .unwrap()
            .now
            .iter()
            .find(|(_, d)| *d > 0)
            .unwrap()
            .0;
        epochs.push(Epoch {
            now: vec![(previous, -1), (Now(day * DAY), 1)],
            ..Epoch::default()
        });
    }
    let result = run(&config, epochs);
    let answered: Vec<_> = result.iter().map(|w| w[&key("answered")]).collect();
    let open: Vec<_> = result.iter().map(|w| w[&key("open")]).collect();
    for (a, o) in answered.iter().zip(&open) {
        assert_eq!(a.h, Fixed::ZERO);
        assert_eq!((a.k, a.decay), (Fixed(300_000), Fixed::ZERO), "{a:?}");
        assert!(o.k >= a.k);
    }
    for pair in open.windows(2) {
        assert!(pair[1].h > pair[0].h && pair[1].k > pair[0].k, "{pair:?}");
    }
    // 20 days: h = 0.2; Δt capped at 5 days: K* = 0.1 · 0.5 / 0.05 = 1
    assert_eq!(
        (open[4].h, open[4].dt, open[4].k),
        (Fixed(200_000), Fixed(5_000_000), Fixed::ONE)
    );
}

/// A small deterministic generator (the same LCG as the resolve tests).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

const KINDS: [&str; 7] = [
    "SUPPORTS",
    "CONTRADICTS",
    "SUPERSEDES",
    "BLOCKS",
    "ANSWERS",
    "PRECEDES",
    "MENTIONS",
];

fn random_node(rng: &mut Lcg, i: usize) -> PriorityNode {
    let memory_type = EpistemicType::ALL[rng.below(9)];
    PriorityNode {
        tenant: format!("t{}", i % 2),
        id: format!("n{i}"),
        memory_type,
        created_ms: rng.below(40) as i64 * DAY / 2,
        open: memory_type == EpistemicType::Question && rng.below(3) > 0,
        blocking: rng.below(3) as u32,
        stakes: (rng.below(2) == 0).then(|| Fixed(rng.below(1_000_001) as i64)),
        retired: rng.below(4) == 0,
        metadata: rng.below(8) == 0,
    }
}

fn random_edge(rng: &mut Lcg, nodes: usize) -> PriorityEdge {
    let (from, to) = (rng.below(nodes), rng.below(nodes));
    PriorityEdge {
        tenant: format!("t{}", from % 2),
        from: format!("n{from}"),
        to: format!("n{to}"),
        rel_type: KINDS[rng.below(KINDS.len())].into(),
    }
}

#[test]
fn adding_then_removing_an_edge_restores_every_k_exactly() {
    let config = PriorityConfig::bundled();
    let mut rng = Lcg(7);
    let nodes: Vec<_> = (0..40).map(|i| random_node(&mut rng, i)).collect();
    let edges: Vec<_> = (0..160).map(|_| random_edge(&mut rng, 40)).collect();
    let mut epochs = vec![Epoch {
        nodes: insert(nodes),
        edges: insert(edges),
        now: insert(vec![Now(30 * DAY)]),
        ..Epoch::default()
    }];
    let in_t0 = |from: &str, to: &str, rel_type: &str| PriorityEdge {
        tenant: "t0".into(),
        ..edge(from, to, rel_type)
    };
    let added = [
        in_t0("n2", "n4", "CONTRADICTS"),
        in_t0("n4", "n6", "SUPPORTS"),
        in_t0("n8", "n10", "SUPERSEDES"),
    ];
    for e in &added {
        epochs.push(Epoch {
            edges: vec![(e.clone(), 1)],
            ..Epoch::default()
        });
        epochs.push(Epoch {
            edges: vec![(e.clone(), -1)],
            ..Epoch::default()
        });
    }
    let result = run(&config, epochs);
    for i in 0..added.len() {
        assert_ne!(
            result[2 * i + 1],
            result[0],
            "{:?} moves something",
            added[i]
        );
        assert_eq!(
            result[2 * i + 2],
            result[0],
            "removing {:?} restores every K",
            added[i]
        );
    }
}

#[test]
fn incremental_equals_from_scratch_and_the_reference_solver_on_random_histories() {
    let config = PriorityConfig::bundled();
    let mut rng = Lcg(42);
    let mut most_rounds = 0;
    for history in 0..12 {
        let size = 12 + rng.below(20);
        let mut live_nodes: BTreeMap<PriorityNode, isize> = BTreeMap::new();
        let mut live_edges: BTreeMap<PriorityEdge, isize> = BTreeMap::new();
        let mut live_usages: BTreeMap<Usage, isize> = BTreeMap::new();
        let mut now = Now(20 * DAY);
        let mut epochs = vec![Epoch {
            now: insert(vec![now]),
            ..Epoch::default()
        }];
        let mut expected = Vec::new();
        for round in 0..6 {
            let mut epoch = if round == 0 {
                epochs.pop().unwrap()
            } else {
                Epoch::default()
            };
            for _ in 0..size / 2 {
                let i = rng.below(size);
                let n = random_node(&mut rng, i);
                let present = live_nodes.get(&n).copied().unwrap_or(0) > 0;
                let diff = if present { -1 } else { 1 };
                *live_nodes.entry(n.clone()).or_default() += diff;
                epoch.nodes.push((n, diff));
            }
            for _ in 0..size {
                let e = random_edge(&mut rng, size);
                let present = live_edges.get(&e).copied().unwrap_or(0) > 0;
                let diff = if present && rng.below(2) == 0 { -1 } else { 1 };
                *live_edges.entry(e.clone()).or_default() += diff;
                epoch.edges.push((e, diff));
            }
            let used = rng.below(size);
            let u = Usage {
                tenant: format!("t{}", used % 2),
                id: format!("n{used}"),
                at_ms: now.0 - rng.below(30) as i64 * DAY / 3,
            };
            *live_usages.entry(u.clone()).or_default() += 1;
            epoch.usages.push((u, 1));
            if rng.below(2) == 0 {
                let later = Now(now.0 + rng.below(5) as i64 * DAY);
                epoch.now.extend([(now, -1), (later, 1)]);
                now = later;
            }
            epochs.push(epoch);
            let (nodes, edges, usages) = (live(&live_nodes), live(&live_edges), live(&live_usages));
            let reference = solve(&config, &nodes, &edges, &usages, now);
            most_rounds = most_rounds.max(reference.rounds);
            expected.push((reference.weights, (nodes, edges, usages)));
        }
        let incremental = run(&config, epochs);
        for (round, (weights, _)) in expected.iter().enumerate() {
            assert_eq!(
                &incremental[round], weights,
                "history {history}, epoch {round}"
            );
        }
        let (_, (nodes, edges, usages)) = expected.pop().unwrap();
        let scratch = run(
            &config,
            vec![Epoch {
                nodes: insert(nodes),
                edges: insert(edges),
                usages: insert(usages),
                now: insert(vec![now]),
            }],
        );
        assert_eq!(incremental.last(), scratch.last(), "history {history}");
        for p in scratch[0].values() {
            assert_explained(p);
            assert!(
                p.k <= p.k_upper && p.k_upper.0 - p.k.0 <= 4,
                "bracket {p:?}"
            );
        }
    }
    assert!(
        most_rounds <= config.contraction.rounds,
        "{most_rounds} rounds"
    );
}

#[test]
fn unknown_edges_self_loops_and_dangling_ends_are_ignored() {
    let config = PriorityConfig::bundled();
    let nodes = vec![node("a", EpistemicType::Hypothesis, 0, false)];
    let alone = solve(&config, &nodes, &[], &[], Now(DAY));
    let noisy = [
        edge("a", "a", "SUPPORTS"),
        edge("a", "ghost", "CONTRADICTS"),
        edge("ghost", "a", "CONTRADICTS"),
        edge("b", "a", "LIKES"),
    ];
    let result = run(
        &config,
        vec![Epoch {
            nodes: insert(nodes),
            edges: insert(noisy.to_vec()),
            now: insert(vec![Now(DAY)]),
            ..Epoch::default()
        }],
    );
    assert_eq!(result[0], alone.weights);
}

#[test]
fn the_value_before_the_clamp_orders_nodes_at_a_bound() {
    let config = PriorityConfig::bundled();
    // Two decisions (s = 1, λ = 0) stand at K = 1 whatever else holds; one of them is supported.
    // Two hypotheses are contradicted below 0, one by four statements and one by five.
    let mut nodes = vec![
        node("bare", EpistemicType::Decision, 0, false),
        node("backed", EpistemicType::Decision, 0, false),
        node("x", EpistemicType::Evidence, 0, false),
        node("doubted", EpistemicType::Hypothesis, 0, false),
        node("refuted", EpistemicType::Hypothesis, 0, false),
    ];
    let mut edges = vec![edge("x", "backed", "SUPPORTS")];
    for i in 0..5 {
        let critic = format!("critic{i}");
        nodes.push(node(&critic, EpistemicType::Evidence, 0, false));
        edges.push(edge(&critic, "refuted", "CONTRADICTS"));
        if i < 4 {
            edges.push(edge(&critic, "doubted", "CONTRADICTS"));
        }
    }
    let weights = &run(
        &config,
        vec![Epoch {
            nodes: insert(nodes),
            edges: insert(edges),
            now: insert(vec![Now(DAY)]),
            ..Epoch::default()
        }],
    )[0];
    let p = |id: &str| weights[&key(id)];
    assert_eq!((p("bare").k, p("backed").k), (Fixed::ONE, Fixed::ONE));
    assert_eq!(p("bare").unclamped, Fixed::ONE, "s = 1 and nothing else");
    // (η·(1 + 0.05 + g)) / η with g = 0.2 · tanh(0.7843137) = 0.1310…
    assert!(
        p("backed").unclamped > Fixed(1_180_000),
        "{:?}",
        p("backed")
    );
    assert_eq!((p("doubted").k, p("refuted").k), (Fixed::ZERO, Fixed::ZERO));
    assert!(p("refuted").unclamped < p("doubted").unclamped);
    assert!(p("doubted").unclamped < Fixed::ZERO);
    // Inside (0, 1) it is K itself.
    assert_eq!(p("x").unclamped, p("x").k);
    assert!(p("x").k > Fixed::ZERO && p("x").k < Fixed::ONE);
}

#[test]
fn open_questions_past_the_urgency_horizon_keep_their_order_before_the_clamp() {
    let config = PriorityConfig::bundled();
    // h = age/30 · 0.3 (+ 0.2 per node held up) reaches its cap 1 at 100 days; K* = 2·(0.3 + h)
    // reaches 1 at 20. Past both, the value before the clamps still rises with age and blocking.
    let now = 400 * DAY;
    let mut blocking = node("blocking", EpistemicType::Question, now - 200 * DAY, true);
    blocking.blocking = 1;
    let nodes = vec![
        node("year", EpistemicType::Question, now - 365 * DAY, true),
        node("months", EpistemicType::Question, now - 200 * DAY, true),
        blocking,
        node("weeks", EpistemicType::Question, now - 50 * DAY, true),
    ];
    let weights = &run(
        &config,
        vec![Epoch {
            nodes: insert(nodes),
            now: insert(vec![Now(now)]),
            ..Epoch::default()
        }],
    )[0];
    let p = |id: &str| weights[&key(id)];
    for id in ["year", "months", "blocking", "weeks"] {
        assert_eq!(p(id).k, Fixed::ONE, "{id}: {:?}", p(id));
    }
    assert_eq!((p("year").h, p("weeks").h), (Fixed::ONE, Fixed(500_000)));
    // 2 · (0.3 + 365/30 · 0.3) = 7.9; 2 · (0.3 + 200/30 · 0.3) = 4.6; + 2 · 0.2; 2 · (0.3 + 0.5).
    assert_eq!(p("year").unclamped, Fixed(7_900_000));
    assert_eq!(p("months").unclamped, Fixed(4_600_000));
    assert_eq!(p("blocking").unclamped, Fixed(5_000_000));
    assert_eq!(p("weeks").unclamped, Fixed(1_600_000));
}
