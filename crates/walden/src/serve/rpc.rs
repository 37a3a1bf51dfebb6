//! RPC requests as T-SQL batches. The session runs text, so a call becomes: DECLARE each
//! parameter, SET it to its value, run the statement (`sp_executesql`) or `EXEC` the
//! procedure, then `SELECT` the OUTPUT parameters (and the return status) under a column name
//! the [`TdsOutput`](super::output::TdsOutput) recognises and captures instead of sending.

use walden_engine::types::SqlType;
use walden_tds::{ProcId, RpcCall, RpcParam, RpcProc, TdsValue, TypeInfo};

use super::convert::{from_wire, literal, sql_type};
use super::output::CAPTURE_PREFIX;

/// A parameter of the built batch.
#[derive(Debug)]
pub struct Param {
    /// The position in the RPC (RETURNVALUE's ordinal).
    pub ordinal: u16,
    /// The name the client used (`@P1`), or a generated one for a positional parameter.
    pub name: String,
    pub sql: SqlType,
    /// The wire type the client sent, which RETURNVALUE echoes.
    pub wire: TypeInfo,
}

/// A call turned into a batch.
#[derive(Debug)]
pub struct Plan {
    pub text: String,
    /// The OUTPUT parameters, in the order the capturing SELECT lists them, after the return
    /// status when there is one.
    pub outputs: Vec<Param>,
    /// Whether the capture's first column is the procedure's return status.
    pub returns_status: bool,
}

/// The variable holding a procedure's return status.
const STATUS_VAR: &str = "@__walden_rpc_status";

pub fn plan(call: &RpcCall) -> Result<Plan, String> {
    match &call.proc {
        RpcProc::Id(ProcId::ExecuteSql) => execute_sql(&call.params),
        RpcProc::Name(name) if is_proc(name, "sp_executesql") => execute_sql(&call.params),
        RpcProc::Id(other) => Err(format!("{} is not supported by Walden yet", other.name())),
        RpcProc::Name(name) => exec_procedure(name, &call.params),
    }
}

fn is_proc(name: &str, wanted: &str) -> bool {
    let bare = name.rsplit('.').next().unwrap_or(name).trim_matches(['[', ']']);
    bare.eq_ignore_ascii_case(wanted)
}

fn text_param(p: Option<&RpcParam>, what: &str) -> Result<String, String> {
    match p.map(|p| &p.value) {
        Some(TdsValue::NVarChar(s)) => Ok(s.clone()),
        Some(TdsValue::VarChar(b)) => Ok(super::convert::decode_latin1(b)),
        Some(TdsValue::Null) | None => Ok(String::new()),
        Some(other) => Err(format!("sp_executesql: {what} must be text, not {}", other.kind())),
    }
}

/// One declaration of sp_executesql's `@params`: name, type text, OUTPUT.
fn declarations(text: &str) -> Vec<(String, String, bool)> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
        .into_iter()
        .filter_map(|part| {
            let part = part.trim();
            let (name, rest) = part.split_once(char::is_whitespace)?;
            let mut ty = rest.trim();
            let mut output = false;
            for suffix in [" output", " out", " readonly"] {
                let lower = ty.to_ascii_lowercase();
                if lower.ends_with(suffix) {
                    output |= suffix != " readonly";
                    ty = ty[..ty.len() - suffix.len()].trim_end();
                }
            }
            let ty = ty.strip_prefix_ci("as ").unwrap_or(ty);
            Some((name.to_string(), ty.to_string(), output))
        })
        .collect()
}

trait StripPrefixCi {
    fn strip_prefix_ci(&self, prefix: &str) -> Option<&str>;
}

impl StripPrefixCi for str {
    fn strip_prefix_ci(&self, prefix: &str) -> Option<&str> {
        let head = self.get(..prefix.len())?;
        head.eq_ignore_ascii_case(prefix).then(|| &self[prefix.len()..])
    }
}

fn execute_sql(params: &[RpcParam]) -> Result<Plan, String> {
    let statement = text_param(params.first(), "the statement")?;
    let decls = declarations(&text_param(params.get(1), "the parameter list")?);
    let mut values = Vec::new();
    for (index, p) in params.iter().enumerate().skip(2) {
        let position = index - 2;
        let decl = if p.name.is_empty() {
            decls.get(position)
        } else {
            decls.iter().find(|d| d.0.eq_ignore_ascii_case(&p.name))
        };
        let (name, sql, output) = match decl {
            Some((name, ty, output)) => {
                let sql = SqlType::parse(ty)
                    .or_else(|| sql_type(&p.ty))
                    .ok_or_else(|| format!("parameter {name}: unsupported type {ty}"))?;
                (name.clone(), sql, *output || p.is_output())
            }
            None => return Err(format!("parameter {} is not declared in @params", p.name)),
        };
        values.push((ordinal(index)?, name, sql, output, p));
    }
    build(&statement, values, false)
}

