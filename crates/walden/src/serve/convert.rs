//! Between the engine's types and values and TDS's: result columns going out, RPC parameters
//! coming in (rendered as T-SQL literals, since the session runs text batches). The `walden
//! sql -S` client reads the values of result sets with the same conversions.

use std::fmt;

use walden_engine::types::{
    decode_cp1252, Date, DateTime, DateTime2, DateTimeOffset, Decimal, DeclaredType, Guid, Len,
    SqlType, Time, Value, MAX_TIME_SCALE,
};
use walden_sql::exec::scalar::{coerce, to_text};
use walden_sql::exec::ColumnInfo;
use walden_tds::types::MAX_LEN_PLP;
use walden_tds::{Collation, TdsValue, TdsVersion, TypeInfo};

use super::code_page::CodePage;

/// The largest TEXT and IMAGE value, and the maximum length their TYPE_INFO declares.
const TEXT_MAX_LEN: u32 = 0x7FFF_FFFF;

/// NTEXT's TYPE_INFO maximum length: 2^30 - 1 characters, in bytes.
const NTEXT_MAX_LEN: u32 = 0x7FFF_FFFE;

/// The wire type of a result column: [`type_info`] of its type, in its own collation, or the
/// type it was declared with when Walden holds it as another (SMALLDATETIME as DATETIMN(4),
/// SMALLMONEY as MONEYN(4), TEXT, NTEXT and IMAGE as themselves), as SQL Server sends them.
pub fn column_type_info(c: &ColumnInfo) -> TypeInfo {
    let collation = wire_collation(c.collation);
    match c.declared {
        Some(DeclaredType::SmallDateTime) => TypeInfo::DateTimeN(4),
        Some(DeclaredType::SmallMoney) => TypeInfo::MoneyN(4),
        Some(DeclaredType::Text) => TypeInfo::Text { max_len: TEXT_MAX_LEN, collation },
        Some(DeclaredType::NText) => TypeInfo::NText { max_len: NTEXT_MAX_LEN, collation },
        Some(DeclaredType::Image) => TypeInfo::Image { max_len: TEXT_MAX_LEN },
        None => match type_info(c.ty) {
            TypeInfo::BigVarChar { max_len, .. } => TypeInfo::BigVarChar { max_len, collation },
            TypeInfo::BigChar { len, .. } => TypeInfo::BigChar { len, collation },
            TypeInfo::NVarChar { max_len, .. } => TypeInfo::NVarChar { max_len, collation },
            TypeInfo::NChar { len, .. } => TypeInfo::NChar { len, collation },
            other => other,
        },
    }
}

/// The type a result column of wire type `ty` is sent as to a client speaking `version`, as
/// SQL Server sends it to older clients ([MS-TDS] 2.2.5.4, [`TdsVersion`]): before 7.3,
/// DATE, TIME, DATETIME2 and DATETIMEOFFSET as NVARCHAR long enough for their text
/// (`2024-01-31`, `12:34:56.1234567`, with the declared scale's digits, a `+01:00` offset);
/// before 7.2, the `(max)` types as TEXT, NTEXT and IMAGE and XML as NTEXT; before 7.1,
/// BIGINT as DECIMAL(19, 0) and SQL_VARIANT as NVARCHAR(4000). The values follow the type:
/// [`to_wire`] converts them as `CONVERT` would.
pub fn for_version(ty: TypeInfo, version: TdsVersion) -> TypeInfo {
    use TypeInfo as T;
    let nvarchar = |chars: u16| T::NVarChar { max_len: chars * 2, collation: Collation::default() };
    // The characters of a fraction of `scale` digits, its point included.
    let fraction = |scale: u8| if scale == 0 { 0 } else { u16::from(scale) + 1 };
    let temporal = !version.is_7_3_or_later();
    let lob = !version.is_7_2_or_later();
    let before_collations = !version.has_collations();
    match ty {
        T::Date if temporal => nvarchar(10),
        T::Time { scale } if temporal => nvarchar(8 + fraction(scale)),
        T::DateTime2 { scale } if temporal => nvarchar(19 + fraction(scale)),
        T::DateTimeOffset { scale } if temporal => nvarchar(26 + fraction(scale)),
        T::BigVarChar { max_len: MAX_LEN_PLP, collation } if lob => {
            T::Text { max_len: TEXT_MAX_LEN, collation }
        }
        T::NVarChar { max_len: MAX_LEN_PLP, collation } if lob => {
            T::NText { max_len: NTEXT_MAX_LEN, collation }
        }
        T::BigVarBinary { max_len: MAX_LEN_PLP } if lob => T::Image { max_len: TEXT_MAX_LEN },
        T::Xml if lob => T::NText { max_len: NTEXT_MAX_LEN, collation: Collation::default() },
        T::IntN(8) | T::Int8 if before_collations => T::Decimal { precision: 19, scale: 0 },
        T::Variant { .. } if before_collations => nvarchar(4000),
        other => other,
    }
}

