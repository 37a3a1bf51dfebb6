//! Scalar semantics of T-SQL: SQL Server's types, literals, conversions, operators, comparison,
//! `LIKE` and the built-in scalar functions. The interpreter evaluates expressions and calls
//! these with already-evaluated [`Value`](walden_engine::types::Value)s.
//!
//! # The pieces
//!
//! * [`data_type`] / [`data_type_in_cast`] resolve a written type, [`literal`] types a
//!   constant as SQL Server does, [`type_of`] describes a value for metadata, and
//!   [`precedence`] / [`common_type`] are SQL Server's data type precedence.
//! * [`convert`], [`try_convert`] and [`coerce`] are explicit, `TRY_` and implicit conversion,
//!   with SQL Server's conversion chart, rounding rules, styles and error numbers.
//! * [`unary`] and [`binary`] are the value operators, [`compare`] and [`like`] the
//!   comparisons; all convert the operand of lower precedence implicitly.
//! * [`to_text`] is the default text of a value (PRINT, CONCAT, string `+`).
//! * [`registry`] is every built-in function: its arity, result type, determinism and
//!   implementation; [`call`] runs one that needs only its argument values, by name.
//!
//! # Conventions
//!
//! * NULL in gives NULL out, except where SQL Server says otherwise (CONCAT, ISNULL...).
//! * Errors carry SQL Server's message number and text (245 for a failed conversion, 8115
//!   for an overflow, 8134 for a division by zero...).
//! * A value knows its kind but not its declared length, precision or scale: where SQL Server's
//!   result depends on a declared type (the scale of a decimal division, the length a CHAR
//!   pads to), a value is taken to have the type it would have as a constant, and callers that
//!   know the declared type convert with [`coerce`].

mod arith;
pub(crate) mod collation;
mod compare;
mod convert;
mod dates;
mod format;
mod functions;
mod hijri;
pub(crate) mod json;
mod more;
mod num;
pub(crate) mod registry;
pub(crate) mod sequential_guid;
mod session_functions;
pub(crate) mod settings;
pub(crate) mod temporal;
mod text;
mod types;
pub(crate) mod xml;
pub(crate) mod xml_methods;
pub(crate) mod zones;

#[cfg(test)]
mod tests;

pub use arith::{binary, unary};
pub(crate) use arith::{checked_int_op, quick_binary};
pub use compare::{compare, like};
pub(crate) use compare::{
    compare_with_constant, compares_directly, date_operand, like_collated, types_compare_directly,
    PercentsPattern,
};
pub use convert::{coerce, convert, convert_from, try_convert, try_convert_from};
pub(crate) use convert::{declared_conversion_error, fit_declared};
pub(crate) use json::{for_json_object, openjson_rows, openjson_with_rows};
pub use registry::call;
pub(crate) use temporal::to_local;
pub use text::to_text;

/// The text of an xml value as a client receives it (the node a `nodes()` row stands for).
pub fn xml_text(x: &walden_engine::types::Xml) -> String {
    xml::text_of(x)
}
pub use types::{common_type, data_type, data_type_in_cast, literal, precedence, type_of};
pub(crate) use types::{declared_len, short_int_literal};
