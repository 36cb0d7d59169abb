//! Load run: events/s that a connector publishes (read its input + normalise + Avro encoding +
//! the idempotent producer, i.e. `epigraph ingest <source>`) next to a raw rdkafka
//! `FutureProducer` sending payloads of the same sizes, in the same run, against the real broker.
//!
//! `target/debug/publish-rate --source docs|events|mail|ics|slack|beir|pdf|docx|caldav|imap|webhook
//! --events 20000 [--registry URL]` (build with `cargo build --workspace --bins`). The input is
//! written first from a generated organisation (`epigraph gen`, seed 7) in the source's native
//! format — Markdown files, a webhook JSONL file, an mbox, .ics files, a Slack export folder, a
//! BEIR `corpus.jsonl`, one PDF or one Word file per event (the documents source reading them
//! with `sources::formats`), calendar objects on a real Radicale, messages in a real Dovecot's
//! maildir — and is not timed; reading it is. `webhook` POSTs every event to a real `epigraph
//! serve` (the debug binary; Neo4j up) and times the requests, which answer after Kafka's
//! acknowledgement ([`live`]). With `--registry` the connector writes
//! the schema registry's wire format (the contracts registered first, untimed) instead of
//! single-object encoding. Topics use the prefix `bench-<pid>` and are deleted at the end.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::{Parser, ValueEnum};
use epigraph_gen::labels::Event;
use epigraph_sources::Scan;
use epigraph_sources::docs::{DocsConfig, Manifest, scan_folder};
use epigraph_sources::kafka::{EventProducer, KafkaConfig, delete_topics, ensure_topics};
use futures::StreamExt;

mod live;
use futures::stream::FuturesUnordered;
use rdkafka::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};

/// Which connector to load.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Source {
    /// Markdown files in a folder.
    Docs,
    /// A JSONL file of webhook events (`ingest events`).
    Events,
    /// An mbox file.
    Mail,
    /// iCalendar files.
    Ics,
    /// A Slack export folder.
    Slack,
    /// A BEIR `corpus.jsonl`.
    Beir,
    /// One PDF per event in a folder (the documents source).
    Pdf,
    /// One Word file per event in a folder (the documents source).
    Docx,
    /// Calendar objects on a CalDAV server (Radicale), one full sync.
    Caldav,
    /// Messages in an IMAP mailbox (Dovecot), one sync.
    Imap,
    /// `POST /v1/ingest` of `epigraph serve`, `--in-flight` requests at a time.
    Webhook,
}

/// Options of the load run.
#[derive(Debug, Parser)]
struct Options {
    /// Connector.
    #[arg(long, value_enum, default_value = "docs")]
    source: Source,
    /// Items to generate and publish.
    #[arg(long, default_value_t = 20_000)]
    events: usize,
    /// Kafka bootstrap servers.
    #[arg(long, default_value = "127.0.0.1:9092")]
    bootstrap: String,
    /// A Confluent-compatible schema registry: publish its wire format
    /// (e.g. `http://127.0.0.1:8081/apis/ccompat/v7`, what `services.sh up` runs).
    #[arg(long)]
    registry: Option<String>,
    /// `webhook`: requests in flight.
    #[arg(long, default_value_t = 8)]
    in_flight: usize,
}

