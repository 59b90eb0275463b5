//! Reading and writing times. The store keeps unix milliseconds (UTC);
//! people read local time and type dates, times or ages.

use anyhow::{Result, bail};
use jiff::{Timestamp, ZonedDateTime, civil, tz::TimeZone};

/// Parses a point in time: RFC 3339 (`2026-11-30T10:00:00Z`), a local date
/// (`2026-11-30`) or date and time (`2026-11-30 10:00`), or an age before
/// now (`90s`, `30m`, `12h`, `7d`, `2w`). Returns unix milliseconds.
pub fn parse(text: &str) -> Result<i64> {
    let text = text.trim();
    if let Some(age) = parse_age(text) {
        return Ok(Timestamp::now().as_millisecond() - age);
    }
    if let Ok(ts) = text.parse::<Timestamp>() {
        return Ok(ts.as_millisecond());
    }
    let local = |dt: civil::DateTime| -> Result<i64> {
        Ok(dt.to_zoned_datetime(local_zone().clone())?.timestamp().as_millisecond())
    };
    if let Ok(dt) = text.replacen(' ', "T", 1).parse::<civil::DateTime>() {
        return local(dt);
    }
    if let Ok(date) = text.parse::<civil::Date>() {
        return local(date.to_datetime(civil::Time::midnight()));
    }
    bail!(
        "cannot read {text:?} as a time: use 2026-11-30, \"2026-11-30 14:00\", RFC 3339, or an age such as 30m, 12h, 7d"
    )
}

fn parse_age(text: &str) -> Option<i64> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: i64 = number.parse().ok()?;
    let unit_ms = match unit {
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return None,
    };
    number.checked_mul(unit_ms)
}

/// Local time to the minute, for people: `2026-11-30 14:05`.
pub fn local_minute(ms: i64) -> String {
    zoned(ms).map_or_else(|| ms.to_string(), |z| z.strftime("%Y-%m-%d %H:%M").to_string())
}

/// Local time to the second: `14:05:09`.
pub fn local_clock(ms: i64) -> String {
    zoned(ms).map_or_else(|| ms.to_string(), |z| z.strftime("%H:%M:%S").to_string())
}

/// The local date: `2026-11-30`.
pub fn local_date(ms: i64) -> String {
    zoned(ms).map_or_else(|| ms.to_string(), |z| z.strftime("%Y-%m-%d").to_string())
}

fn zoned(ms: i64) -> Option<ZonedDateTime> {
    Some(Timestamp::from_millisecond(ms).ok()?.to_zoned_datetime(local_zone().clone()))
}

/// The zone people read times in. Only its rules matter here, not its
/// name: jiff's `TimeZone::system` finds the name by looking
/// `/etc/localtime`'s target up in the zoneinfo database, and the first
/// lookup lists the whole database (about a hundred directory reads), which
/// a session start paid on every run. So on Unix, without `TZ`, the file is
/// read as it is; `TZ`, and every other platform, go through jiff.
fn local_zone() -> &'static TimeZone {
    static ZONE: std::sync::OnceLock<TimeZone> = std::sync::OnceLock::new();
    ZONE.get_or_init(|| {
        let unnamed = || {
            let data = std::fs::read("/etc/localtime").ok()?;
            TimeZone::tzif("Local", &data).ok()
        };
        let direct = if cfg!(unix) && std::env::var_os("TZ").is_none() { unnamed() } else { None };
        direct.unwrap_or_else(TimeZone::system)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ages_dates_and_rfc3339() {
        let now = Timestamp::now().as_millisecond();
        let day_ago = parse("1d").unwrap();
        assert!((now - 86_400_000 - day_ago).abs() < 5_000);
        assert_eq!(parse("2026-11-30T00:00:00Z").unwrap(), 1_795_996_800_000);
        assert!(parse("2026-11-30").is_ok());
        assert!(parse("2026-11-30 14:00").is_ok());
        assert!(parse("yesterday-ish").is_err());
    }
}
