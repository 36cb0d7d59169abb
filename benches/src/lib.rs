//! Benchmarks of epigraph. `cargo bench --workspace --bench <name>` runs a criterion bench of
//! `benches/`; results are written down in `docs/benchmarks.md` with the machine and command.
//! The long jobs of `src/bin/` share what they need to drive the `epigraph` program from here.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

pub mod soak_plot;

/// The `epigraph` program built beside the bench (`EPIGRAPH_BIN` overrides it).
pub use epigraph_tests::binary as epigraph_binary;

/// Runs `epigraph <args>` with `envs` to its end; its standard output, or an error with its
/// standard error when it fails.
///
/// ```
/// let missing = std::path::Path::new("/nonexistent/epigraph");
/// let err = epigraph_benches::run_epigraph(missing, [("RUST_LOG", "warn")], &["run"]).unwrap_err();
/// assert!(err.to_string().contains("running epigraph [\"run\"]"));
/// ```
pub fn run_epigraph<K, V>(
    bin: &Path,
    envs: impl IntoIterator<Item = (K, V)>,
    args: &[&str],
) -> Result<String>
where
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    let output = Command::new(bin)
        .args(args)
        .envs(envs)
        .output()
        .with_context(|| format!("running epigraph {args:?}"))?;
    if !output.status.success() {
        bail!(
            "epigraph {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// A synthetic document body of about `bytes` bytes, deterministic in `seed`.
///
/// ```
/// let body = epigraph_benches::synthetic_body(7, 200);
/// assert!(body.len() >= 200);
/// assert_eq!(body, epigraph_benches::synthetic_body(7, 200));
/// ```
pub fn synthetic_body(seed: u64, bytes: usize) -> String {
    const WORDS: &[&str] = &[
        "we",
        "decided",
        "budget",
        "launch",
        "moved",
        "to",
        "june",
        "the",
        "board",
        "approved",
        "plan",
        "risk",
        "question",
        "open",
        "customer",
        "team",
        "hire",
        "engineers",
        "deadline",
        "constraint",
        "must",
        "not",
    ];
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = String::with_capacity(bytes + 16);
    while out.len() < bytes {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push_str(WORDS[(state >> 33) as usize % WORDS.len()]);
        out.push(if (state >> 20).is_multiple_of(11) {
            '.'
        } else {
            ' '
        });
    }
    out
}
