//! Tests of the Slack source.
//!
//! The fixture tests read a genuine Slack export: the test archive of the open-source project
//! hfaran/slack-export-viewer (tests/testarchive.zip, commit b46af7e, MIT licence), unzipped in
//! `tests/fixtures/slack-export` of the repository. It is a 2016 export of two channels,
//! `enrique` and `traveling-sailor`, with four users (no e-mail addresses), GitHub bot posts,
//! joins, file shares, a file comment and one edited message; it predates Slack threads.

use crate::testing::Lcg;

use std::path::PathBuf;

use epigraph_schemas::{Link, Party, SourceEvent, SourceKind};

use super::source::{Directory, Rendered, Timestamp, render_markup};
use super::{SlackConfig, read_slack_export};
use crate::{Scan, SourceError};

/// The unzipped fixture export, copied into the repository: `tests/fixtures/slack-export`.
fn fixture() -> PathBuf {
    let path = epigraph_schemas::manifest_dir!().join("../tests/fixtures/slack-export");
    assert!(
        path.join("channels.json").is_file(),
        "the Slack fixture export is missing: expected {} (from hfaran/slack-export-viewer, MIT)",
        path.display()
    );
    path
}

fn read_fixture() -> Scan {
    read_slack_export(&fixture(), "acme", &SlackConfig::default(), 65536)
        .unwrap_or_else(|e| panic!("reading the fixture export failed: {e}"))
}

fn event<'s>(scan: &'s Scan, source_id: &str) -> &'s SourceEvent {
    scan.events
        .iter()
        .find(|e| e.source_id == source_id)
        .unwrap_or_else(|| panic!("no event {source_id}"))
}

fn party(name: &str, address: &str) -> Party {
    Party {
        name: Some(name.to_string()),
        address: Some(address.to_string()),
    }
}

/// A hand-made export in a temporary folder: `(relative path, content)` pairs.
fn export(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    for (path, content) in files {
        let path = dir.path().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create channel folder");
        }
        std::fs::write(&path, content).expect("write export file");
    }
    dir
}

fn read(dir: &tempfile::TempDir) -> Scan {
    read_slack_export(dir.path(), "acme", &SlackConfig::default(), 4096)
        .unwrap_or_else(|e| panic!("reading a hand-made export failed: {e}"))
}

const USERS: &str = r#"[
    {"id": "U1", "name": "ada", "real_name": "Ada Lovelace", "profile": {"email": "ada@example.org"}},
    {"id": "U2", "name": "bob", "profile": {"display_name": "Bobby"}}
]"#;
const CHANNELS: &str = r#"[{"id": "C1", "name": "general", "members": ["U1", "U2"]}]"#;

/// A one-channel export whose single day holds `messages` (a JSON array).
fn general(messages: &str) -> tempfile::TempDir {
    export(&[
        ("users.json", USERS),
        ("channels.json", CHANNELS),
        ("general/2024-05-01.json", messages),
    ])
}

#[test]
fn fixture_has_two_channels_and_158_messages_sorted_without_dead_letters() {
    let scan = read_fixture();
    assert!(scan.dead_letters.is_empty(), "{:?}", scan.dead_letters);
    assert_eq!(scan.events.len(), 158);
    let in_channel = |name: &str| {
        let prefix = format!("slack/{name}/");
        scan.events
            .iter()
            .filter(|e| e.source_id.starts_with(&prefix))
            .count()
    };
    assert_eq!(
        (in_channel("enrique"), in_channel("traveling-sailor")),
        (102, 56)
    );
    assert_eq!(scan.events[0].source_id, "slack/enrique/1452837318.000002");
    let order: Vec<_> = scan
        .events
        .iter()
        .map(|e| (e.extras["channel"].clone(), e.occurred_at))
        .collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "not sorted");
    assert!(
        scan.events
            .iter()
            .all(|e| e.source_kind == SourceKind::Chat)
    );
    // A 2016 export predates threads: no message carries a thread_ts.
    assert!(scan.events.iter().all(|e| e.thread_id.is_none()));
    let again = read_fixture();
    let ids = |s: &Scan| {
        s.events
            .iter()
            .map(|e| e.event_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&scan),
        ids(&again),
        "a second read gives other event ids"
    );
}

