//! Benchmarks of epigraph. `cargo bench --workspace --bench <name>` runs a criterion bench of
//! `benches/`; results are written down in `docs/benchmarks.md` with the machine and command.

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
