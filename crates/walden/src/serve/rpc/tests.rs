//! The RPC binder's own tests: calls built by hand, bound and checked without a server.

use super::*;
use walden_engine::types::Value;
use walden_tds::{RpcOptions, TvpColumn};

fn call(proc: ProcId, params: Vec<RpcParam>) -> RpcCall {
    RpcCall { proc: RpcProc::Id(proc), options: RpcOptions::NONE, params }
}

fn text(s: &str) -> RpcParam {
    RpcParam::input("", TdsValue::NVarChar(s.into()))
}

fn handle_out(value: TdsValue) -> RpcParam {
    let mut p = RpcParam::input("", value);
    p.ty = TypeInfo::IntN(4);
    p.status = ParamStatus::BY_REF;
    p
}

fn number(r: Result<Plan, RpcError>) -> Option<i32> {
    r.err().map(|e| e.number)
}

#[test]
fn declarations_split_at_top_level_commas() {
    let d = declarations(
        "@P1 int, @P2 decimal(10, 2) OUTPUT,@P3 nvarchar(max), @P4 dbo.IdList READONLY",
    );
    assert_eq!(
        d,
        Ok(vec![
            ("@P1".to_string(), "int".to_string(), false, false),
            ("@P2".to_string(), "decimal(10, 2)".to_string(), true, false),
            ("@P3".to_string(), "nvarchar(max)".to_string(), false, false),
            ("@P4".to_string(), "dbo.IdList".to_string(), false, true),
        ])
    );
    assert_eq!(declarations("  "), Ok(Vec::new()));
    assert_eq!(declarations("@a int,").map_err(|e| e.number), Err(102));
}

#[test]
fn declared_types_resolve_like_declare() {
    let decls = parse_declarations("@a sysname, @b decimal(10, 2) OUT, @c varchar");
    let decls = decls.map(|d| d.into_iter().map(|d| (d.sql, d.output)).collect::<Vec<_>>());
    assert_eq!(
        decls,
        Ok(vec![
            (Some(SqlType::NVarChar(walden_engine::types::Len::N(128))), false),
            (Some(SqlType::Decimal { precision: 10, scale: 2 }), true),
            (Some(SqlType::VarChar(walden_engine::types::Len::N(1))), false),
        ])
    );
    let unknown = parse_declarations("@a nosuchtype").map_err(|e| (e.number, e.message));
    assert_eq!(
        unknown,
        Err((2715, "Column, parameter, or variable #1: Cannot find data type nosuchtype.".into()))
    );
}

/// The call a plan runs: what the session's views show, and its arguments.
fn call_of(plan: Result<Plan, RpcError>) -> Result<(String, Vec<CallArgument>), i32> {
    match plan.map_err(|e| e.number)?.work {
        Work::Call { shown, arguments, .. } => Ok((shown.to_string(), arguments)),
        other => panic!("not a call: {other:?}"),
    }
}

/// The text declaring and filling each table-valued argument of a plan's call.
fn tables_of(plan: Result<Plan, RpcError>) -> Result<Vec<String>, i32> {
    let (_, arguments) = call_of(plan)?;
    Ok(arguments
        .into_iter()
        .filter_map(|a| match a.value {
            CallValue::Table(text) => Some(text),
            _ => None,
        })
        .collect())
}

/// (name passed as, value, OUTPUT) of each argument.
fn values_of(arguments: &[CallArgument]) -> Vec<(Option<&str>, Option<&Value>, bool)> {
    arguments
        .iter()
        .map(|a| {
            let value = match &a.value {
                CallValue::Value(v) => Some(v),
                _ => None,
            };
            (a.name.as_deref(), value, a.output)
        })
        .collect()
}

