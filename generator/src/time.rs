//! Simulated time: milliseconds since the Unix epoch, and the few calendar formats the texts use.

/// 2026-01-05T00:00:00Z, the default start of the simulated year (a Monday).
pub const DEFAULT_START_MS: i64 = 1_767_571_200_000;

/// One day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// `(year, month 1–12, day 1–31)` of a UTC instant (Hinnant's `civil_from_days`).
///
/// ```
/// assert_eq!(epigraph_gen::time::civil(epigraph_gen::time::DEFAULT_START_MS), (2026, 1, 5));
/// ```
pub fn civil(ms: i64) -> (i64, u32, u32) {
    let days = ms.div_euclid(DAY_MS) + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `2026-03-03`: the value written in claim labels.
pub fn iso_date(ms: i64) -> String {
    let (y, m, d) = civil(ms);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `March 3`: how people write dates in text.
pub fn spoken_date(ms: i64) -> String {
    let (_, m, d) = civil(ms);
    format!("{} {d}", MONTHS[m as usize - 1])
}

/// `March`.
pub fn month_name(ms: i64) -> &'static str {
    MONTHS[civil(ms).1 as usize - 1]
}

/// `Q2`.
pub fn quarter(ms: i64) -> String {
    format!("Q{}", (civil(ms).1 - 1) / 3 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_the_year() {
        assert_eq!(iso_date(DEFAULT_START_MS), "2026-01-05");
        assert_eq!(spoken_date(DEFAULT_START_MS + 55 * DAY_MS), "March 1");
        assert_eq!(iso_date(DEFAULT_START_MS + 361 * DAY_MS), "2027-01-01");
        assert_eq!(quarter(DEFAULT_START_MS + 100 * DAY_MS), "Q2");
    }
}
