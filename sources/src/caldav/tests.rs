use epigraph_schemas::{Op, SourceEvent, SourceKind};

use super::*;
use crate::Scan;
use crate::kafka::DeadLetter;

fn event(id: &str, body: &str) -> SourceEvent {
    SourceEvent::upsert("acme", SourceKind::Calendar, id, None, body.into(), 0)
}

fn fetched(href: &str, etag: &str, events: Vec<SourceEvent>) -> Fetched {
    Fetched {
        href: href.into(),
        etag: Some(etag.into()),
        scan: Scan {
            events,
            dead_letters: Vec::new(),
        },
    }
}

fn ops(scan: &Scan) -> Vec<(Op, &str)> {
    scan.events
        .iter()
        .map(|e| (e.op, e.source_id.as_str()))
        .collect()
}

#[test]
fn a_new_object_publishes_its_events_and_an_unchanged_event_is_not_republished() {
    let state = CaldavState {
        tenant: "acme".into(),
        ..CaldavState::default()
    };
    let (scan, next) = apply(
        &state,
        "acme",
        vec![fetched(
            "/c/a.ics",
            "1",
            vec![event("ics/a", "Budget review")],
        )],
        &[],
        0,
    );
    assert_eq!(ops(&scan), vec![(Op::Upsert, "ics/a")]);
    // The server changed the etag (a DTSTAMP touch) but the event reads the same.
    let (scan, again) = apply(
        &next,
        "acme",
        vec![fetched(
            "/c/a.ics",
            "2",
            vec![event("ics/a", "Budget review")],
        )],
        &[],
        0,
    );
    assert!(scan.events.is_empty(), "{:?}", ops(&scan));
    assert_eq!(again.objects["/c/a.ics"].etag.as_deref(), Some("2"));
}

#[test]
fn removed_objects_and_dropped_occurrences_are_tombstoned_but_moves_stay_live() {
    let state = CaldavState::default();
    let (_, state) = apply(
        &state,
        "acme",
        vec![
            fetched(
                "/c/weekly.ics",
                "1",
                vec![event("ics/w/1", "Sync"), event("ics/w/2", "Sync")],
            ),
            fetched("/c/a.ics", "1", vec![event("ics/a", "A")]),
            fetched("/c/b.ics", "1", vec![event("ics/b", "B")]),
        ],
        &[],
        0,
    );
    // weekly loses an occurrence, a.ics is deleted, b.ics moves to moved.ics.
    let (scan, next) = apply(
        &state,
        "acme",
        vec![
            fetched("/c/weekly.ics", "2", vec![event("ics/w/1", "Sync")]),
            fetched("/c/moved.ics", "1", vec![event("ics/b", "B")]),
        ],
        &["/c/a.ics".to_string(), "/c/b.ics".to_string()],
        0,
    );
    assert_eq!(
        ops(&scan),
        vec![(Op::Delete, "ics/a"), (Op::Delete, "ics/w/2")],
        "the moved event is neither tombstoned nor republished"
    );
    assert!(!next.objects.contains_key("/c/a.ics"));
    assert!(next.objects["/c/moved.ics"].events.contains_key("ics/b"));
}

#[test]
fn a_cancelled_occurrence_is_published_as_a_tombstone_before_the_upserts() {
    let (_, state) = apply(
        &CaldavState::default(),
        "acme",
        vec![fetched(
            "/c/w.ics",
            "1",
            vec![event("ics/w/1", "Sync"), event("ics/w/2", "Sync")],
        )],
        &[],
        0,
    );
    let cancelled = SourceEvent::tombstone("acme", SourceKind::Calendar, "ics/w/2", 0);
    let (scan, _) = apply(
        &state,
        "acme",
        vec![fetched(
            "/c/w.ics",
            "2",
            vec![event("ics/w/1", "Sync moved to Friday"), cancelled],
        )],
        &[],
        0,
    );
    assert_eq!(
        ops(&scan),
        vec![(Op::Delete, "ics/w/2"), (Op::Upsert, "ics/w/1")]
    );
}

