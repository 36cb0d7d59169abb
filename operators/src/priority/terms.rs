//! The terms of Eq. 1 for one node and one `now`, and one round of the solved update, in
//! integers. Shared by the dataflow ([`super::priorities`]) and the sequential reference
//! solver ([`super::solve`]), so the two agree bit for bit.

use serde::{Deserialize, Serialize};

use super::config::{PriorityConfig, type_index};
use super::fixed::{Round, div, mul, narrow, pow2_neg, tanh};
use super::{Priority, PriorityNode};
use crate::model::{EpistemicType, Fixed, SCALE};

const DAY_MS: i128 = 86_400_000;

/// How many inbound edges of each role a node has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Inbound {
    /// Evidence edges (e).
    pub evidence: i64,
    /// Contradicting or blocking edges (c, weight a_c).
    pub penalising: i64,
    /// Demoting edges (c, weight a_s).
    pub demoting: i64,
    /// Influence edges (the n of the mean in g).
    pub influence: i64,
}

/// What one round of a node needs besides its neighbours: the part of [`Base`] that enters
/// the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct Core {
    /// s + h + u + e.
    pub forces: i64,
    /// c.
    pub c: i64,
    /// η + λ·Δt (> 0).
    pub denominator: i64,
    /// Inbound influence edges.
    pub influence: i64,
}

/// Everything in K* of one node except its neighbours, for one `now`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct Base {
    /// What the rounds use.
    pub core: Core,
    /// The terms, for the output.
    pub s: i64,
    pub h: i64,
    /// h before its clamp to [0, 1] (an open question's urgency keeps growing with age past it).
    pub h_unclamped: i64,
    pub u: i64,
    pub e: i64,
    pub dt: i64,
    pub lambda: i64,
}

/// One round's result for a node: the bracket [lo, hi] around K* and g at lo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct State {
    pub lo: i64,
    pub hi: i64,
    pub g: i64,
}

impl State {
    /// Where every node starts: the whole of [0, 1].
    pub const START: State = State {
        lo: 0,
        hi: SCALE,
        g: 0,
    };
}

/// Age in days (millionths) of something created at `created_ms`, at `now_ms`; never negative.
pub(crate) fn age_days(created_ms: i64, now_ms: i64) -> i64 {
    let age_ms = (now_ms as i128 - created_ms as i128).max(0);
    narrow(div(age_ms * SCALE as i128, DAY_MS, Round::Down))
}

/// a_u · 2^(−τ / half-life) for one retrieval at `at_ms` (a retrieval after `now` counts as now).
pub(crate) fn usage_term(config: &PriorityConfig, at_ms: i64, now_ms: i64) -> i64 {
    let tau = (now_ms as i128 - at_ms as i128).max(0);
    let half_lives = div(
        tau * SCALE as i128,
        config.usage_half_life_ms.max(1) as i128,
        Round::Down,
    );
    mul(
        config.usage_weight.0,
        pow2_neg(narrow(half_lives)),
        Round::Down,
    )
}

/// The node's constants at `now_ms`, given its inbound edge counts and its summed usage term.
pub(crate) fn base(
    config: &PriorityConfig,
    node: &PriorityNode,
    now_ms: i64,
    inbound: Inbound,
    u: i64,
) -> Base {
    let constants = config.types[type_index(node.memory_type)];
    let age = age_days(node.created_ms, now_ms);
    // Growth (λ < 0) holds only while the node is open: an answered question stops rising.
    let lambda = if constants.lambda.0 < 0 && !node.open {
        0
    } else {
        constants.lambda.0
    };
    let cap = if lambda < 0 {
        config.max_growth_days.0
    } else {
        config.max_decay_days.0
    };
    let dt = age.min(cap);
    let denominator = (config.eta.0 + mul(lambda, dt, Round::Down)).max(1);
    let h_unclamped = urgency_unclamped(config, node, age);
    let h = h_unclamped.clamp(0, SCALE);
    let e = config.evidence_weight.0 * inbound.evidence;
    let c = config.penalty_weight.0 * inbound.penalising
        + config.supersession_weight.0 * inbound.demoting
        // a_r stands in for the supersession a replacing document's header implies; an object
        // that a statement of it supersedes already pays a_s for that (epistemic::replaced).
        + config.retired_source_weight.0 * (node.retired && inbound.demoting == 0) as i64
        + config.metadata_weight.0 * node.metadata as i64;
    let s = constants.prior.0;
    Base {
        core: Core {
            forces: s + h + u + e,
            c,
            denominator,
            influence: inbound.influence,
        },
        s,
        h,
        h_unclamped,
        u,
        e,
        dt,
        lambda,
    }
}

