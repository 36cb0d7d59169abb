//! The learned second opinion on a unit's epistemic type: a multinomial logistic regression over
//! hashed words and bigrams of the unit, the words of its section heading, a few structural
//! signals and the rule classifier's per-type scores.
//!
//! It is trained offline (`eval/extraction/train_typer.py`) and shipped as
//! `ontology/typer.toml`; this module only computes the features and the arg-max. Everything is
//! pure and deterministic: the same unit and weights always give the same type, so inside
//! differential dataflow a retraction removes exactly what the insertion added.
//!
//! The feature hashing must match the Python script bit for bit: a feature is a string
//! (`w:word`, `b:word word`, `s:word`, `x:flag`, `r:TYPE`), hashed with FNV-1a 64 over its UTF-8
//! bytes, modulo the dimension.

use epigraph_schemas::SourceKind;

use crate::model::{EpistemicType, UnitForm, parse_type};

/// FNV-1a, 64 bits, over the bytes of `s`.
///
/// ```
/// use epigraph_operators::extract::typer::fnv1a64;
/// assert_eq!(fnv1a64(""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(fnv1a64("a"), 0xaf63_dc4c_8601_ec8c);
/// assert_eq!(fnv1a64("w:must") % 4096, 13);
/// ```
pub fn fnv1a64(s: &str) -> u64 {
    Fnv::START.with(s.as_bytes()).0
}

/// The words of a text: maximal runs of ASCII letters and digits, lower-cased, every digit
/// written `0` (so `2.4` and `3.1` are both `0 0`). Any other character separates words.
///
/// ```
/// use epigraph_operators::extract::typer::words;
/// assert_eq!(words("Python 2.4 MUST ship—soon?"), ["python", "0", "0", "must", "ship", "soon"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() {
            current.push(if byte.is_ascii_digit() {
                '0'
            } else {
                char::from(byte.to_ascii_lowercase())
            });
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// What the learned typer reads about one unit.
#[derive(Clone, Copy, Debug)]
pub struct TyperInput<'a> {
    /// The unit's text (whitespace collapsed, as the segmenter gives it).
    pub text: &'a str,
    /// Its section heading.
    pub section: Option<&'a str>,
    /// The kind of its source.
    pub kind: SourceKind,
    /// Sentence, list item or header line.
    pub form: UnitForm,
    /// The rule classifier's score of each type, in [`EpistemicType::ALL`] order.
    pub rule_scores: [u32; 9],
    /// The rule classifier's type.
    pub rule_type: EpistemicType,
}

/// Modal verbs and imperative openers whose presence as the first word is a feature of its own.
const OPENERS: [&str; 24] = [
    "must", "should", "shall", "may", "might", "could", "would", "will", "can", "do", "don", "use",
    "avoid", "always", "never", "please", "let", "make", "add", "remove", "consider", "note",
    "see", "if",
];

/// The feature strings of a unit (before hashing), without duplicates, sorted.
///
/// ```
/// use epigraph_operators::EpistemicType;
/// use epigraph_operators::extract::{segment::UnitForm, typer::{TyperInput, feature_strings}};
/// use epigraph_schemas::SourceKind;
/// let input = TyperInput {
///     text: "Should we ship it?", section: Some("Open Issues"), kind: SourceKind::Document,
///     form: UnitForm::Sentence, rule_scores: [0; 9], rule_type: EpistemicType::Question,
/// };
/// let f = feature_strings(&input);
/// for expected in ["w:should", "b:we ship", "b:^ should", "s:issues", "x:question_mark",
///                  "x:first:should", "x:kind:document", "x:form:sentence", "r:QUESTION"] {
///     assert!(f.contains(&expected.to_string()), "{expected} in {f:?}");
/// }
/// ```
pub fn feature_strings(input: &TyperInput) -> Vec<String> {
    let mut out = Vec::new();
    let w = words(input.text);
    for word in &w {
        out.push(format!("w:{word}"));
    }
    let mut previous = "^";
    for word in &w {
        out.push(format!("b:{previous} {word}"));
        previous = word;
    }
    if !w.is_empty() {
        out.push(format!("b:{previous} $"));
    }
    for word in words(input.section.unwrap_or("")) {
        out.push(format!("s:{word}"));
    }
    let text = input.text.trim();
    if text.ends_with('?') {
        out.push("x:question_mark".into());
    } else if text.contains('?') {
        out.push("x:inner_question_mark".into());
    }
    if text.bytes().any(|b| b.is_ascii_digit()) {
        out.push("x:digit".into());
    }
    if text.contains('%') {
        out.push("x:percent".into());
    }
    if text.contains("http://") || text.contains("https://") {
        out.push("x:url".into());
    }
    if text.starts_with('(') {
        out.push("x:parenthesised".into());
    }
    if text.starts_with("..") {
        out.push("x:directive".into());
    }
    if let Some(first) = w.first()
        && OPENERS.contains(&first.as_str())
    {
        out.push(format!("x:first:{first}"));
    }
    let length = match w.len() {
        0..=3 => "short",
        4..=10 => "medium",
        11..=25 => "long",
        _ => "very_long",
    };
    out.push(format!("x:length:{length}"));
    out.push(format!("x:kind:{}", input.kind.as_str()));
    let form = match input.form {
        UnitForm::Header => "header",
        UnitForm::ListItem => "list",
        UnitForm::Sentence => "sentence",
    };
    out.push(format!("x:form:{form}"));
    if input.rule_scores.iter().all(|s| *s == 0) {
        out.push("r:none".into());
    }
    out.push(format!("r:{}", input.rule_type.name()));
    out.sort();
    out.dedup();
    out
}