#[test]
fn an_object_that_became_unreadable_keeps_what_it_published() {
    let (_, state) = apply(
        &CaldavState::default(),
        "acme",
        vec![fetched("/c/a.ics", "1", vec![event("ics/a", "A")])],
        &[],
        0,
    );
    let broken = Fetched {
        href: "/c/a.ics".into(),
        etag: Some("2".into()),
        scan: Scan {
            events: Vec::new(),
            dead_letters: vec![DeadLetter::new(
                "not iCalendar",
                "caldav",
                Some("acme"),
                "/c/a.ics",
                b"junk",
                64,
            )],
        },
    };
    let (scan, next) = apply(&state, "acme", vec![broken], &[], 0);
    assert!(scan.events.is_empty());
    assert_eq!(scan.dead_letters.len(), 1);
    assert!(next.objects["/c/a.ics"].events.contains_key("ics/a"));
    assert_eq!(next.objects["/c/a.ics"].etag.as_deref(), Some("2"));
}

#[test]
fn a_full_listing_without_a_known_object_removes_it_and_an_etag_change_refetches() {
    let mut state = CaldavState::default();
    for (href, etag) in [("/c/a.ics", "1"), ("/c/b.ics", "1")] {
        state.objects.insert(
            href.into(),
            PublishedObject {
                etag: Some(etag.into()),
                ..PublishedObject::default()
            },
        );
    }
    let listing = vec![Member {
        href: "/c/a.ics".into(),
        etag: Some("2".into()),
        gone: false,
    }];
    let (fetch, removed) = plan(&state, &listing, true);
    assert_eq!(fetch, vec![("/c/a.ics".to_string(), Some("2".to_string()))]);
    assert_eq!(removed, vec!["/c/b.ics".to_string()]);
    // The same listing as an incremental sync only says what changed.
    let (_, removed) = plan(&state, &listing, false);
    assert!(removed.is_empty());
}

#[test]
fn multistatus_errors_and_urls_with_credentials_are_refused() {
    assert!(parse_multistatus("<html>no</html>").is_err());
    assert!(parse_multistatus("not xml").is_err());
    let error = DavClient::new(
        "http://bob:hunter2@cal.example/c/",
        &CaldavConfig::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(!error.contains("hunter2"), "{error}");
    let client = DavClient::new("http://cal.example/c", &CaldavConfig::default()).unwrap();
    assert_eq!(client.collection().as_str(), "http://cal.example/c/");
    assert!(client.is_collection("/c/"));
    assert!(!client.is_collection("/c/a.ics"));
    assert_eq!(
        client.member_url("/c/a.ics").as_str(),
        "http://cal.example/c/a.ics"
    );
}

#[test]
fn a_refused_event_is_undone_and_its_object_fetched_again_on_the_next_run() {
    let state = CaldavState {
        tenant: "acme".into(),
        sync_token: Some("t1".into()),
        ..CaldavState::default()
    };
    let (_, published) = apply(
        &state,
        "acme",
        vec![fetched(
            "/c/a.ics",
            "1",
            vec![event("ics/a", "Budget review")],
        )],
        &[],
        0,
    );
    // An edit the producer refuses (too large for the topic): the state keeps the version that
    // was published, and the object is marked.
    let (scan, mut next) = apply(
        &published,
        "acme",
        vec![fetched(
            "/c/a.ics",
            "2",
            vec![event("ics/a", "Budget review, moved")],
        )],
        &[],
        0,
    );
    assert_eq!(ops(&scan), vec![(Op::Upsert, "ics/a")]);
    assert_eq!(next.mark_refused(&["ics/a".to_string()], &published), 1);
    assert_eq!(
        next.objects["/c/a.ics"].events,
        published.objects["/c/a.ics"].events
    );
    assert!(next.objects["/c/a.ics"].refused);
    // Within the same follow the etag is known: the object is not fetched again.
    let listing = vec![Member {
        href: "/c/a.ics".into(),
        etag: Some("2".into()),
        gone: false,
    }];
    assert!(plan(&next, &listing, true).0.is_empty());
    // The next run: the whole collection is listed, the object fetched and its event sent.
    assert_eq!(next.retry_refused(), 1);
    assert_eq!(next.sync_token, None);
    let (fetch, _) = plan(&next, &listing, true);
    assert_eq!(fetch.len(), 1);
    let (scan, again) = apply(
        &next,
        "acme",
        vec![fetched(
            "/c/a.ics",
            "2",
            vec![event("ics/a", "Budget review, moved")],
        )],
        &[],
        0,
    );
    assert_eq!(ops(&scan), vec![(Op::Upsert, "ics/a")]);
    assert!(!again.objects["/c/a.ics"].refused);
}
