//! The house rules of `docs/architecture.md`, checked on the repository itself: what each crate
//! may link, no `Result<_, String>` in production code, no source file over 1,000 lines, and no
//! two modules of a crate importing each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    epigraph_schemas::manifest_dir!()
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// The crates' source folders (not `tests/`, which is the test crate).
const CRATES: [&str; 8] = [
    "schemas",
    "operators",
    "sources",
    "sinks",
    "query",
    "pipelines",
    "generator",
    "benches",
];

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Production source files: under `src/`, not a test module file.
fn production_files() -> Vec<PathBuf> {
    CRATES
        .iter()
        .flat_map(|c| rust_files(&root().join(c).join("src")))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name != "tests.rs" && !p.components().any(|c| c.as_os_str() == "tests")
        })
        .collect()
}

/// The text of a file before its `#[cfg(test)]` module, if it has one at the end.
fn without_tests(text: &str) -> &str {
    match text.find("\n#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => text,
    }
}

fn normal_dependencies(package: &str) -> String {
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "-p",
            package,
        ])
        .current_dir(root())
        .output()
        .expect("running cargo tree");
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn links(tree: &str, krate: &str) -> bool {
    tree.lines()
        .any(|line| line.split_whitespace().next() == Some(krate))
}

#[test]
fn the_query_core_links_no_transport_and_the_sources_no_store() {
    let query = normal_dependencies("epigraph-query");
    assert!(
        links(&query, "neo4rs"),
        "the scan sees the query's own dependencies"
    );
    for transport in ["axum", "rmcp"] {
        assert!(
            !links(&query, transport),
            "epigraph-query links {transport}"
        );
    }
    let sources = normal_dependencies("epigraph-sources");
    assert!(links(&sources, "rdkafka"));
    for store in ["lancedb", "candle-core", "neo4rs", "axum"] {
        assert!(!links(&sources, store), "epigraph-sources links {store}");
    }
    let operators = normal_dependencies("epigraph-operators");
    for io in ["rdkafka", "neo4rs", "lancedb", "tokio"] {
        assert!(!links(&operators, io), "epigraph-operators links {io}");
    }
}

#[test]
fn no_production_function_returns_a_string_error() {
    let pattern = "Result<";
    let mut found = Vec::new();
    for path in production_files() {
        let text = std::fs::read_to_string(&path).expect("readable source");
        for (n, line) in without_tests(&text).lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if let Some(at) = code.find(pattern) {
                let rest = &code[at..];
                if rest.contains(", String>") && !rest.contains("HashMap<") {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, code));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "Result<_, String> in production code:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_production_source_file_passes_a_thousand_lines() {
    let long: Vec<String> = production_files()
        .into_iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(&path).ok()?.lines().count();
            (lines > 1000).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over 1,000 lines: {long:?}");
}

/// The top-level module of a source file inside its crate (`src/a/b.rs` → `a`, `src/a.rs` → `a`).
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

#[test]
fn no_two_modules_of_a_crate_import_each_other() {
    let mut circles = Vec::new();
    for krate in CRATES {
        let src = root().join(krate).join("src");
        let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in rust_files(&src) {
            let Some(module) = top_module(&src, &file) else {
                continue;
            };
            let text = std::fs::read_to_string(&file).expect("readable source");
            let top_level_file = file.parent() == Some(src.as_path());
            for line in without_tests(&text).lines() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                let mut prefixes = vec!["crate::"];
                if top_level_file {
                    prefixes.push("super::");
                }
                for prefix in prefixes {
                    for (at, _) in code.match_indices(prefix) {
                        let rest = &code[at + prefix.len()..];
                        // `crate::{a::X, b}` names several modules on one line.
                        let names: Vec<&str> = match rest.strip_prefix('{') {
                            Some(group) => group.split(',').collect(),
                            None => vec![rest],
                        };
                        for name in names {
                            let name: String = name
                                .trim_start()
                                .chars()
                                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                                .collect();
                            if !name.is_empty() && name != module && name != "self" {
                                uses.entry(module.clone()).or_default().insert(name);
                            }
                        }
                    }
                }
            }
        }
        for (a, targets) in &uses {
            for b in targets {
                if a < b && uses.get(b).is_some_and(|t| t.contains(a)) {
                    circles.push(format!("{krate}: {a} <-> {b}"));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "modules importing each other: {circles:?}"
    );
}

#[test]
fn the_operators_read_no_files_at_run_time() {
    let src = root().join("operators").join("src");
    let readers: Vec<String> = production_files()
        .into_iter()
        .filter(|p| p.starts_with(&src))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let code = without_tests(&text);
            ["std::fs", "File::open", "read_to_string(", "read_dir("]
                .iter()
                .any(|call| code.contains(call))
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(readers.is_empty(), "operators reading files: {readers:?}");
}