/// age/horizon · w_age + B · w_B + S · w_S for an open QUESTION, else 0: h before its clamp.
fn urgency_unclamped(config: &PriorityConfig, node: &PriorityNode, age: i64) -> i64 {
    if !node.open || node.memory_type != EpistemicType::Question {
        return 0;
    }
    let by_age = narrow(div(
        age as i128 * config.age_weight.0 as i128,
        config.age_horizon_days.0.max(1) as i128,
        Round::Down,
    ));
    let stakes = node.stakes.unwrap_or(config.stakes_default).0;
    let raw = by_age as i128
        + node.blocking as i128 * config.blocking_weight.0 as i128
        + mul(stakes, config.stakes_weight.0, Round::Down) as i128;
    narrow(raw)
}

/// COEFF · T(g_scale · K_j) of one inbound edge, as the pair (lower, upper): the lower end uses
/// the source's lower K for a positive coefficient and its upper K for a negative one, so each
/// end is monotone in the bracket and the rounding always widens it.
pub(crate) fn influence(config: &PriorityConfig, coefficient: i64, lo: i64, hi: i64) -> (i64, i64) {
    let scale = config.influence_scale.0;
    let t = |k: i64, round| tanh(mul(scale, k, round), round);
    if coefficient >= 0 {
        (
            mul(coefficient, t(lo, Round::Down), Round::Down),
            mul(coefficient, t(hi, Round::Up), Round::Up),
        )
    } else {
        (
            mul(coefficient, t(hi, Round::Up), Round::Down),
            mul(coefficient, t(lo, Round::Down), Round::Up),
        )
    }
}

/// One round of the solved update for a node: from its constants and the sums Σ of its
/// inbound influences (lower, upper), the new bracket [⌊K(Σ_lo)⌋, ⌈K(Σ_hi)⌉] with
/// K(Σ) = clamp((η·(s+h+u+e + a_g·Σ/n) − c) / (η + λΔt), 0, 1), evaluated exactly in
/// integers and rounded once.
pub(crate) fn step(config: &PriorityConfig, base: &Core, sum: (i64, i64)) -> State {
    let scale = SCALE as i128;
    let n = base.influence.max(1) as i128;
    let solve = |sum: i64, round| {
        // Multiplied through by n·SCALE, so that g is not rounded on the way.
        let pulled = config.eta.0 as i128
            * (base.forces as i128 * n * scale + config.influence_weight.0 as i128 * sum as i128);
        let numerator = pulled - base.c as i128 * n * scale * scale;
        let k = div(numerator, base.denominator as i128 * n * scale, round);
        narrow(k.clamp(0, scale))
    };
    let g = narrow(div(
        config.influence_weight.0 as i128 * sum.0 as i128,
        n * scale,
        Round::Down,
    ));
    State {
        lo: solve(sum.0, Round::Down),
        hi: solve(sum.1, Round::Up),
        g,
    }
}

