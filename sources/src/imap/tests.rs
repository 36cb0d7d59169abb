use epigraph_schemas::{Op, SourceKind};

use super::*;
use crate::Scan;
use crate::mail::MailConfig;

const TENANT: &str = "acme";

fn raw(id: &str, body: &str) -> Vec<u8> {
    format!(
        "Message-ID: <{id}@example.org>\r\nFrom: Ann <ann@example.org>\r\nTo: bob@example.org\r\n\
         Subject: {id}\r\nDate: Tue, 3 Jun 2025 09:00:00 +0000\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

fn read(uid: u32, id: &str, body: &str, mailbox: &str) -> FetchedMessage {
    FetchedMessage {
        uid,
        scan: read_message(
            &raw(id, body),
            "imap://test",
            TENANT,
            mailbox,
            &MailConfig::default(),
            4096,
            0,
        ),
    }
}

fn status(uid_validity: u32, uid_next: u32, exists: u32) -> MailboxStatus {
    MailboxStatus {
        uid_validity,
        uid_next: Some(uid_next),
        exists,
    }
}

fn sync(
    mailbox: &str,
    status: MailboxStatus,
    fetched: Vec<FetchedMessage>,
    removed: Vec<u32>,
    reset: bool,
) -> MailboxSync {
    MailboxSync {
        mailbox: mailbox.into(),
        status,
        reset,
        fetched,
        removed,
    }
}

fn ids(scan: &Scan, op: Op) -> Vec<&str> {
    scan.events
        .iter()
        .filter(|e| e.op == op)
        .map(|e| e.source_id.as_str())
        .collect()
}

fn first_sync() -> ImapState {
    let state = ImapState {
        tenant: TENANT.into(),
        ..ImapState::default()
    };
    let (scan, next) = apply(
        &state,
        TENANT,
        vec![sync(
            "INBOX",
            status(7, 3, 2),
            vec![
                read(1, "a", "Alpha.", "INBOX"),
                read(2, "b", "Beta.", "INBOX"),
            ],
            vec![],
            false,
        )],
        0,
    );
    assert_eq!(
        ids(&scan, Op::Upsert),
        ["mail/a@example.org", "mail/b@example.org"]
    );
    next
}

#[test]
fn the_source_id_is_the_one_ingest_eml_gives() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.eml"), raw("a", "Alpha.")).unwrap();
    let eml = crate::mail::read_eml(dir.path(), TENANT, &MailConfig::default(), 4096).unwrap();
    let imap = read(1, "a", "Alpha.", "INBOX").scan;
    assert_eq!(eml.events[0].source_id, imap.events[0].source_id);
    assert_eq!(eml.events[0].version, imap.events[0].version);
    assert_eq!(eml.events[0].thread_id, imap.events[0].thread_id);
    assert_eq!(imap.events[0].extras["mailbox"], "INBOX");
}

#[test]
fn nothing_is_published_twice_and_an_unchanged_mailbox_is_not_listed() {
    let state = first_sync();
    let inbox = &state.mailboxes["INBOX"];
    assert!(unchanged(Some(inbox), &status(7, 3, 2)));
    assert!(!unchanged(Some(inbox), &status(7, 4, 3)), "a new message");
    assert!(!unchanged(Some(inbox), &status(7, 3, 1)), "an expunge");
    assert!(
        !unchanged(Some(inbox), &status(8, 3, 2)),
        "a new UIDVALIDITY"
    );
    assert!(!unchanged(None, &status(7, 3, 2)), "never synced");
    let plan = plan(Some(inbox), &status(7, 3, 2), &[1, 2]);
    assert_eq!(plan, MailboxPlan::default());
}

#[test]
fn an_expunged_message_is_tombstoned_and_a_new_one_published() {
    let state = first_sync();
    let plan = plan(state.mailboxes.get("INBOX"), &status(7, 4, 2), &[2, 3]);
    assert_eq!(
        (plan.fetch.clone(), plan.removed.clone()),
        (vec![3], vec![1])
    );
    let (scan, next) = apply(
        &state,
        TENANT,
        vec![sync(
            "INBOX",
            status(7, 4, 2),
            vec![read(3, "c", "Gamma.", "INBOX")],
            plan.removed,
            false,
        )],
        0,
    );
    assert_eq!(ids(&scan, Op::Delete), ["mail/a@example.org"]);
    assert_eq!(ids(&scan, Op::Upsert), ["mail/c@example.org"]);
    assert_eq!(scan.events[0].op, Op::Delete, "tombstones first");
    let uids: Vec<u32> = next.mailboxes["INBOX"].messages.keys().copied().collect();
    assert_eq!(uids, [2, 3]);
}

#[test]
fn a_message_moved_to_another_followed_mailbox_stays_live_and_is_not_republished() {
    let state = first_sync();
    let (scan, next) = apply(
        &state,
        TENANT,
        vec![
            sync("INBOX", status(7, 3, 1), vec![], vec![1], false),
            sync(
                "Archive",
                status(3, 2, 1),
                vec![read(1, "a", "Alpha.", "Archive")],
                vec![],
                false,
            ),
        ],
        0,
    );
    assert!(scan.events.is_empty(), "{:?}", scan.events);
    assert_eq!(
        next.mailboxes["Archive"].messages[&1].source_id.as_deref(),
        Some("mail/a@example.org")
    );
    // Moved out of every followed mailbox: now it is a delete.
    let (scan, _) = apply(
        &next,
        TENANT,
        vec![sync("Archive", status(3, 2, 0), vec![], vec![1], false)],
        0,
    );
    assert_eq!(ids(&scan, Op::Delete), ["mail/a@example.org"]);
}

#[test]
fn a_new_uidvalidity_republishes_only_what_changed_and_tombstones_what_vanished() {
    let state = first_sync();
    let inbox = state.mailboxes.get("INBOX");
    let plan = plan(inbox, &status(9, 3, 2), &[1, 2]);
    assert!(plan.reset);
    assert_eq!(
        (plan.fetch.clone(), plan.removed.clone()),
        (vec![1, 2], vec![1, 2])
    );
    // After the resync, UID 1 is message b (unchanged), UID 2 is a new message d; a is gone.
    let (scan, next) = apply(
        &state,
        TENANT,
        vec![sync(
            "INBOX",
            status(9, 3, 2),
            vec![
                read(1, "b", "Beta.", "INBOX"),
                read(2, "d", "Delta.", "INBOX"),
            ],
            plan.removed,
            true,
        )],
        0,
    );
    assert_eq!(ids(&scan, Op::Delete), ["mail/a@example.org"]);
    assert_eq!(ids(&scan, Op::Upsert), ["mail/d@example.org"]);
    assert_eq!(next.mailboxes["INBOX"].uid_validity, Some(9));
}

#[test]
fn a_bad_message_is_dead_lettered_once_and_remembered() {
    let state = first_sync();
    let bad = FetchedMessage {
        uid: 3,
        scan: read_message(
            b"",
            "imap://test/INBOX;UID=3",
            TENANT,
            "INBOX",
            &MailConfig::default(),
            4096,
            0,
        ),
    };
    let (scan, next) = apply(
        &state,
        TENANT,
        vec![sync("INBOX", status(7, 4, 3), vec![bad], vec![], false)],
        0,
    );
    assert!(scan.events.is_empty());
    assert_eq!(scan.dead_letters.len(), 1);
    assert_eq!(
        next.mailboxes["INBOX"].messages[&3],
        PublishedMessage::default()
    );
    let again = plan(next.mailboxes.get("INBOX"), &status(7, 4, 3), &[1, 2, 3]);
    assert!(again.fetch.is_empty(), "not read again");
}

#[test]
fn the_state_round_trips_and_is_per_tenant_server_and_user() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = first_sync();
    state.server = "mail.example:993".into();
    state.username = "alice".into();
    state.save(dir.path()).unwrap();
    let loaded = ImapState::load(dir.path(), TENANT, "mail.example:993", "alice").unwrap();
    assert_eq!(loaded, state);
    let other = ImapState::load(dir.path(), TENANT, "mail.example:993", "bob").unwrap();
    assert!(other.mailboxes.is_empty());
}