fn ordinal(index: usize) -> Result<u16, String> {
    u16::try_from(index).map_err(|_| "too many parameters".to_string())
}

fn exec_procedure(name: &str, params: &[RpcParam]) -> Result<Plan, String> {
    let mut values = Vec::new();
    let mut args = Vec::new();
    for (index, p) in params.iter().enumerate() {
        let sql = sql_type(&p.ty)
            .ok_or_else(|| format!("parameter {}: unsupported type {}", p.name, p.ty.name()))?;
        let var = format!("@__walden_rpc_p{index}");
        let out = if p.is_output() { " OUTPUT" } else { "" };
        args.push(if p.name.is_empty() {
            format!("{var}{out}")
        } else {
            format!("{} = {var}{out}", p.name)
        });
        values.push((ordinal(index)?, var, sql, p.is_output(), p));
    }
    let statement = format!("EXEC {STATUS_VAR} = {name} {}", args.join(", "));
    let mut plan = build(&statement, values, true)?;
    // RETURNVALUE names the parameter as the client did, not by our variable.
    for out in &mut plan.outputs {
        if let Some(p) = params.get(usize::from(out.ordinal)) {
            out.name.clone_from(&p.name);
        }
    }
    Ok(plan)
}

fn build(
    statement: &str,
    values: Vec<(u16, String, SqlType, bool, &RpcParam)>,
    returns_status: bool,
) -> Result<Plan, String> {
    // The prologue shares the statement's first line, so that error line numbers match the
    // client's text.
    let mut text = String::new();
    if returns_status {
        text.push_str(&format!("DECLARE {STATUS_VAR} int; "));
    }
    let mut outputs = Vec::new();
    for (ordinal, name, sql, output, p) in values {
        let value = from_wire(&p.value).map_err(|e| format!("parameter {name}: {e}"))?;
        text.push_str(&format!("DECLARE {name} {sql}; SET {name} = {}; ", literal(&value, sql)));
        if output {
            outputs.push(Param { ordinal, name, sql, wire: p.ty });
        }
    }
    text.push_str(statement);
    let mut captured: Vec<String> = Vec::new();
    if returns_status {
        captured.push(STATUS_VAR.to_string());
    }
    captured.extend(outputs.iter().map(|o| o.name.clone()));
    if !captured.is_empty() {
        let columns: Vec<String> = captured
            .iter()
            .enumerate()
            .map(|(i, var)| format!("{var} AS {CAPTURE_PREFIX}{i}"))
            .collect();
        text.push_str(&format!("\n;SELECT {}", columns.join(", ")));
    }
    Ok(Plan { text, outputs, returns_status })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_split_at_top_level_commas() {
        let d = declarations("@P1 int, @P2 decimal(10, 2) OUTPUT,@P3 nvarchar(max)");
        assert_eq!(
            d,
            vec![
                ("@P1".to_string(), "int".to_string(), false),
                ("@P2".to_string(), "decimal(10, 2)".to_string(), true),
                ("@P3".to_string(), "nvarchar(max)".to_string(), false),
            ]
        );
    }

    #[test]
    fn sp_executesql_declares_sets_and_captures_outputs() {
        let mut out = RpcParam::input("@o", TdsValue::Null);
        out.ty = TypeInfo::IntN(4);
        out.status = walden_tds::ParamStatus::BY_REF;
        let call = RpcCall {
            proc: RpcProc::Id(ProcId::ExecuteSql),
            options: walden_tds::RpcOptions::NONE,
            params: vec![
                RpcParam::input("", TdsValue::NVarChar("SET @o = @a + 1".into())),
                RpcParam::input("", TdsValue::NVarChar("@a int, @o int OUTPUT".into())),
                RpcParam::input("@a", TdsValue::Int(41)),
                out,
            ],
        };
        let plan = plan(&call).map_err(|e| e.to_string());
        let plan = plan.as_ref().map(|p| (p.text.as_str(), p.outputs.len()));
        assert_eq!(
            plan,
            Ok((
                "DECLARE @a int; SET @a = CAST(41 AS int); DECLARE @o int; \
                 SET @o = CAST(NULL AS int); SET @o = @a + 1\n;SELECT @o AS __walden_rpc_0",
                1
            ))
        );
    }
}