/// FNV-1a 64 fed piece by piece: hashing `"w:"` then `"must"` equals [`fnv1a64`]`("w:must")`,
/// so features are hashed without building their strings.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    const START: Fnv = Fnv(0xcbf2_9ce4_8422_2325);

    fn with(mut self, bytes: &[u8]) -> Self {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }
}

/// The words of `text` as [`words`] gives them, written into `buffer`; returns their spans.
fn word_spans(text: &str, buffer: &mut Vec<u8>) -> Vec<(usize, usize)> {
    buffer.clear();
    let mut spans = Vec::new();
    let mut start = 0;
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() {
            buffer.push(if byte.is_ascii_digit() {
                b'0'
            } else {
                byte.to_ascii_lowercase()
            });
        } else if buffer.len() > start {
            spans.push((start, buffer.len()));
            start = buffer.len();
        }
    }
    if buffer.len() > start {
        spans.push((start, buffer.len()));
    }
    spans
}

/// The hashed feature indices of a unit (each counts 1), sorted and without duplicates: the
/// indices of [`feature_strings`], computed without allocating a string per feature (the
/// typer runs on every typed unit of the extractor's hot path).
pub fn hashed_features(input: &TyperInput, dim: u32) -> Vec<u32> {
    let dim = u64::from(dim.max(1));
    let mut out: Vec<u32> = Vec::with_capacity(64);
    let mut push = |hash: Fnv| out.push((hash.0 % dim) as u32);
    let mut text_words = Vec::with_capacity(input.text.len());
    let spans = word_spans(input.text, &mut text_words);
    let word = |&(a, b): &(usize, usize)| &text_words[a..b];
    let (w, b) = (Fnv::START.with(b"w:"), Fnv::START.with(b"b:"));
    for span in &spans {
        push(w.with(word(span)));
    }
    let mut previous: &[u8] = b"^";
    for span in &spans {
        push(b.with(previous).with(b" ").with(word(span)));
        previous = word(span);
    }
    if !spans.is_empty() {
        push(b.with(previous).with(b" $"));
    }
    let mut section_words = Vec::new();
    let section = Fnv::START.with(b"s:");
    for (a, z) in word_spans(input.section.unwrap_or(""), &mut section_words) {
        push(section.with(&section_words[a..z]));
    }
    let flag = |name: &str| Fnv::START.with(b"x:").with(name.as_bytes());
    let text = input.text.trim();
    if text.ends_with('?') {
        push(flag("question_mark"));
    } else if text.contains('?') {
        push(flag("inner_question_mark"));
    }
    if text.bytes().any(|b| b.is_ascii_digit()) {
        push(flag("digit"));
    }
    if text.contains('%') {
        push(flag("percent"));
    }
    if text.contains("http://") || text.contains("https://") {
        push(flag("url"));
    }
    if text.starts_with('(') {
        push(flag("parenthesised"));
    }
    if text.starts_with("..") {
        push(flag("directive"));
    }
    if let Some(first) = spans.first().map(word)
        && OPENERS.iter().any(|o| o.as_bytes() == first)
    {
        push(flag("first:").with(first));
    }
    let length = match spans.len() {
        0..=3 => "short",
        4..=10 => "medium",
        11..=25 => "long",
        _ => "very_long",
    };
    push(flag("length:").with(length.as_bytes()));
    push(flag("kind:").with(input.kind.as_str().as_bytes()));
    let form = match input.form {
        UnitForm::Header => "header",
        UnitForm::ListItem => "list",
        UnitForm::Sentence => "sentence",
    };
    push(flag("form:").with(form.as_bytes()));
    if input.rule_scores.iter().all(|s| *s == 0) {
        push(Fnv::START.with(b"r:none"));
    }
    push(
        Fnv::START
            .with(b"r:")
            .with(input.rule_type.name().as_bytes()),
    );
    out.sort_unstable();
    out.dedup();
    out
}