#[test]
fn fixture_message_has_author_mention_and_channel_members() {
    let scan = read_fixture();
    let message = event(&scan, "slack/enrique/1452837352.000006");
    // The fixture's users have no e-mail in their profile: the address is the user id.
    assert_eq!(message.authors, vec![party("Hamza Faran", "U0BMQB6JE")]);
    assert_eq!(
        message.body,
        "@Harry Potter: Created an issue for a setup.py so that it can be installed to a \
         standard place"
    );
    assert_eq!(message.extras["mentions"], "U0BMYT2FL");
    assert_eq!(message.extras["user"], "U0BMQB6JE");
    assert_eq!(message.extras["channel_id"], "C0JGLMMNX");
    assert_eq!(message.title.as_deref(), Some("#enrique"));
    assert_eq!(message.occurred_at, Some(1_452_837_352_000));
    assert_eq!(
        message.participants,
        vec![
            party("heroeshannibal", "U0BMM2FEH"),
            party("Hamza Faran", "U0BMQB6JE"),
            party("Hermione Granger", "U0BMS113R"),
            party("Harry Potter", "U0BMYT2FL"),
        ]
    );
}

#[test]
fn fixture_joins_are_kept_with_their_subtype() {
    let scan = read_fixture();
    let join = event(&scan, "slack/enrique/1452837318.000003");
    assert_eq!(join.extras["subtype"], "channel_join");
    assert_eq!(join.extras["inviter"], "U0BMQB6JE");
    assert_eq!(join.body, "@Harry Potter has joined the channel");
    assert_eq!(join.authors, vec![party("Harry Potter", "U0BMYT2FL")]);
    let joins = scan
        .events
        .iter()
        .filter(|e| e.extras.get("subtype").map(String::as_str) == Some("channel_join"))
        .count();
    assert_eq!(joins, 8);
}

#[test]
fn fixture_file_share_becomes_a_file_link() {
    let scan = read_fixture();
    let share = event(&scan, "slack/traveling-sailor/1459052866.000012");
    assert_eq!(share.extras["subtype"], "file_share");
    assert!(share.links.contains(&Link {
        rel: "file".into(),
        target: "100_cities.js".into(),
        media_type: Some("text/plain".into()),
        size_bytes: Some(4163),
    }));
    assert!(share.body.starts_with(
        "@Hermione Granger uploaded a file: 100 cities \
         (https://mesos-magellan.slack.com/files/U0BMS113R/F0VNAKDE2/100_cities.js)"
    ));
    // Three shares and one comment on a shared file.
    let files: Vec<_> = scan
        .events
        .iter()
        .flat_map(|e| &e.links)
        .filter(|l| l.rel == "file")
        .map(|l| l.target.as_str())
        .collect();
    assert_eq!(
        files,
        [
            "100_cities.js",
            "10_cities.js",
            "10_cities.js",
            "cities1000.js"
        ]
    );
    let comment = event(&scan, "slack/traveling-sailor/1459106048.000018");
    assert_eq!(
        comment.authors,
        vec![party("Hermione Granger", "U0BMS113R")]
    );
}

#[test]
fn fixture_edit_bot_post_and_link_preview() {
    let scan = read_fixture();
    let edited = event(&scan, "slack/traveling-sailor/1458972985.000010");
    assert_eq!(edited.extras["edited_at"], "1458981134000");
    assert_eq!(edited.extras["edited_by"], "U0BMQB6JE");
    let bot = event(&scan, "slack/enrique/1459161896.000019");
    assert_eq!(bot.authors, vec![party("B0JL6RASU", "B0JL6RASU")]);
    assert_eq!(bot.extras["subtype"], "bot_message");
    assert!(
        bot.body.contains(
            "force-pushed to a62a009 (https://github.com/mesos-magellan/enrique/commit/\
             a62a009b71584d90712f9ceccc998ba6782e6301) by hfaran"
        ),
        "{}",
        bot.body
    );
    let preview = event(&scan, "slack/enrique/1452846025.000011");
    let url = "https://github.com/hfaran/progressive/blob/master/setup.py";
    assert_eq!(
        preview.body,
        format!(
            "Here's an example: {url}\nhfaran/progressive\n\
             progressive - Colorful progress bars and trees for your terminal"
        )
    );
    assert!(
        preview
            .links
            .iter()
            .any(|l| l.rel == "url" && l.target == url)
    );
}