#[tokio::main]
async fn main() -> Result<()> {
    let options = Options::parse();
    let mut kafka = KafkaConfig {
        bootstrap: options.bootstrap.clone(),
        topic_prefix: format!("bench-{}", std::process::id()),
        ..KafkaConfig::default()
    };
    if let Some(url) = &options.registry {
        kafka.schema_registry.url = url.clone();
    }
    ensure_topics(&kafka).await?;
    let dir = tempfile_dir()?;
    let generated: Vec<Event> = epigraph_gen::Generator::new(epigraph_gen::GenConfig {
        seed: 7,
        events: options.events as u64,
        delete_share: 0.0,
        edit_share: 0.0,
        ..Default::default()
    })
    .map(|g| g.event)
    .collect();
    if let Source::Webhook = options.source {
        return webhook(&options, &generated).await;
    }
    write_input(options.source, &dir, &generated)?;

    // The producer registers the contracts when it starts (with a registry): not timed.
    let producer = EventProducer::new(&kafka)?;
    let (scan, read_secs) = match options.source {
        Source::Caldav => live::caldav(&generated, &dir).await?,
        Source::Imap => live::imap(&generated, &dir).await?,
        source => {
            let started = Instant::now();
            let scan = read_input(source, &dir)?;
            (scan, started.elapsed().as_secs_f64())
        }
    };
    // Sizes for the raw producer (single-object encoding; the registry frame is 5 bytes
    // shorter): not timed.
    let payload_sizes: Vec<usize> = scan
        .events
        .iter()
        .map(|e| epigraph_schemas::encode_event(e).map(|p| p.len()))
        .collect::<Result<_, _>>()?;
    let dead = scan.dead_letters.len();
    let publish_started = Instant::now();
    let report = producer.publish(scan.events, |_| {}).await?;
    let publish_secs = publish_started.elapsed().as_secs_f64();
    let connector_secs = read_secs + publish_secs;

    let raw = raw_rate(&kafka, &payload_sizes).await?;
    let connector_rate = report.published as f64 / connector_secs;
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let result = serde_json::json!({
        "source": format!("{:?}", options.source).to_lowercase(),
        "encoding": if options.registry.is_some() { "registry wire format" } else { "single-object" },
        "events": report.published,
        "dead_lettered": dead,
        "mean_payload_bytes": payload_sizes.iter().sum::<usize>() / payload_sizes.len().max(1),
        "connector_events_per_s": connector_rate.round(),
        "of_which_read_s": round3(read_secs),
        "of_which_publish_s": round3(publish_secs),
        "raw_rdkafka_events_per_s": raw.round(),
        "ratio_connector_to_raw": round3(connector_rate / raw),
    });
    println!("{result}");
    delete_topics(&kafka).await?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// The webhook's run: requests to `epigraph serve` against a raw producer of the same payload
/// sizes.
async fn webhook(options: &Options, generated: &[Event]) -> Result<()> {
    if options.registry.is_some() {
        anyhow::bail!(
            "--registry is for the connectors; the webhook follows serve's configuration"
        );
    }
    let (accepted, secs, sizes, env) = live::webhook(generated, options.in_flight).await?;
    let raw = raw_rate(&env.kafka, &sizes).await?;
    let rate = accepted as f64 / secs;
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let result = serde_json::json!({
        "source": "webhook",
        "encoding": "single-object",
        "events": accepted,
        "dead_lettered": 0,
        "mean_payload_bytes": sizes.iter().sum::<usize>() / sizes.len().max(1),
        "connector_events_per_s": rate.round(),
        "in_flight": options.in_flight,
        "requests_s": round3(secs),
        "raw_rdkafka_events_per_s": raw.round(),
        "ratio_connector_to_raw": round3(rate / raw),
    });
    println!("{result}");
    Ok(())
}

/// The generated organisation in the connector's native format.
fn write_input(source: Source, dir: &Path, events: &[Event]) -> Result<()> {
    match source {
        // Filled on their servers by `live`.
        Source::Caldav | Source::Imap | Source::Webhook => {}
        Source::Docs => {
            for (i, e) in events.iter().enumerate() {
                std::fs::write(
                    dir.join(format!("doc-{i:07}.md")),
                    format!("# {}\n\n{}", e.title, e.body),
                )?;
            }
        }
        Source::Beir => {
            let mut out = String::new();
            for (i, e) in events.iter().enumerate() {
                let line = serde_json::json!({"_id": format!("doc-{i:07}"), "title": e.title, "text": e.body});
                out.push_str(&line.to_string());
                out.push('\n');
            }
            std::fs::write(dir.join("corpus.jsonl"), out)?;
        }
        Source::Pdf => {
            for (i, e) in events.iter().enumerate() {
                std::fs::write(dir.join(format!("doc-{i:07}.pdf")), pdf(&e.title, &e.body))?;
            }
        }
        Source::Docx => {
            for (i, e) in events.iter().enumerate() {
                std::fs::write(
                    dir.join(format!("doc-{i:07}.docx")),
                    docx(&e.title, &e.body)?,
                )?;
            }
        }
        Source::Events => {
            let mut out = String::new();
            for e in events {
                out.push_str(&serde_json::to_string(e)?);
                out.push('\n');
            }
            std::fs::write(dir.join("events.jsonl"), out)?;
        }
        Source::Mail => {
            let mut out = String::new();
            for (i, e) in events.iter().enumerate() {
                let address = e
                    .authors
                    .first()
                    .map_or("nobody@example.org", |p| p.address.as_str());
                let text = live::message(i, e).replace("\nFrom ", "\n>From ");
                write!(out, "From {address} Mon Jan  5 09:00:00 2026\n{text}\n")?;
            }
            std::fs::write(dir.join("bench.mbox"), out)?;
        }
        Source::Ics => {
            for (chunk, events) in events.chunks(100).enumerate() {
                let mut out = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:bench\r\n");
                for (i, e) in events.iter().enumerate() {
                    out.push_str(&live::vevent(&format!("bench-{chunk}-{i}"), e)?);
                }
                out.push_str("END:VCALENDAR\r\n");
                std::fs::write(dir.join(format!("cal-{chunk:05}.ics")), out)?;
            }
        }
        Source::Slack => {
            let mut users = std::collections::BTreeMap::new();
            for e in events {
                for p in e.authors.iter().chain(&e.participants) {
                    let id = format!("U{:08}", users.len());
                    users
                        .entry(p.address.clone())
                        .or_insert((id, p.name.clone()));
                }
            }
            let users_json: Vec<serde_json::Value> = users
                .iter()
                .map(|(address, (id, name))| {
                    serde_json::json!({"id": id, "name": address, "real_name": name,
                        "profile": {"email": address}})
                })
                .collect();
            std::fs::write(dir.join("users.json"), serde_json::to_vec(&users_json)?)?;
            std::fs::write(
                dir.join("channels.json"),
                r#"[{"id": "C1", "name": "general", "members": []}]"#,
            )?;
            std::fs::create_dir_all(dir.join("general"))?;
            let mut days: std::collections::BTreeMap<String, Vec<serde_json::Value>> =
                std::collections::BTreeMap::new();
            for (i, e) in events.iter().enumerate() {
                let user = e
                    .authors
                    .first()
                    .and_then(|p| users.get(&p.address))
                    .map_or("U00000000".to_string(), |(id, _)| id.clone());
                let seconds = e.occurred_at / 1000;
                let day = chrono_day(e.occurred_at);
                days.entry(day).or_default().push(serde_json::json!({
                    "type": "message", "user": user, "text": e.body,
                    "ts": format!("{seconds}.{i:06}"),
                }));
            }
            for (day, messages) in days {
                std::fs::write(
                    dir.join("general").join(format!("{day}.json")),
                    serde_json::to_vec(&messages)?,
                )?;
            }
        }
    }
    Ok(())
}

/// What `epigraph ingest <source>` reads from the input.
fn read_input(source: Source, dir: &Path) -> Result<Scan> {
    let now = epigraph_schemas::now_millis();
    Ok(match source {
        Source::Docs | Source::Pdf | Source::Docx => {
            let scan = scan_folder(
                dir,
                "bench",
                &DocsConfig::default(),
                &Manifest::default(),
                1024,
            )?;
            Scan {
                events: scan.events,
                dead_letters: scan.dead_letters,
            }
        }
        Source::Events => {
            let text = std::fs::read_to_string(dir.join("events.jsonl"))?;
            let mut scan = Scan::default();
            for line in text.lines() {
                let event = epigraph::serve::webhook::parse_event(line.as_bytes(), "bench", now)
                    .map_err(anyhow::Error::msg)?;
                scan.events.push(event);
            }
            scan
        }
        Source::Mail => epigraph_sources::mail::read_mbox(
            &dir.join("bench.mbox"),
            "bench",
            &Default::default(),
            1024,
        )?,
        Source::Ics => {
            let config = epigraph_sources::ics::IcsConfig {
                window_start: Some("2025-01-01".into()),
                window_end: Some("2028-01-01".into()),
                ..Default::default()
            };
            epigraph_sources::ics::read_ics(dir, "bench", &config, 1024, now)?
        }
        Source::Slack => {
            epigraph_sources::slack::read_slack_export(dir, "bench", &Default::default(), 1024)?
        }
        Source::Beir => epigraph_sources::beir::read_corpus(dir, "bench", 1024)?,
        Source::Caldav | Source::Imap | Source::Webhook => {
            anyhow::bail!("{source:?} is read from its server (live.rs)")
        }
    })
}

/// A one-page PDF (PDF 1.4, Helvetica, an uncompressed content stream) with the title and the
/// body's lines, ASCII only: what a simple report writer produces.
fn pdf(title: &str, body: &str) -> Vec<u8> {
    let escape = |t: &str| -> String {
        t.chars()
            .filter(|c| c.is_ascii() && !c.is_ascii_control())
            .flat_map(|c| match c {
                '(' | ')' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect()
    };
    let mut content = String::from("BT /F1 11 Tf 14 TL 56 800 Td\n");
    for line in std::iter::once(title)
        .chain(body.lines())
        .filter(|l| !l.trim().is_empty())
    {
        writeln!(content, "({}) Tj T*", escape(line)).expect("write to a String");
    }
    content.push_str("ET\n");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>".to_string(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}endstream", content.len()),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        writeln!(table, "{offset:010} 00000 n ").expect("write to a String");
    }
    out.extend_from_slice(table.as_bytes());
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A Word file holding `word/document.xml` only (what the reader reads): a Title paragraph and
/// one paragraph per body line.
fn docx(title: &str, body: &str) -> Result<Vec<u8>> {
    use std::io::Write as _;
    let escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>",
    );
    write!(
        xml,
        "<w:p><w:pPr><w:pStyle w:val=\"Title\"/></w:pPr><w:r><w:t>{}</w:t></w:r></w:p>",
        escape(title)
    )?;
    for line in body.lines() {
        write!(xml, "<w:p><w:r><w:t>{}</w:t></w:r></w:p>", escape(line))?;
    }
    xml.push_str("</w:body></w:document>");
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    writer.start_file("word/document.xml", options)?;
    writer.write_all(xml.as_bytes())?;
    Ok(writer.finish()?.into_inner())
}

/// `20260105T090000Z`.
pub(crate) fn chrono_basic(ms: i64) -> String {
    let (y, m, d) = epigraph_operators::extract::civil_date(ms);
    let s = ms.rem_euclid(86_400_000) / 1000;
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// `2026-01-05`.
fn chrono_day(ms: i64) -> String {
    let (y, m, d) = epigraph_operators::extract::civil_date(ms);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Events/s of a bare `FutureProducer` (same settings as ours) sending zero-filled payloads of
/// the given sizes to a bench topic.
async fn raw_rate(kafka: &KafkaConfig, sizes: &[usize]) -> Result<f64> {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &kafka.bootstrap)
        .set("enable.idempotence", "true")
        .set("compression.type", &kafka.compression)
        .set("linger.ms", kafka.linger_ms.to_string())
        .set("queue.buffering.max.messages", "200000")
        .create()?;
    let topic = format!("{}.raw", kafka.topic_prefix);
    let payloads: Vec<(String, Vec<u8>)> = sizes
        .iter()
        .enumerate()
        .map(|(i, n)| (format!("bench/raw-{i}"), vec![0u8; *n]))
        .collect();
    let started = Instant::now();
    let mut in_flight = FuturesUnordered::new();
    for (key, payload) in &payloads {
        in_flight.push(producer.send(
            FutureRecord::to(&topic).key(key).payload(payload),
            Duration::from_secs(30),
        ));
        if in_flight.len() >= 10_000 {
            in_flight
                .next()
                .await
                .expect("in flight")
                .map_err(|(e, _)| e)?;
        }
    }
    while let Some(result) = in_flight.next().await {
        result.map_err(|(e, _)| e)?;
    }
    Ok(payloads.len() as f64 / started.elapsed().as_secs_f64())
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("epigraph-publish-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