#[test]
fn sp_executesql_binds_values_to_its_declarations() {
    let mut out = RpcParam::input("@o", TdsValue::Null);
    out.ty = TypeInfo::IntN(4);
    out.status = ParamStatus::BY_REF;
    let call = call(
        ProcId::ExecuteSql,
        vec![
            text("SET @o = @a + 1"),
            text("@a int, @o int OUTPUT"),
            RpcParam::input("@a", TdsValue::Int(41)),
            out,
        ],
    );
    let planned = plan(&call, &mut Prepared::default());
    let outputs = planned
        .as_ref()
        .map(|p| p.outputs.iter().map(|o| (o.ordinal, o.name.clone(), o.sql)).collect::<Vec<_>>());
    assert_eq!(outputs.ok(), Some(vec![(3, "@o".to_string(), SqlType::Int)]));
    let target = planned.as_ref().ok().map(|p| match &p.work {
        Work::Call { target: CallTarget::Statement { params, text }, .. } => {
            (params.to_string(), text.to_string())
        }
        other => panic!("{other:?}"),
    });
    assert_eq!(target, Some(("@a int, @o int OUTPUT".to_string(), "SET @o = @a + 1".to_string())));
    let (shown, arguments) = call_of(planned).unwrap_or_default();
    assert_eq!(shown, "(@a int, @o int OUTPUT)SET @o = @a + 1");
    // In the declarations' order, by position; the values as sent.
    assert_eq!(
        values_of(&arguments),
        vec![(None, Some(&Value::Int(41)), false), (None, Some(&Value::Null), true)]
    );
    assert_eq!(arguments.iter().map(|a| a.ty).collect::<Vec<_>>(), [SqlType::Int; 2]);
}

/// A `dbo.IdList (id INT, name NVARCHAR(10))` parameter with the given rows.
fn id_list(name: &str, rows: Vec<Vec<Option<TdsValue>>>) -> RpcParam {
    let column = |ty| TvpColumn { user_type: 0, flags: 1, ty };
    let table = TableValue {
        database: String::new(),
        schema: "dbo".into(),
        type_name: "IdList".into(),
        columns: vec![column(TypeInfo::IntN(4)), column(TypeInfo::nvarchar(Some(10)))],
        rows,
    };
    let mut p = RpcParam::input(name, TdsValue::Table(Box::new(table)));
    p.ty = TypeInfo::Tvp;
    p
}

#[test]
fn a_table_valued_parameter_becomes_a_filled_table_variable() {
    let row = |id, name: Option<&str>| {
        let name = name.map_or(TdsValue::Null, |n| TdsValue::NVarChar(n.into()));
        vec![Some(TdsValue::Int(id)), Some(name)]
    };
    let rows = vec![row(1, Some("a")), row(2, None)];
    let call = RpcCall {
        proc: RpcProc::Name("dbo.take".into()),
        options: RpcOptions::NONE,
        params: vec![id_list("@ids", rows)],
    };
    let planned = plan(&call, &mut Prepared::default());
    assert_eq!(
        tables_of(planned),
        Ok(vec!["DECLARE @__walden_rpc_p0 [dbo].[IdList]; INSERT @__walden_rpc_p0 VALUES \
             (CAST(1 AS int), CAST(N'a' AS nvarchar(10))), (CAST(2 AS int), CAST(NULL AS \
             nvarchar(10))); "
            .to_string()])
    );
    let (_, arguments) = call_of(plan(&call, &mut Prepared::default())).unwrap_or_default();
    assert_eq!(arguments.first().and_then(|a| a.name.as_deref()), Some("@ids"));

    // 2,500 rows take three INSERTs; an empty table none.
    let many = (0..2500).map(|i| row(i, Some("x"))).collect();
    let call = call_sql("SELECT COUNT(*) FROM @t", "@t dbo.IdList READONLY", id_list("@t", many));
    let tables = tables_of(plan(&call, &mut Prepared::default())).unwrap_or_default();
    assert_eq!(tables.concat().matches("INSERT @__walden_rpc_p2 VALUES").count(), 3);
    let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", id_list("@t", Vec::new()));
    assert_eq!(
        tables_of(plan(&call, &mut Prepared::default())),
        Ok(vec!["DECLARE @__walden_rpc_p2 [dbo].[IdList]; ".to_string()])
    );
}

fn call_sql(statement: &str, params: &str, value: RpcParam) -> RpcCall {
    call(ProcId::ExecuteSql, vec![text(statement), text(params), value])
}

#[test]
fn a_column_sent_as_default_is_left_out_of_the_values() {
    let mut p = id_list("@t", vec![vec![None, Some(TdsValue::NVarChar("x".into()))]]);
    if let TdsValue::Table(t) = &mut p.value {
        t.columns[0].flags |= walden_tds::tvp::COLUMN_DEFAULT;
    }
    let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", p.clone());
    let text = tables_of(plan(&call, &mut Prepared::default())).map(|t| t.concat());
    assert!(
        text.as_ref().is_ok_and(
            |t| t.contains("INSERT @__walden_rpc_p2 VALUES (CAST(N'x' AS nvarchar(10)))")
        ),
        "{text:?}"
    );
    // Every column a default: a row is DEFAULT VALUES.
    if let TdsValue::Table(t) = &mut p.value {
        t.columns[1].flags |= walden_tds::tvp::COLUMN_DEFAULT;
        t.rows[0][1] = None;
    }
    let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", p);
    let text = tables_of(plan(&call, &mut Prepared::default())).map(|t| t.concat());
    assert!(
        text.as_ref().is_ok_and(|t| t.contains("INSERT @__walden_rpc_p2 DEFAULT VALUES;")),
        "{text:?}"
    );
}

