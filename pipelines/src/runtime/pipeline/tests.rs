use super::*;

#[test]
fn caught_up_needs_every_nonempty_partition_read_to_its_end() {
    let marks = Offsets::from([(("a".into(), 0), 3), (("b".into(), 0), 0)]);
    assert!(!caught_up(&Offsets::new(), &marks));
    assert!(caught_up(&Offsets::from([(("a".into(), 0), 3)]), &marks));
}

#[test]
fn a_key_that_disagrees_with_its_event_is_rejected() {
    let event = SourceEvent::upsert(
        "acme",
        epigraph_schemas::SourceKind::Document,
        "a.md",
        None,
        "x".into(),
        0,
    );
    assert!(validate("acme/a.md", event.clone()).is_ok());
    assert!(
        validate("other/a.md", event)
            .unwrap_err()
            .to_string()
            .contains("does not match")
    );
}