/// The TDS collation ([MS-TDS] 2.2.5.1.2) of a collation Walden knows, by its name (`None`:
/// the default, SQL_Latin1_General_CP1_CI_AS), as SQL Server sends it: LCID 1033 for the
/// Latin1_General and SQL_Latin1_General families; for a Windows collation the flags its
/// name says (IGNORE_CASE for `_CI`, IGNORE_ACCENT for `_AI`, IGNORE_KANA without `_KS`,
/// IGNORE_WIDTH without `_WS`, BINARY / BINARY2 for `_BIN` / `_BIN2` and none of the others),
/// version 1 for the `_100` family, SortId 0; for a SQL collation the same flags and SQL
/// Server's sort order on code page 1252 as SortId (51 `CS_AS`, 52 `CI_AS`, 54 `CI_AI`).
/// A `_UTF8` collation has the UTF-8 flag too, as SQL Server sends it, and its VARCHAR data
/// goes out as UTF-8 ([`encode_varchar`]): a driver that honours the flag (tedious,
/// mssql-jdbc) reads it as UTF-8, one that goes by the LCID alone (pytds, go-mssqldb) as
/// code page 1252, as it would from SQL Server.
///
/// Sources: [MS-TDS] 2.2.5.1.2 (the layout: LCID in bits 0-19, then fIgnoreCase,
/// fIgnoreAccent, fIgnoreKana, fIgnoreWidth, fBinary, fBinary2, fUTF8 from bit 20, the
/// version in bits 28-31, SortId; SortId 0 for a Windows collation); Microsoft's "SQL Server
/// Collation Name" page (sort order ids 51, 52, 53, 54 for `SQL_Latin1_General_CP1_CS_AS`,
/// `_CI_AS`, `Pref_CP1_CI_AS`, `_CI_AI`); "Windows Collation Name" (`_KS` and `_WS` make a
/// collation kana- and width-sensitive, else it ignores them; `_BIN`/`_BIN2` compare code
/// points and ignore nothing); COLLATIONPROPERTY's Version (0 for `Latin1_General`, 1 for
/// `Latin1_General_100`).
pub fn wire_collation(name: Option<&str>) -> Collation {
    let Some(name) = name else { return Collation::default() };
    // Read without allocating: every character column of every result set comes here.
    let has = |part: &str| name.split('_').any(|p| p.eq_ignore_ascii_case(part));
    let flags = if has("BIN2") {
        Collation::BINARY2
    } else if has("BIN") {
        Collation::BINARY
    } else {
        let mut flags = 0;
        if has("CI") {
            flags |= Collation::IGNORE_CASE;
        }
        if has("AI") {
            flags |= Collation::IGNORE_ACCENT;
        }
        if !has("KS") {
            flags |= Collation::IGNORE_KANA;
        }
        if !has("WS") {
            flags |= Collation::IGNORE_WIDTH;
        }
        flags
    };
    let flags = if has("UTF8") { flags | Collation::UTF8 } else { flags };
    let sql_collation = name.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("SQL_"));
    let sort_id = match (sql_collation, has("CS"), has("AI")) {
        (false, _, _) => 0,
        (true, true, _) => 51,
        (true, false, false) => 52,
        (true, false, true) => 54,
    };
    let version = u32::from(has("100"));
    let lcid = Collation::default().lcid();
    Collation { info: lcid | u32::from(flags) << 20 | version << 28, sort_id }
}

/// A value that cannot be sent as the wire type asked for, with SQL Server's error number
/// for it (242 for a SMALLDATETIME out of range, 8115 for a SMALLMONEY, else 8114).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// SQL Server's error number.
    pub number: i32,
    /// Its message.
    pub message: String,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<WireError> for String {
    fn from(e: WireError) -> String {
        e.message
    }
}