#[test]
fn table_valued_parameter_errors() {
    let mut output = id_list("@t", Vec::new());
    output.status = ParamStatus::BY_REF;
    let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", output);
    assert_eq!(number(plan(&call, &mut Prepared::default())), Some(352));
    let scalar = RpcParam::input("@t", TdsValue::Int(1));
    let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", scalar);
    assert_eq!(number(plan(&call, &mut Prepared::default())), Some(206));
    let mut unnamed = id_list("@t", Vec::new());
    if let TdsValue::Table(t) = &mut unnamed.value {
        t.schema.clear();
        t.type_name.clear();
    }
    // Unnamed, it takes the type its declaration gives; a database name is refused.
    let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", unnamed.clone());
    assert_eq!(
        tables_of(plan(&call, &mut Prepared::default())),
        Ok(vec!["DECLARE @__walden_rpc_p2 dbo.IdList; ".to_string()])
    );
    if let TdsValue::Table(t) = &mut unnamed.value {
        t.database = "elsewhere".into();
    }
    let call = call_sql("SELECT 1", "@t dbo.IdList READONLY", unnamed);
    assert_eq!(number(plan(&call, &mut Prepared::default())), Some(8009));
}

#[test]
fn parameters_bind_by_position_then_by_name() {
    let statement = Statement::new("@a int, @b int".into(), "SELECT @a, @b".into());
    let Ok(statement) = statement else { panic!("{statement:?}") };
    let names = |params: &[RpcParam]| {
        bind("sp_execute", &statement, params, 0)
            .map(|b| b.into_iter().map(|b| (b.ordinal, b.name)).collect::<Vec<_>>())
            .map_err(|e| e.number)
    };
    let both = [RpcParam::input("", TdsValue::Int(1)), RpcParam::input("@B", TdsValue::Int(2))];
    assert_eq!(names(&both), Ok(vec![(0, "@a".to_string()), (1, "@b".to_string())]));
    let swapped =
        [RpcParam::input("@b", TdsValue::Int(2)), RpcParam::input("@a", TdsValue::Int(1))];
    assert_eq!(names(&swapped), Ok(vec![(1, "@a".to_string()), (0, "@b".to_string())]));
    assert_eq!(names(&both[..1]), Err(8178));
    let after_named = [RpcParam::input("@a", TdsValue::Int(1)), text("x")];
    assert_eq!(names(&after_named), Err(119));
    let twice = [RpcParam::input("", TdsValue::Int(1)), RpcParam::input("@a", TdsValue::Int(1))];
    assert_eq!(names(&twice), Err(8143));
    let three = [text("1"), text("2"), text("3")];
    assert_eq!(names(&three), Err(8144));
    assert_eq!(names(&[RpcParam::input("@z", TdsValue::Int(1))]), Err(8145));
}

