//! `[governance]`: how long a proposal waits before it applies, per proposer kind and tenant
//! (read by the proposal desk of `epigraph serve`, `serve::proposals`).

use std::collections::BTreeMap;

use epigraph_schemas::proposals::{ProposerKind, Window};
use serde::{Deserialize, Serialize};

/// The review windows of proposals.
///
/// ```toml
/// [governance]
/// agent = "approval"        # an agent's proposal waits for a reviewer
/// person = "immediate"      # a person's applies at once
/// [governance.tenants.acme]
/// agent = "delay:600"       # in acme, an agent's applies after 10 minutes unless rejected
/// ```
///
/// A window is `immediate`, `delay:<seconds>` or `approval`.
///
/// ```
/// use epigraph::governance::{GovernanceConfig, TenantWindows};
/// use epigraph_schemas::proposals::{ProposerKind, Window};
/// let mut config = GovernanceConfig::default();
/// assert_eq!(config.window("acme", ProposerKind::Agent).unwrap(), Window::Approval);
/// config.tenants.insert("acme".into(), TenantWindows {
///     agent: Some("delay:60".into()), person: None });
/// assert_eq!(config.window("acme", ProposerKind::Agent).unwrap(), Window::Delay { seconds: 60 });
/// assert_eq!(config.window("acme", ProposerKind::Person).unwrap(), Window::Immediate);
/// config.person = "soon".into();
/// assert!(config.check().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GovernanceConfig {
    /// The window of agents' proposals (MCP, or `agent` tokens). Default `approval`: the model
    /// proposes, the server decides.
    pub agent: String,
    /// The window of people's proposals (`reviewer` tokens, the dashboard, development mode).
    /// Default `immediate`.
    pub person: String,
    /// Per-tenant windows, overriding the two above.
    pub tenants: BTreeMap<String, TenantWindows>,
    /// How often the server looks for delayed proposals whose window has passed, in ms.
    /// Default 1,000.
    pub tick_ms: u64,
    /// Longest text a proposal writes (a note, an edited text, a reason), in bytes. Default
    /// 20,000.
    pub max_text_bytes: usize,
}

/// One tenant's windows (unset: the global one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TenantWindows {
    /// Agents' proposals.
    pub agent: Option<String>,
    /// People's proposals.
    pub person: Option<String>,
}

impl Default for GovernanceConfig {
    fn default() -> Self {
        GovernanceConfig {
            agent: "approval".into(),
            person: "immediate".into(),
            tenants: BTreeMap::new(),
            tick_ms: 1_000,
            max_text_bytes: 20_000,
        }
    }
}

/// A window that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("governance window {text:?} ({place}) is not immediate, approval or delay:<seconds>")]
pub struct WindowError {
    /// The text as configured.
    pub text: String,
    /// Where it is configured.
    pub place: String,
}

impl GovernanceConfig {
    /// The window of `kind`'s proposals in `tenant`.
    pub fn window(&self, tenant: &str, kind: ProposerKind) -> Result<Window, WindowError> {
        let (text, place) = match (self.tenants.get(tenant), kind) {
            (Some(TenantWindows { agent: Some(w), .. }), ProposerKind::Agent) => {
                (w, format!("governance.tenants.{tenant}.agent"))
            }
            (
                Some(TenantWindows {
                    person: Some(w), ..
                }),
                ProposerKind::Person,
            ) => (w, format!("governance.tenants.{tenant}.person")),
            (_, ProposerKind::Agent) => (&self.agent, "governance.agent".to_string()),
            (_, ProposerKind::Person) => (&self.person, "governance.person".to_string()),
        };
        Window::parse(text).ok_or_else(|| WindowError {
            text: text.clone(),
            place,
        })
    }

    /// Every configured window parses.
    pub fn check(&self) -> Result<(), WindowError> {
        for kind in [ProposerKind::Agent, ProposerKind::Person] {
            self.window("", kind)?;
            for tenant in self.tenants.keys() {
                self.window(tenant, kind)?;
            }
        }
        Ok(())
    }
}
