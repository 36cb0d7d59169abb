//! Civil-calendar arithmetic on UTC days and milliseconds (proleptic Gregorian), shared by the
//! extractors, which write date values (`YYYY-MM-DD`, `YYYY-MM`, `YYYY-Qn`, `YYYY`), and the
//! query core, which compares them with an instant ([`period`]).

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// The English month names, in full and abbreviated (`sept` too), lower case: words that date
/// a statement rather than say what it is about.
pub const MONTH_NAMES: [&str; 24] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
];

/// The English weekday names, lower case, Monday first.
pub const WEEKDAY_NAMES: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// The days a date value covers, `[first, last]` in days since the Unix epoch: `YYYY-MM-DD`,
/// `YYYY-MM`, `YYYY-Qn` or `YYYY`, as claims write them. `None` for anything else (a date
/// without a year, `--MM-DD`, included).
///
/// ```
/// use epigraph_schemas::calendar::period;
/// let (june, third) = (period("2027-06").unwrap(), period("2027-06-03").unwrap());
/// assert!(june.0 <= third.0 && third.1 <= june.1);
/// assert_eq!(period("2027-Q2").unwrap(), (period("2027-04").unwrap().0, june.1));
/// assert_eq!(period("2027").unwrap().1 - period("2027").unwrap().0, 364);
/// assert_eq!(period("2027-13"), None);
/// assert_eq!(period("--06-03"), None);
/// ```
pub fn period(value: &str) -> Option<(i64, i64)> {
    let parts: Vec<&str> = value.split('-').collect();
    let int = |s: &str| -> Option<u32> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let year = int(parts.first()?).filter(|_| parts[0].len() == 4)? as i32;
    let month_range = |first: u32, last: u32| {
        let (y, m) = add_months(year, last, 1);
        Some((
            days_from_civil(year, first, 1),
            days_from_civil(y, m, 1) - 1,
        ))
    };
    match parts[1..] {
        [] => month_range(1, 12),
        [q] if q.len() == 2 && q.starts_with('Q') => {
            let q = int(&q[1..]).filter(|q| (1..=4).contains(q))?;
            month_range(3 * q - 2, 3 * q)
        }
        [m] => month_range(int(m).filter(|m| (1..=12).contains(m))?, int(m)?),
        [m, d] => {
            let m = int(m).filter(|m| (1..=12).contains(m))?;
            let d = int(d).filter(|d| (1..=31).contains(d))?;
            let day = days_from_civil(year, m, d);
            (civil_date(day * DAY_MS) == (year, m, d)).then_some((day, day))
        }
        _ => None,
    }
}

/// `(year, month)` `n` months after (or before) `(year, month)`.
///
/// ```
/// use epigraph_schemas::calendar::add_months;
/// assert_eq!(add_months(2026, 11, 3), (2027, 2));
/// assert_eq!(add_months(2026, 1, -1), (2025, 12));
/// ```
pub fn add_months(year: i32, month: u32, n: i64) -> (i32, u32) {
    let index = year as i64 * 12 + (month as i64 - 1) + n;
    (
        index.div_euclid(12) as i32,
        (index.rem_euclid(12) + 1) as u32,
    )
}

/// Days since the Unix epoch of a civil date (Howard Hinnant's days-from-civil).
///
/// ```
/// use epigraph_schemas::calendar::{days_from_civil, iso_day};
/// assert_eq!(days_from_civil(1970, 1, 1), 0);
/// assert_eq!(iso_day(days_from_civil(2026, 12, 5)), "2026-12-05");
/// ```
pub fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = year as i64 - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil year of a time in ms since the Unix epoch (proleptic Gregorian, UTC).
///
/// ```
/// assert_eq!(epigraph_schemas::calendar::year_of(1_780_000_000_000), 2026);
/// assert_eq!(epigraph_schemas::calendar::year_of(0), 1970);
/// ```
pub fn year_of(ms: i64) -> i32 {
    civil_date(ms).0
}

/// `(year, month, day)` of a time in ms since the Unix epoch (proleptic Gregorian, UTC), by
/// Howard Hinnant's days-to-civil.
///
/// ```
/// assert_eq!(epigraph_schemas::calendar::civil_date(1_767_603_600_000), (2026, 1, 5));
/// ```
pub fn civil_date(ms: i64) -> (i32, u32, u32) {
    let (year, month, day) = civil_of_day(ms.div_euclid(DAY_MS));
    (year as i32, month, day)
}

/// `(year, month, day)` of a day number (days since the Unix epoch), for every `i64`: the
/// year is an `i64` (a day of `i64::MIN / 86_400_000` is some 292 million years back).
///
/// ```
/// use epigraph_schemas::calendar::civil_of_day;
/// assert_eq!(civil_of_day(0), (1970, 1, 1));
/// assert_eq!(civil_of_day(-1), (1969, 12, 31));
/// assert!(civil_of_day(i64::MIN / 86_400_000 - 1).0 < -290_000_000);
/// ```
pub fn civil_of_day(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        yoe + era * 400 + i64::from(month <= 2),
        month as u32,
        day as u32,
    )
}

/// `YYYY-MM-DD` of a day number (days since the Unix epoch).
///
/// ```
/// assert_eq!(epigraph_schemas::calendar::iso_day(-1), "1969-12-31");
/// // The day of the earliest instant there is (`as_of=-9223372036854775808`) has a name too.
/// assert!(epigraph_schemas::calendar::iso_day(i64::MIN.div_euclid(86_400_000)).starts_with('-'));
/// ```
pub fn iso_day(days: i64) -> String {
    let (y, m, d) = civil_of_day(days);
    format!("{y:04}-{m:02}-{d:02}")
}
