//! The connectors that read a server: CalDAV (a real Radicale), IMAP (a real Dovecot) and the
//! webhook (a real `epigraph serve`). Filling the server is not timed; reading it (one full sync)
//! or posting to it is.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use epigraph_gen::labels::Event;
use epigraph_sources::Scan;
use epigraph_tests::servers::{Dovecot, Radicale, free_port};
use futures::StreamExt;
use futures::stream::FuturesUnordered;

const USER: &str = "bench";
const PASSWORD: &str = "bench-pw";
/// Requests in flight while filling a server.
const CONCURRENCY: usize = 8;

/// One generated event as an iCalendar VEVENT (no VCALENDAR around it).
pub fn vevent(uid: &str, e: &Event) -> Result<String> {
    let escape = |t: &str| {
        t.replace('\\', "\\\\")
            .replace(';', "\\;")
            .replace(',', "\\,")
            .replace('\n', "\\n")
    };
    let mut out = String::new();
    write!(
        out,
        "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{}\r\n\
         SUMMARY:{}\r\nDESCRIPTION:{}\r\n",
        super::chrono_basic(e.occurred_at),
        escape(&e.title),
        escape(&e.body)
    )?;
    for p in e.authors.iter().take(1) {
        write!(out, "ORGANIZER;CN={}:mailto:{}\r\n", p.name, p.address)?;
    }
    for p in &e.participants {
        write!(
            out,
            "ATTENDEE;CN={};PARTSTAT=ACCEPTED:mailto:{}\r\n",
            p.name, p.address
        )?;
    }
    out.push_str("END:VEVENT\r\n");
    Ok(out)
}

/// One generated event as an RFC 5322 message (headers and a plain-text body).
pub fn message(i: usize, e: &Event) -> String {
    let from = e.authors.first();
    let (name, address) = from.map_or(("Nobody", "nobody@example.org"), |p| {
        (p.name.as_str(), p.address.as_str())
    });
    let to: Vec<String> = e
        .participants
        .iter()
        .map(|p| format!("{} <{}>", p.name, p.address))
        .collect();
    format!(
        "From: {name} <{address}>\nTo: {}\nSubject: {}\nMessage-ID: <bench-{i}@example.org>\n\
         Date: Mon, 5 Jan 2026 09:00:00 +0000\nContent-Type: text/plain; charset=utf-8\n\n{}\n",
        if to.is_empty() {
            "team@example.org".to_string()
        } else {
            to.join(", ")
        },
        e.title,
        e.body
    )
}

/// CalDAV: every event a calendar object of a Radicale collection (PUT, untimed); timed: one
/// full sync as `epigraph ingest caldav` does it (sync-collection REPORT, multiget, parsing).
pub async fn caldav(events: &[Event], dir: &Path) -> Result<(Scan, f64)> {
    let server = Radicale::start(tempfile::tempdir()?, free_port(), USER, PASSWORD);
    let url = server.collection();
    let client = reqwest::Client::new();
    let mkcalendar = reqwest::Method::from_bytes(b"MKCALENDAR")?;
    let status = client
        .request(mkcalendar, &url)
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .await?
        .status();
    if !status.is_success() {
        bail!("MKCALENDAR {url}: {status}");
    }
    let fill = Instant::now();
    let mut in_flight = FuturesUnordered::new();
    for (i, e) in events.iter().enumerate() {
        let body = format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:bench\r\n{}END:VCALENDAR\r\n",
            vevent(&format!("bench-{i}"), e)?
        );
        in_flight.push(
            client
                .put(format!("{url}bench-{i}.ics"))
                .basic_auth(USER, Some(PASSWORD))
                .header("Content-Type", "text/calendar; charset=utf-8")
                .body(body)
                .send(),
        );
        if in_flight.len() >= CONCURRENCY {
            check_put(in_flight.next().await)?;
        }
    }
    while let Some(result) = in_flight.next().await {
        check_put(Some(result))?;
    }
    eprintln!(
        "[publish-rate] {} calendar objects PUT in {:.1} s (not timed)",
        events.len(),
        fill.elapsed().as_secs_f64()
    );
    let config = epigraph_sources::caldav::CaldavConfig {
        username: Some(USER.into()),
        password: Some(PASSWORD.into()),
        ..Default::default()
    };
    let ics = epigraph_sources::ics::IcsConfig {
        window_start: Some("2020-01-01".into()),
        window_end: Some("2030-01-01".into()),
        ..Default::default()
    };
    let now = epigraph_schemas::now_millis();
    let started = Instant::now();
    let client = epigraph_sources::caldav::DavClient::new(&url, &config)?;
    let state = epigraph_sources::caldav::CaldavState::load(
        &dir.join("state"),
        "bench",
        client.collection().as_str(),
    )?;
    let sync = epigraph_sources::caldav::sync_calendar(&client, &state, &ics, 1024, now).await?;
    let secs = started.elapsed().as_secs_f64();
    drop(server);
    Ok((sync.scan, secs))
}

