//! A bound on what a datum may claim before it is decoded.
//!
//! The Avro decoder trusts the lengths and block counts a datum states: an array that says it
//! has 500 million items gets room for 500 million values reserved before the first is read (up
//! to `apache_avro`'s allocation limit, 512 MiB of *items*), so one mutated byte in a Kafka
//! payload could take tens of gigabytes and the process with it (found by
//! `codec::tests::decoding_never_panics_on_100k_mutated_payloads`, killed by the OOM killer).
//! [`check_bounded`] walks the datum along the writer schema first, without allocating, and
//! refuses one whose string, bytes, array or map claims more than the bytes left: an item that
//! takes at least one byte cannot be more numerous than the bytes left, so a real datum never
//! does. Items that may take no byte at all (`null`, an empty record: possible in schemas other
//! systems register) are allowed up to [`MAX_EMPTY_ITEMS`] per block.

use std::collections::BTreeMap;

use apache_avro::Schema;

/// Why a datum was refused before decoding.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BoundError {
    /// A length or count is larger than what is left of the payload.
    #[error("a {what} claims {claimed} {unit} with {left} bytes left in the payload")]
    Overlong {
        /// `string`, `bytes`, `array` or `map`.
        what: &'static str,
        /// What the datum says.
        claimed: i64,
        /// `bytes` or `items`.
        unit: &'static str,
        /// What is left.
        left: usize,
    },
    /// The datum ends inside a value.
    #[error("the datum ends inside a value")]
    Truncated,
    /// A variable-length integer longer than 10 bytes, or a union branch that does not exist.
    #[error("malformed datum: {0}")]
    Malformed(&'static str),
}

/// Checks that every length and block count `datum` states fits in the bytes it has left, read
/// along `schema` (the writer's), without decoding anything.
///
/// ```
/// use epigraph_schemas::bounded::check_bounded;
/// let schema = apache_avro::Schema::parse_str(r#"{"type": "array", "items": "string"}"#).unwrap();
/// // Two items, "a" and "bc", then the end of the array.
/// assert!(check_bounded(&schema, &[4, 2, b'a', 4, b'b', b'c', 0]).is_ok());
/// // An array that claims 2^62 items in three bytes.
/// assert!(check_bounded(&schema, &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0]).is_err());
/// ```
pub fn check_bounded(schema: &Schema, datum: &[u8]) -> Result<(), BoundError> {
    let mut named = BTreeMap::new();
    collect_named(schema, &mut named);
    let mut at = 0;
    walk(schema, &named, datum, &mut at, 0)
}

fn collect_named<'a>(schema: &'a Schema, named: &mut BTreeMap<String, &'a Schema>) {
    match schema {
        Schema::Record(r) => {
            named.insert(r.name.fullname(None), schema);
            for field in &r.fields {
                collect_named(&field.schema, named);
            }
        }
        Schema::Enum(e) => {
            named.insert(e.name.fullname(None), schema);
        }
        Schema::Fixed(f) => {
            named.insert(f.name.fullname(None), schema);
        }
        Schema::Array(a) => collect_named(&a.items, named),
        Schema::Map(m) => collect_named(&m.types, named),
        Schema::Union(u) => u.variants().iter().for_each(|v| collect_named(v, named)),
        _ => {}
    }
}

/// How many items that take no byte a block may hold.
pub const MAX_EMPTY_ITEMS: u64 = 1 << 20;

/// Whether a value of `schema` may take no byte.
fn may_be_empty(schema: &Schema, named: &BTreeMap<String, &Schema>, depth: usize) -> bool {
    match schema {
        Schema::Null => true,
        Schema::Fixed(f) => f.size == 0,
        Schema::Record(r) => {
            depth < MAX_DEPTH
                && r.fields
                    .iter()
                    .all(|f| may_be_empty(&f.schema, named, depth + 1))
        }
        Schema::Ref { name } => named
            .get(&name.fullname(None))
            .is_some_and(|s| depth < MAX_DEPTH && may_be_empty(s, named, depth + 1)),
        _ => false,
    }
}

/// Deeper than any schema of ours nests: a recursive schema and a hostile datum stop here.
const MAX_DEPTH: usize = 64;

