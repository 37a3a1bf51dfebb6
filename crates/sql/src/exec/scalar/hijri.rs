//! The Hijri calendar of CONVERT styles 130 and 131: SQL Server's "Kuwaiti algorithm", which is the
//! tabular Islamic calendar: months of 30 and 29 days in turn (the twelfth 30 in a leap
//! year), years of 354 or 355 days, leap years the 2nd, 5th, 7th, 10th, 13th, 16th, 18th,
//! 21st, 24th, 26th and 29th of each 30-year cycle, counted from 1 Muharram 1 AH =
//! 622-07-18 (proleptic Gregorian), the first date SQL Server converts. SQL Server's own
//! example, `2000-08-07 12:14:35.727` as ` 7/05/1421 12:14:35:727PM`, is checked in the
//! tests. Style 130 writes the month's Arabic name ([`MONTH_NAMES`]).

use walden_engine::types::Date;

/// Years of a 30-year cycle with 355 days.
const LEAP_YEARS: [u32; 11] = [2, 5, 7, 10, 13, 16, 18, 21, 24, 26, 29];

/// Days in a 30-year cycle: 30 × 354 + 11.
const CYCLE_DAYS: u32 = 10_631;

/// The months' names style 130 writes (and reads back): Windows' Arabic (Saudi Arabia) names
/// of the Hijri months, from Muharram to Dhu al-Hijjah. Two of them are two words.
pub(crate) const MONTH_NAMES: [&str; 12] = [
    "\u{645}\u{62d}\u{631}\u{645}", // Muharram
    "\u{635}\u{641}\u{631}",        // Safar
    "\u{631}\u{628}\u{64a}\u{639} \u{627}\u{644}\u{623}\u{648}\u{644}", // Rabi' al-Awwal
    "\u{631}\u{628}\u{64a}\u{639} \u{627}\u{644}\u{62b}\u{627}\u{646}\u{64a}", // Rabi' ath-Thani
    "\u{62c}\u{645}\u{627}\u{62f}\u{649} \u{627}\u{644}\u{623}\u{648}\u{644}\u{649}", // Jumada al-Ula
    "\u{62c}\u{645}\u{627}\u{62f}\u{649} \u{627}\u{644}\u{62b}\u{627}\u{646}\u{64a}\u{629}", // Jumada ath-Thaniya
    "\u{631}\u{62c}\u{628}",                                     // Rajab
    "\u{634}\u{639}\u{628}\u{627}\u{646}",                       // Sha'ban
    "\u{631}\u{645}\u{636}\u{627}\u{646}",                       // Ramadan
    "\u{634}\u{648}\u{627}\u{644}",                              // Shawwal
    "\u{630}\u{648} \u{627}\u{644}\u{642}\u{639}\u{62f}\u{629}", // Dhu al-Qa'da
    "\u{630}\u{648} \u{627}\u{644}\u{62d}\u{62c}\u{629}",        // Dhu al-Hijja
];

/// The month (1-12) whose [`MONTH_NAMES`] entry `text` starts with, and the text after it.
pub(crate) fn month_prefix(text: &str) -> Option<(u32, &str)> {
    (1..=12u32).zip(MONTH_NAMES).find_map(|(m, name)| text.strip_prefix(name).map(|rest| (m, rest)))
}

fn epoch() -> u32 {
    Date::from_ymd(622, 7, 18).map_or(0, Date::days)
}

fn is_leap(year: u32) -> bool {
    LEAP_YEARS.contains(&((year - 1) % 30 + 1))
}

fn month_len(year: u32, month: u32) -> u32 {
    if month % 2 == 1 || (month == 12 && is_leap(year)) {
        30
    } else {
        29
    }
}

/// The Hijri (year, month, day) of `date`; None before 1 Muharram 1.
pub(crate) fn from_date(date: Date) -> Option<(u32, u32, u32)> {
    let mut n = date.days().checked_sub(epoch())?;
    let mut year = n / CYCLE_DAYS * 30 + 1;
    n %= CYCLE_DAYS;
    loop {
        let len = 354 + u32::from(is_leap(year));
        if n < len {
            break;
        }
        n -= len;
        year += 1;
    }
    let mut month = 1;
    while n >= month_len(year, month) {
        n -= month_len(year, month);
        month += 1;
    }
    Some((year, month, n + 1))
}

/// The date of Hijri `day`/`month`/`year`; None if there is no such day, or it is past
/// 9999-12-31.
pub(crate) fn to_date(year: u32, month: u32, day: u32) -> Option<Date> {
    if year == 0 || !(1..=12).contains(&month) || day == 0 || day > month_len(year, month) {
        return None;
    }
    let before = year - 1;
    let mut days = before / 30 * CYCLE_DAYS;
    days += (before / 30 * 30 + 1..=before).map(|y| 354 + u32::from(is_leap(y))).sum::<u32>();
    days += (1..month).map(|m| month_len(year, m)).sum::<u32>();
    Date::from_days(epoch().checked_add(days + day - 1)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_servers_example_converts_both_ways() {
        let date = Date::from_ymd(2000, 8, 7).unwrap();
        assert_eq!(from_date(date), Some((1421, 5, 7)));
        assert_eq!(to_date(1421, 5, 7), Some(date));
    }

    #[test]
    fn the_first_of_january_2000_is_the_25th_of_ramadan_1420() {
        let date = Date::from_ymd(2000, 1, 1).unwrap();
        assert_eq!(from_date(date), Some((1420, 9, 25)));
        assert_eq!(MONTH_NAMES[8], "رمضان");
    }

    #[test]
    fn month_names_are_read_back_whole() {
        for (m, name) in (1..=12).zip(MONTH_NAMES) {
            let text = format!("{name} 1445");
            assert_eq!(month_prefix(&text), Some((m, " 1445")));
        }
        assert_eq!(month_prefix("Jan 1445"), None);
    }

    #[test]
    fn the_epoch_is_the_first_day_and_the_day_before_has_none() {
        let first = Date::from_ymd(622, 7, 18).unwrap();
        assert_eq!(from_date(first), Some((1, 1, 1)));
        assert_eq!(from_date(Date::from_days(first.days() - 1).unwrap()), None);
    }

    #[test]
    fn every_day_of_three_cycles_round_trips() {
        let start = Date::from_ymd(2000, 1, 1).unwrap().days();
        for days in start..start + 3 * CYCLE_DAYS {
            let date = Date::from_days(days).unwrap();
            let (y, m, d) = from_date(date).unwrap();
            assert_eq!(to_date(y, m, d), Some(date));
        }
        assert_eq!(to_date(1445, 2, 30), None);
        assert_eq!(to_date(1445, 13, 1), None);
    }
}