fn check_put(result: Option<reqwest::Result<reqwest::Response>>) -> Result<()> {
    let response = result.context("a PUT in flight")??;
    if !response.status().is_success() {
        bail!("PUT {}: {}", response.url(), response.status());
    }
    Ok(())
}

/// IMAP: every event a message delivered into the INBOX maildir of a Dovecot (files, untimed);
/// timed: one sync as `epigraph ingest imap` does it (login, UID SEARCH, fetches, parsing).
pub async fn imap(events: &[Event], dir: &Path) -> Result<(Scan, f64)> {
    let server = Dovecot::start(tempfile::tempdir()?, free_port(), USER, PASSWORD);
    let maildir = server.maildir();
    for sub in ["cur", "new", "tmp"] {
        std::fs::create_dir_all(maildir.join(sub))?;
    }
    for (i, e) in events.iter().enumerate() {
        std::fs::write(
            maildir.join("new").join(format!("{i}.bench")),
            message(i, e).replace('\n', "\r\n"),
        )?;
    }
    if is_root() {
        // Dovecot's mail processes run as `dovecot` when we are root (see `Dovecot::start`).
        let status = std::process::Command::new("chown")
            .args(["-R", "dovecot:dovecot"])
            .arg(server.maildir().parent().context("the mail folder")?)
            .status()?;
        if !status.success() {
            bail!("chown of the maildir failed");
        }
    }
    let config = server.config();
    let now = epigraph_schemas::now_millis();
    let started = Instant::now();
    let mut session = epigraph_sources::imap::ImapSession::connect(&config).await?;
    let state = epigraph_sources::imap::ImapState::load(
        &dir.join("state"),
        "bench",
        session.server(),
        USER,
    )?;
    let sync = epigraph_sources::imap::sync_mailboxes(
        &mut session,
        &state,
        &["INBOX".to_string()],
        &Default::default(),
        1024,
        now,
    )
    .await;
    session.logout().await;
    let secs = started.elapsed().as_secs_f64();
    drop(server);
    Ok((sync?.scan, secs))
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The webhook: every event POSTed to `/v1/ingest` of a real `epigraph serve` (the debug binary,
/// over Kafka, Neo4j and LanceDB), `in_flight` requests at a time; each answer (202) comes after
/// Kafka acknowledged the event. Returns `(accepted, seconds, payload sizes, the environment)`.
pub async fn webhook(
    events: &[Event],
    in_flight_max: usize,
) -> Result<(usize, f64, Vec<usize>, epigraph_tests::TestEnv)> {
    let env = epigraph_tests::TestEnv::new("bench-webhook");
    let config = env.dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[serve]\nreport_usage = false\n\n[[serve.ingest_tokens]]\ntoken = \"{PASSWORD}\"\ntenant = \"{}\"\n",
            env.tenant
        ),
    )?;
    let config = config.to_str().context("utf-8 path")?.to_string();
    let lines: Vec<String> = events
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()?;
    let now = epigraph_schemas::now_millis();
    let sizes: Vec<usize> = lines
        .iter()
        .map(|line| {
            let event = epigraph::serve::webhook::parse_event(line.as_bytes(), &env.tenant, now)
                .map_err(anyhow::Error::msg)?;
            Ok(epigraph_schemas::encode_event(&event)?.len())
        })
        .collect::<Result<_>>()?;
    let server = env.serve_with(&["--config", &config]);
    let url = format!("{}/v1/ingest", server.base);
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut accepted = 0usize;
    let mut in_flight = FuturesUnordered::new();
    let answer = |r: reqwest::Result<reqwest::Response>| -> Result<bool> {
        let status = r?.status();
        if status.as_u16() != 202 {
            bail!("POST /v1/ingest: {status}");
        }
        Ok(true)
    };
    for line in &lines {
        in_flight.push(
            client
                .post(&url)
                .bearer_auth(PASSWORD)
                .header("Content-Type", "application/json")
                .body(line.clone())
                .send(),
        );
        if in_flight.len() >= in_flight_max.max(1) {
            accepted += usize::from(answer(in_flight.next().await.context("in flight")?)?);
        }
    }
    while let Some(result) = in_flight.next().await {
        accepted += usize::from(answer(result)?);
    }
    let secs = started.elapsed().as_secs_f64();
    drop(server);
    Ok((accepted, secs, sizes, env))
}
