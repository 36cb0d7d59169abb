//! The vocabularies the templates draw from: actions, features, metrics, causes, systems.

const ACTIONS: &[&str] = &[
    "move the nightly jobs to the new scheduler",
    "drop support for the legacy CSV export",
    "freeze hiring until the audit is done",
    "consolidate the staging environments",
    "sunset the v1 API",
    "run the pilot in two regions",
    "bring the on-call rotation in-house",
    "switch to usage-based pricing",
    "ship the mobile app behind a feature flag",
    "outsource the translation work",
    "rewrite the billing reconciliation job",
    "adopt trunk-based development",
    "cut the release cadence to every two weeks",
    "move customer data to the EU region",
];
const FEATURES: &[&str] = &[
    "the export wizard",
    "SSO",
    "the audit log",
    "bulk import",
    "the usage dashboard",
    "offline mode",
    "the new onboarding flow",
    "webhooks",
    "role-based access",
    "the reporting API",
];
const METRICS: &[&str] = &[
    "signup conversion",
    "p95 latency",
    "the error rate",
    "weekly active users",
    "ticket volume",
    "cloud spend",
    "trial-to-paid conversion",
    "NPS",
];
const CAUSES: &[&str] = &[
    "the new pricing page",
    "a misconfigured cache",
    "the holiday season",
    "the DNS change",
    "slow cold starts",
    "the vendor's rate limits",
    "the last schema migration",
    "a noisy neighbour on the shared cluster",
];
const SYSTEMS: &[&str] = &[
    "the ingestion service",
    "the search cluster",
    "the billing job",
    "the auth proxy",
    "the mobile API",
    "the reporting pipeline",
];

/// The vocabulary behind a value placeholder (`a`, `f`, `x`, `c`, `s`).
pub fn vocabulary(key: char) -> &'static [&'static str] {
    match key {
        'a' => ACTIONS,
        'f' => FEATURES,
        'x' => METRICS,
        'c' => CAUSES,
        's' => SYSTEMS,
        other => panic!("unknown placeholder {{{other}}}"),
    }
}