const BROKEN: &str = r#"[{"ts": "1714550400.0001", "#;

#[test]
fn malformed_day_file_is_one_dead_letter_naming_the_file() {
    let dir = export(&[
        ("users.json", USERS),
        ("channels.json", CHANNELS),
        ("general/2024-05-01.json", BROKEN),
        (
            "general/2024-05-02.json",
            r#"[{"user": "U1", "text": "still read", "ts": "1714636800.000100"}]"#,
        ),
        ("general/2024-05-03.json", r#"{"ts": "1714723200.000100"}"#),
    ]);
    let scan = read(&dir);
    assert_eq!(scan.events.len(), 1);
    assert_eq!(scan.events[0].body, "still read");
    let [broken, object] = scan.dead_letters.as_slice() else {
        panic!("expected two dead letters: {:?}", scan.dead_letters);
    };
    assert!(
        broken.reason.contains("general/2024-05-01.json") && broken.reason.contains("not valid"),
        "{}",
        broken.reason
    );
    assert!(broken.location.ends_with("2024-05-01.json"));
    assert_eq!(
        (broken.stage.as_str(), broken.tenant.as_deref()),
        ("slack", Some("acme"))
    );
    assert_eq!(broken.raw_size, BROKEN.len());
    assert!(
        object.reason.contains("holds a JSON object"),
        "{}",
        object.reason
    );
}

#[test]
fn messages_without_a_valid_ts_are_dead_lettered_by_index() {
    let dir = general(
        r#"[{"user": "U1", "text": "ok", "ts": "1714550400.000100"},
            {"user": "U1", "text": "no ts"}, 42, {"ts": 17}, {"ts": "yesterday"}]"#,
    );
    let scan = read(&dir);
    assert_eq!(scan.events.len(), 1);
    let found: Vec<_> = scan
        .dead_letters
        .iter()
        .map(|l| {
            (
                l.location.rsplit('#').next().unwrap_or(""),
                l.reason.as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "1",
                "general/2024-05-01.json#1: message has no \"ts\" (Slack timestamp)"
            ),
            (
                "2",
                "general/2024-05-01.json#2: message is a JSON number, not an object"
            ),
            (
                "3",
                "general/2024-05-01.json#3: message \"ts\" is a JSON number, not a string"
            ),
            (
                "4",
                "general/2024-05-01.json#4: message \"ts\" \"yesterday\" is not a Slack \
                 timestamp (seconds.fraction)"
            ),
        ]
    );
    let raw = serde_json::json!({"user": "U1", "text": "no ts"});
    let raw_size = serde_json::to_vec(&raw).expect("serialise").len();
    assert_eq!(scan.dead_letters[0].raw_size, raw_size);
}

#[test]
fn edits_files_and_subtypes_change_the_version_but_members_do_not() {
    let version = |message: &str| {
        let scan = read(&general(&format!("[{message}]")));
        let event = &scan.events[0];
        (event.version.clone(), event.event_id.clone())
    };
    let plain = version(r#"{"user": "U1", "text": "ship it", "ts": "1714550400.000100"}"#);
    let edited = version(
        r#"{"user": "U1", "text": "ship it", "ts": "1714550400.000100",
            "edited": {"user": "U1", "ts": "1714550460.000000"}}"#,
    );
    let with_file = version(
        r#"{"user": "U1", "text": "ship it", "ts": "1714550400.000100",
            "files": [{"name": "plan.pdf", "mimetype": "application/pdf", "size": 10}]}"#,
    );
    let with_subtype = version(
        r#"{"user": "U1", "text": "ship it", "ts": "1714550400.000100", "subtype": "me_message"}"#,
    );
    assert_ne!(plain.0, edited.0);
    assert_ne!(plain.1, edited.1, "event id must follow the version");
    assert_ne!(plain.0, with_file.0);
    assert_ne!(plain.0, with_subtype.0);
    assert_eq!(
        plain,
        version(r#"{"user": "U1", "text": "ship it", "ts": "1714550400.000100"}"#)
    );
    let more_members = export(&[
        ("users.json", USERS),
        (
            "channels.json",
            r#"[{"id": "C1", "name": "general", "members": ["U1", "U2", "U3"]}]"#,
        ),
        (
            "general/2024-05-01.json",
            r#"[{"user": "U1", "text": "ship it", "ts": "1714550400.000100"}]"#,
        ),
    ]);
    let scan = read(&more_members);
    assert_eq!(scan.events[0].participants.len(), 3);
    assert_eq!(scan.events[0].version, plain.0);
}