/// The nullable wire type of a column of type `ty`. Nullable (N) types are used even for
/// NOT NULL columns, as SQL Server does for expressions: every value then encodes the same way.
pub fn type_info(ty: SqlType) -> TypeInfo {
    let collation = Collation::SQL_LATIN1_GENERAL_CP1_CI_AS;
    let narrow = |l: Len| match l {
        Len::N(n) => Some(n),
        Len::Max => None,
    };
    match ty {
        SqlType::TinyInt => TypeInfo::IntN(1),
        SqlType::SmallInt => TypeInfo::IntN(2),
        SqlType::Int => TypeInfo::IntN(4),
        SqlType::BigInt => TypeInfo::IntN(8),
        SqlType::Bit => TypeInfo::BitN,
        SqlType::Decimal { precision, scale } => TypeInfo::Decimal { precision, scale },
        SqlType::Float => TypeInfo::FltN(8),
        SqlType::Real => TypeInfo::FltN(4),
        SqlType::Money => TypeInfo::MoneyN(8),
        SqlType::Char(n) => TypeInfo::BigChar { len: n, collation },
        SqlType::VarChar(l) => TypeInfo::varchar(narrow(l)),
        SqlType::NChar(n) => TypeInfo::NChar { len: n.saturating_mul(2), collation },
        SqlType::NVarChar(l) => TypeInfo::nvarchar(narrow(l)),
        SqlType::Binary(n) => TypeInfo::BigBinary { len: n },
        SqlType::VarBinary(l) => TypeInfo::varbinary(narrow(l)),
        SqlType::Date => TypeInfo::Date,
        SqlType::Time(scale) => TypeInfo::Time { scale },
        SqlType::DateTime => TypeInfo::DateTimeN(8),
        SqlType::DateTime2(scale) => TypeInfo::DateTime2 { scale },
        SqlType::DateTimeOffset(scale) => TypeInfo::DateTimeOffset { scale },
        SqlType::UniqueIdentifier => TypeInfo::Guid,
        SqlType::Variant => TypeInfo::Variant { max_len: walden_tds::VARIANT_MAX_LEN },
        SqlType::Xml => TypeInfo::Xml,
    }
}

/// The engine type for a parameter sent as `ty`, or `None` for NULLTYPE and for TVPTYPE (a
/// table, which no scalar type holds).
pub fn sql_type(ty: &TypeInfo) -> Option<SqlType> {
    let len = |max_len: u16, unit: u16| {
        if max_len == u16::MAX {
            Len::Max
        } else {
            Len::N((max_len / unit).max(1))
        }
    };
    Some(match *ty {
        TypeInfo::Int1 | TypeInfo::IntN(1) => SqlType::TinyInt,
        TypeInfo::Int2 | TypeInfo::IntN(2) => SqlType::SmallInt,
        TypeInfo::Int4 | TypeInfo::IntN(4) => SqlType::Int,
        TypeInfo::Int8 | TypeInfo::IntN(_) => SqlType::BigInt,
        TypeInfo::Bit | TypeInfo::BitN => SqlType::Bit,
        TypeInfo::Flt4 | TypeInfo::FltN(4) => SqlType::Real,
        TypeInfo::Flt8 | TypeInfo::FltN(_) => SqlType::Float,
        // Walden has no SMALLMONEY: MONEY holds every SMALLMONEY value.
        TypeInfo::Money | TypeInfo::Money4 | TypeInfo::MoneyN(_) => SqlType::Money,
        TypeInfo::DateTime | TypeInfo::DateTime4 | TypeInfo::DateTimeN(_) => SqlType::DateTime,
        TypeInfo::Guid => SqlType::UniqueIdentifier,
        TypeInfo::Decimal { precision, scale } | TypeInfo::Numeric { precision, scale } => {
            SqlType::Decimal { precision, scale }
        }
        TypeInfo::Date => SqlType::Date,
        TypeInfo::Time { scale } => SqlType::Time(scale),
        TypeInfo::DateTime2 { scale } => SqlType::DateTime2(scale),
        TypeInfo::DateTimeOffset { scale } => SqlType::DateTimeOffset(scale),
        TypeInfo::BigVarChar { max_len, .. } => SqlType::VarChar(len(max_len, 1)),
        TypeInfo::BigChar { len, .. } => SqlType::Char(len.max(1)),
        TypeInfo::NVarChar { max_len, .. } => SqlType::NVarChar(len(max_len, 2)),
        TypeInfo::NChar { len, .. } => SqlType::NChar((len / 2).max(1)),
        TypeInfo::BigVarBinary { max_len } => SqlType::VarBinary(len(max_len, 1)),
        TypeInfo::BigBinary { len } => SqlType::Binary(len.max(1)),
        TypeInfo::Text { .. } => SqlType::VarChar(Len::Max),
        TypeInfo::NText { .. } => SqlType::NVarChar(Len::Max),
        TypeInfo::Image { .. } => SqlType::VarBinary(Len::Max),
        TypeInfo::Variant { .. } => SqlType::Variant,
        TypeInfo::Xml => SqlType::Xml,
        TypeInfo::Null | TypeInfo::Tvp => return None,
    })
}

