//! The constants of the priority update: `ontology/priority.toml` for the weights, the
//! ontology for the type priors, temporal coefficients and edge coefficients, checked for
//! convergence when loaded (OIDA Appendix D).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::model::{EpistemicType, Fixed, SCALE};
use crate::ontology::Ontology;

const BUNDLED: &str = include_str!("../../../ontology/priority.toml");
const BUNDLED_PATH: &str = "ontology/priority.toml";

/// Why a priority configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum PriorityConfigError {
    /// The file could not be read.
    #[error("reading priority config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML for the priority section.
    #[error("parsing priority config {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        message: String,
    },
    /// A value is outside its domain.
    #[error("invalid priority config: {0}")]
    Invalid(String),
    /// η + λ·Δt reaches 0 for a growing type: Eq. 1 has no finite fixed point.
    #[error(
        "no fixed point for {memory_type:?}: η + λ·Δt = {eta} + ({lambda})·{days} = {denominator} ≤ 0; \
         lower priority.max_growth_days below {limit_days} days"
    )]
    NoFixedPoint {
        /// The type whose λ is too negative.
        memory_type: EpistemicType,
        /// η.
        eta: f64,
        /// Its λ.
        lambda: f64,
        /// The growth cap, in days.
        days: f64,
        /// η + λ·days.
        denominator: f64,
        /// The cap at which the denominator reaches 0.
        limit_days: f64,
    },
    /// The Gershgorin bound of Appendix D fails: the fixed point may not be unique.
    #[error(
        "not a contraction: the off-diagonal row sum η·a_g·g_scale·max|COEFF| / min(η + λΔt) = \
         {eta}·{influence_weight}·{scale}·{max_coefficient} / {min_denominator} = {bound} ≥ 1 \
         (by {excess}); the smallest denominator is {limiting}; lower priority.influence.weight \
         or priority.influence.scale"
    )]
    NotContracting {
        /// The bound (must be < 1).
        bound: f64,
        /// How far it is over: `bound − 1`.
        excess: f64,
        /// η.
        eta: f64,
        /// a_g.
        influence_weight: f64,
        /// g_scale.
        scale: f64,
        /// The largest |COEFF| of an edge type.
        max_coefficient: f64,
        /// min over types and Δt of η + λ·Δt.
        min_denominator: f64,
        /// Where that minimum is reached.
        limiting: String,
    },
}

/// `[priority]` of `ontology/priority.toml`, as written. See that file for the meaning of each
/// value and the seed section it comes from.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PrioritySettings {
    /// η of Eq. 1, in (0, 1]. Bundled: 0.1.
    pub eta: f64,
    /// Cap on Δt (days) for decaying types (λ > 0). Bundled: 365.
    pub max_decay_days: f64,
    /// Cap on Δt (days) for growing types (λ < 0), while open. Bundled: 5.
    pub max_growth_days: f64,
    /// Usage activation u.
    pub usage: UsageSettings,
    /// Evidence activation e.
    pub evidence: EvidenceSettings,
    /// Graph influence g.
    pub influence: InfluenceSettings,
    /// Contradiction penalty c.
    pub penalty: PenaltySettings,
    /// Open-question urgency h.
    pub urgency: UrgencySettings,
}

/// `[priority.usage]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UsageSettings {
    /// a_u: what one retrieval right now adds to u. Bundled: 0.05.
    pub weight: f64,
    /// Half-life of a retrieval's effect, days (σ = half-life / ln 2). Bundled: 7.
    pub half_life_days: f64,
}

/// `[priority.evidence]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EvidenceSettings {
    /// a_e: what one inbound evidence edge adds to e. Bundled: 0.05.
    pub weight: f64,
}

/// `[priority.influence]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InfluenceSettings {
    /// a_g. Bundled: 0.2.
    pub weight: f64,
    /// g_scale, the slope of tanh at 0. Bundled: 1.
    pub scale: f64,
}

/// `[priority.penalty]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PenaltySettings {
    /// a_c: per inbound `penalises` edge (CONTRADICTS, BLOCKS). Bundled: 0.01.
    pub weight: f64,
    /// a_s: per inbound demoting edge. Bundled: 0.05.
    pub supersession_weight: f64,
    /// a_r: once per memory object whose source document is retired (replaced by another
    /// document, or declared superseded, withdrawn, rejected, … in its own header) and that no
    /// superseding edge reaches (one drawn from the replacing document's statement costs a_s
    /// instead). Bundled: 0.05, the same as one superseding edge; 0 when the file leaves it out.
    #[serde(default)]
    pub retired_source_weight: f64,
    /// a_m: once per memory object that is its document's status line (`Status: Accepted`,
    /// typed a decision by its words, but a fact about the document). Bundled: 0.05; 0 when
    /// the file leaves it out.
    #[serde(default)]
    pub metadata_weight: f64,
    /// Edge types that demote their target; their influence flows target → source.
    /// Bundled: `["SUPERSEDES"]`.
    #[serde(default)]
    pub demoting: Vec<String>,
}