/// The rule scores as dense features: `ln(1 + score)` per type.
pub fn rule_features(scores: &[u32; 9]) -> [f64; 9] {
    scores.map(|s| f64::from(s).ln_1p())
}

/// Why a `[typer]` table does not make a typer.
#[derive(Debug, thiserror::Error)]
pub enum TyperError {
    /// A class is neither one of the nine types nor `NOISE`.
    #[error("[typer] class {0:?} is not a type or NOISE")]
    UnknownClass(String),
    /// Fewer than two classes, or a hashing dimension of 0.
    #[error("[typer] needs at least two classes and a dimension")]
    TooSmall {
        /// Number of classes.
        classes: usize,
        /// Hashing dimension.
        dim: u32,
    },
    /// `bias` or `rule` does not have one value per class (and `rule` one row per type).
    #[error("[typer] bias must have {classes} values and rule 9 rows of {classes}")]
    Shape {
        /// Number of classes.
        classes: usize,
    },
    /// A row does not start with a feature index below the dimension.
    #[error("[typer] row {row:?}: bad feature index")]
    BadIndex {
        /// The row as written.
        row: String,
    },
    /// A weight of a row is not a number.
    #[error("[typer] row {row:?}: {source}")]
    BadWeight {
        /// The row as written.
        row: String,
        /// Why the weight does not parse.
        source: std::num::ParseFloatError,
    },
    /// A row does not have one weight per class.
    #[error("[typer] row {row:?}: expected {expected} weights")]
    WeightCount {
        /// The row as written.
        row: String,
        /// Number of classes.
        expected: usize,
        /// Weights found.
        found: usize,
    },
}

/// A trained linear model over the features above (see `ontology/typer.toml`).
#[derive(Clone, Debug, PartialEq)]
pub struct Typer {
    /// Name and date of the model, for provenance.
    pub model: String,
    /// Hashing dimension.
    pub dim: u32,
    /// The classes: some of the nine types and `NOISE` (no memory object).
    pub classes: Vec<Option<EpistemicType>>,
    /// Per class.
    pub bias: Vec<f64>,
    /// `rule[t][c]`: weight of the rule feature of type `t` (in [`EpistemicType::ALL`] order)
    /// for class `c`.
    pub rule: Vec<Vec<f64>>,
    /// `hashed[i * classes + c]`: weight of hashed feature `i` for class `c`.
    pub hashed: Vec<f64>,
}

impl Typer {
    /// The class probabilities of a unit, in [`Typer::classes`] order.
    pub fn probabilities(&self, input: &TyperInput) -> Vec<f64> {
        let n = self.classes.len();
        let mut logits = self.bias.clone();
        for i in hashed_features(input, self.dim) {
            let row = &self.hashed[i as usize * n..(i as usize + 1) * n];
            for (l, w) in logits.iter_mut().zip(row) {
                *l += w;
            }
        }
        for (value, row) in rule_features(&input.rule_scores).iter().zip(&self.rule) {
            for (l, w) in logits.iter_mut().zip(row) {
                *l += value * w;
            }
        }
        let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exp: Vec<f64> = logits.iter().map(|l| (l - max).exp()).collect();
        let sum: f64 = exp.iter().sum();
        exp.iter().map(|e| e / sum).collect()
    }

