//! `AT TIME ZONE` and `sys.time_zone_info`: SQL Server's time zones, named as Windows names
//! them, with their rules from the IANA time zone database that Walden carries with it
//! (jiff's bundled copy, so that a machine without `/usr/share/zoneinfo` has them too).
//!
//! `x AT TIME ZONE 'zone'`:
//! * a DATETIMEOFFSET is the same moment at the zone's offset then;
//! * any other date and time is taken as the zone's local time and given the offset the zone
//!   has then. A local time the zone skips (clocks going forward) moves forward by the gap; one
//!   it repeats (clocks going back) takes the earlier offset, the one before the change, as
//!   SQL Server does.

use walden_engine::types::{DateTime2, DateTimeOffset, Value};

use super::convert::convert;
use super::temporal::{add_ticks, total_ticks};
use crate::exec::SqlError;

/// Windows time zone names, as `sys.time_zone_info` lists them, and the IANA zone whose rules
/// each follows (the zone of its principal territory).
pub(crate) const ZONES: [(&str, &str); 139] = [
    ("Dateline Standard Time", "Etc/GMT+12"),
    ("UTC-11", "Etc/GMT+11"),
    ("Aleutian Standard Time", "America/Adak"),
    ("Hawaiian Standard Time", "Pacific/Honolulu"),
    ("Marquesas Standard Time", "Pacific/Marquesas"),
    ("Alaskan Standard Time", "America/Anchorage"),
    ("UTC-09", "Etc/GMT+9"),
    ("Pacific Standard Time (Mexico)", "America/Tijuana"),
    ("UTC-08", "Etc/GMT+8"),
    ("Pacific Standard Time", "America/Los_Angeles"),
    ("US Mountain Standard Time", "America/Phoenix"),
    ("Mountain Standard Time (Mexico)", "America/Mazatlan"),
    ("Mountain Standard Time", "America/Denver"),
    ("Yukon Standard Time", "America/Whitehorse"),
    ("Central America Standard Time", "America/Guatemala"),
    ("Central Standard Time", "America/Chicago"),
    ("Easter Island Standard Time", "Pacific/Easter"),
    ("Central Standard Time (Mexico)", "America/Mexico_City"),
    ("Canada Central Standard Time", "America/Regina"),
    ("SA Pacific Standard Time", "America/Bogota"),
    ("Eastern Standard Time (Mexico)", "America/Cancun"),
    ("Eastern Standard Time", "America/New_York"),
    ("Haiti Standard Time", "America/Port-au-Prince"),
    ("Cuba Standard Time", "America/Havana"),
    ("US Eastern Standard Time", "America/Indiana/Indianapolis"),
    ("Turks And Caicos Standard Time", "America/Grand_Turk"),
    ("Paraguay Standard Time", "America/Asuncion"),
    ("Atlantic Standard Time", "America/Halifax"),
    ("Venezuela Standard Time", "America/Caracas"),
    ("Central Brazilian Standard Time", "America/Cuiaba"),
    ("SA Western Standard Time", "America/La_Paz"),
    ("Pacific SA Standard Time", "America/Santiago"),
    ("Newfoundland Standard Time", "America/St_Johns"),
    ("Tocantins Standard Time", "America/Araguaina"),
    ("E. South America Standard Time", "America/Sao_Paulo"),
    ("SA Eastern Standard Time", "America/Cayenne"),
    ("Argentina Standard Time", "America/Argentina/Buenos_Aires"),
    ("Greenland Standard Time", "America/Nuuk"),
    ("Montevideo Standard Time", "America/Montevideo"),
    ("Magallanes Standard Time", "America/Punta_Arenas"),
    ("Saint Pierre Standard Time", "America/Miquelon"),
    ("Bahia Standard Time", "America/Bahia"),
    ("UTC-02", "Etc/GMT+2"),
    ("Azores Standard Time", "Atlantic/Azores"),
    ("Cape Verde Standard Time", "Atlantic/Cape_Verde"),
    ("UTC", "Etc/UTC"),
    ("GMT Standard Time", "Europe/London"),
    ("Greenwich Standard Time", "Atlantic/Reykjavik"),
    ("Sao Tome Standard Time", "Africa/Sao_Tome"),
    ("Morocco Standard Time", "Africa/Casablanca"),
    ("W. Europe Standard Time", "Europe/Berlin"),
    ("Central Europe Standard Time", "Europe/Budapest"),
    ("Romance Standard Time", "Europe/Paris"),
    ("Central European Standard Time", "Europe/Warsaw"),
    ("W. Central Africa Standard Time", "Africa/Lagos"),
    ("Jordan Standard Time", "Asia/Amman"),
    ("GTB Standard Time", "Europe/Bucharest"),
    ("Middle East Standard Time", "Asia/Beirut"),
    ("Egypt Standard Time", "Africa/Cairo"),
    ("E. Europe Standard Time", "Europe/Chisinau"),
    ("Syria Standard Time", "Asia/Damascus"),
    ("West Bank Standard Time", "Asia/Hebron"),
    ("South Africa Standard Time", "Africa/Johannesburg"),
    ("FLE Standard Time", "Europe/Kyiv"),
    ("Israel Standard Time", "Asia/Jerusalem"),
    ("South Sudan Standard Time", "Africa/Juba"),
    ("Kaliningrad Standard Time", "Europe/Kaliningrad"),
    ("Sudan Standard Time", "Africa/Khartoum"),
    ("Libya Standard Time", "Africa/Tripoli"),
    ("Namibia Standard Time", "Africa/Windhoek"),
    ("Arabic Standard Time", "Asia/Baghdad"),
    ("Turkey Standard Time", "Europe/Istanbul"),
    ("Arab Standard Time", "Asia/Riyadh"),
    ("Belarus Standard Time", "Europe/Minsk"),
    ("Russian Standard Time", "Europe/Moscow"),
    ("E. Africa Standard Time", "Africa/Nairobi"),
    ("Volgograd Standard Time", "Europe/Volgograd"),
    ("Iran Standard Time", "Asia/Tehran"),
    ("Arabian Standard Time", "Asia/Dubai"),
    ("Astrakhan Standard Time", "Europe/Astrakhan"),
    ("Azerbaijan Standard Time", "Asia/Baku"),
    ("Russia Time Zone 3", "Europe/Samara"),
    ("Mauritius Standard Time", "Indian/Mauritius"),
    ("Saratov Standard Time", "Europe/Saratov"),
    ("Georgian Standard Time", "Asia/Tbilisi"),
    ("Caucasus Standard Time", "Asia/Yerevan"),
    ("Afghanistan Standard Time", "Asia/Kabul"),
    ("West Asia Standard Time", "Asia/Tashkent"),
    ("Ekaterinburg Standard Time", "Asia/Yekaterinburg"),
    ("Pakistan Standard Time", "Asia/Karachi"),
    ("Qyzylorda Standard Time", "Asia/Qyzylorda"),
    ("India Standard Time", "Asia/Kolkata"),
    ("Sri Lanka Standard Time", "Asia/Colombo"),
    ("Nepal Standard Time", "Asia/Kathmandu"),
    ("Central Asia Standard Time", "Asia/Bishkek"),
    ("Bangladesh Standard Time", "Asia/Dhaka"),
    ("Omsk Standard Time", "Asia/Omsk"),
    ("Myanmar Standard Time", "Asia/Yangon"),
    ("SE Asia Standard Time", "Asia/Bangkok"),
    ("Altai Standard Time", "Asia/Barnaul"),
    ("W. Mongolia Standard Time", "Asia/Hovd"),
    ("North Asia Standard Time", "Asia/Krasnoyarsk"),
    ("N. Central Asia Standard Time", "Asia/Novosibirsk"),
    ("Tomsk Standard Time", "Asia/Tomsk"),
    ("China Standard Time", "Asia/Shanghai"),
    ("North Asia East Standard Time", "Asia/Irkutsk"),
    ("Singapore Standard Time", "Asia/Singapore"),
    ("W. Australia Standard Time", "Australia/Perth"),
    ("Taipei Standard Time", "Asia/Taipei"),
    ("Ulaanbaatar Standard Time", "Asia/Ulaanbaatar"),
    ("Aus Central W. Standard Time", "Australia/Eucla"),
    ("Transbaikal Standard Time", "Asia/Chita"),
    ("Tokyo Standard Time", "Asia/Tokyo"),
    ("North Korea Standard Time", "Asia/Pyongyang"),
    ("Korea Standard Time", "Asia/Seoul"),
    ("Yakutsk Standard Time", "Asia/Yakutsk"),
    ("Cen. Australia Standard Time", "Australia/Adelaide"),
    ("AUS Central Standard Time", "Australia/Darwin"),
    ("E. Australia Standard Time", "Australia/Brisbane"),
    ("AUS Eastern Standard Time", "Australia/Sydney"),
    ("West Pacific Standard Time", "Pacific/Port_Moresby"),
    ("Tasmania Standard Time", "Australia/Hobart"),
    ("Vladivostok Standard Time", "Asia/Vladivostok"),
    ("Lord Howe Standard Time", "Australia/Lord_Howe"),
    ("Bougainville Standard Time", "Pacific/Bougainville"),
    ("Russia Time Zone 10", "Asia/Srednekolymsk"),
    ("Magadan Standard Time", "Asia/Magadan"),
    ("Norfolk Standard Time", "Pacific/Norfolk"),
    ("Sakhalin Standard Time", "Asia/Sakhalin"),
    ("Central Pacific Standard Time", "Pacific/Guadalcanal"),
    ("Russia Time Zone 11", "Asia/Kamchatka"),
    ("New Zealand Standard Time", "Pacific/Auckland"),
    ("UTC+12", "Etc/GMT-12"),
    ("Fiji Standard Time", "Pacific/Fiji"),
    ("Chatham Islands Standard Time", "Pacific/Chatham"),
    ("UTC+13", "Etc/GMT-13"),
    ("Tonga Standard Time", "Pacific/Tongatapu"),
    ("Samoa Standard Time", "Pacific/Apia"),
    ("Line Islands Standard Time", "Pacific/Kiritimati"),
];