/// `value` (of type `sql`) as a value of the wire type `ty`, converting with SQL Server's
/// rules when the engine handed over another variant (a DECIMAL of another scale, an INT in
/// a BIGINT column...). The conversion is to the wire type's own SQL type when it has one:
/// an OUTPUT parameter goes back in the type the client sent, which need not be the one it
/// declared (mssql-jdbc sends a MONEY parameter as DECIMAL(38, 4) declared `money`).
///
/// A SMALLDATETIME (DATETIMN(4), DATETIM4) gets a DATETIME rounded to the minute, and both it
/// and SMALLMONEY are range-checked here, where SQL Server's conversion would have failed
/// (an OUTPUT parameter the client sent as SMALLDATETIME holds a DATETIME in Walden).
pub fn to_wire(sql: SqlType, ty: &TypeInfo, value: Value) -> Result<TdsValue, WireError> {
    let conversion = |message: String| WireError { number: 8114, message };
    let value = match direct(ty, value) {
        Ok(v) => v,
        Err(value) => {
            let target = sql_type(ty).unwrap_or(sql);
            let converted = coerce(value, target, true)
                .map_err(|e| WireError { number: e.number, message: e.message })?;
            direct(ty, converted).map_err(|v| {
                conversion(format!("cannot send a {} value as {}", v.kind_name(), ty.name()))
            })?
        }
    };
    match (ty, value) {
        (TypeInfo::DateTimeN(4) | TypeInfo::DateTime4, TdsValue::DateTime { days, ticks }) => {
            let fitted = DateTime::from_parts(days, ticks)
                .and_then(|v| DeclaredType::SmallDateTime.fit(Value::DateTime(v)));
            match fitted {
                Some(Value::DateTime(v)) => Ok(TdsValue::SmallDateTime {
                    // Within 0..=65535 days and below 1440 minutes once fitted.
                    days: v.days() as u16,
                    minutes: (v.ticks() / (60 * 300)) as u16,
                }),
                _ => Err(WireError {
                    number: 242,
                    message: "The conversion of a datetime data type to a smalldatetime data \
                              type resulted in an out-of-range value."
                        .into(),
                }),
            }
        }
        (TypeInfo::MoneyN(4) | TypeInfo::Money4, TdsValue::Money(m))
            if i32::try_from(m).is_err() =>
        {
            Err(WireError {
                number: 8115,
                message: "Arithmetic overflow error converting expression to data type \
                          smallmoney."
                    .into(),
            })
        }
        (_, value) => Ok(value),
    }
}

/// The wire type a SQL_VARIANT sends a value of base type `base` as: its own, with the
/// fixed-length types for the integers, BIT, floats, MONEY and DATETIME (a variant's value
/// is never NULL, so it needs no nullable type).
fn variant_base(base: SqlType) -> TypeInfo {
    match type_info(base) {
        TypeInfo::IntN(1) => TypeInfo::Int1,
        TypeInfo::IntN(2) => TypeInfo::Int2,
        TypeInfo::IntN(4) => TypeInfo::Int4,
        TypeInfo::IntN(_) => TypeInfo::Int8,
        TypeInfo::BitN => TypeInfo::Bit,
        TypeInfo::FltN(4) => TypeInfo::Flt4,
        TypeInfo::FltN(_) => TypeInfo::Flt8,
        TypeInfo::MoneyN(_) => TypeInfo::Money,
        TypeInfo::DateTimeN(_) => TypeInfo::DateTime,
        other => other,
    }
}

/// The value if its variant matches `ty` exactly (up to scale), else the value back.
fn direct(ty: &TypeInfo, value: Value) -> Result<TdsValue, Value> {
    use TypeInfo as T;
    Ok(match (ty, value) {
        (_, Value::Null) => TdsValue::Null,
        (T::Variant { .. }, value) => {
            let Some(base) = walden_engine::types::variant_base_type(&value) else {
                return Err(value);
            };
            // The wire value is the same under the nullable type and the fixed one.
            match to_wire(base, &type_info(base), value.clone()) {
                Ok(v) => TdsValue::Variant { base: variant_base(base), value: Box::new(v) },
                Err(_) => return Err(value),
            }
        }
        (T::IntN(1), Value::TinyInt(x)) => TdsValue::TinyInt(x),
        (T::IntN(2), Value::SmallInt(x)) => TdsValue::SmallInt(x),
        (T::IntN(4), Value::Int(x)) => TdsValue::Int(x),
        (T::IntN(8), Value::BigInt(x)) => TdsValue::BigInt(x),
        (T::BitN, Value::Bit(b)) => TdsValue::Bit(b),
        (T::FltN(8), Value::Float(x)) => TdsValue::Float(x),
        (T::FltN(4), Value::Real(x)) => TdsValue::Real(x),
        (T::MoneyN(_), Value::Money(x)) => TdsValue::Money(x),
        (T::Decimal { precision, scale } | T::Numeric { precision, scale }, Value::Decimal(d)) => {
            match d.rescale(*scale) {
                Some(d) => TdsValue::Decimal(walden_tds::Decimal {
                    value: d.mantissa(),
                    precision: *precision,
                    scale: *scale,
                }),
                None => return Err(Value::Decimal(d)),
            }
        }
        (
            T::BigVarChar { collation, .. }
            | T::BigChar { collation, .. }
            | T::Text { collation, .. },
            Value::Str(s),
        ) => TdsValue::VarChar(encode_varchar(s, *collation)),
        (T::NVarChar { .. } | T::NChar { .. } | T::NText { .. }, Value::NStr(s)) => {
            TdsValue::NVarChar(s)
        }
        (T::Xml, Value::Xml(x)) => TdsValue::NVarChar(walden_sql::exec::scalar::xml_text(&x)),
        (T::BigVarBinary { .. } | T::BigBinary { .. } | T::Image { .. }, Value::Binary(b)) => {
            TdsValue::Binary(b)
        }
        (T::Date, Value::Date(d)) => TdsValue::Date(d.days()),
        (T::Time { scale }, Value::Time(t)) => TdsValue::Time(wire_time(t, *scale)),
        (T::DateTime2 { scale }, Value::DateTime2(v)) => {
            TdsValue::DateTime2 { date: v.date.days(), time: wire_time(v.time, *scale) }
        }
        (T::DateTimeOffset { scale }, Value::DateTimeOffset(v)) => TdsValue::DateTimeOffset {
            date: v.utc().date.days(),
            time: wire_time(v.utc().time, *scale),
            offset_minutes: v.offset_minutes(),
        },
        (T::DateTimeN(_), Value::DateTime(v)) => {
            TdsValue::DateTime { days: v.days(), ticks: v.ticks() }
        }
        (T::Guid, Value::Guid(g)) => TdsValue::Guid(g.0),
        (_, other) => return Err(other),
    })
}