/// `[priority.urgency]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UrgencySettings {
    /// Weight of age per horizon. Bundled: 0.3.
    pub age_weight: f64,
    /// The age horizon, days. Bundled: 30.
    pub age_horizon_days: f64,
    /// Per blocked node. Bundled: 0.2.
    pub blocking_weight: f64,
    /// Per unit of stakes. Bundled: 0.5.
    pub stakes_weight: f64,
    /// Stakes of a question without stated stakes. Bundled: 0.
    pub stakes_default: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PriorityFile {
    priority: PrioritySettings,
}

/// How an edge type acts on priorities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeRole {
    /// Signed coefficient (Appendix B).
    pub coefficient: Fixed,
    /// Counted by e at its target.
    pub evidence: bool,
    /// Counted by c at its target with weight a_c.
    pub penalises: bool,
    /// Counted by c at its target with weight a_s; its influence flows target → source.
    pub demotes: bool,
    /// Counted in B (blocking) of its source's open-question urgency h.
    pub blocking: bool,
}

/// The Gershgorin bound of Appendix D for this configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Contraction {
    /// Upper bound on every off-diagonal row sum of the Jacobian of the solved update; < 1.
    pub bound: f64,
    /// min over types and Δt of η + λ·Δt.
    pub min_denominator: f64,
    /// Where that minimum is reached.
    pub limiting: String,
    /// Rounds after which the bracket [k, k_upper] is within a few millionths: ⌈ln 10⁶ / ln(1/bound)⌉.
    pub rounds: u32,
}

/// Per-type constants, in [`EpistemicType::ALL`] order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeConstants {
    /// s, the type prior (Table 1).
    pub prior: Fixed,
    /// λ, per day.
    pub lambda: Fixed,
}

/// A validated configuration, in fixed point.
#[derive(Clone, Debug, PartialEq)]
pub struct PriorityConfig {
    /// η.
    pub eta: Fixed,
    /// s and λ per type, in [`EpistemicType::ALL`] order.
    pub types: [TypeConstants; 9],
    /// Edge types by name; others are ignored.
    pub edges: BTreeMap<String, EdgeRole>,
    /// Δt cap for λ > 0, days.
    pub max_decay_days: Fixed,
    /// Δt cap for λ < 0, days.
    pub max_growth_days: Fixed,
    /// a_u.
    pub usage_weight: Fixed,
    /// Usage half-life, ms.
    pub usage_half_life_ms: i64,
    /// a_e.
    pub evidence_weight: Fixed,
    /// a_g.
    pub influence_weight: Fixed,
    /// g_scale.
    pub influence_scale: Fixed,
    /// a_c.
    pub penalty_weight: Fixed,
    /// a_s.
    pub supersession_weight: Fixed,
    /// a_r.
    pub retired_source_weight: Fixed,
    /// a_m.
    pub metadata_weight: Fixed,
    /// Urgency: weight of age per horizon.
    pub age_weight: Fixed,
    /// Urgency: the age horizon, days.
    pub age_horizon_days: Fixed,
    /// Urgency: per blocked node.
    pub blocking_weight: Fixed,
    /// Urgency: per unit of stakes.
    pub stakes_weight: Fixed,
    /// Urgency: stakes when none are stated.
    pub stakes_default: Fixed,
    /// The convergence bound, for logging.
    pub contraction: Contraction,
    /// Things worth logging that do not prevent running.
    pub warnings: Vec<String>,
}

