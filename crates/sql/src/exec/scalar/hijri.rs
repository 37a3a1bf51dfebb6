//! The Hijri calendar of CONVERT style 131: SQL Server's "Kuwaiti algorithm", which is the
//! tabular Islamic calendar: months of 30 and 29 days in turn (the twelfth 30 in a leap
//! year), years of 354 or 355 days, leap years the 2nd, 5th, 7th, 10th, 13th, 16th, 18th,
//! 21st, 24th, 26th and 29th of each 30-year cycle, counted from 1 Muharram 1 AH =
//! 622-07-18 (proleptic Gregorian), the first date SQL Server converts. SQL Server's own
//! example, `2000-08-07 12:14:35.727` as ` 7/05/1421 12:14:35:727PM`, is checked in the
//! tests.

use walden_engine::types::Date;

/// Years of a 30-year cycle with 355 days.
const LEAP_YEARS: [u32; 11] = [2, 5, 7, 10, 13, 16, 18, 21, 24, 26, 29];

/// Days in a 30-year cycle: 30 × 354 + 11.
const CYCLE_DAYS: u32 = 10_631;

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
