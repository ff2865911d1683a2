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

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_746_432_000), "2025-05-05T08:00:00Z");
        assert_eq!(utc(4_102_444_799), "2099-12-31T23:59:59Z");
    }
}