fn walk(
    schema: &Schema,
    named: &BTreeMap<String, &Schema>,
    datum: &[u8],
    at: &mut usize,
    depth: usize,
) -> Result<(), BoundError> {
    if depth > MAX_DEPTH {
        return Err(BoundError::Malformed(
            "nested deeper than any schema allows",
        ));
    }
    let left = |at: &usize| datum.len().saturating_sub(*at);
    match schema {
        Schema::Null => Ok(()),
        Schema::Boolean => skip(datum, at, 1),
        Schema::Int
        | Schema::Long
        | Schema::Enum(_)
        | Schema::Date
        | Schema::TimeMillis
        | Schema::TimeMicros
        | Schema::TimestampMillis
        | Schema::TimestampMicros
        | Schema::TimestampNanos
        | Schema::LocalTimestampMillis
        | Schema::LocalTimestampMicros
        | Schema::LocalTimestampNanos => varint(datum, at).map(|_| ()),
        Schema::Float => skip(datum, at, 4),
        Schema::Double => skip(datum, at, 8),
        Schema::Fixed(f) => skip(datum, at, f.size),
        Schema::Duration => skip(datum, at, 12),
        Schema::Bytes | Schema::String | Schema::Uuid | Schema::BigDecimal | Schema::Decimal(_) => {
            let what = if matches!(schema, Schema::String | Schema::Uuid) {
                "string"
            } else {
                "bytes"
            };
            // A fixed-backed decimal is its fixed size; the others are length-prefixed.
            if let Schema::Decimal(d) = schema
                && let Schema::Fixed(f) = d.inner.as_ref()
            {
                return skip(datum, at, f.size);
            }
            let len = varint(datum, at)?;
            if len < 0 || len as u64 > left(at) as u64 {
                return Err(BoundError::Overlong {
                    what,
                    claimed: len,
                    unit: "bytes",
                    left: left(at),
                });
            }
            skip(datum, at, len as usize)
        }
        Schema::Array(_) | Schema::Map(_) => {
            let (what, items): (&'static str, &Schema) = match schema {
                Schema::Array(a) => ("array", &a.items),
                Schema::Map(m) => ("map", &m.types),
                _ => unreachable!("matched above"),
            };
            loop {
                let mut count = varint(datum, at)?;
                if count == 0 {
                    return Ok(());
                }
                if count < 0 {
                    // A negative count is followed by the block's size in bytes.
                    count = count
                        .checked_neg()
                        .ok_or(BoundError::Malformed("block count"))?;
                    varint(datum, at)?;
                }
                let bound = if what == "array" && may_be_empty(items, named, 0) {
                    (left(at) as u64).max(MAX_EMPTY_ITEMS)
                } else {
                    left(at) as u64
                };
                if count as u64 > bound {
                    return Err(BoundError::Overlong {
                        what,
                        claimed: count,
                        unit: "items",
                        left: left(at),
                    });
                }
                for _ in 0..count {
                    if what == "map" {
                        walk(&Schema::String, named, datum, at, depth + 1)?;
                    }
                    walk(items, named, datum, at, depth + 1)?;
                }
            }
        }
        Schema::Union(u) => {
            let branch = varint(datum, at)?;
            let variant = usize::try_from(branch)
                .ok()
                .and_then(|i| u.variants().get(i))
                .ok_or(BoundError::Malformed("union branch out of range"))?;
            walk(variant, named, datum, at, depth + 1)
        }
        Schema::Record(r) => r
            .fields
            .iter()
            .try_for_each(|field| walk(&field.schema, named, datum, at, depth + 1)),
        Schema::Ref { name } => {
            let target = named
                .get(&name.fullname(None))
                .ok_or(BoundError::Malformed("reference to an unknown type"))?;
            walk(target, named, datum, at, depth + 1)
        }
    }
}

fn skip(datum: &[u8], at: &mut usize, n: usize) -> Result<(), BoundError> {
    let end = at.checked_add(n).ok_or(BoundError::Truncated)?;
    if end > datum.len() {
        return Err(BoundError::Truncated);
    }
    *at = end;
    Ok(())
}

/// A zig-zag variable-length long.
fn varint(datum: &[u8], at: &mut usize) -> Result<i64, BoundError> {
    let mut value: u64 = 0;
    for shift in 0..10 {
        let byte = *datum.get(*at).ok_or(BoundError::Truncated)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte & 0x80 == 0 {
            return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
        }
    }
    Err(BoundError::Malformed(
        "variable-length integer over 10 bytes",
    ))
}
