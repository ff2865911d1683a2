//! The clock (`--ts`, `--now` defaults) and UTC dates for human output.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::CliError;

/// Unix seconds now.
pub(crate) fn now() -> Result<u64, CliError> {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .map_err(|_| CliError::new("the system clock is before 1970; pass --ts/--now"))
}

/// `YYYY-MM-DDTHH:MM:SSZ` for Unix seconds `ts` (proleptic Gregorian, UTC).
pub(crate) fn utc(ts: u64) -> String {
    let days = i128::from(ts / 86_400);
    let secs = ts % 86_400;
    // Days to civil date (H. Hinnant, "chrono-compatible low-level date algorithms").
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i128::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    )
}

/// A time given on the command line: Unix seconds, or an RFC 3339 date
/// and time (`2025-05-05T08:00:00Z`, `2025-05-05T10:00:00+02:00`; a
/// fraction of a second is dropped). Used as a clap value parser.
pub(crate) fn parse_time(text: &str) -> Result<u64, String> {
    if text.bytes().all(|b| b.is_ascii_digit()) && !text.is_empty() {
        return text
            .parse()
            .map_err(|_| format!("{text:?}: more seconds than fit in 64 bits"));
    }
    rfc3339(text).ok_or_else(|| {
        format!(
            "{text:?} is neither Unix seconds nor an RFC 3339 time such as 2025-05-05T08:00:00Z"
        )
    })
}

fn rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i128> {
        let s = text.get(r)?;
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    let at = |i: usize, c: u8| b.get(i).is_some_and(|x| x.eq_ignore_ascii_case(&c));
    if b.len() < 20 || !at(4, b'-') || !at(7, b'-') || !(at(10, b'T') || at(10, b' ')) {
        return None;
    }
    if !at(13, b':') || !at(16, b':') {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = 19;
    if at(rest, b'.') {
        rest += 1;
        let digits = b
            .get(rest..)?
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 {
            return None;
        }
        rest += digits;
    }
    let offset = match b.get(rest..)? {
        [z] if z.eq_ignore_ascii_case(&b'Z') => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let minutes = num(rest + 1..rest + 3)? * 60 + num(rest + 4..rest + 6)?;
            if minutes >= 24 * 60 {
                return None;
            }
            if *sign == b'+' {
                minutes * 60
            } else {
                -minutes * 60
            }
        }
        _ => return None,
    };
    let leap = |y: i128| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let max_day = *month_days.get(usize::try_from(month).ok()?.checked_sub(1)?)?;
    if !(1..=max_day).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    // Civil date to days (H. Hinnant), the inverse of `utc`.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3_600 + minute * 60 + second - offset;
    u64::try_from(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::{parse_time, utc};

    #[test]
    fn times_in_both_forms() {
        assert_eq!(parse_time("1746432000"), Ok(1_746_432_000));
        assert_eq!(parse_time("2025-05-05T08:00:00Z"), Ok(1_746_432_000));
        assert_eq!(parse_time("2025-05-05t08:00:00.75z"), Ok(1_746_432_000));
        assert_eq!(parse_time("2025-05-05T10:00:00+02:00"), Ok(1_746_432_000));
        assert_eq!(parse_time("2000-02-29T00:00:00Z"), Ok(951_782_400));
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Ok(0));
        for bad in [
            "",
            "-5",
            "2025-02-29T00:00:00Z",
            "2025-05-05T08:00:00",
            "2025-05-05T24:00:00Z",
            "1969-12-31T23:59:59Z",
            "2025-05-05T08:00:00+2:00",
            "yesterday",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
        for ts in [0, 951_782_400, 1_746_432_000, 4_102_444_799] {
            assert_eq!(parse_time(&utc(ts)), Ok(ts));
        }
    }

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_746_432_000), "2025-05-05T08:00:00Z");
        assert_eq!(utc(4_102_444_799), "2099-12-31T23:59:59Z");
    }
}
