use super::*;

#[test]
fn the_bundled_ontology_has_the_oida_priors_and_coefficients() {
    let ontology = Ontology::bundled();
    let prior = |t| ontology.type_spec(t).priority;
    assert_eq!(prior(EpistemicType::Decision), 1.0);
    assert_eq!(prior(EpistemicType::Question), 0.3);
    assert_eq!(ontology.type_spec(EpistemicType::Question).lambda, -0.010);
    assert_eq!(ontology.edge("SUPPORTS").unwrap().coefficient, 1.0);
    assert_eq!(ontology.edge("CONTRADICTS").unwrap().coefficient, -0.6);
    assert!(ontology.edge("CONTRADICTS").unwrap().penalises);
    let works_on = ontology.relation("works_on").unwrap();
    assert!(works_on.fits("Person", "Project"));
    assert!(!works_on.fits("Project", "Person"));
    assert_eq!(
        ontology.default_type(SourceKind::Chat),
        EpistemicType::Observation
    );
}

#[test]
fn a_kind_and_a_relation_are_added_without_code() {
    let mut sources = Ontology::bundled_sources();
    sources.push((
        "contracts.toml".into(),
        r#"
        [[kind]]
        name = "Contract"
        name_suffixes = ["Agreement", "Contract"]

        [[relation]]
        name = "party_to"
        group = "commerce"
        signature = "Organization --party_to--> Contract"
        cues = ["signed", "is party to", "is a party to"]
        temporal = "dynamic"
        "#
        .into(),
    ));
    let ontology = Ontology::from_sources(sources).unwrap();
    assert!(ontology.kind("Contract").is_some());
    assert!(
        ontology
            .relation("party_to")
            .unwrap()
            .fits("Organization", "Contract")
    );
}

#[test]
fn invalid_ontologies_are_refused_with_the_reason() {
    let with = |extra: &str| {
        let mut sources = Ontology::bundled_sources();
        sources.push(("extra.toml".into(), extra.into()));
        Ontology::from_sources(sources).unwrap_err().to_string()
    };
    let unknown_kind = with(
        "[[relation]]\nname = \"x\"\ngroup = \"g\"\nsignature = \"Person --x--> Spaceship\"\ncues = [\"y\"]\ntemporal = \"static\"",
    );
    assert!(unknown_kind.contains("Spaceship"), "{unknown_kind}");
    let bad_signature = with(
        "[[relation]]\nname = \"x\"\ngroup = \"g\"\nsignature = \"Person -> Person\"\ncues = [\"y\"]\ntemporal = \"static\"",
    );
    assert!(bad_signature.contains("signature"), "{bad_signature}");
    let bad_type = with(
        "[[type]]\nname = \"RUMOUR\"\npriority = 0.1\nlambda = 0.0\ntemporal_type = \"dynamic\"",
    );
    assert!(bad_type.contains("RUMOUR"), "{bad_type}");
    let bad_field = with("[[kind]]\nname = \"X\"\ncolour = \"red\"");
    assert!(bad_field.contains("extra.toml"), "{bad_field}");
    let bad_edge = with("[[edge]]\nname = \"LOVES\"\ncoefficient = 3.0");
    assert!(bad_edge.contains("LOVES"), "{bad_edge}");
}