#[test]
fn the_uid_set_collapses_runs() {
    assert_eq!(uid_set(&[5, 1, 2, 3, 3]), "1:3,5");
    assert_eq!(uid_set(&[42]), "42");
}

#[tokio::test]
async fn missing_settings_and_an_unreachable_server_are_clear_errors() {
    let config = ImapConfig::default();
    let error = ImapSession::connect(&config).await.unwrap_err();
    assert!(error.to_string().contains("imap.host"), "{error}");
    assert!(!error.retryable());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = ImapConfig {
        host: Some("127.0.0.1".into()),
        port: Some(port),
        tls: ImapTls::None,
        username: Some("alice".into()),
        password: Some("s3cret-pw".into()),
        timeout_ms: 2000,
        ..ImapConfig::default()
    };
    let error = ImapSession::connect(&config).await.unwrap_err();
    assert!(error.retryable(), "{error}");
    assert!(!format!("{error} {error:?}").contains("s3cret-pw"));
}

#[test]
fn an_attachment_read_as_text_is_published_with_its_message_and_tombstoned_with_it() {
    let fixture =
        epigraph_schemas::manifest_dir!().join("tests/fixtures/formats/memo-and-plan.eml");
    let message = FetchedMessage {
        uid: 1,
        scan: read_message(
            &std::fs::read(fixture).unwrap(),
            "imap://test/INBOX;UID=1",
            TENANT,
            "INBOX",
            &MailConfig::default(),
            4096,
            0,
        ),
    };
    assert_eq!(message.scan.dead_letters.len(), 1, "broken.pdf");
    assert!(
        message.scan.dead_letters[0]
            .location
            .ends_with("UID=1 attachment 3 (broken.pdf)")
    );
    let state = ImapState {
        tenant: TENANT.into(),
        ..ImapState::default()
    };
    let (scan, next) = apply(
        &state,
        TENANT,
        vec![sync("INBOX", status(7, 2, 1), vec![message], vec![], false)],
        0,
    );
    let message_id = "mail/memo-7@acme.example";
    let attachments = [
        format!("{message_id}/attachment/1"),
        format!("{message_id}/attachment/2"),
    ];
    assert_eq!(
        ids(&scan, Op::Upsert),
        [message_id, &attachments[0], &attachments[1]]
    );
    assert_eq!(
        next.mailboxes["INBOX"].messages[&1].attachments,
        attachments
    );
    // Expunged: the message and its attachments' documents go together.
    let (scan, after) = apply(
        &next,
        TENANT,
        vec![sync("INBOX", status(7, 2, 0), vec![], vec![1], false)],
        0,
    );
    assert_eq!(
        ids(&scan, Op::Delete),
        [message_id, &attachments[0], &attachments[1]]
    );
    let kinds: Vec<SourceKind> = scan.events.iter().map(|e| e.source_kind).collect();
    assert_eq!(
        kinds,
        [
            SourceKind::Email,
            SourceKind::Document,
            SourceKind::Document
        ]
    );
    assert!(after.mailboxes["INBOX"].messages.is_empty());
}

