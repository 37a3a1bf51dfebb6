//! Prints expressions: every binary operation and predicate is parenthesised.

use std::fmt::{Display, Formatter, Result, Write};

use super::{commas, quote, Separated};
use crate::ast::{
    BinaryOp, Case, Expr, ExprKind, FrameBound, FrameUnits, FunctionArgs, FunctionCall, Literal,
    ObjectName, Quantifier, UnaryOp, WindowFrame, WindowSpec,
};
use crate::parser::{FUNCTION_KEYWORDS, NILADIC_FUNCTIONS};

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", self.kind)
    }
}

/// ` NOT` when negated.
fn not(negated: bool) -> &'static str {
    if negated {
        " NOT"
    } else {
        ""
    }
}

impl Display for ExprKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            ExprKind::Literal(literal) => write!(f, "{literal}"),
            ExprKind::Variable(name) => f.write_str(name),
            ExprKind::SystemVariable(name) => f.write_str(name),
            ExprKind::Column(parts) => write!(f, "{}", Separated(parts, ".")),
            ExprKind::Unary { op, operand } => {
                let symbol = match op {
                    UnaryOp::Plus => "+",
                    UnaryOp::Minus => "-",
                    UnaryOp::BitNot => "~",
                    UnaryOp::Not => "NOT ",
                };
                // A space keeps `- -1` from becoming the comment `--1`.
                let nested = matches!(operand.kind, ExprKind::Unary { .. });
                let space = if nested && *op != UnaryOp::Not { " " } else { "" };
                write!(f, "{symbol}{space}{operand}")
            }
            ExprKind::Binary { op, left, right } => write!(f, "({left} {op} {right})"),
            ExprKind::Between { expr, negated, low, high } => {
                write!(f, "({expr}{} BETWEEN {low} AND {high})", not(*negated))
            }
            ExprKind::InList { expr, negated, list } => {
                write!(f, "({expr}{} IN ({}))", not(*negated), commas(list))
            }
            ExprKind::InSubquery { expr, negated, subquery } => {
                write!(f, "({expr}{} IN ({subquery}))", not(*negated))
            }
            ExprKind::Like { expr, negated, pattern, escape } => {
                write!(f, "({expr}{} LIKE {pattern}", not(*negated))?;
                if let Some(escape) = escape {
                    write!(f, " ESCAPE {escape}")?;
                }
                f.write_char(')')
            }
            ExprKind::IsNull { expr, negated } => write!(f, "({expr} IS{} NULL)", not(*negated)),
            ExprKind::IsDistinctFrom { left, right, negated } => {
                write!(f, "({left} IS{} DISTINCT FROM {right})", not(*negated))
            }
            ExprKind::Collate { expr, collation } => write!(f, "{expr} COLLATE {collation}"),
            ExprKind::JsonObject { pairs, absent_on_null } => {
                let members: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                let clause = if *absent_on_null { " ABSENT ON NULL" } else { "" };
                write!(f, "JSON_OBJECT({}{clause})", members.join(", "))
            }
            ExprKind::JsonArray { values, absent_on_null } => {
                let values: Vec<String> = values.iter().map(ToString::to_string).collect();
                let clause = if *absent_on_null { "" } else { " NULL ON NULL" };
                write!(f, "JSON_ARRAY({}{clause})", values.join(", "))
            }
            ExprKind::AtTimeZone { expr, zone } => write!(f, "{expr} AT TIME ZONE {zone}"),
            ExprKind::XmlMethod { target, method, args } => {
                // `1.value(...)` would read back as the number `1.` followed by a name: a
                // number's call is printed on the number in parentheses, which parse away.
                if matches!(
                    target.kind,
                    ExprKind::Literal(
                        Literal::Integer(_)
                            | Literal::Decimal(_)
                            | Literal::Float(_)
                            | Literal::Money(_)
                    )
                ) {
                    write!(f, "({target}).{method}({})", commas(args))
                } else {
                    write!(f, "{target}.{method}({})", commas(args))
                }
            }
            ExprKind::CurrentOf(cursor) => write!(f, "CURRENT OF {cursor}"),
            ExprKind::Quantified { left, op, quantifier, subquery } => {
                let quantifier = match quantifier {
                    Quantifier::All => "ALL",
                    Quantifier::Any => "ANY",
                };
                write!(f, "({left} {op} {quantifier} ({subquery}))")
            }
            ExprKind::Exists(query) => write!(f, "EXISTS ({query})"),
            ExprKind::Subquery(query) => write!(f, "({query})"),
            ExprKind::Case(case) => write!(f, "{case}"),
            ExprKind::Cast(cast) => {
                let name = if cast.is_try { "TRY_CAST" } else { "CAST" };
                write!(f, "{name}({} AS {})", cast.expr, cast.data_type)
            }
            ExprKind::Convert(convert) => {
                let name = if convert.is_try { "TRY_CONVERT" } else { "CONVERT" };
                write!(f, "{name}({}, {}", convert.data_type, convert.expr)?;
                if let Some(style) = &convert.style {
                    write!(f, ", {style}")?;
                }
                f.write_char(')')
            }
            ExprKind::Function(call) => write!(f, "{call}"),
            ExprKind::NextValueFor(next) => {
                write!(f, "NEXT VALUE FOR {}", next.sequence)?;
                match &next.over {
                    Some(window) => write!(f, " OVER ({window})"),
                    None => Ok(()),
                }
            }
            ExprKind::Default => f.write_str("DEFAULT"),
        }
    }
}

