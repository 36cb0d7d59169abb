use std::path::PathBuf;

use epigraph_schemas::Op;

use super::*;
use crate::testing::Lcg;

const WIDE: (i64, i64) = (0, 4_102_444_800_000); // 1970 to 2100

fn fixtures() -> PathBuf {
    epigraph_schemas::manifest_dir!().join("../tests/fixtures/icalendar")
}

fn parse(text: &str) -> crate::Scan {
    parse_calendar(text, "t.ics", "acme", &IcsConfig::default(), WIDE, 4096)
}

fn calendar(body: &str) -> String {
    format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\n{body}END:VCALENDAR\r\n")
}

#[test]
fn every_fixture_is_read_or_dead_lettered_with_a_reason() {
    let config = IcsConfig {
        window_start: Some("1990-01-01".into()),
        window_end: Some("2040-01-01".into()),
        ..IcsConfig::default()
    };
    let dir = fixtures();
    let mut files = 0;
    let (mut events, mut letters) = (0, 0);
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "ics") {
            continue;
        }
        files += 1;
        let scan = read_ics(&path, "acme", &config, 4096, 0).expect("a file is never fatal");
        for letter in &scan.dead_letters {
            assert!(!letter.reason.is_empty() && letter.location.ends_with(".ics"));
        }
        for event in &scan.events {
            assert!(event.source_id.starts_with("ics/"), "{}", event.source_id);
            assert!(epigraph_schemas::encode_event(event).is_ok(), "{event:?}");
        }
        events += scan.events.len();
        letters += scan.dead_letters.len();
    }
    assert_eq!(files, 149);
    assert!(events > 100, "{events}");
    assert!(
        letters >= 3,
        "the malformed fixtures are dead-lettered: {letters}"
    );
    // The deliberately broken ones, with a reason a user can act on.
    let broken = read_ics(&dir.join("broken_dtstart.ics"), "acme", &config, 4096, 0).unwrap();
    assert!(broken.events.is_empty());
    assert!(
        broken.dead_letters[0].reason.contains("DTSTART"),
        "{:?}",
        broken.dead_letters
    );
    // Two daily series from 3 to 23 March 2008 minus one EXDATE; the second also has an empty
    // EXDATE, which removes nothing.
    let odd = read_ics(&dir.join("parsing_error.ics"), "acme", &config, 4096, 0).unwrap();
    assert!(odd.dead_letters.is_empty(), "{:?}", odd.dead_letters);
    assert_eq!(odd.events.len(), 40);
    assert!(
        !odd.events
            .iter()
            .any(|e| e.source_id.ends_with("20080311T000000Z"))
    );
}

#[test]
fn daily_recurrence_with_exdates_expands_to_the_remaining_occurrences() {
    let config = IcsConfig {
        window_start: Some("1990-01-01".into()),
        window_end: Some("2000-01-01".into()),
        ..IcsConfig::default()
    };
    let scan = read_ics(
        &fixtures().join("event_with_recurrence.ics"),
        "acme",
        &config,
        4096,
        0,
    )
    .unwrap();
    // COUNT=100 minus three EXDATEs.
    assert_eq!(scan.events.len(), 97);
    assert!(scan.events.iter().all(|e| e.op == Op::Upsert));
    let ids: Vec<&str> = scan.events.iter().map(|e| e.source_id.as_str()).collect();
    assert!(!ids.iter().any(|id| id.ends_with("19960402T010000Z")));
    assert!(ids.iter().any(|id| id.ends_with("19960405T010000Z")));
}

#[test]
fn overrides_move_one_occurrence_and_cancellations_are_tombstones() {
    let text = calendar(
        "BEGIN:VEVENT\r\nUID:sync@acme\r\nDTSTART;TZID=Europe/Berlin:20260105T100000\r\n\
         RRULE:FREQ=WEEKLY;COUNT=4\r\nSUMMARY:Atlas sync\r\n\
         ORGANIZER;CN=Maya Chen:mailto:maya@acme.example\r\n\
         ATTENDEE;CN=Tom Berg;PARTSTAT=ACCEPTED;ROLE=REQ-PARTICIPANT:mailto:tom@acme.example\r\n\
         END:VEVENT\r\n\
         BEGIN:VEVENT\r\nUID:sync@acme\r\nRECURRENCE-ID;TZID=Europe/Berlin:20260112T100000\r\n\
         DTSTART;TZID=Europe/Berlin:20260113T140000\r\nSUMMARY:Atlas sync (moved)\r\nEND:VEVENT\r\n\
         BEGIN:VEVENT\r\nUID:sync@acme\r\nRECURRENCE-ID;TZID=Europe/Berlin:20260119T100000\r\n\
         DTSTART;TZID=Europe/Berlin:20260119T100000\r\nSTATUS:CANCELLED\r\nEND:VEVENT\r\n",
    );
    let scan = parse(&text);
    assert!(scan.dead_letters.is_empty(), "{:?}", scan.dead_letters);
    assert_eq!(scan.events.len(), 4);
    let first = &scan.events[0];
    assert_eq!(first.source_id, "ics/sync@acme/20260105T090000Z");
    assert_eq!(first.occurred_at, Some(1_767_603_600_000));
    assert_eq!(first.authors[0].name.as_deref(), Some("Maya Chen"));
    assert_eq!(
        first.participants[0].address.as_deref(),
        Some("tom@acme.example")
    );
    assert!(first.extras["attendees"].contains("ACCEPTED"));
    let moved = &scan.events[1];
    assert_eq!(moved.source_id, "ics/sync@acme/20260112T090000Z");
    assert_eq!(moved.title.as_deref(), Some("Atlas sync (moved)"));
    assert_eq!(moved.occurred_at, Some(1_768_309_200_000));
    let cancelled = &scan.events[2];
    assert_eq!(
        (cancelled.op, cancelled.source_id.as_str()),
        (Op::Delete, "ics/sync@acme/20260119T090000Z")
    );
    assert_eq!(scan.events[3].op, Op::Upsert);
}