#[test]
fn a_refused_message_is_read_again_on_the_next_run_not_at_every_poll() {
    let mut state = first_sync();
    // The producer refused b (too large for the topic): the message is marked.
    assert_eq!(state.mark_refused(&["mail/b@example.org".to_string()]), 1);
    let inbox = &state.mailboxes["INBOX"];
    // Later polls of the same follow: nothing changed, nothing read.
    assert!(unchanged(Some(inbox), &status(7, 3, 2)));
    assert_eq!(
        plan(Some(inbox), &status(7, 3, 2), &[1, 2]),
        MailboxPlan::default()
    );
    // The next run reads it again, even though the mailbox's counters did not move.
    assert_eq!(state.retry_refused(), 1);
    let inbox = &state.mailboxes["INBOX"];
    assert!(!unchanged(Some(inbox), &status(7, 3, 2)));
    assert_eq!(plan(Some(inbox), &status(7, 3, 2), &[1, 2]).fetch, vec![2]);
    let (scan, next) = apply(
        &state,
        TENANT,
        vec![sync(
            "INBOX",
            status(7, 3, 2),
            vec![read(2, "b", "Beta.", "INBOX")],
            vec![],
            false,
        )],
        0,
    );
    // Published this time (it was not on the topic), and no longer marked.
    assert_eq!(ids(&scan, Op::Upsert), ["mail/b@example.org"]);
    assert!(ids(&scan, Op::Delete).is_empty());
    let b = &next.mailboxes["INBOX"].messages[&2];
    assert!(!b.refused && !b.retry);
    // The mark is saved; the retry is not.
    let dir = tempfile::tempdir().unwrap();
    state.save(dir.path()).unwrap();
    let loaded = ImapState::load(dir.path(), TENANT, "", "").unwrap();
    let b = &loaded.mailboxes["INBOX"].messages[&2];
    assert!(b.refused && !b.retry);
}