#[test]
fn prepare_execute_unprepare() {
    let mut prepared = Prepared::default();
    let prepare = call(
        ProcId::Prepare,
        vec![handle_out(TdsValue::Null), text("@x int"), text("SELECT @x + 1"), text("1")],
    );
    let first = plan(&prepare, &mut prepared);
    let first = first.map(|p| {
        let described = match p.work {
            Work::Describe(text) => text,
            other => panic!("{other:?}"),
        };
        (described, p.handle.map(|(param, h)| (param.ordinal, h)))
    });
    let described = "DECLARE @x int; SET FMTONLY ON; SELECT @x + 1".to_string();
    assert_eq!(first, Ok((described, Some((0, 1)))));
    let second = plan(&prepare, &mut prepared).map(|p| p.handle.map(|(_, h)| h));
    assert_eq!(second, Ok(Some(2)));

    let execute = call(ProcId::Execute, vec![text("unused"), RpcParam::input("", 5.into())]);
    assert_eq!(number(plan(&execute, &mut prepared)), Some(8009));
    let execute = call(
        ProcId::Execute,
        vec![RpcParam::input("", TdsValue::Int(1)), RpcParam::input("", TdsValue::Int(5))],
    );
    let (shown, arguments) = call_of(plan(&execute, &mut prepared)).unwrap_or_default();
    assert_eq!(shown, "(@x int)SELECT @x + 1");
    assert_eq!(values_of(&arguments), vec![(None, Some(&Value::Int(5)), false)]);

    let unprepare = call(ProcId::Unprepare, vec![RpcParam::input("", TdsValue::Int(1))]);
    assert!(plan(&unprepare, &mut prepared).is_ok());
    assert_eq!(number(plan(&unprepare, &mut prepared)), Some(8179));
    assert_eq!(number(plan(&execute, &mut prepared)), Some(8179));

    // Re-preparing with handle 2 drops it; handles are not reused.
    let reprepare =
        call(ProcId::Prepare, vec![handle_out(TdsValue::Int(2)), text(""), text("SELECT 1")]);
    let third = plan(&reprepare, &mut prepared).map(|p| p.handle.map(|(_, h)| h));
    assert_eq!(third, Ok(Some(3)));
    assert_eq!(prepared.statements.keys().copied().collect::<Vec<_>>(), vec![3]);
    prepared.clear();
    assert!(prepared.statements.is_empty());
    let fourth = plan(&reprepare, &mut prepared).map(|p| p.handle.map(|(_, h)| h));
    assert_eq!(fourth, Ok(Some(4)));
}

#[test]
fn prepare_reports_syntax_errors_and_keeps_nothing() {
    let mut prepared = Prepared::default();
    let bad = call(
        ProcId::Prepare,
        vec![handle_out(TdsValue::Null), text("@x int"), text("SELECT @x FROM WHERE")],
    );
    let error = plan(&bad, &mut prepared).err();
    let error = error.map(|e| (e.number, e.class, e.line, e.message));
    assert_eq!(error, Some((156, 15, 1, "Incorrect syntax near the keyword 'WHERE'.".to_string())));
    let bad_line = call(
        ProcId::PrepExec,
        vec![handle_out(TdsValue::Null), text(""), text("SELECT 1\nSELECT 'x")],
    );
    let error = plan(&bad_line, &mut prepared).err().map(|e| (e.number, e.line));
    assert_eq!(error, Some((105, 2)));
    assert!(prepared.statements.is_empty());
    // sp_prepexec whose values do not fit keeps no handle either.
    let missing =
        call(ProcId::PrepExec, vec![handle_out(TdsValue::Null), text("@x int"), text("SELECT @x")]);
    assert_eq!(number(plan(&missing, &mut prepared)), Some(8178));
    assert!(prepared.statements.is_empty());
    let short = call(ProcId::Prepare, vec![handle_out(TdsValue::Null), text("")]);
    assert_eq!(number(plan(&short, &mut prepared)), Some(201));
}

#[test]
fn a_parameter_sent_as_default_passes_default() {
    let mut named = RpcParam::input("@b", TdsValue::Null);
    named.status = ParamStatus::DEFAULT;
    let mut positional = RpcParam::input("", TdsValue::Int(9));
    positional.status = ParamStatus::DEFAULT;
    let call = RpcCall {
        proc: RpcProc::Name("dbo.p".into()),
        options: RpcOptions::NONE,
        params: vec![RpcParam::input("", TdsValue::Int(1)), positional, named],
    };
    let (shown, arguments) = call_of(plan(&call, &mut Prepared::default())).unwrap_or_default();
    assert_eq!(shown, "dbo.p");
    assert_eq!(
        values_of(&arguments),
        vec![(None, Some(&Value::Int(1)), false), (None, None, false), (Some("@b"), None, false)]
    );
    assert!(matches!(arguments[1].value, CallValue::Default));
    assert!(is_reset_connection(&RpcProc::Name("sys.sp_reset_connection".into())));
    assert!(!is_reset_connection(&RpcProc::Name("sp_reset".into())));
}

#[test]
fn procedures_by_name() {
    assert_eq!(system_procedure("sp_prepexec"), Some(ProcId::PrepExec));
    assert_eq!(system_procedure("[sys].[SP_UNPREPARE]"), Some(ProcId::Unprepare));
    assert_eq!(system_procedure("master..sp_execute"), Some(ProcId::Execute));
    assert_eq!(system_procedure("sp_prepared_things"), None);
    let rpc = call(ProcId::PrepExecRpc, Vec::new());
    let error = plan(&rpc, &mut Prepared::default()).err().map(|e| (e.number, e.message));
    assert_eq!(error, Some((8009, "sp_prepexecrpc is not supported by Walden yet".into())));
}