/// The output record of a node at its fixed point.
pub(crate) fn priority(config: &PriorityConfig, base: &Base, state: &State) -> Priority {
    let lambda_dt = mul(base.lambda, base.dt, Round::Down);
    // Inside (0, 1) the bracket's lower end is K* itself; at a bound, the value the clamps cut
    // (K's, and h's: an open question older than the urgency horizon keeps rising).
    let unclamped = if 0 < state.lo && state.lo < SCALE && base.h == base.h_unclamped {
        state.lo
    } else {
        let forces = base.core.forces - base.h + base.h_unclamped;
        let pulled = config.eta.0 as i128 * (forces as i128 + state.g as i128);
        let numerator = pulled - base.core.c as i128 * SCALE as i128;
        narrow(div(numerator, base.core.denominator as i128, Round::Down))
    };
    Priority {
        k: Fixed(state.lo),
        k_upper: Fixed(state.hi),
        s: Fixed(base.s),
        h: Fixed(base.h),
        u: Fixed(base.u),
        e: Fixed(base.e),
        g: Fixed(state.g),
        c: Fixed(base.core.c),
        dt: Fixed(base.dt),
        decay: Fixed(mul(lambda_dt, state.lo, Round::Down)),
        unclamped: Fixed(unclamped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// h = clamp(age/horizon · w_age + B · w_B + S · w_S, 0, 1) for an open QUESTION, else 0.
    fn urgency(config: &PriorityConfig, node: &PriorityNode, age: i64) -> i64 {
        urgency_unclamped(config, node, age).clamp(0, SCALE)
    }

    fn node(memory_type: EpistemicType, open: bool) -> PriorityNode {
        PriorityNode {
            tenant: "t".into(),
            id: "n".into(),
            memory_type,
            created_ms: 0,
            open,
            blocking: 0,
            stakes: None,
            retired: false,
            metadata: false,
        }
    }

    #[test]
    fn urgency_follows_appendix_c_and_is_clamped() {
        let config = PriorityConfig::bundled();
        let mut question = node(EpistemicType::Question, true);
        // 15 days: 15/30 · 0.3 = 0.15
        assert_eq!(
            urgency(&config, &question, age_days(0, 15 * 86_400_000)),
            150_000
        );
        question.blocking = 2;
        question.stakes = Some(Fixed(400_000));
        // 0.15 + 2 · 0.2 + 0.4 · 0.5 = 0.75
        assert_eq!(urgency(&config, &question, 15_000_000), 750_000);
        question.blocking = 9;
        assert_eq!(urgency(&config, &question, 15_000_000), SCALE);
        assert_eq!(
            urgency(&config, &node(EpistemicType::Question, false), 15_000_000),
            0
        );
        assert_eq!(
            urgency(&config, &node(EpistemicType::Decision, true), 15_000_000),
            0
        );
    }

    #[test]
    fn a_lone_node_sits_at_the_closed_form_fixed_point() {
        let config = PriorityConfig::bundled();
        let observation = node(EpistemicType::Observation, false);
        let base = base(&config, &observation, 86_400_000, Inbound::default(), 0);
        assert_eq!((base.dt, base.core.denominator), (SCALE, 115_000));
        let state = step(&config, &base.core, (0, 0));
        // η·s / (η + λΔt) = 0.04 / 0.115 = 0.347826…
        assert_eq!((state.lo, state.hi), (347_826, 347_827));
        assert_eq!(
            step(&config, &base.core, (0, 0)),
            state,
            "a lone node is done in one round"
        );
    }

    #[test]
    fn usage_halves_every_half_life_and_future_retrievals_count_as_now() {
        let config = PriorityConfig::bundled();
        let week = 7 * 86_400_000;
        assert_eq!(usage_term(&config, 0, 0), 50_000);
        assert_eq!(usage_term(&config, 0, week), 25_000);
        assert_eq!(usage_term(&config, 0, 2 * week), 12_500);
        assert_eq!(usage_term(&config, week, 0), 50_000);
    }

    #[test]
    fn influence_brackets_widen_and_flip_with_the_sign() {
        let config = PriorityConfig::bundled();
        let (lo, hi) = influence(&config, SCALE, 500_000, 500_000);
        // tanh(0.5) = 0.4621171…, a table point: both ends agree
        assert_eq!((lo, hi), (462_117, 462_117));
        let (lo, hi) = influence(&config, -600_000, 0, SCALE);
        // −0.6 · tanh(1) = −0.6 · 0.761594 = −0.4569564 at the lower end (the source's upper
        // K), −0.6 · tanh(0) = 0 at the upper end
        assert_eq!((lo, hi), (-456_957, 0));
    }
}