impl PriorityConfig {
    /// The names of the configured edge types whose role satisfies `wanted`.
    ///
    /// ```
    /// use epigraph_operators::priority::PriorityConfig;
    /// let config = PriorityConfig::bundled();
    /// assert!(config.edge_types(|role| role.blocking).contains("BLOCKS"));
    /// assert!(config.edge_types(|role| role.demotes).contains("SUPERSEDES"));
    /// ```
    pub fn edge_types(&self, wanted: impl Fn(&EdgeRole) -> bool) -> BTreeSet<String> {
        self.edges
            .iter()
            .filter(|(_, role)| wanted(role))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// The index of a type in [`EpistemicType::ALL`].
pub(crate) fn type_index(memory_type: EpistemicType) -> usize {
    EpistemicType::ALL
        .iter()
        .position(|t| *t == memory_type)
        .expect("ALL lists every type")
}

impl PriorityConfig {
    /// The shipped configuration (`ontology/priority.toml` over the bundled ontology).
    ///
    /// ```
    /// use epigraph_operators::priority::{Fixed, PriorityConfig};
    /// let config = PriorityConfig::bundled();
    /// assert_eq!(config.eta, Fixed(100_000));
    /// assert!(config.contraction.bound < 1.0, "{:?}", config.contraction);
    /// assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    /// ```
    pub fn bundled() -> Self {
        Self::from_toml(BUNDLED, Path::new(BUNDLED_PATH), &Ontology::bundled())
            .expect("the bundled priority config is valid (tested)")
    }

    /// The bundled `priority.toml` over `ontology` (which may add types and edges the bundled
    /// constants must cover).
    pub fn bundled_over(ontology: &Ontology) -> Result<Self, PriorityConfigError> {
        Self::from_toml(BUNDLED, Path::new(BUNDLED_PATH), ontology)
    }

    /// Parses the text of a `priority.toml` (`path` names it in errors).
    pub fn from_toml(
        text: &str,
        path: &Path,
        ontology: &Ontology,
    ) -> Result<Self, PriorityConfigError> {
        let file: PriorityFile = toml::from_str(text).map_err(|e| PriorityConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Self::from_settings(&file.priority, ontology)
    }

    /// Validates settings against the ontology and runs the contraction check.
    ///
    /// ```
    /// use epigraph_operators::{Ontology, priority::{PriorityConfig, PriorityConfigError}};
    /// let mut settings = PriorityConfig::bundled_settings();
    /// settings.influence.weight = 2.0;
    /// let refused = PriorityConfig::from_settings(&settings, &Ontology::bundled()).unwrap_err();
    /// assert!(matches!(refused, PriorityConfigError::NotContracting { .. }), "{refused}");
    /// ```
    pub fn from_settings(
        settings: &PrioritySettings,
        ontology: &Ontology,
    ) -> Result<Self, PriorityConfigError> {
        check_domains(settings, ontology)?;
        let fixed = Fixed::from_f64;
        let types = EpistemicType::ALL.map(|t| {
            let spec = ontology.type_spec(t);
            TypeConstants {
                prior: fixed(spec.priority),
                lambda: fixed(spec.lambda),
            }
        });
        let (edges, mut warnings) = edge_roles(settings, ontology);
        let max_coefficient = edges
            .values()
            .map(|r| r.coefficient.0.abs())
            .max()
            .unwrap_or(0) as f64
            / SCALE as f64;
        let contraction = contraction(settings, ontology, max_coefficient)?;
        if contraction.bound > 0.9 {
            warnings.push(format!(
                "the contraction bound {:.3} is close to 1: the fixpoint needs about {} rounds",
                contraction.bound, contraction.rounds
            ));
        }
        if settings.influence.scale > 8.0 {
            warnings.push("priority.influence.scale > 8: tanh saturates at 8".into());
        }
        let u = &settings.urgency;
        Ok(PriorityConfig {
            eta: fixed(settings.eta),
            types,
            edges,
            max_decay_days: fixed(settings.max_decay_days),
            max_growth_days: fixed(settings.max_growth_days),
            usage_weight: fixed(settings.usage.weight),
            usage_half_life_ms: (settings.usage.half_life_days * 86_400_000.0).round() as i64,
            evidence_weight: fixed(settings.evidence.weight),
            influence_weight: fixed(settings.influence.weight),
            influence_scale: fixed(settings.influence.scale),
            penalty_weight: fixed(settings.penalty.weight),
            supersession_weight: fixed(settings.penalty.supersession_weight),
            retired_source_weight: fixed(settings.penalty.retired_source_weight),
            metadata_weight: fixed(settings.penalty.metadata_weight),
            age_weight: fixed(u.age_weight),
            age_horizon_days: fixed(u.age_horizon_days),
            blocking_weight: fixed(u.blocking_weight),
            stakes_weight: fixed(u.stakes_weight),
            stakes_default: fixed(u.stakes_default),
            contraction,
            warnings,
        })
    }

    /// The settings of the bundled file, to start a variant from.
    pub fn bundled_settings() -> PrioritySettings {
        let file: PriorityFile = toml::from_str(BUNDLED).expect("the bundled file parses (tested)");
        file.priority
    }

    /// s and λ of a type.
    pub fn type_constants(&self, memory_type: EpistemicType) -> TypeConstants {
        self.types[type_index(memory_type)]
    }
}

/// The role of every edge type of the ontology, and a warning per demoting name it lacks.
fn edge_roles(
    settings: &PrioritySettings,
    ontology: &Ontology,
) -> (BTreeMap<String, EdgeRole>, Vec<String>) {
    let demoting = &settings.penalty.demoting;
    let warnings = demoting
        .iter()
        .filter(|name| ontology.edge(name).is_none())
        .map(|name| {
            format!(
                "priority.penalty.demoting names {name:?}, which is not an edge type of the ontology"
            )
        })
        .collect();
    let roles = ontology
        .edges
        .iter()
        .map(|e| {
            let role = EdgeRole {
                coefficient: Fixed::from_f64(e.coefficient),
                evidence: e.evidence,
                penalises: e.penalises,
                demotes: demoting.contains(&e.name),
                blocking: e.blocking,
            };
            (e.name.clone(), role)
        })
        .collect();
    (roles, warnings)
}

/// Every weight is finite and non-negative, η ∈ (0, 1], horizons positive, priors in [0, 1].
fn check_domains(s: &PrioritySettings, ontology: &Ontology) -> Result<(), PriorityConfigError> {
    let invalid = |m: String| Err(PriorityConfigError::Invalid(m));
    if !(s.eta > 0.0 && s.eta <= 1.0) {
        return invalid(format!("eta = {} is not within (0, 1]", s.eta));
    }
    let non_negative = [
        ("max_decay_days", s.max_decay_days),
        ("max_growth_days", s.max_growth_days),
        ("usage.weight", s.usage.weight),
        ("evidence.weight", s.evidence.weight),
        ("influence.weight", s.influence.weight),
        ("penalty.weight", s.penalty.weight),
        ("penalty.supersession_weight", s.penalty.supersession_weight),
        (
            "penalty.retired_source_weight",
            s.penalty.retired_source_weight,
        ),
        ("penalty.metadata_weight", s.penalty.metadata_weight),
        ("urgency.age_weight", s.urgency.age_weight),
        ("urgency.blocking_weight", s.urgency.blocking_weight),
        ("urgency.stakes_weight", s.urgency.stakes_weight),
        ("urgency.stakes_default", s.urgency.stakes_default),
    ];
    for (name, value) in non_negative {
        if !(value.is_finite() && (0.0..=1e6).contains(&value)) {
            return invalid(format!("priority.{name} = {value} must be within [0, 10⁶]"));
        }
    }
    let positive = [
        ("usage.half_life_days", s.usage.half_life_days),
        ("influence.scale", s.influence.scale),
        ("urgency.age_horizon_days", s.urgency.age_horizon_days),
    ];
    for (name, value) in positive {
        if !(value.is_finite() && value > 1e-6 && value <= 1e6) {
            return invalid(format!("priority.{name} = {value} must be within (0, 10⁶]"));
        }
    }
    for spec in &ontology.types {
        if !(0.0..=1.0).contains(&spec.priority) || !(-1.0..=1.0).contains(&spec.lambda) {
            return invalid(format!(
                "type {:?}: the priority must lie within [0, 1] and λ within [-1, 1]",
                spec.memory_type
            ));
        }
    }
    Ok(())
}

/// Appendix D: the solved update K_i = clamp((η(s+h+u+e+g_i(K)) − c)/(η + λΔt)) has
/// |∂K_i/∂K_j| ≤ η·a_g·g_scale·|COEFF(j,i)| / (n_i·(η + λΔt)) (tanh' ≤ 1, clamp
/// non-expansive), and the n_i inbound edges of i sum to at most
/// η·a_g·g_scale·max|COEFF| / min(η + λΔt).
fn contraction(
    s: &PrioritySettings,
    ontology: &Ontology,
    max_coefficient: f64,
) -> Result<Contraction, PriorityConfigError> {
    let (mut min_denominator, mut limiting) = (s.eta, "η itself (λ ≥ 0 at Δt = 0)".to_string());
    for spec in ontology.types.iter().filter(|t| t.lambda < 0.0) {
        let denominator = s.eta + spec.lambda * s.max_growth_days;
        if denominator <= 0.0 {
            return Err(PriorityConfigError::NoFixedPoint {
                memory_type: spec.memory_type,
                eta: s.eta,
                lambda: spec.lambda,
                days: s.max_growth_days,
                denominator,
                limit_days: s.eta / -spec.lambda,
            });
        }
        if denominator < min_denominator {
            min_denominator = denominator;
            limiting = format!(
                "{} at Δt = {} days",
                spec.memory_type.name(),
                s.max_growth_days
            );
        }
    }
    let bound = s.eta * s.influence.weight * s.influence.scale * max_coefficient / min_denominator;
    if bound >= 1.0 {
        return Err(PriorityConfigError::NotContracting {
            bound,
            excess: bound - 1.0,
            eta: s.eta,
            influence_weight: s.influence.weight,
            scale: s.influence.scale,
            max_coefficient,
            min_denominator,
            limiting,
        });
    }
    let rounds = if bound <= 0.0 {
        1
    } else {
        ((SCALE as f64).ln() / (1.0 / bound).ln()).ceil() as u32
    };
    Ok(Contraction {
        bound,
        min_denominator,
        limiting,
        rounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_config_carries_the_seed_constants_and_contracts() {
        let config = PriorityConfig::bundled();
        let question = config.type_constants(EpistemicType::Question);
        let observation = config.type_constants(EpistemicType::Observation);
        assert_eq!(
            (config.eta, question.prior, question.lambda),
            (Fixed(100_000), Fixed(300_000), Fixed(-10_000))
        );
        assert_eq!(
            (observation.prior, observation.lambda),
            (Fixed(400_000), Fixed(15_000))
        );
        assert_eq!(config.edges["CONTRADICTS"].coefficient, Fixed(-600_000));
        assert!(config.edges["SUPERSEDES"].demotes && config.edges["SUPPORTS"].evidence);
        // 0.1 · 0.2 · 1 · 1.0 / (0.1 − 0.01 · 5) = 0.4
        assert!(
            (config.contraction.bound - 0.4).abs() < 1e-12,
            "{:?}",
            config.contraction
        );
        assert_eq!(config.contraction.limiting, "QUESTION at Δt = 5 days");
        assert_eq!(config.contraction.rounds, 16);
        assert_eq!(config.usage_half_life_ms, 7 * 86_400_000);
    }

    #[test]
    fn a_diverging_config_is_refused_with_the_failed_bound_and_the_excess() {
        let ontology = Ontology::bundled();
        let mut settings = PriorityConfig::bundled_settings();
        settings.influence.weight = 0.5;
        settings.influence.scale = 1.25;
        let error = PriorityConfig::from_settings(&settings, &ontology).unwrap_err();
        let PriorityConfigError::NotContracting { bound, excess, .. } = error else {
            panic!("{error}");
        };
        // 0.1 · 0.5 · 1.25 · 1.0 / 0.05 = 1.25
        assert!((bound - 1.25).abs() < 1e-12 && (excess - 0.25).abs() < 1e-12);
        let message = PriorityConfig::from_settings(&settings, &ontology)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("QUESTION at Δt = 5 days") && message.contains("by 0.25"),
            "{message}"
        );

        let mut settings = PriorityConfig::bundled_settings();
        settings.max_growth_days = 12.0;
        let error = PriorityConfig::from_settings(&settings, &ontology).unwrap_err();
        assert!(
            matches!(error, PriorityConfigError::NoFixedPoint { memory_type: EpistemicType::Question, limit_days, .. } if (limit_days - 10.0).abs() < 1e-9),
            "{error}"
        );
        let mut settings = PriorityConfig::bundled_settings();
        settings.eta = 0.0;
        assert!(matches!(
            PriorityConfig::from_settings(&settings, &ontology),
            Err(PriorityConfigError::Invalid(_))
        ));
    }

    #[test]
    fn a_close_call_is_a_warning_and_unknown_fields_are_refused() {
        let ontology = Ontology::bundled();
        let mut settings = PriorityConfig::bundled_settings();
        settings.influence.weight = 0.475; // bound 0.95
        settings.penalty.demoting.push("REPLACES".into());
        let config = PriorityConfig::from_settings(&settings, &ontology).unwrap();
        assert_eq!(config.warnings.len(), 2, "{:?}", config.warnings);
        assert!(config.warnings[0].contains("REPLACES"));
        assert!(config.warnings[1].contains("0.950"));
        let text = BUNDLED.replace("eta = 0.1", "eta = 0.1\ncolour = \"red\"");
        let error = PriorityConfig::from_toml(&text, Path::new("p.toml"), &ontology).unwrap_err();
        assert!(error.to_string().contains("colour"), "{error}");
    }
}
