//! SQL Server types Walden holds as one of its own: SMALLDATETIME as DATETIME, SMALLMONEY as
//! MONEY, TEXT, NTEXT and IMAGE as VARCHAR(MAX), NVARCHAR(MAX) and VARBINARY(MAX).
//!
//! Every value of such a type is a value of the type that holds it (a SMALLDATETIME is a
//! DATETIME on a whole minute, a SMALLMONEY a MONEY within ±214,748.3648), so expressions
//! compute with the holding type. What keeps the declared type is the metadata: a column
//! declared with one remembers it ([`crate::catalog::ColumnDef::declared`]), values stored
//! into it are made to fit it ([`DeclaredType::fit`]), and the catalog views and the TDS
//! server describe the column as the type it was declared with.

use super::{DateTime, SqlType, Value, DATETIME_TICKS_PER_DAY};

/// A type declared by a name Walden holds as another type (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclaredType {
    /// SMALLDATETIME: 1900-01-01 to 2079-06-06 23:59, to the minute.
    SmallDateTime,
    /// SMALLMONEY: -214,748.3648 to 214,748.3647.
    SmallMoney,
    /// TEXT: character data of up to 2^31 - 1 bytes.
    Text,
    /// NTEXT: Unicode data of up to 2^30 - 1 characters.
    NText,
    /// IMAGE: binary data of up to 2^31 - 1 bytes.
    Image,
}

/// SMALLDATETIME's last day, 2079-06-06, in days since 1900-01-01.
const SMALLDATETIME_MAX_DAYS: i32 = 65_535;

/// DATETIME ticks (1/300 s) in a minute.
const TICKS_PER_MINUTE: u32 = 60 * 300;

impl DeclaredType {
    /// Every declared type, in `system_type_id` order.
    pub const ALL: [DeclaredType; 5] = [
        DeclaredType::Image,
        DeclaredType::Text,
        DeclaredType::SmallDateTime,
        DeclaredType::NText,
        DeclaredType::SmallMoney,
    ];

    /// The declared type a type name (any case, without parameters) names, if it is one.
    pub fn of_name(name: &str) -> Option<DeclaredType> {
        DeclaredType::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The declared type whose `system_type_id` is `id`.
    pub fn of_system_type_id(id: u8) -> Option<DeclaredType> {
        DeclaredType::ALL.into_iter().find(|t| t.system_type_id() == id)
    }

    /// The type that holds its values.
    pub fn stored_as(self) -> SqlType {
        use super::Len;
        match self {
            DeclaredType::SmallDateTime => SqlType::DateTime,
            DeclaredType::SmallMoney => SqlType::Money,
            DeclaredType::Text => SqlType::VarChar(Len::Max),
            DeclaredType::NText => SqlType::NVarChar(Len::Max),
            DeclaredType::Image => SqlType::VarBinary(Len::Max),
        }
    }

    /// Its name as SQL Server writes it (`sys.types.name`).
    pub fn name(self) -> &'static str {
        match self {
            DeclaredType::SmallDateTime => "smalldatetime",
            DeclaredType::SmallMoney => "smallmoney",
            DeclaredType::Text => "text",
            DeclaredType::NText => "ntext",
            DeclaredType::Image => "image",
        }
    }

    /// SQL Server's `system_type_id`.
    pub fn system_type_id(self) -> u8 {
        match self {
            DeclaredType::Image => 34,
            DeclaredType::Text => 35,
            DeclaredType::SmallDateTime => 58,
            DeclaredType::NText => 99,
            DeclaredType::SmallMoney => 122,
        }
    }

    /// `sys.columns.max_length`: the value's size, or for the text types the size of the
    /// text pointer a row keeps, as SQL Server reports them.
    pub fn max_length(self) -> i16 {
        match self {
            DeclaredType::SmallDateTime | DeclaredType::SmallMoney => 4,
            DeclaredType::Text | DeclaredType::NText | DeclaredType::Image => 16,
        }
    }

    /// `sys.columns.precision` and `scale`.
    pub fn precision_scale(self) -> (u8, u8) {
        match self {
            DeclaredType::SmallDateTime => (16, 0),
            DeclaredType::SmallMoney => (10, 4),
            DeclaredType::Text | DeclaredType::NText | DeclaredType::Image => (0, 0),
        }
    }

    /// `value`, already of the holding type, as a value of this type: a SMALLDATETIME is
    /// rounded to the nearest minute (29.997 s down, 30.000 s up, as SQL Server rounds);
    /// `None` when the value is outside the type's range. NULL and the text types' values
    /// fit as they are.
    pub fn fit(self, value: Value) -> Option<Value> {
        match (self, value) {
            (DeclaredType::SmallDateTime, Value::DateTime(v)) => {
                let mut days = v.days();
                let mut minutes = (v.ticks() + TICKS_PER_MINUTE / 2) / TICKS_PER_MINUTE;
                if minutes * TICKS_PER_MINUTE >= DATETIME_TICKS_PER_DAY {
                    minutes = 0;
                    days += 1;
                }
                if !(0..=SMALLDATETIME_MAX_DAYS).contains(&days) {
                    return None;
                }
                DateTime::from_parts(days, minutes * TICKS_PER_MINUTE).map(Value::DateTime)
            }
            (DeclaredType::SmallMoney, Value::Money(m)) => {
                i32::try_from(m).is_ok().then_some(Value::Money(m))
            }
            (_, other) => Some(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datetime(days: i32, ticks: u32) -> Value {
        DateTime::from_parts(days, ticks).map_or(Value::Null, Value::DateTime)
    }

    #[test]
    fn smalldatetime_rounds_to_the_minute_within_its_range() {
        let fit = |v| DeclaredType::SmallDateTime.fit(v);
        // 10:00:29.997 down, 10:00:30.000 up, 23:59:30 to the next day.
        let ten = 10 * 60 * TICKS_PER_MINUTE;
        assert_eq!(fit(datetime(1, ten + 8999)), Some(datetime(1, ten)));
        assert_eq!(fit(datetime(1, ten + 9000)), Some(datetime(1, ten + TICKS_PER_MINUTE)));
        assert_eq!(fit(datetime(1, DATETIME_TICKS_PER_DAY - 9000)), Some(datetime(2, 0)));
        // Before 1900 and after 2079-06-06 23:59:29.997: out of range.
        assert_eq!(fit(datetime(-1, 0)), None);
        assert_eq!(fit(datetime(SMALLDATETIME_MAX_DAYS, DATETIME_TICKS_PER_DAY - 9000)), None);
        assert_eq!(fit(Value::Null), Some(Value::Null));
    }

    #[test]
    fn smallmoney_keeps_four_decimals_within_its_range() {
        let fit = |m| DeclaredType::SmallMoney.fit(Value::Money(m));
        assert_eq!(fit(2_147_483_647), Some(Value::Money(2_147_483_647)));
        assert_eq!(fit(-2_147_483_648), Some(Value::Money(-2_147_483_648)));
        assert_eq!(fit(2_147_483_648), None);
    }

    #[test]
    fn names_and_ids_find_the_type() {
        for t in DeclaredType::ALL {
            assert_eq!(DeclaredType::of_name(&t.name().to_uppercase()), Some(t));
            assert_eq!(DeclaredType::of_system_type_id(t.system_type_id()), Some(t));
        }
        assert_eq!(DeclaredType::of_name("datetime"), None);
    }
}