/// `t` in units of 10^-`scale` s. The engine's TIME counts 100 ns ticks, the units of the
/// finest scale, MAX_TIME_SCALE.
fn wire_time(t: Time, scale: u8) -> walden_tds::Time {
    let scale = scale.min(MAX_TIME_SCALE);
    let increments = t.ticks() / 10u64.pow(u32::from(MAX_TIME_SCALE - scale));
    walden_tds::Time { increments, scale }
}

fn engine_time(t: walden_tds::Time) -> Result<Time, String> {
    let factor = 10u64.pow(u32::from(MAX_TIME_SCALE.saturating_sub(t.scale)));
    t.increments
        .checked_mul(factor)
        .and_then(Time::from_ticks)
        .ok_or_else(|| "time out of range".to_string())
}

/// VARCHAR data in `collation`'s code page ([`CodePage::of`]): UTF-8 for a `_UTF8`
/// collation (its UTF-8 flag set, [`wire_collation`]), code page 1252 for Walden's own.
pub fn encode_varchar(s: String, collation: Collation) -> Vec<u8> {
    match CodePage::of(collation) {
        CodePage::Utf8 => s.into_bytes(),
        page => page.encode(&s),
    }
}

/// A value received over TDS with its wire type `ty` (an RPC parameter, a table-valued
/// parameter's column): VARCHAR data read in the code page of the collation sent with it.
pub fn from_wire_typed(value: TdsValue, ty: &TypeInfo) -> Result<Value, String> {
    match (value, ty.collation()) {
        (TdsValue::VarChar(b), Some(collation)) => {
            Ok(Value::Str(CodePage::of(collation).decode(&b)))
        }
        (value, _) => from_wire(value),
    }
}

/// A value received over TDS (an RPC parameter; a result set's value for `walden sql -S`) as
/// an engine value.
pub fn from_wire(value: TdsValue) -> Result<Value, String> {
    let mut v = Value::Null;
    from_wire_into(value, &mut v)?;
    Ok(v)
}

/// As [`from_wire`], written into `slot`: a bulk load converts each row's values into the
/// row it hands on, where returning each value and then moving it cost more than the
/// conversion (the copies of a value through the stack stalled on their partial writes).
pub fn from_wire_into(value: TdsValue, slot: &mut Value) -> Result<(), String> {
    let bad = |what: &str| format!("{what} out of range");
    *slot = match value {
        TdsValue::Null => Value::Null,
        TdsValue::Bit(b) => Value::Bit(b),
        TdsValue::TinyInt(x) => Value::TinyInt(x),
        TdsValue::SmallInt(x) => Value::SmallInt(x),
        TdsValue::Int(x) => Value::Int(x),
        TdsValue::BigInt(x) => Value::BigInt(x),
        TdsValue::Real(x) => Value::Real(x),
        TdsValue::Float(x) => Value::Float(x),
        TdsValue::Decimal(d) => {
            Value::Decimal(Decimal::new(d.value, d.scale).ok_or_else(|| bad("decimal"))?)
        }
        TdsValue::Money(x) => Value::Money(x),
        TdsValue::VarChar(b) => Value::Str(decode_cp1252(&b)),
        TdsValue::NVarChar(s) => Value::NStr(s),
        TdsValue::Binary(b) => Value::Binary(b),
        TdsValue::Guid(g) => Value::Guid(Guid(g)),
        TdsValue::Date(d) => Value::Date(Date::from_days(d).ok_or_else(|| bad("date"))?),
        TdsValue::Time(t) => Value::Time(engine_time(t)?),
        TdsValue::DateTime2 { date, time } => Value::DateTime2(DateTime2::new(
            Date::from_days(date).ok_or_else(|| bad("datetime2"))?,
            engine_time(time)?,
        )),
        TdsValue::DateTime { days, ticks } => {
            Value::DateTime(DateTime::from_parts(days, ticks).ok_or_else(|| bad("datetime"))?)
        }
        TdsValue::SmallDateTime { days, minutes } => Value::DateTime(
            DateTime::from_parts(i32::from(days), u32::from(minutes) * 60 * 300)
                .ok_or_else(|| bad("smalldatetime"))?,
        ),
        TdsValue::Variant { value, .. } => return from_wire_into(*value, slot),
        TdsValue::Table(_) => return Err("a table-valued parameter is not a single value".into()),
        TdsValue::DateTimeOffset { date, time, offset_minutes } => {
            let utc = DateTime2::new(
                Date::from_days(date).ok_or_else(|| bad("datetimeoffset"))?,
                engine_time(time)?,
            );
            Value::DateTimeOffset(
                DateTimeOffset::from_utc(utc, offset_minutes)
                    .ok_or_else(|| bad("datetimeoffset"))?,
            )
        }
    };
    Ok(())
}