    /// The most probable class (`None`: noise) and its probability; ties go to the earlier
    /// class.
    ///
    /// ```
    /// use epigraph_operators::{EpistemicType, Ontology};
    /// use epigraph_operators::extract::{segment::UnitForm, typer::TyperInput};
    /// use epigraph_schemas::SourceKind;
    /// let ontology = Ontology::bundled();
    /// let typer = ontology.typer.as_ref().expect("the bundled ontology ships a typer");
    /// let input = TyperInput {
    ///     text: "Should dicts and sets automatically freeze their mutable keys?",
    ///     section: Some("Open Issues"), kind: SourceKind::Document, form: UnitForm::ListItem,
    ///     rule_scores: [0, 0, 0, 0, 0, 0, 0, 0, 8], rule_type: EpistemicType::Question,
    /// };
    /// assert_eq!(typer.predict(&input).0, Some(EpistemicType::Question));
    /// ```
    pub fn predict(&self, input: &TyperInput) -> (Option<EpistemicType>, f64) {
        let p = self.probabilities(input);
        let mut best = 0;
        for (i, v) in p.iter().enumerate() {
            if *v > p[best] {
                best = i;
            }
        }
        (self.classes[best], p[best])
    }

    /// Parses the `[typer]` table of an ontology file.
    pub fn from_spec(spec: TyperFile) -> Result<Self, TyperError> {
        let classes = spec
            .classes
            .iter()
            .map(|c| {
                if c.eq_ignore_ascii_case("NOISE") {
                    Ok(None)
                } else {
                    parse_type(c)
                        .map(Some)
                        .ok_or_else(|| TyperError::UnknownClass(c.clone()))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let n = classes.len();
        if n < 2 || spec.dim == 0 {
            return Err(TyperError::TooSmall {
                classes: n,
                dim: spec.dim,
            });
        }
        if spec.bias.len() != n || spec.rule.len() != 9 || spec.rule.iter().any(|r| r.len() != n) {
            return Err(TyperError::Shape { classes: n });
        }
        let mut hashed = vec![0.0; spec.dim as usize * n];
        for row in &spec.rows {
            let mut fields = row.split_ascii_whitespace();
            let index: usize = fields
                .next()
                .and_then(|f| f.parse().ok())
                .filter(|i| *i < spec.dim as usize)
                .ok_or_else(|| TyperError::BadIndex { row: row.clone() })?;
            let weights = fields
                .map(|f| f.parse::<f64>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|source| TyperError::BadWeight {
                    row: row.clone(),
                    source,
                })?;
            if weights.len() != n {
                return Err(TyperError::WeightCount {
                    row: row.clone(),
                    expected: n,
                    found: weights.len(),
                });
            }
            hashed[index * n..(index + 1) * n].copy_from_slice(&weights);
        }
        Ok(Typer {
            model: spec.model,
            dim: spec.dim,
            classes,
            bias: spec.bias,
            rule: spec.rule,
            hashed,
        })
    }
}

/// The `[typer]` table as written in `ontology/typer.toml`.
#[derive(Clone, Debug, serde::Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TyperFile {
    /// `false` turns the learned typer off (the rules alone type units).
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// Name and date of the model.
    #[serde(default)]
    pub model: String,
    /// Hashing dimension.
    #[serde(default)]
    pub dim: u32,
    /// Class names: types and `NOISE`.
    #[serde(default)]
    pub classes: Vec<String>,
    /// Per class.
    #[serde(default)]
    pub bias: Vec<f64>,
    /// Nine rows (one per type, in Table 1 order) of one weight per class.
    #[serde(default)]
    pub rule: Vec<Vec<f64>>,
    /// `"<index> <w_class0> <w_class1> …"` per hashed feature with a non-zero weight.
    #[serde(default)]
    pub rows: Vec<String>,
}

fn enabled() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ontology::Ontology;

    /// Written by `eval/extraction/train_typer.py` from the exported weights.
    const FIXTURES: &str = include_str!("../extract/typer_fixtures.json");

    fn fixtures() -> serde_json::Value {
        serde_json::from_str(FIXTURES).unwrap()
    }

    #[test]
    fn the_hashing_matches_python() {
        let f = fixtures();
        let dim = f["dim"].as_u64().unwrap();
        for h in f["hashes"].as_array().unwrap() {
            let feature = h["feature"].as_str().unwrap();
            let expected: u64 = h["fnv1a64"].as_str().unwrap().parse().unwrap();
            assert_eq!(fnv1a64(feature), expected, "{feature:?}");
            assert_eq!(fnv1a64(feature) % dim, h["index"].as_u64().unwrap());
        }
    }

    /// The allocation-free hashing gives exactly the indices of the feature strings (which
    /// Python recomputes when training), whatever the text.
    #[test]
    fn hashed_features_are_the_hashes_of_the_feature_strings() {
        let texts = [
            "",
            "   ",
            "?",
            "Should dicts and sets automatically freeze their mutable keys?",
            "Python 2.4 MUST ship—soon? Maybe (or not) in 3.1.",
            "(see http://example.org) 15% faster",
            ".. [1] https://peps.python.org/pep-0008/",
            "use unittest or py.test; up to you",
            "Café naïve façade — ünïcödé only",
            "a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc",
            "x",
        ];
        let sections = [
            None,
            Some(""),
            Some("Open Issues"),
            Some("Rationale 2.0 — why?"),
        ];
        let forms = [UnitForm::Header, UnitForm::ListItem, UnitForm::Sentence];
        let kinds = [SourceKind::Chat, SourceKind::Document];
        let mut checked = 0;
        for (i, text) in texts.iter().enumerate() {
            for (j, section) in sections.iter().enumerate() {
                let rule_scores = if (i + j) % 3 == 0 {
                    [0; 9]
                } else {
                    [i as u32, 0, 3, 0, 0, j as u32, 0, 1, 0]
                };
                let input = TyperInput {
                    text,
                    section: *section,
                    kind: kinds[(i + j) % 2],
                    form: forms[(i * 4 + j) % 3],
                    rule_scores,
                    rule_type: EpistemicType::ALL[(i + j) % 9],
                };
                for dim in [7, 4_096, 32_768] {
                    let mut expected: Vec<u32> = feature_strings(&input)
                        .iter()
                        .map(|f| (fnv1a64(f) % u64::from(dim)) as u32)
                        .collect();
                    expected.sort_unstable();
                    expected.dedup();
                    assert_eq!(hashed_features(&input, dim), expected, "{input:?} at {dim}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, texts.len() * sections.len() * 3);
    }

    #[test]
    fn the_bundled_typer_matches_python_probabilities() {
        let f = fixtures();
        let ontology = Ontology::bundled();
        let typer = ontology
            .typer
            .as_ref()
            .expect("the bundled ontology ships a typer");
        assert_eq!(u64::from(typer.dim), f["dim"].as_u64().unwrap());
        let names: Vec<String> = typer
            .classes
            .iter()
            .map(|c| c.map_or("NOISE".to_string(), |t| t.name()))
            .collect();
        let expected_names: Vec<String> = f["classes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, expected_names);
        let units = f["units"].as_array().unwrap();
        assert!(units.len() >= 5);
        for u in units {
            let form = match u["form"].as_str().unwrap() {
                "header" => UnitForm::Header,
                "list" => UnitForm::ListItem,
                _ => UnitForm::Sentence,
            };
            let scores: Vec<u32> = u["rule_scores"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_u64().unwrap() as u32)
                .collect();
            let input = TyperInput {
                text: u["text"].as_str().unwrap(),
                section: u["section"].as_str(),
                kind: SourceKind::parse(u["kind"].as_str().unwrap()).unwrap(),
                form,
                rule_scores: scores.try_into().unwrap(),
                rule_type: parse_type(u["rule_type"].as_str().unwrap()).unwrap(),
            };
            let got = typer.probabilities(&input);
            let want: Vec<f64> = u["probabilities"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_f64().unwrap())
                .collect();
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-9, "{}: {got:?} vs {want:?}", u["id"]);
            }
        }
    }

    #[test]
    fn a_file_can_turn_the_typer_off() {
        let mut sources = Ontology::bundled_sources_for_tests();
        assert!(
            Ontology::from_sources(sources.clone())
                .unwrap()
                .typer
                .is_some()
        );
        sources.push(("off.toml".into(), "[typer]\nenabled = false\n".into()));
        assert!(Ontology::from_sources(sources).unwrap().typer.is_none());
    }

    #[test]
    fn features_are_deterministic_and_sorted() {
        let input = TyperInput {
            text: "The benchmark shows a 15% speed-up.",
            section: Some("Performance"),
            kind: SourceKind::Document,
            form: UnitForm::Sentence,
            rule_scores: [0, 0, 6, 0, 0, 0, 0, 0, 0],
            rule_type: EpistemicType::Evidence,
        };
        let a = hashed_features(&input, 8192);
        assert_eq!(a, hashed_features(&input, 8192));
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        let f = feature_strings(&input);
        assert!(f.contains(&"x:percent".to_string()) && f.contains(&"x:digit".to_string()));
        assert!(!f.contains(&"r:none".to_string()));
    }
}