#[test]
fn a_cancelled_single_event_is_a_tombstone_and_a_moved_one_a_new_version() {
    let event = |start: &str, status: &str| {
        calendar(&format!(
            "BEGIN:VEVENT\r\nUID:review\r\nDTSTART:{start}\r\nSUMMARY:Budget review\r\n\
             DESCRIPTION:Decide the Q3 budget.\\nBring numbers.\r\n{status}END:VEVENT\r\n"
        ))
    };
    let a = parse(&event("20260301T090000Z", ""));
    let b = parse(&event("20260302T090000Z", ""));
    assert_eq!(a.events[0].source_id, "ics/review");
    assert_eq!(a.events[0].body, "Decide the Q3 budget.\nBring numbers.");
    assert_ne!(
        a.events[0].version, b.events[0].version,
        "a moved meeting is a new version"
    );
    let cancelled = parse(&event("20260301T090000Z", "STATUS:CANCELLED\r\n"));
    assert_eq!(cancelled.events[0].op, Op::Delete);
}

#[test]
fn a_series_outside_the_window_keeps_its_first_occurrence() {
    let text = calendar(
        "BEGIN:VEVENT\r\nUID:old\r\nDTSTART:19970101T090000Z\r\nRRULE:FREQ=DAILY;COUNT=3\r\n\
         SUMMARY:Old standup\r\nEND:VEVENT\r\n",
    );
    let scan = parse_calendar(
        &text,
        "t.ics",
        "acme",
        &IcsConfig::default(),
        (1_767_225_600_000, 1_798_761_600_000),
        4096,
    );
    assert_eq!(scan.events.len(), 1);
    assert!(scan.events[0].extras["notes"].contains("no occurrence inside the window"));
}

#[test]
fn bad_recurrences_and_unknown_zones_are_kept_with_a_note() {
    let text = calendar(
        "BEGIN:VEVENT\r\nUID:x\r\nDTSTART;TZID=Custom Zone:20260105T090000\r\n\
         RRULE:FREQ=FORTNIGHTLY\r\nSUMMARY:Odd\r\nEND:VEVENT\r\n",
    );
    let scan = parse(&text);
    assert_eq!(scan.events.len(), 1);
    let notes = &scan.events[0].extras["notes"];
    assert!(
        notes.contains("Custom Zone") && notes.contains("recurrence"),
        "{notes}"
    );
}

#[test]
fn arbitrary_bytes_never_panic() {
    // Mutations of a real calendar and random printable text, 100,000 cases.
    let seed = calendar(
        "BEGIN:VEVENT\r\nUID:a\r\nDTSTART;TZID=Europe/Berlin:20260105T100000\r\n\
         RRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260301T000000Z\r\nEXDATE:20260107T090000Z\r\n\
         ATTENDEE;CN=\"A, B\":mailto:a@b\r\nSUMMARY:x\\, y\r\nEND:VEVENT\r\n",
    );
    let alphabet: Vec<char> = "BEGIN:VCALENDAREVT\r\n;=,:TZID/0123456789ZTRULEFREQ\\\"é "
        .chars()
        .collect();
    let mut rng = Lcg(7);
    let cases: usize = std::env::var("EPIGRAPH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    for case in 0..cases {
        let mut text: Vec<char> = seed.chars().collect();
        if case % 2 == 0 {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(text.len());
                match rng.below(3) {
                    0 => text[at] = alphabet[rng.below(alphabet.len())],
                    1 => {
                        text.remove(at);
                    }
                    _ => text.insert(at, alphabet[rng.below(alphabet.len())]),
                }
            }
        } else {
            text = (0..rng.below(120))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
        }
        let text: String = text.into_iter().collect();
        let _ = parse_calendar(&text, "f.ics", "acme", &IcsConfig::default(), WIDE, 64);
    }
}