#[test]
fn thread_replies_and_their_parent_share_a_thread_id() {
    let scan = read(&general(
        r#"[{"user": "U1", "text": "parent", "ts": "1714550400.000100", "thread_ts": "1714550400.000100"},
            {"user": "U2", "text": "reply", "ts": "1714550500.000200", "thread_ts": "1714550400.000100"},
            {"user": "U2", "text": "aside", "ts": "1714550600.000300"}]"#,
    ));
    let threads: Vec<_> = scan.events.iter().map(|e| e.thread_id.as_deref()).collect();
    let thread = Some("slack/general/1714550400.000100");
    assert_eq!(threads, [thread, thread, None]);
}

#[test]
fn authors_are_addressed_by_email_and_unknown_users_stand_for_themselves() {
    let scan = read(&general(
        r#"[{"user": "U1", "text": "hi <@U2> and <@U9|zed> and <@U8>", "ts": "1714550400.000100"},
            {"user": "U9", "text": "who am I", "ts": "1714550500.000100"}]"#,
    ));
    let first = &scan.events[0];
    assert_eq!(
        first.authors,
        vec![party("Ada Lovelace", "ada@example.org")]
    );
    assert_eq!(first.body, "hi @Bobby and @zed and @U8");
    assert_eq!(first.extras["mentions"], "U2,U9,U8");
    assert_eq!(first.participants[1], party("Bobby", "U2"));
    assert_eq!(scan.events[1].authors, vec![party("U9", "U9")]);
}

#[test]
fn missing_users_json_names_authors_by_user_id() {
    let dir = export(&[
        ("channels.json", CHANNELS),
        (
            "general/2024-05-01.json",
            r#"[{"user": "U1", "text": "hi <@U2>", "ts": "1714550400.000100"}]"#,
        ),
    ]);
    let scan = read(&dir);
    assert!(scan.dead_letters.is_empty());
    assert_eq!(scan.events[0].authors, vec![party("U1", "U1")]);
    assert_eq!(scan.events[0].body, "hi @U2");
}

#[test]
fn bots_files_and_direct_messages() {
    let dir = export(&[
        ("users.json", USERS),
        ("dms.json", r#"[{"id": "D1", "members": ["U1", "U2"]}]"#),
        (
            "D1/2024-05-01.json",
            r#"[{"subtype": "bot_message", "username": "deploybot", "bot_id": "B1",
                 "text": "deployed", "ts": "1714550400.000100"},
                {"user": "U2", "text": "", "ts": "1714550500.000100", "files": [
                 {"name": "a.png", "mimetype": "image/png", "size": 5},
                 {"url_private": "https://files.example/b"}, "junk"]}]"#,
        ),
    ]);
    let scan = read(&dir);
    assert!(scan.dead_letters.is_empty(), "{:?}", scan.dead_letters);
    let bot = &scan.events[0];
    assert_eq!(bot.source_id, "slack/D1/1714550400.000100");
    assert_eq!(bot.extras["channel_type"], "im");
    assert_eq!(bot.authors, vec![party("deploybot", "B1")]);
    let targets: Vec<_> = scan.events[1]
        .links
        .iter()
        .map(|l| (l.target.as_str(), l.media_type.as_deref(), l.size_bytes))
        .collect();
    assert_eq!(
        targets,
        [
            ("a.png", Some("image/png"), Some(5)),
            ("https://files.example/b", None, None)
        ]
    );
}

#[test]
fn markup_renders_channels_links_specials_and_escapes() {
    let mut directory = Directory::default();
    directory
        .channel_names
        .insert("C2".to_string(), "random".to_string());
    let mut rendered = Rendered::default();
    render_markup(
        "<#C1|general> <#C2> <https://x.io/?a=1&amp;b=2|docs> <mailto:a@b.c|a@b.c> <!here> \
         <!subteam^S1|@team> <> a &lt;b&gt; &amp;amp; &nbsp; <unclosed",
        &directory,
        &mut rendered,
    );
    assert_eq!(
        rendered.text,
        "#general #random docs (https://x.io/?a=1&b=2) a@b.c (mailto:a@b.c) @here @team <> \
         a <b> &amp; &nbsp; <unclosed"
    );
    assert_eq!(rendered.urls, ["https://x.io/?a=1&b=2"]);
}