/// The zone a Windows name names (case-insensitively), with its name as listed.
fn zone(name: &str) -> Option<(&'static str, jiff::tz::TimeZone)> {
    let name = name.trim();
    let (windows, iana) = ZONES.iter().find(|(w, _)| w.eq_ignore_ascii_case(name))?;
    jiff::tz::TimeZone::get(iana).ok().map(|tz| (*windows, tz))
}

/// 100 ns ticks from 0001-01-01 to 1970-01-01.
const UNIX_EPOCH_TICKS: i128 = 719_162 * 86_400 * 10_000_000;

/// A UTC moment as a jiff timestamp (second precision is all an offset needs).
fn timestamp(utc: DateTime2) -> jiff::Timestamp {
    let seconds = (total_ticks(utc) - UNIX_EPOCH_TICKS).div_euclid(10_000_000);
    i64::try_from(seconds)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

/// The zone's offset from UTC at the UTC moment `utc`, in minutes.
fn offset_at(tz: &jiff::tz::TimeZone, utc: DateTime2) -> i16 {
    // Offsets are within ±26 hours in the database and within ±14 in practice.
    (tz.to_offset(timestamp(utc)).seconds() / 60) as i16
}

/// Msg 9820.
fn invalid_zone(name: &str) -> SqlError {
    SqlError::new(
        9820,
        format!("The time zone parameter '{name}' provided to AT TIME ZONE clause is invalid."),
    )
}

/// `value AT TIME ZONE zone` (see the module documentation): a DATETIMEOFFSET(7), NULL for a
/// NULL value or zone.
pub(crate) fn at_time_zone(value: Value, zone_name: &Value) -> Result<Value, SqlError> {
    if value.is_null() || zone_name.is_null() {
        return Ok(Value::Null);
    }
    let name = super::text::to_text(zone_name);
    let (_, tz) = zone(&name).ok_or_else(|| invalid_zone(&name))?;
    let overflow = || SqlError::overflow("datetimeoffset");
    let dto = match value {
        Value::DateTimeOffset(d) => {
            DateTimeOffset::from_utc(d.utc(), offset_at(&tz, d.utc())).ok_or_else(overflow)?
        }
        other => {
            let local =
                match convert(other.clone(), walden_engine::types::SqlType::DateTime2(7), None)? {
                    Value::DateTime2(dt) => dt,
                    _ => {
                        return Err(SqlError::new(
                            8116,
                            "Argument data type is invalid for AT TIME ZONE.",
                        ))
                    }
                };
            // The offset before any change near this local time: the zone's offset an hour
            // and a day earlier bounds the search (no zone changes twice within a day).
            let before = add_ticks(local, -(36_000_000_000 * 26)).unwrap_or(local);
            let early = offset_at(&tz, before);
            let late = offset_at(&tz, add_ticks(local, 36_000_000_000 * 26).unwrap_or(local));
            // Try the earlier offset first (a repeated local time takes it), then the later.
            let chosen = [early, late].into_iter().find(|&off| {
                DateTimeOffset::from_local(local, off)
                    .is_some_and(|d| offset_at(&tz, d.utc()) == off)
            });
            match chosen {
                Some(off) => DateTimeOffset::from_local(local, off).ok_or_else(overflow)?,
                // A skipped local time: as the earlier offset reads it, which is the moment
                // the gap's length later in the new offset.
                None => {
                    let utc = DateTimeOffset::from_local(local, early).ok_or_else(overflow)?.utc();
                    DateTimeOffset::from_utc(utc, offset_at(&tz, utc)).ok_or_else(overflow)?
                }
            }
        }
    };
    Ok(Value::DateTimeOffset(dto))
}

/// `sys.time_zone_info` rows: each zone's name, its offset now (`+hh:mm`) and whether it is in
/// daylight saving time now.
pub(crate) fn time_zone_info() -> Vec<(String, String, bool)> {
    let now = jiff::Timestamp::now();
    ZONES
        .iter()
        .filter_map(|(windows, iana)| {
            let tz = jiff::tz::TimeZone::get(iana).ok()?;
            let info = tz.to_offset_info(now);
            let minutes = (info.offset().seconds() / 60) as i16;
            Some((
                windows.to_string(),
                walden_engine::types::offset_text(minutes),
                info.dst().is_dst(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use walden_engine::types::Time;

    fn moment(text: &str) -> DateTime2 {
        DateTime2::parse(text)
            .unwrap_or(DateTime2::new(walden_engine::types::Date::DEFAULT, Time::MIDNIGHT))
    }

    #[test]
    fn every_zone_is_in_the_bundled_database() {
        for (windows, iana) in ZONES {
            assert!(jiff::tz::TimeZone::get(iana).is_ok(), "{windows}: {iana}");
        }
        let mut names: Vec<String> = ZONES.iter().map(|z| z.0.to_ascii_lowercase()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ZONES.len(), "a Windows name twice");
    }

    #[test]
    fn local_times_take_the_zones_offset_around_its_changes() {
        let at = |text: &str, zone: &str| {
            at_time_zone(Value::DateTime2(moment(text)), &Value::Str(zone.into()))
                .map(|v| v.to_string())
                .unwrap_or_else(|e| e.message)
        };
        assert_eq!(
            at("2024-01-15 12:00", "Pacific Standard Time"),
            "2024-01-15 12:00:00.0000000 -08:00"
        );
        assert_eq!(
            at("2024-07-15 12:00", "pacific standard time"),
            "2024-07-15 12:00:00.0000000 -07:00"
        );
        // 02:30 on 2024-03-10 does not exist in Los Angeles: it moves on by the hour skipped.
        assert_eq!(
            at("2024-03-10 02:30", "Pacific Standard Time"),
            "2024-03-10 03:30:00.0000000 -07:00"
        );
        // 01:30 on 2024-11-03 happens twice: the earlier offset, daylight time's.
        assert_eq!(
            at("2024-11-03 01:30", "Pacific Standard Time"),
            "2024-11-03 01:30:00.0000000 -07:00"
        );
        assert_eq!(at("2024-06-01 00:00", "UTC"), "2024-06-01 00:00:00.0000000 +00:00");
        assert_eq!(
            at("2024-06-01 00:00", "Nowhere"),
            "The time zone parameter 'Nowhere' provided to AT TIME ZONE clause is invalid."
        );
    }

    #[test]
    fn an_offset_value_keeps_its_moment() {
        let utc =
            DateTimeOffset::from_utc(moment("2024-07-01 10:00"), 0).map(Value::DateTimeOffset);
        let shown =
            at_time_zone(utc.unwrap_or(Value::Null), &Value::Str("W. Europe Standard Time".into()));
        assert_eq!(
            shown.map(|v| v.to_string()).ok().as_deref(),
            Some("2024-07-01 12:00:00.0000000 +02:00")
        );
    }
}