/// `value` as a T-SQL expression of type `ty`: the RPC parameter assignments of the batch
/// the server builds. Everything goes through CAST so that the text form never changes the
/// value's type.
pub fn literal(value: &Value, ty: SqlType) -> String {
    let quoted = |s: &str| s.replace('\'', "''");
    let text = match value {
        Value::Null => return format!("CAST(NULL AS {ty})"),
        Value::Str(s) => format!("'{}'", quoted(s)),
        Value::NStr(s) => format!("N'{}'", quoted(s)),
        Value::Binary(b) => {
            let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
            format!("0x{hex}")
        }
        // Rust's shortest round-trip form keeps every bit of the double.
        Value::Float(x) => format!("N'{x:?}'"),
        Value::Real(x) => format!("N'{x:?}'"),
        // All four decimals: MONEY's text form (style 0) would round to two.
        Value::Money(m) => {
            let sign = if *m < 0 { "-" } else { "" };
            let magnitude = m.unsigned_abs();
            format!("{sign}{}.{:04}", magnitude / 10_000, magnitude % 10_000)
        }
        exact if exact.is_exact_numeric() => to_text(value),
        // DATETIME's text form (style 0, `Jan  2 2024 10:04PM`) drops the seconds; ISO 8601
        // with its `T` keeps every 1/300 s tick (milliseconds round trip to the same tick)
        // and reads the same under any DATEFORMAT or language.
        Value::DateTime(v) => format!("N'{}'", v.to_string().replacen(' ', "T", 1)),
        // Dates, times and GUIDs: their text, which CAST parses back.
        _ => format!("N'{}'", to_text(value)),
    };
    format!("CAST({text} AS {ty})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_types_round_trip_through_parameter_types() {
        for ty in [
            SqlType::TinyInt,
            SqlType::Int,
            SqlType::BigInt,
            SqlType::Bit,
            SqlType::Decimal { precision: 10, scale: 2 },
            SqlType::Float,
            SqlType::Real,
            SqlType::Money,
            SqlType::VarChar(Len::N(20)),
            SqlType::NVarChar(Len::Max),
            SqlType::NChar(3),
            SqlType::VarBinary(Len::N(16)),
            SqlType::Date,
            SqlType::Time(3),
            SqlType::DateTime,
            SqlType::DateTime2(7),
            SqlType::DateTimeOffset(3),
            SqlType::UniqueIdentifier,
            SqlType::Variant,
            SqlType::Xml,
        ] {
            assert_eq!(sql_type(&type_info(ty)), Some(ty), "{ty}");
        }
    }

    /// One case per collation family Walden has, with the bytes worked out from the sources
    /// [`wire_collation`] names: [MS-TDS] 2.2.5.1.2 for the layout (LCID 0x0409 in bits 0-19;
    /// flags from bit 20, 0x01 ignore case, 0x02 ignore accent, 0x04 ignore kana, 0x08
    /// ignore width, 0x10 binary, 0x20 binary2, 0x40 UTF-8; version in bits 28-31; then the
    /// SortId byte), Microsoft's "SQL Server Collation Name" table for the SortIds, and
    /// "Windows Collation Name" for which name parts clear which flags. The default's bytes,
    /// `09 04 D0 00 34`, are also what [MS-TDS]'s own LOGIN7 and ENVCHANGE examples carry.
    #[test]
    fn collations_go_out_as_sql_server_sends_them() {
        let wire = |name| wire_collation(Some(name)).to_bytes();
        assert_eq!(wire_collation(None).to_bytes(), [0x09, 0x04, 0xD0, 0x00, 0x34]);
        // SQL collations on code page 1252: sort orders 52, 51 and 54, flags as named.
        assert_eq!(wire("SQL_Latin1_General_CP1_CI_AS"), [0x09, 0x04, 0xD0, 0x00, 0x34]);
        assert_eq!(wire("sql_latin1_general_cp1_ci_as"), [0x09, 0x04, 0xD0, 0x00, 0x34]);
        assert_eq!(wire("SQL_Latin1_General_CP1_CS_AS"), [0x09, 0x04, 0xC0, 0x00, 0x33]);
        assert_eq!(wire("SQL_Latin1_General_CP1_CI_AI"), [0x09, 0x04, 0xF0, 0x00, 0x36]);
        // Latin1_General (version 0), SortId 0: kana and width ignored unless _KS / _WS.
        assert_eq!(wire("Latin1_General_CI_AS"), [0x09, 0x04, 0xD0, 0x00, 0x00]);
        assert_eq!(wire("Latin1_General_CS_AS"), [0x09, 0x04, 0xC0, 0x00, 0x00]);
        assert_eq!(wire("Latin1_General_CI_AI"), [0x09, 0x04, 0xF0, 0x00, 0x00]);
        assert_eq!(wire("Latin1_General_CS_AI"), [0x09, 0x04, 0xE0, 0x00, 0x00]);
        assert_eq!(wire("Latin1_General_CI_AS_KS"), [0x09, 0x04, 0x90, 0x00, 0x00]);
        assert_eq!(wire("Latin1_General_CI_AS_WS"), [0x09, 0x04, 0x50, 0x00, 0x00]);
        assert_eq!(wire("Latin1_General_CS_AS_KS_WS"), [0x09, 0x04, 0x00, 0x00, 0x00]);
        // Binary collations ignore nothing: only fBinary / fBinary2.
        assert_eq!(wire("Latin1_General_BIN"), [0x09, 0x04, 0x00, 0x01, 0x00]);
        assert_eq!(wire("Latin1_General_BIN2"), [0x09, 0x04, 0x00, 0x02, 0x00]);
        // Latin1_General_100: version 1 in the top nibble of the fourth byte.
        assert_eq!(wire("Latin1_General_100_CI_AS"), [0x09, 0x04, 0xD0, 0x10, 0x00]);
        assert_eq!(wire("Latin1_General_100_CS_AS"), [0x09, 0x04, 0xC0, 0x10, 0x00]);
        assert_eq!(wire("Latin1_General_100_CI_AI"), [0x09, 0x04, 0xF0, 0x10, 0x00]);
        assert_eq!(wire("Latin1_General_100_BIN"), [0x09, 0x04, 0x00, 0x11, 0x00]);
        assert_eq!(wire("Latin1_General_100_BIN2"), [0x09, 0x04, 0x00, 0x12, 0x00]);
        // _SC has no bit of its own; _UTF8 sets fUTF8 (0x40 of the flags; see
        // `wire_collation`): the data travels in code page 1252.
        assert_eq!(wire("Latin1_General_100_CI_AS_SC"), [0x09, 0x04, 0xD0, 0x10, 0x00]);
        assert_eq!(wire("Latin1_General_100_CI_AS_SC_UTF8"), [0x09, 0x04, 0xD0, 0x14, 0x00]);
    }

    #[test]
    fn declared_types_go_out_as_themselves() {
        let column = |ty, declared, collation| ColumnInfo {
            name: "c".into(),
            ty,
            nullable: true,
            collation,
            declared: Some(declared),
        };
        let cs = wire_collation(Some("Latin1_General_CS_AS"));
        assert_eq!(
            column_type_info(&column(SqlType::DateTime, DeclaredType::SmallDateTime, None)),
            TypeInfo::DateTimeN(4)
        );
        assert_eq!(
            column_type_info(&column(SqlType::Money, DeclaredType::SmallMoney, None)),
            TypeInfo::MoneyN(4)
        );
        assert_eq!(
            column_type_info(&column(
                SqlType::VarChar(Len::Max),
                DeclaredType::Text,
                Some("Latin1_General_CS_AS")
            )),
            TypeInfo::Text { max_len: TEXT_MAX_LEN, collation: cs }
        );
        let plain =
            ColumnInfo { declared: None, ..column(SqlType::NChar(4), DeclaredType::Text, None) };
        assert_eq!(
            column_type_info(&ColumnInfo { collation: Some("Latin1_General_CS_AS"), ..plain }),
            TypeInfo::NChar { len: 8, collation: cs }
        );
        // A DATETIME sent as SMALLDATETIME: to the nearest minute, and within its range.
        let sdt = |days, ticks| {
            let v = DateTime::from_parts(days, ticks).map_or(Value::Null, Value::DateTime);
            to_wire(SqlType::DateTime, &TypeInfo::DateTimeN(4), v)
        };
        assert_eq!(sdt(1, 9000), Ok(TdsValue::SmallDateTime { days: 1, minutes: 1 }));
        assert_eq!(sdt(-1, 0).map_err(|e| e.number), Err(242));
        let sm = to_wire(SqlType::Money, &TypeInfo::MoneyN(4), Value::Money(1 << 31));
        assert_eq!(sm.map_err(|e| e.number), Err(8115));
    }

    #[test]
    fn values_convert_to_the_column_type() {
        let d = Decimal::new(15, 1).unwrap_or(Decimal::from_i64(0));
        let ty = SqlType::Decimal { precision: 10, scale: 3 };
        let wire = to_wire(ty, &type_info(ty), Value::Decimal(d));
        assert_eq!(
            wire,
            Ok(TdsValue::Decimal(walden_tds::Decimal { value: 1500, precision: 10, scale: 3 }))
        );
        let wire = to_wire(SqlType::BigInt, &TypeInfo::IntN(8), Value::Int(7));
        assert_eq!(wire, Ok(TdsValue::BigInt(7)));
        // A MONEY OUTPUT parameter the client sent as DECIMAL(38, 4).
        let ty = TypeInfo::Decimal { precision: 38, scale: 4 };
        let wire = to_wire(SqlType::Money, &ty, Value::Money(24_690));
        assert_eq!(
            wire,
            Ok(TdsValue::Decimal(walden_tds::Decimal { value: 24_690, precision: 38, scale: 4 }))
        );
        // A _UTF8 collation's data goes as UTF-8; another's in code page 1252.
        let utf8 = wire_collation(Some("Latin1_General_100_CI_AS_SC_UTF8"));
        assert_eq!(encode_varchar("é€ā".into(), utf8), "é€ā".as_bytes());
        assert_eq!(encode_varchar("é€ā".into(), Collation::default()), [0xE9, 0x80, b'?']);
    }

    #[test]
    fn a_datetimeoffset_parameter_keeps_its_moment_and_offset() {
        let date = |y, m, d| Date::from_ymd(y, m, d).map(Date::days).unwrap_or_default();
        let time = |h: u8, m: u8| walden_tds::Time {
            increments: (u64::from(h) * 60 + u64::from(m)) * 60 * 10_000_000,
            scale: 7,
        };
        // 06:30 UTC at +02:00 is 08:30; 23:30 UTC on Feb 29 at +01:00 is 00:30 on Mar 1;
        // 00:15 UTC at -05:00 is 19:15 the day before.
        for (utc_day, utc_time, offset, shown) in [
            (date(2024, 3, 1), time(6, 30), 120, "2024-03-01 08:30:00.0000000 +02:00"),
            (date(2024, 2, 29), time(23, 30), 60, "2024-03-01 00:30:00.0000000 +01:00"),
            (date(2024, 3, 1), time(0, 15), -300, "2024-02-29 19:15:00.0000000 -05:00"),
        ] {
            let wire =
                TdsValue::DateTimeOffset { date: utc_day, time: utc_time, offset_minutes: offset };
            let value = from_wire(wire.clone()).map(|v| v.to_string());
            assert_eq!(value.as_deref(), Ok(shown), "{wire:?}");
            let ty = TypeInfo::DateTimeOffset { scale: 7 };
            let back = from_wire(wire.clone())
                .and_then(|v| Ok(to_wire(SqlType::DateTimeOffset(7), &ty, v)?));
            assert_eq!(back, Ok(wire));
        }
        let ty = TypeInfo::DateTimeOffset { scale: 7 };
        assert_eq!(sql_type(&ty), Some(SqlType::DateTimeOffset(7)));
        let max = TdsValue::DateTimeOffset {
            date: Date::MAX.days(),
            time: time(23, 30),
            offset_minutes: 60,
        };
        assert!(from_wire(max).is_err());
    }

    #[test]
    fn literals_quote_and_cast() {
        assert_eq!(
            literal(&Value::NStr("it's".into()), SqlType::NVarChar(Len::N(10))),
            "CAST(N'it''s' AS nvarchar(10))"
        );
        assert_eq!(
            literal(&Value::Binary(vec![1, 0xAB]), SqlType::VarBinary(Len::Max)),
            "CAST(0x01AB AS varbinary(max))"
        );
        assert_eq!(literal(&Value::Null, SqlType::Int), "CAST(NULL AS int)");
        assert_eq!(
            literal(&Value::Money(-12_345_678), SqlType::Money),
            "CAST(-1234.5678 AS money)"
        );
        assert_eq!(literal(&Value::Money(5), SqlType::Money), "CAST(0.0005 AS money)");
        let dt = DateTime::from_parts(45_000, 25_919_999).map(Value::DateTime);
        assert_eq!(
            dt.map(|v| literal(&v, SqlType::DateTime)),
            Some("CAST(N'2023-03-17T23:59:59.997' AS datetime)".to_string())
        );
    }
}