#[test]
fn timestamps_parse_to_milliseconds_and_reject_garbage() {
    let ms = |ts: &str| Timestamp::parse(ts).map(Timestamp::millis);
    assert_eq!(ms("1714550400.123456"), Some(1_714_550_400_123));
    assert_eq!(ms("1714550400"), Some(1_714_550_400_000));
    for bad in [
        "",
        ".5",
        "1.2.3",
        "-1.0",
        "1e9",
        "9999999999999.0",
        "1.0000000001",
        "١.٢",
    ] {
        assert_eq!(ms(bad), None, "{bad:?}");
    }
}

#[test]
fn config_filters_channels_and_subtypes() {
    let dir = export(&[
        ("channels.json", CHANNELS),
        (
            "general/2024-05-01.json",
            r#"[{"user": "U1", "subtype": "channel_join", "text": "<@U1> joined", "ts": "1.1"},
                {"user": "U1", "text": "kept", "ts": "2.1"}]"#,
        ),
        (
            "random/2024-05-01.json",
            r#"[{"text": "unlisted", "ts": "3.1"}]"#,
        ),
    ]);
    let all = read(&dir);
    assert_eq!(all.events.len(), 3);
    assert_eq!(all.events[2].extras["channel_type"], "unlisted");
    let config = SlackConfig {
        channels: vec!["general".into()],
        skip_subtypes: vec!["channel_join".into()],
        ..SlackConfig::default()
    };
    let some = read_slack_export(dir.path(), "acme", &config, 1024).expect("read");
    let bodies: Vec<_> = some.events.iter().map(|e| e.body.as_str()).collect();
    assert_eq!(bodies, ["kept"]);
}

