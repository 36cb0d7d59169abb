//! Canonical dumps of one view of both stores, and their difference.
//!
//! Neo4j: every `:Node` of the view (labels and every property) and every relationship that
//! touches one (type, end ids, every property). LanceDB: every row of every table in the
//! view's own folder, every column but `written_at` (the wall-clock time of the write, the one
//! value two runs of the same input cannot share), the vector kept as `f32`s. The view's name
//! (the topic prefix) is replaced by `<view>` wherever it appears, so that two views of the
//! same input compare equal.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use futures::TryStreamExt;
use lancedb::arrow::arrow_array::types::Float32Type;
use lancedb::arrow::arrow_array::{Array, FixedSizeListArray, RecordBatch, StringArray};
use lancedb::arrow::arrow_cast::display::{ArrayFormatter, FormatOptions};
use lancedb::query::ExecutableQuery;
use serde::Serialize;
use serde_json::Value;

/// Columns left out of the comparison: wall-clock stamps of the write.
pub const SKIPPED_COLUMNS: &[&str] = &["written_at"];

/// One LanceDB row: its columns as text (floats in shortest round-trip form) and its vector.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LanceRow {
    pub fields: BTreeMap<String, String>,
    pub vector: Option<Vec<f32>>,
}

/// Both stores of one view, canonically ordered.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Dump {
    /// Node id → every copy of it (`{"labels": [...], "props": {...}}`); more than one is a
    /// duplicate.
    pub nodes: BTreeMap<String, Vec<Value>>,
    /// `start -[TYPE {props}]-> end` → how many such relationships.
    pub relationships: BTreeMap<String, usize>,
    /// Table → row id → every row of that id.
    pub tables: BTreeMap<String, BTreeMap<String, Vec<LanceRow>>>,
}

impl Dump {
    /// Counts for the report: nodes, relationships, rows per table, rows with a vector.
    pub fn sizes(&self) -> Value {
        let tables: BTreeMap<&String, (usize, usize)> = self
            .tables
            .iter()
            .map(|(name, rows)| {
                let all = rows.values().flatten();
                let n = rows.values().map(Vec::len).sum();
                let vectors = all.filter(|r| r.vector.is_some()).count();
                (name, (n, vectors))
            })
            .collect();
        serde_json::json!({
            "nodes": self.nodes.values().map(Vec::len).sum::<usize>(),
            "relationships": self.relationships.values().sum::<usize>(),
            "tables": tables.iter().map(|(k, (n, v))| ((*k).clone(), serde_json::json!({"rows": n, "vectors": v}))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

fn canonical(value: Value, view: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace(view, "<view>")),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| canonical(v, view)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, canonical(v, view)))
                .collect::<BTreeMap<_, _>>()
                .into_iter()
                .collect(),
        ),
        other => other,
    }
}

/// Read the view's nodes and relationships.
pub async fn neo4j(graph: &neo4rs::Graph, view: &str, dump: &mut Dump) -> Result<()> {
    let mut rows = graph
        .execute(
            neo4rs::query(
                "MATCH (n:Node) WHERE n.view = $view \
                 RETURN n.id AS id, labels(n) AS labels, properties(n) AS props",
            )
            .param("view", view),
        )
        .await
        .context("reading nodes")?;
    while let Some(row) = rows.next().await.context("reading a node")? {
        let id: String = row.get("id").context("node id")?;
        let mut labels: Vec<String> = row.get("labels").context("labels")?;
        labels.sort();
        let props: Value = row.get("props").context("node properties")?;
        let node = serde_json::json!({"labels": labels, "props": canonical(props, view)});
        dump.nodes
            .entry(id.replace(view, "<view>"))
            .or_default()
            .push(node);
    }
    let mut rows = graph
        .execute(
            neo4rs::query(
                "MATCH (a:Node)-[r]->(b:Node) WHERE a.view = $view OR b.view = $view \
                 RETURN a.id AS a, type(r) AS t, b.id AS b, properties(r) AS props",
            )
            .param("view", view),
        )
        .await
        .context("reading relationships")?;
    while let Some(row) = rows.next().await.context("reading a relationship")? {
        let (a, t, b): (String, String, String) = (row.get("a")?, row.get("t")?, row.get("b")?);
        let props: Value = row.get("props").context("relationship properties")?;
        let key = format!(
            "{} -[{t} {}]-> {}",
            a.replace(view, "<view>"),
            canonical(props, view),
            b.replace(view, "<view>")
        );
        *dump.relationships.entry(key).or_default() += 1;
    }
    Ok(())
}

