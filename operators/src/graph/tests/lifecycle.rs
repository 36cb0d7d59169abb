//! Statements retiring an identifier through the whole dataflow (see `epistemic::lifecycle`):
//! release notes of three versions, the first describing a command, the second deprecating it,
//! the third removing it.

use epigraph_schemas::SourceKind;

use super::epistemics::{memories, relation, rounds, source};
use crate::model::{GraphElement, Standing};

const DESCRIBED: &str = "``syncdb`` now queries the database routers to determine if content types should be synchronised.";
const DEPRECATED: &str =
    "The ``syncdb`` command has been deprecated in favor of the new ``migrate`` command.";
const REMOVED: &str = "The ``syncdb`` command is removed.";

fn notes(version: &str, day: i64, body: &str) -> (crate::model::SourceVersion, isize) {
    let text = format!("# Django {version} release notes\n\n{body}\n");
    (
        source(
            &format!("django-{version}"),
            SourceKind::Document,
            day,
            &text,
        ),
        1,
    )
}

/// `(rel_type, from text, to text)` of the lifecycle edges.
fn edges(elements: &[GraphElement]) -> Vec<(String, String, String)> {
    let text: std::collections::BTreeMap<String, String> = memories(elements)
        .into_values()
        .map(|m| (m.id, m.text))
        .collect();
    let mut out: Vec<_> = ["SUPERSEDES", "IMPLEMENTS"]
        .iter()
        .flat_map(|t| relation(elements, t))
        .filter_map(|r| {
            Some((
                r.rel_type.clone(),
                text.get(&r.from)?.clone(),
                text.get(&r.to)?.clone(),
            ))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_deprecation_supersedes_what_named_it_and_the_removal_implements_the_deprecation() {
    let result = rounds(vec![
        (
            vec![notes("1.5", 1, DESCRIBED), notes("1.7", 400, DEPRECATED)],
            vec![],
        ),
        (vec![notes("1.9", 900, REMOVED)], vec![]),
        (vec![(notes("1.9", 900, REMOVED).0, -1)], vec![]),
    ]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        edges(&result[0]),
        [(s("SUPERSEDES"), s(DEPRECATED), s(DESCRIBED))],
        "the deprecation supersedes the description; `migrate`, its replacement, retires nothing"
    );
    let described = &memories(&result[0])[DESCRIBED];
    assert_eq!(described.standing, Standing::Superseded);
    assert_eq!(described.t_invalid, Some(400 * 86_400_000));
    assert_eq!(
        edges(&result[1]),
        [
            (s("IMPLEMENTS"), s(REMOVED), s(DEPRECATED)),
            (s("SUPERSEDES"), s(DEPRECATED), s(DESCRIBED)),
            (s("SUPERSEDES"), s(REMOVED), s(DESCRIBED)),
        ]
    );
    // The announcement came true: it is not superseded.
    assert_eq!(memories(&result[1])[DEPRECATED].standing, Standing::Current);
    let evidence = &relation(&result[1], "IMPLEMENTS")[0].evidence;
    assert_eq!(
        evidence,
        &["`syncdb`: announced (\"has been deprecated\") and carried out (\"is removed\")"]
    );
    assert_eq!(
        result[2], result[0],
        "deleting the removal retracts exactly what it drew"
    );
}

#[test]
fn an_earlier_mention_in_the_same_source_or_without_a_date_is_not_superseded() {
    let undated = {
        let mut s = source("notes-undated", SourceKind::Document, 1, DESCRIBED);
        s.occurred_at = None;
        s.recorded_at = None;
        (s, 1)
    };
    let both = format!("{DESCRIBED}\n\n{REMOVED}");
    let result = rounds(vec![(vec![undated, notes("1.9", 900, &both)], vec![])]);
    // Both statements are there to be judged, in both sources …
    let sources_of = |text: &str| -> Vec<String> {
        let mut sources: Vec<String> = result[0]
            .iter()
            .filter_map(|e| match e {
                GraphElement::Memory(m) if m.text == text => Some(m.source_id.clone()),
                _ => None,
            })
            .collect();
        sources.sort();
        sources
    };
    assert_eq!(sources_of(DESCRIBED), ["django-1.9", "notes-undated"]);
    assert_eq!(sources_of(REMOVED), ["django-1.9"]);
    // … and the removal supersedes neither its own source's mention nor an undated one.
    assert_eq!(edges(&result[0]), []);
}

const UNUSED: &str = "The ``box`` parameter is unused.";
const IT_WILL_GO: &str = "It will be removed in Django 2.0.";
const BOX_REMOVED: &str = "The ``box`` parameter was unused and has been removed.";

#[test]
fn a_statement_continuing_the_one_before_it_speaks_of_its_identifier() {
    let deprecation = format!("{UNUSED} {IT_WILL_GO}");
    let result = rounds(vec![
        (
            vec![
                notes("1.9", 400, &deprecation),
                notes("2.0", 900, BOX_REMOVED),
            ],
            vec![],
        ),
        (vec![(notes("1.9", 400, &deprecation).0, -1)], vec![]),
    ]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        edges(&result[0]),
        [(s("IMPLEMENTS"), s(BOX_REMOVED), s(IT_WILL_GO))],
        "\"It will be removed\" announces the removal of `box`: carried out, not superseded"
    );
    // Without the announcement the removal supersedes the description, as before.
    let alone = rounds(vec![(
        vec![notes("1.9", 400, UNUSED), notes("2.0", 900, BOX_REMOVED)],
        vec![],
    )]);
    assert_eq!(
        edges(&alone[0]),
        [(s("SUPERSEDES"), s(BOX_REMOVED), s(UNUSED))]
    );
    assert_eq!(
        edges(&result[1]),
        [],
        "deleting the notes retracts what they drew"
    );
    // A nested list item wrapped onto an indented line continues it too.
    let wrapped = format!("- Parameters:\n\n  - {UNUSED}\n    {IT_WILL_GO}");
    let nested = rounds(vec![(
        vec![notes("1.9", 400, &wrapped), notes("2.0", 900, BOX_REMOVED)],
        vec![],
    )]);
    assert_eq!(
        edges(&nested[0]),
        [(s("IMPLEMENTS"), s(BOX_REMOVED), s(IT_WILL_GO))]
    );
    // A statement between them breaks the thread: "It" is no longer `box`.
    let apart =
        format!("{UNUSED} The ``crop`` method keeps its arguments in this release. {IT_WILL_GO}");
    let broken = rounds(vec![(
        vec![notes("1.9", 400, &apart), notes("2.0", 900, BOX_REMOVED)],
        vec![],
    )]);
    assert_eq!(
        edges(&broken[0]),
        [(s("SUPERSEDES"), s(BOX_REMOVED), s(UNUSED))]
    );
}

const HEADED: &str = "``epoch2num`` and ``num2epoch`` are deprecated\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n\nThese are unused and can be easily reproduced by other date tools.\n`.get_epoch` will return Matplotlib's epoch.";
const BODY: &str = "These are unused and can be easily reproduced by other date tools.";
const HEADED_REMOVED: &str = "``epoch2num`` and ``num2epoch`` are removed.";

#[test]
fn a_heading_that_retires_speaks_through_the_first_statement_under_it() {
    let result = rounds(vec![
        (
            vec![notes("3.3", 400, HEADED), notes("3.7", 900, HEADED_REMOVED)],
            vec![],
        ),
        (vec![(notes("3.3", 400, HEADED).0, -1)], vec![]),
    ]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        edges(&result[0]),
        [(s("IMPLEMENTS"), s(HEADED_REMOVED), s(BODY))],
        "the heading announces the removal of both; its first statement carries it, once"
    );
    assert_eq!(
        edges(&result[1]),
        [],
        "deleting the notes retracts what they drew"
    );
}

const LISTED_DEPRECATED: &str = "Deprecations\n------------\n\nModules\n~~~~~~~\n\n- ``cbook.Bunch`` (use ``types.SimpleNamespace`` instead)\n- ``cbook.Locked`` and ``cbook.listFiles``\n";
const ENTRY_DEPRECATED: &str = "``cbook.Bunch`` (use ``types.SimpleNamespace`` instead)";
const LISTED_REMOVED: &str = "Removals\n--------\n\nClasses and methods\n~~~~~~~~~~~~~~~~~~~\n\nCode should import ``types.SimpleNamespace`` from the standard library.\n\n- ``cbook.Bunch`` (use ``types.SimpleNamespace``)\n";
const ENTRY_REMOVED: &str = "``cbook.Bunch`` (use ``types.SimpleNamespace``)";

#[test]
fn bare_entries_say_what_the_headings_above_them_say() {
    let result = rounds(vec![
        (
            vec![
                notes("3.0", 400, LISTED_DEPRECATED),
                notes("3.2", 900, LISTED_REMOVED),
            ],
            vec![],
        ),
        (vec![(notes("3.0", 400, LISTED_DEPRECATED).0, -1)], vec![]),
    ]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        edges(&result[0]),
        [(s("IMPLEMENTS"), s(ENTRY_REMOVED), s(ENTRY_DEPRECATED))],
        "an entry under Removals carries out what an entry under Deprecations announced; the \
         replacement in the aside and the prose under the heading retire nothing"
    );
    assert_eq!(
        edges(&result[1]),
        [],
        "deleting the notes retracts what they drew"
    );
}

const PICKER_DEPRECATED: &str = "Setting a Line2D's pickradius via ``set_picker`` is deprecated; use ``set_pickradius`` instead.";
const PICKER_UNDEPRECATED: &str = "Setting a Line2D's pickradius via ``set_picker`` is undeprecated\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n\nThis cancels the deprecation introduced in Matplotlib 3.3.0.\n";
const PICKER_CANCELLED: &str = "This cancels the deprecation introduced in Matplotlib 3.3.0.";
const HOLD_DEPRECATED: &str = "The 'hold' keyword argument and all functions and methods related to it are deprecated, along with the ``axes.hold`` rcParams entry.";
const HOLD_LISTED_REMOVED: &str = "Removed\n~~~~~~~\nThe following deprecated rcParams have been removed:\n\n- ``text.dvipnghack``\n- ``axes.hold``\n";

#[test]
fn an_undeprecation_supersedes_the_deprecation_and_a_listed_removal_implements_one() {
    let result = rounds(vec![
        (
            vec![
                notes("3.3", 400, PICKER_DEPRECATED),
                notes("3.4", 600, PICKER_UNDEPRECATED),
            ],
            vec![],
        ),
        (
            vec![
                notes("2.0", 100, HOLD_DEPRECATED),
                notes("3.1", 800, HOLD_LISTED_REMOVED),
            ],
            vec![],
        ),
        (vec![(notes("3.4", 600, PICKER_UNDEPRECATED).0, -1)], vec![]),
    ]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        edges(&result[0]),
        [(s("SUPERSEDES"), s(PICKER_CANCELLED), s(PICKER_DEPRECATED))],
        "the heading's undeprecation speaks through its first statement and supersedes the \
         deprecation it cancels (which nothing implements)"
    );
    assert_eq!(
        edges(&result[1]),
        [
            (s("IMPLEMENTS"), s("``axes.hold``"), s(HOLD_DEPRECATED)),
            (s("SUPERSEDES"), s(PICKER_CANCELLED), s(PICKER_DEPRECATED)),
        ],
        "an identifier listed \"along with\" the subject is deprecated too, and the one-word \
         entry under \"Removed\" is a statement that carries its removal out"
    );
    assert_eq!(
        edges(&result[2]),
        [(s("IMPLEMENTS"), s("``axes.hold``"), s(HOLD_DEPRECATED))],
        "deleting the undeprecation retracts its edge"
    );
}

const LEAD_IN_REMOVED: &str = "Backwards Incompatible Changes\n==============================\n\nSeveral methods that have been marked as deprecated for many releases\nhave been removed in this release:\n\n* ``Image.tostring()``\n* ``Image.fromstring()``\n";
const REMOVED_AGAIN: &str =
    "``Image.fromstring()`` has been removed, call ``Image.frombytes()`` instead.";

#[test]
fn entries_listed_after_a_lead_in_say_what_it_says() {
    let result = rounds(vec![(
        vec![
            notes("2.0", 100, DESCRIBED_FROMSTRING),
            notes("3.0", 400, LEAD_IN_REMOVED),
            notes("8.0", 900, REMOVED_AGAIN),
        ],
        vec![],
    )]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        edges(&result[0]),
        [
            (
                s("SUPERSEDES"),
                s("``Image.fromstring()``"),
                s(DESCRIBED_FROMSTRING)
            ),
            (s("SUPERSEDES"), s(REMOVED_AGAIN), s(DESCRIBED_FROMSTRING)),
            (
                s("SUPERSEDES"),
                s(REMOVED_AGAIN),
                s("``Image.fromstring()``")
            ),
        ],
        "the entry after \"… have been removed in this release:\" carries the removal out: it \
         supersedes what named the method before; a later removal of it supersedes the entry \
         (carried out again: the first removal had been undone or left a stub)"
    );
}

const DESCRIBED_FROMSTRING: &str =
    "Use ``Image.fromstring()`` to read raw pixel data from a string.";

const TABLE_DEPRECATED: &str = "Constants\n^^^^^^^^^\n\n=====================  ============================\nDeprecated             Use instead\n=====================  ============================\n``Image.LINEAR``       ``Image.Resampling.BILINEAR``\n``Image.ANTIALIAS``    ``Image.Resampling.LANCZOS``\n=====================  ============================\n";
const TABLE_REMOVED: &str = "Constants\n^^^^^^^^^\n\nA number of constants have been removed.\n\n=====================  ============================\nRemoved                Use instead\n=====================  ============================\n``Image.ANTIALIAS``    ``Image.LANCZOS`` or ``Image.Resampling.LANCZOS``\n=====================  ============================\n";
const ANTIALIAS_NAMED: &str = "The ``ANTIALIAS`` constant is left for backward compatibility.";

#[test]
fn a_tables_rows_say_what_its_header_says_of_their_first_cell() {
    let result = rounds(vec![(
        vec![
            notes("2.7", 100, ANTIALIAS_NAMED),
            notes("9.1", 400, TABLE_DEPRECATED),
            notes("10.0", 900, TABLE_REMOVED),
        ],
        vec![],
    )]);
    let s = |x: &str| x.to_string();
    let deprecated = "``Image.ANTIALIAS`` ``Image.Resampling.LANCZOS``";
    let removed = "``Image.ANTIALIAS`` ``Image.LANCZOS`` or ``Image.Resampling.LANCZOS``";
    assert_eq!(
        edges(&result[0]),
        [
            (s("IMPLEMENTS"), s(removed), s(deprecated)),
            (s("SUPERSEDES"), s(removed), s(ANTIALIAS_NAMED)),
            (s("SUPERSEDES"), s(deprecated), s(ANTIALIAS_NAMED)),
        ],
        "a row under \"Deprecated | Use instead\" announces its first cell, one under \"Removed | \
         Use instead\" carries it out; what to use instead is only named"
    );
}

const STEM_DEPRECATED: &str = "Deprecations\n============\n\n``stem(..., use_line_collection=False)``\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n\n... is deprecated with no replacement. This was a compatibility fallback to a\nformer more inefficient representation of the stem lines.\n";
const STEM_REMOVED: &str = "Removals\n========\n\n``stem(..., use_line_collection=False)``\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n\n... is no longer supported. This was a compatibility fallback to a\nformer more inefficient representation of the stem lines.\n";

#[test]
fn a_statement_opening_with_an_ellipsis_finishes_its_headings_sentence() {
    let result = rounds(vec![(
        vec![
            notes("3.6", 400, STEM_DEPRECATED),
            notes("3.8", 900, STEM_REMOVED),
        ],
        vec![],
    )]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        edges(&result[0]),
        [(
            s("IMPLEMENTS"),
            s("... is no longer supported."),
            s("... is deprecated with no replacement.")
        )],
        "the keyword the heading's call passes is what \"...\" retires: 3.6 announces its \
         removal and 3.8 carries it out"
    );
}