#[test]
fn config_defaults_fill_in_and_unknown_fields_are_refused() {
    let empty: SlackConfig = serde_json::from_str("{}").expect("empty config");
    assert_eq!(empty, SlackConfig::default());
    assert!(empty.include_attachments);
    let typo = serde_json::from_str::<SlackConfig>(r#"{"channel": ["general"]}"#);
    assert!(typo.is_err());
}

#[test]
fn oversized_day_file_is_dead_lettered_unread() {
    let dir = general(r#"[{"user": "U1", "text": "long enough", "ts": "1.1"}]"#);
    let config = SlackConfig {
        max_day_file_bytes: 10,
        ..SlackConfig::default()
    };
    let scan = read_slack_export(dir.path(), "acme", &config, 1024).expect("read");
    assert!(scan.events.is_empty());
    assert_eq!(scan.dead_letters.len(), 1);
    assert!(
        scan.dead_letters[0]
            .reason
            .contains("over the 10 byte limit")
    );
}

#[test]
fn broken_zips_are_dead_letters_bad_tenants_and_non_folders_config_errors() {
    let dir = general("[]");
    let zip = dir.path().join("export.ZIP");
    std::fs::write(&zip, b"PK\x03\x04").expect("write zip");
    let config = SlackConfig::default();
    let broken = read_slack_export(&zip, "acme", &config, 1).expect("a bad archive is data");
    assert!(broken.events.is_empty());
    assert!(broken.dead_letters[0].reason.contains(".zip"));
    let tenant = read_slack_export(dir.path(), "a/b", &config, 1).expect_err("tenant");
    assert!(matches!(tenant, SourceError::Config(_)));
    let file = dir.path().join("users.json");
    let not_folder = read_slack_export(&file, "acme", &config, 1).expect_err("file");
    assert!(matches!(not_folder, SourceError::Config(_)));
    let missing = read_slack_export(&dir.path().join("nope"), "acme", &config, 1);
    assert!(matches!(missing, Err(SourceError::Io { .. })));
}

const KEYS: [&str; 12] = [
    "ts",
    "text",
    "user",
    "subtype",
    "files",
    "file",
    "edited",
    "thread_ts",
    "attachments",
    "bot_id",
    "username",
    "comment",
];
const SCALARS: [&str; 14] = [
    "\"1714550400.000100\"",
    "\"1.2.3\"",
    "\"<@U1> <#C1|x> <http://a|b> <!here> &amp; &lt;\"",
    "\"<<<|>>>\"",
    "\"<@>\"",
    "\"\\u0000é\"",
    "\"bot_message\"",
    "\"U1\"",
    "null",
    "true",
    "17",
    "-1e300",
    "[]",
    "{}",
];

/// A random JSON value, mostly message-shaped objects.
fn random_json(rng: &mut Lcg, depth: usize) -> String {
    match rng.below(if depth > 3 { 1 } else { 4 }) {
        0 => rng.pick(&SCALARS).to_string(),
        1 => {
            let items: Vec<_> = (0..rng.below(4))
                .map(|_| random_json(rng, depth + 1))
                .collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let fields: Vec<_> = (0..rng.below(6))
                .map(|_| format!("\"{}\":{}", rng.pick(&KEYS), random_json(rng, depth + 1)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
    }
}

/// A message object with a valid `ts` and random other fields.
fn random_message(rng: &mut Lcg) -> String {
    let ts = format!(
        "\"{}.{:06}\"",
        1_700_000_000 + rng.below(1000),
        rng.below(1000)
    );
    let mut fields = vec![format!("\"ts\":{ts}")];
    for _ in 0..rng.below(5) {
        fields.push(format!("\"{}\":{}", rng.pick(&KEYS), random_json(rng, 2)));
    }
    format!("{{{}}}", fields.join(","))
}

/// Random bytes, JSON-ish token soup, or a well-formed array of random values.
fn random_day_file(rng: &mut Lcg) -> Vec<u8> {
    match rng.below(3) {
        0 => (0..rng.below(200)).map(|_| rng.next() as u8).collect(),
        1 => {
            let tokens = [
                "[", "]", "{", "}", ",", ":", "\"ts\"", "\"1.1\"", "\"<@U1\"", " ",
            ];
            let soup: String = (0..rng.below(40)).map(|_| rng.pick(&tokens)).collect();
            format!("[{soup}").into_bytes()
        }
        _ => {
            let items: Vec<_> = (0..rng.below(5))
                .map(|_| match rng.below(4) {
                    0 => random_json(rng, 1),
                    _ => random_message(rng),
                })
                .collect();
            format!("[{}]", items.join(",")).into_bytes()
        }
    }
}

/// 100,000 random day files (`EPIGRAPH_FUZZ_CASES` overrides the count): the read never fails
/// or panics, a file that is not a JSON array is one dead letter, and every item of an array is
/// either an event or a dead letter.
#[test]
fn random_day_files_never_panic_and_lose_nothing() {
    let dir = general("[]");
    let day = dir.path().join("general/2024-05-01.json");
    let mut rng = Lcg(0x5eed);
    let (mut letters, mut events) = (0, 0);
    let cases: usize = std::env::var("EPIGRAPH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    for case in 0..cases {
        let bytes = random_day_file(&mut rng);
        std::fs::write(&day, &bytes).expect("write day file");
        let scan = read(&dir);
        match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(serde_json::Value::Array(items)) => assert_eq!(
                scan.events.len() + scan.dead_letters.len(),
                items.len(),
                "case {case}: {}",
                String::from_utf8_lossy(&bytes)
            ),
            _ => assert_eq!(scan.dead_letters.len(), 1, "case {case}"),
        }
        letters += scan.dead_letters.len();
        events += scan.events.len();
    }
    assert!(
        letters > cases / 4,
        "only {letters} dead letters: the generator is too tame"
    );
    assert!(
        events > cases / 20,
        "only {events} events: the generator is too wild"
    );
}

/// The real fixture zipped (deflate), with and without a top folder: the same events as the
/// folder.
#[test]
fn a_zipped_export_reads_like_its_folder() {
    use std::io::Write;
    let fixture = epigraph_schemas::manifest_dir!().join("../tests/fixtures/slack-export");
    let config = SlackConfig::default();
    let from_folder = read_slack_export(&fixture, "acme", &config, 4096).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for top in ["", "export/"] {
        let zip_path = dir.path().join(format!("export{}.zip", top.len()));
        let mut writer = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for entry in walkdir::WalkDir::new(&fixture).sort_by_file_name() {
            let entry = entry.unwrap();
            let relative = entry.path().strip_prefix(&fixture).unwrap();
            if entry.file_type().is_file() {
                writer
                    .start_file(format!("{top}{}", relative.display()), options)
                    .unwrap();
                writer
                    .write_all(&std::fs::read(entry.path()).unwrap())
                    .unwrap();
            }
        }
        writer.finish().unwrap();
        let from_zip = read_slack_export(&zip_path, "acme", &config, 4096).unwrap();
        let ids = |scan: &Scan| -> Vec<(String, String)> {
            scan.events
                .iter()
                .map(|e| (e.source_id.clone(), e.version.clone()))
                .collect()
        };
        assert_eq!(ids(&from_zip), ids(&from_folder), "top folder {top:?}");
        assert_eq!(from_zip.dead_letters.len(), from_folder.dead_letters.len());
    }
}

#[test]
fn shared_files_the_export_holds_become_documents_linked_to_their_message() {
    let messages = r#"[
        {"type": "message", "user": "U1", "ts": "1714557600.000100", "text": "The launch plan, and the old memo.",
         "files": [
            {"id": "F1", "name": "plan.docx", "mimetype": "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "size": 5000},
            {"id": "F2", "name": "memo.pdf", "mimetype": "application/pdf", "url_private": "files/F2/memo.pdf"},
            {"id": "F3", "name": "gone.pdf", "mimetype": "application/pdf", "url_private": "https://files.slack.com/F3/gone.pdf"},
            {"id": "F4", "name": "photo.png", "mimetype": "image/png"},
            {"id": "F5", "name": "escape.pdf", "mimetype": "application/pdf", "url_private": "../outside.pdf"}
         ]}
    ]"#;
    let dir = general(messages);
    let docx =
        std::fs::read(epigraph_schemas::manifest_dir!().join("tests/fixtures/formats/plan.docx"))
            .unwrap();
    // slackdump's layout for F1; a rewritten relative URL for F2, which is not a PDF.
    std::fs::create_dir_all(dir.path().join("__uploads/F1")).unwrap();
    std::fs::write(dir.path().join("__uploads/F1/plan.docx"), &docx).unwrap();
    std::fs::create_dir_all(dir.path().join("files/F2")).unwrap();
    std::fs::write(dir.path().join("files/F2/memo.pdf"), b"not a pdf at all").unwrap();
    std::fs::write(dir.path().parent().unwrap().join("outside.pdf"), b"%PDF-").ok();
    let scan = read(&dir);
    let ids: Vec<&str> = scan.events.iter().map(|e| e.source_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "slack/general/1714557600.000100",
            "slack/general/1714557600.000100/file/F1"
        ],
        "the message first, then the one readable file the export holds"
    );
    let plan = &scan.events[1];
    assert_eq!(plan.source_kind, SourceKind::Document);
    assert!(
        plan.body
            .contains("We will launch Vortex on 19 March 2027."),
        "{}",
        plan.body
    );
    assert_eq!(plan.links[0].rel, "attached_to");
    assert_eq!(plan.links[0].target, "slack/general/1714557600.000100");
    assert_eq!(plan.occurred_at, scan.events[0].occurred_at);
    assert_eq!(plan.authors, scan.events[0].authors);
    assert_eq!(
        (
            plan.extras["file_id"].as_str(),
            plan.extras["file_name"].as_str(),
            plan.extras["format"].as_str()
        ),
        ("F1", "plan.docx", "docx")
    );
    // Every shared file stays a link of the message, held or not.
    assert_eq!(
        scan.events[0]
            .links
            .iter()
            .filter(|l| l.rel == "file")
            .count(),
        5
    );
    // The PDF that is not one: a dead letter naming the file; nothing outside the export read.
    assert_eq!(scan.dead_letters.len(), 1, "{:?}", scan.dead_letters);
    let letter = &scan.dead_letters[0];
    assert!(
        letter
            .reason
            .starts_with("files/F2/memo.pdf: not a readable PDF file"),
        "{}",
        letter.reason
    );
    assert!(
        letter.location.ends_with("files/F2/memo.pdf"),
        "{}",
        letter.location
    );

    // Off: the message alone.
    let config = SlackConfig {
        include_files: false,
        ..SlackConfig::default()
    };
    let off = read_slack_export(dir.path(), "acme", &config, 4096).unwrap();
    assert_eq!((off.events.len(), off.dead_letters.len()), (1, 0));
}