impl Display for BinaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(match self {
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::Add => "+",
            BinaryOp::Subtract => "-",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::Gt => ">",
            BinaryOp::LtEq => "<=",
            BinaryOp::GtEq => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
        })
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            Literal::Null => f.write_str("NULL"),
            Literal::String { value, national } => {
                write!(f, "{}{}", if *national { "N" } else { "" }, quote(value))
            }
            Literal::Integer(text) | Literal::Decimal(text) | Literal::Float(text) => {
                f.write_str(text)
            }
            Literal::Money(text) => write!(f, "${text}"),
            Literal::Binary(bytes) => {
                f.write_str("0x")?;
                bytes.iter().try_for_each(|byte| write!(f, "{byte:02X}"))
            }
        }
    }
}

impl Display for Case {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str("CASE")?;
        if let Some(operand) = &self.operand {
            write!(f, " {operand}")?;
        }
        for branch in &self.branches {
            write!(f, " WHEN {} THEN {}", branch.condition, branch.result)?;
        }
        if let Some(otherwise) = &self.else_result {
            write!(f, " ELSE {otherwise}")?;
        }
        f.write_str(" END")
    }
}

impl Display for FunctionCall {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", FunctionName(&self.name))?;
        match &self.args {
            FunctionArgs::None => {}
            FunctionArgs::Star => f.write_str("(*)")?,
            FunctionArgs::List { distinct, args } => {
                write!(f, "({}{})", if *distinct { "DISTINCT " } else { "" }, commas(args))?
            }
        }
        if !self.within_group.is_empty() {
            write!(f, " WITHIN GROUP (ORDER BY {})", commas(&self.within_group))?;
        }
        match &self.over {
            Some(window) => write!(f, " OVER ({window})"),
            None => Ok(()),
        }
    }
}

/// A function's name; the reserved words that are functions (`LEFT`, `COALESCE`,
/// `CURRENT_TIMESTAMP`, ...) stay unbracketed.
struct FunctionName<'a>(&'a ObjectName);

impl Display for FunctionName<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let name = &self.0.name.value;
        let is_keyword_function = FUNCTION_KEYWORDS
            .iter()
            .chain(NILADIC_FUNCTIONS.iter())
            .any(|keyword| name.eq_ignore_ascii_case(keyword));
        let unqualified =
            self.0.schema.is_none() && self.0.database.is_none() && self.0.server.is_none();
        if is_keyword_function && unqualified {
            f.write_str(name)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl Display for WindowSpec {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if !self.partition_by.is_empty() {
            write!(f, "PARTITION BY {}", commas(&self.partition_by))?;
            if !self.order_by.is_empty() {
                f.write_char(' ')?;
            }
        }
        if !self.order_by.is_empty() {
            write!(f, "ORDER BY {}", commas(&self.order_by))?;
        }
        if let Some(frame) = &self.frame {
            if !self.partition_by.is_empty() || !self.order_by.is_empty() {
                f.write_char(' ')?;
            }
            write!(f, "{frame}")?;
        }
        Ok(())
    }
}

impl Display for WindowFrame {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let units = match self.units {
            FrameUnits::Rows => "ROWS",
            FrameUnits::Range => "RANGE",
        };
        write!(f, "{units} BETWEEN {} AND {}", self.start, self.end)
    }
}

impl Display for FrameBound {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            FrameBound::UnboundedPreceding => f.write_str("UNBOUNDED PRECEDING"),
            FrameBound::Preceding(n) => write!(f, "{n} PRECEDING"),
            FrameBound::CurrentRow => f.write_str("CURRENT ROW"),
            FrameBound::Following(n) => write!(f, "{n} FOLLOWING"),
            FrameBound::UnboundedFollowing => f.write_str("UNBOUNDED FOLLOWING"),
        }
    }
}