fn batch_rows(
    batch: &RecordBatch,
    view: &str,
    out: &mut BTreeMap<String, Vec<LanceRow>>,
) -> Result<()> {
    let options = FormatOptions::default().with_null("<null>");
    let schema = batch.schema();
    let mut formatters = Vec::new();
    let mut vectors = None;
    let mut ids = None;
    for (i, field) in schema.fields().iter().enumerate() {
        let column = batch.column(i);
        if field.name() == "vector" {
            vectors = column.as_any().downcast_ref::<FixedSizeListArray>();
        } else if SKIPPED_COLUMNS.contains(&field.name().as_str()) {
            continue;
        } else {
            if field.name() == "id" {
                ids = column.as_any().downcast_ref::<StringArray>();
            }
            formatters.push((
                field.name().clone(),
                ArrayFormatter::try_new(column.as_ref(), &options)?,
            ));
        }
    }
    let ids = ids.context("a table without an id column")?;
    for row in 0..batch.num_rows() {
        let fields = formatters
            .iter()
            .map(|(name, f)| {
                (
                    name.clone(),
                    f.value(row).to_string().replace(view, "<view>"),
                )
            })
            .collect();
        let vector = vectors.filter(|v| v.is_valid(row)).map(|v| {
            v.value(row)
                .as_any()
                .downcast_ref::<lancedb::arrow::arrow_array::PrimitiveArray<Float32Type>>()
                .map(|a| a.values().to_vec())
                .unwrap_or_default()
        });
        out.entry(ids.value(row).replace(view, "<view>"))
            .or_default()
            .push(LanceRow { fields, vector });
    }
    Ok(())
}

/// Read every row of every table of the LanceDB folder (the folder belongs to one view).
pub async fn lance(dir: &Path, view: &str, dump: &mut Dump) -> Result<()> {
    let db = lancedb::connect(&dir.display().to_string())
        .execute()
        .await
        .context("opening LanceDB")?;
    let names = db.table_names().execute().await?;
    for name in names {
        let table = db.open_table(&name).execute().await?;
        let batches: Vec<RecordBatch> = table.query().execute().await?.try_collect().await?;
        let rows = dump.tables.entry(name).or_default();
        for batch in &batches {
            batch_rows(batch, view, rows)?;
        }
    }
    Ok(())
}

/// What differs between a trial's dump and the clean one. Empty: exact.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Diff {
    pub nodes_lost: usize,
    pub nodes_extra: usize,
    pub nodes_duplicated: usize,
    /// Property (or `labels`) → nodes whose value differs.
    pub node_properties: BTreeMap<String, usize>,
    pub relationships_lost: usize,
    pub relationships_extra: usize,
    /// Table → (lost, extra, duplicated) rows.
    pub rows: BTreeMap<String, (usize, usize, usize)>,
    /// `table.column` → rows whose value differs.
    pub row_columns: BTreeMap<String, usize>,
    /// Table → rows whose vector is missing here but present in the clean run.
    pub vectors_missing: BTreeMap<String, usize>,
    /// Table → rows whose vector differs beyond the tolerance.
    pub vectors_differ: BTreeMap<String, usize>,
    /// Largest absolute difference of one vector component seen (within the tolerance or not).
    pub max_vector_delta: f32,
    /// A few examples, for the report.
    pub examples: Vec<String>,
}

impl Diff {
    pub fn exact(&self) -> bool {
        self.summary().is_empty()
    }

    /// One line: empty when exact.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        let mut count = |n: usize, what: &str| {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        };
        count(self.nodes_lost, "nodes lost");
        count(self.nodes_extra, "nodes extra");
        count(self.nodes_duplicated, "nodes duplicated");
        count(self.relationships_lost, "relationships lost");
        count(self.relationships_extra, "relationships extra");
        for (table, (lost, extra, dup)) in &self.rows {
            count(*lost, &format!("{table} rows lost"));
            count(*extra, &format!("{table} rows extra"));
            count(*dup, &format!("{table} rows duplicated"));
        }
        for (table, n) in &self.vectors_missing {
            count(*n, &format!("{table} vectors missing"));
        }
        for (table, n) in &self.vectors_differ {
            count(*n, &format!("{table} vectors differ"));
        }
        for (prop, n) in &self.node_properties {
            count(*n, &format!("nodes with another `{prop}`"));
        }
        for (column, n) in &self.row_columns {
            count(*n, &format!("rows with another `{column}`"));
        }
        parts.join(", ")
    }

    fn example(&mut self, line: String) {
        if self.examples.len() < 8 {
            self.examples.push(line);
        }
    }
}

/// Compare `got` with `want` (the clean run). Vector components may differ by `tolerance`.
pub fn diff(want: &Dump, got: &Dump, tolerance: f32) -> Diff {
    let mut d = Diff::default();
    for (id, copies) in &want.nodes {
        match got.nodes.get(id) {
            None => {
                d.nodes_lost += 1;
                d.example(format!("node lost: {id}"));
            }
            Some(have) => {
                if have.len() > 1 {
                    d.nodes_duplicated += 1;
                    d.example(format!("node duplicated: {id} ×{}", have.len()));
                }
                if have[0] != copies[0] {
                    let (a, b) = (&copies[0], &have[0]);
                    if a["labels"] != b["labels"] {
                        *d.node_properties.entry("labels".into()).or_default() += 1;
                    }
                    let empty = serde_json::Map::new();
                    let (pa, pb) = (
                        a["props"].as_object().unwrap_or(&empty),
                        b["props"].as_object().unwrap_or(&empty),
                    );
                    for key in pa.keys().chain(pb.keys().filter(|k| !pa.contains_key(*k))) {
                        if pa.get(key) != pb.get(key) {
                            *d.node_properties.entry(key.clone()).or_default() += 1;
                            d.example(format!(
                                "node {id}: {key} = {} in the clean run, {} here",
                                pa.get(key).unwrap_or(&Value::Null),
                                pb.get(key).unwrap_or(&Value::Null)
                            ));
                        }
                    }
                }
            }
        }
    }
    for (id, have) in &got.nodes {
        if !want.nodes.contains_key(id) {
            d.nodes_extra += 1;
            d.nodes_duplicated += usize::from(have.len() > 1);
            d.example(format!("node extra: {id}"));
        }
    }
    for (key, n) in &want.relationships {
        let have = got.relationships.get(key).copied().unwrap_or(0);
        if have < *n {
            d.relationships_lost += n - have;
            d.example(format!("relationship lost: {key}"));
        }
    }
    for (key, n) in &got.relationships {
        let had = want.relationships.get(key).copied().unwrap_or(0);
        if *n > had {
            d.relationships_extra += n - had;
            d.example(format!("relationship extra: {key}"));
        }
    }
    let empty = BTreeMap::new();
    let tables: std::collections::BTreeSet<&String> =
        want.tables.keys().chain(got.tables.keys()).collect();
    for table in tables {
        let (w, g) = (
            want.tables.get(table).unwrap_or(&empty),
            got.tables.get(table).unwrap_or(&empty),
        );
        let mut counts = (0, 0, 0);
        for (id, rows) in w {
            let Some(have) = g.get(id) else {
                counts.0 += 1;
                d.example(format!("{table} row lost: {id}"));
                continue;
            };
            counts.2 += usize::from(have.len() > 1);
            let (a, b) = (&rows[0], &have[0]);
            for (column, value) in &a.fields {
                if b.fields.get(column) != Some(value) {
                    *d.row_columns
                        .entry(format!("{table}.{column}"))
                        .or_default() += 1;
                    d.example(format!(
                        "{table} row {id}: {column} = {value:?} in the clean run, {:?} here",
                        b.fields.get(column)
                    ));
                }
            }
            match (&a.vector, &b.vector) {
                (Some(_), None) => {
                    *d.vectors_missing.entry(table.clone()).or_default() += 1;
                    d.example(format!("{table} row {id}: no vector"));
                }
                (None, Some(_)) => *d.vectors_differ.entry(table.clone()).or_default() += 1,
                (Some(x), Some(y)) => {
                    let delta = if x.len() == y.len() {
                        x.iter()
                            .zip(y)
                            .map(|(p, q)| (p - q).abs())
                            .fold(0.0f32, f32::max)
                    } else {
                        f32::INFINITY
                    };
                    d.max_vector_delta = d.max_vector_delta.max(delta);
                    let differs = if tolerance == 0.0 {
                        x.iter()
                            .map(|v| v.to_bits())
                            .ne(y.iter().map(|v| v.to_bits()))
                    } else {
                        delta > tolerance
                    };
                    if differs {
                        *d.vectors_differ.entry(table.clone()).or_default() += 1;
                        d.example(format!("{table} row {id}: vector differs by {delta}"));
                    }
                }
                (None, None) => {}
            }
        }
        for (id, have) in g {
            if !w.contains_key(id) {
                counts.1 += 1;
                counts.2 += usize::from(have.len() > 1);
                d.example(format!("{table} row extra: {id}"));
            }
        }
        if counts != (0, 0, 0) {
            d.rows.insert(table.clone(), counts);
        }
    }
    d
}
