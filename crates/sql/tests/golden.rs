//! Golden tests: each input parses, prints as the expected canonical T-SQL, and the printed
//! form parses back to the same print. Canonical output parenthesises every operation, so
//! these also pin operator precedence.

use walden_sql::ast::*;
use walden_sql::{parse_batch, ParseError};

/// The canonical print of `sql`, checked to round-trip; statements end with `;` and are
/// separated by newlines.
fn canonical(sql: &str) -> String {
    let batch = parse_batch(sql).unwrap_or_else(|error| panic!("{sql}\n{error}"));
    let printed = batch.to_string();
    let again = parse_batch(&printed).unwrap_or_else(|error| panic!("{printed}\n{error}"));
    assert_eq!(printed, again.to_string(), "the print of {sql:?} does not round-trip");
    printed.trim_end().to_owned()
}

fn golden(sql: &str, expected: &str) {
    assert_eq!(canonical(sql), expected, "input: {sql}");
}

fn parse_one(sql: &str) -> Statement {
    let mut batch = parse_batch(sql).unwrap_or_else(|error| panic!("{sql}\n{error}"));
    assert_eq!(batch.statements.len(), 1, "{sql}");
    batch.statements.remove(0)
}

fn error(sql: &str) -> ParseError {
    match parse_batch(sql) {
        Ok(batch) => panic!("{sql:?} parsed as {batch}"),
        Err(error) => error,
    }
}

fn assert_error(sql: &str, expected: &str) {
    assert_eq!(error(sql).to_string(), expected, "input: {sql:?}");
}

// ---------------------------------------------------------------------------------------------
// Batches and statement boundaries
// ---------------------------------------------------------------------------------------------

#[test]
fn statements_need_no_semicolons() {
    golden(
        "BEGIN TRAN INSERT INTO t VALUES(1) COMMIT TRAN",
        "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1);\nCOMMIT TRANSACTION;",
    );
    golden("COMMIT TRAN SET @i += 1", "COMMIT TRANSACTION;\nSET @i += 1;");
    golden("SELECT 1 SELECT 2", "SELECT 1;\nSELECT 2;");
    golden(";;SELECT 1;; ;SELECT 2;", "SELECT 1;\nSELECT 2;");
    golden(
        "select datediff(s, @start, getdate()) truncate table dbo.InsertTest",
        "SELECT datediff(s, @start, getdate());\nTRUNCATE TABLE dbo.InsertTest;",
    );
    golden("SELECT a FROM t THROW 50000, 'x', 1", "SELECT a FROM t;\nTHROW 50000, 'x', 1;");
}

#[test]
fn empty_batches_have_no_statements() {
    for sql in ["", "  \n ", "-- only a comment", "/* c */ ;;", ";"] {
        assert!(parse_batch(sql).unwrap().statements.is_empty(), "{sql:?}");
    }
}

#[test]
fn statements_carry_their_lines_and_source_range() {
    let sql = "SET NOCOUNT ON;\n\nSELECT a,\n  b FROM t\nPRINT 'x'";
    let batch = parse_batch(sql).unwrap();
    let lines: Vec<u32> = batch.statements.iter().map(|s| s.span.line).collect();
    assert_eq!(lines, [1, 3, 5]);
    let select = &batch.statements[1].span;
    assert_eq!(&sql[select.start..select.end], "SELECT a,\n  b FROM t");
    let StatementKind::Print(expr) = &batch.statements[2].kind else { panic!() };
    assert_eq!((expr.span.line, expr.span.column), (5, 7));
}

#[test]
fn expressions_carry_spans() {
    let sql = "SELECT 1,\n (a + b) * c";
    let statement = parse_one(sql);
    let StatementKind::Select(select) = statement.kind else { panic!() };
    let QueryBody::Select(body) = &select.query.body else { panic!() };
    let SelectItem::Expr { expr, .. } = &body.items[1] else { panic!() };
    assert_eq!(expr.span.line, 2);
    assert_eq!(&sql[expr.span.start..expr.span.end], "(a + b) * c");
    let ExprKind::Binary { left, .. } = &expr.kind else { panic!() };
    assert_eq!(&sql[left.span.start..left.span.end], "(a + b)");
}

// ---------------------------------------------------------------------------------------------
// Variables, SET, control flow
// ---------------------------------------------------------------------------------------------

#[test]
fn declare() {
    golden(
        "DECLARE @a INT = 1, @b AS varchar(10), @c DECIMAL(10,2) = 1.5, @d datetime2",
        "DECLARE @a INT = 1, @b varchar(10), @c DECIMAL(10, 2) = 1.5, @d datetime2;",
    );
    golden(
        "declare @t table (id int primary key, name nvarchar(max) null)",
        "DECLARE @t TABLE (id int PRIMARY KEY, name nvarchar(MAX) NULL);",
    );
    golden(
        "DECLARE @flushes BIGINT = (SELECT cntr_value FROM sys.dm_os_performance_counters)",
        "DECLARE @flushes BIGINT = (SELECT cntr_value FROM sys.dm_os_performance_counters);",
    );
}

#[test]
fn all_data_types_parse_as_name_and_parameters() {
    let types = [
        "INT",
        "BIGINT",
        "SMALLINT",
        "TINYINT",
        "BIT",
        "DECIMAL(38, 10)",
        "NUMERIC(5)",
        "FLOAT(53)",
        "FLOAT",
        "REAL",
        "MONEY",
        "CHAR(10)",
        "VARCHAR(MAX)",
        "NCHAR(1)",
        "NVARCHAR(4000)",
        "sysname",
        "DATE",
        "TIME(7)",
        "DATETIME",
        "DATETIME2(3)",
        "DATETIMEOFFSET",
        "UNIQUEIDENTIFIER",
        "BINARY(16)",
        "VARBINARY(MAX)",
        "dbo.MyType",
    ];
    let sql: Vec<String> = types.iter().enumerate().map(|(i, t)| format!("@v{i} {t}")).collect();
    let sql = format!("DECLARE {}", sql.join(", "));
    let statement = parse_one(&sql);
    let StatementKind::Declare(declarations) = statement.kind else { panic!() };
    assert_eq!(declarations.len(), 25);
    let DeclarationKind::Scalar { data_type, .. } = &declarations[5].kind else { panic!() };
    assert_eq!(data_type.name.name.value, "DECIMAL");
    assert_eq!(data_type.params, [TypeParam::Number(38), TypeParam::Number(10)]);
    let DeclarationKind::Scalar { data_type, .. } = &declarations[12].kind else { panic!() };
    assert_eq!(data_type.params, [TypeParam::Max]);
    let DeclarationKind::Scalar { data_type, .. } = &declarations[24].kind else { panic!() };
    assert_eq!(data_type.name.schema, Some(Ident::new("dbo")));
    canonical(&sql);
}

#[test]
fn set_variables_with_every_assignment_operator() {
    for op in ["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="] {
        golden(&format!("SET @v {op} @v + 1"), &format!("SET @v {op} (@v + 1);"));
    }
    golden("SELECT @a = 1, @b += x FROM t", "SELECT @a = 1, @b += x FROM t;");
    golden("SELECT @cnt = @cnt + 1;", "SELECT @cnt = (@cnt + 1);");
}

#[test]
fn set_session_options() {
    golden("SET NOCOUNT ON", "SET NOCOUNT ON;");
    golden("set xact_abort off", "SET XACT_ABORT OFF;");
    golden("SET ANSI_NULLS, Quoted_Identifier ON", "SET ANSI_NULLS, QUOTED_IDENTIFIER ON;");
    golden(
        "SET ANSI_WARNINGS OFF SET ANSI_PADDING ON",
        "SET ANSI_WARNINGS OFF;\nSET ANSI_PADDING ON;",
    );
    golden("SET STATISTICS IO ON", "SET STATISTICS IO ON;");
    golden("SET IMPLICIT_TRANSACTIONS OFF", "SET IMPLICIT_TRANSACTIONS OFF;");
    golden("SET LOCK_TIMEOUT 1800", "SET LOCK_TIMEOUT 1800;");
    golden("SET LOCK_TIMEOUT -1", "SET LOCK_TIMEOUT -1;");
}

#[test]
fn set_transaction_isolation_level() {
    for level in
        ["READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SNAPSHOT", "SERIALIZABLE"]
    {
        let expected = format!("SET TRANSACTION ISOLATION LEVEL {level};");
        golden(&format!("set transaction isolation level {}", level.to_lowercase()), &expected);
    }
}

#[test]
fn if_else() {
    golden(
        "IF @a = 1 PRINT 'one' ELSE PRINT 'other'",
        "IF (@a = 1) PRINT 'one' ELSE PRINT 'other';",
    );
    golden("IF 1 = 1 SELECT 1; ELSE SELECT 2;", "IF (1 = 1) SELECT 1 ELSE SELECT 2;");
    golden(
        "IF EXISTS (SELECT 1 FROM t) BEGIN DROP DATABASE d END",
        "IF EXISTS (SELECT 1 FROM t) BEGIN DROP DATABASE d; END;",
    );
    // ELSE belongs to the nearest IF.
    let statement = parse_one("IF @a = 1 IF @b = 1 PRINT 'x' ELSE PRINT 'y'");
    let StatementKind::If(outer) = statement.kind else { panic!() };
    assert!(outer.else_branch.is_none());
    let StatementKind::If(inner) = outer.then_branch.kind else { panic!() };
    assert!(inner.else_branch.is_some());
    // An IF ends after its statement; what follows is the next statement.
    golden("IF @a = 1 PRINT 'x' PRINT 'y'", "IF (@a = 1) PRINT 'x';\nPRINT 'y';");
    golden(
        "IF @c = 0 CREATE SEQUENCE s NO CACHE; ELSE IF @c = 50 CREATE SEQUENCE s CACHE 50; ELSE CREATE SEQUENCE s",
        "IF (@c = 0) CREATE SEQUENCE s NO CACHE ELSE IF (@c = 50) CREATE SEQUENCE s CACHE 50 ELSE CREATE SEQUENCE s;",
    );
}

#[test]
fn while_break_continue_and_blocks() {
    golden(
        "WHILE @i <= 10 BEGIN SET @i += 1 IF @i = 5 CONTINUE IF @i = 8 BREAK END",
        "WHILE (@i <= 10) BEGIN SET @i += 1; IF (@i = 5) CONTINUE; IF (@i = 8) BREAK; END;",
    );
    golden(
        "while @cnt<@maxcnt\nbegin exec [dbo].[TestInsertDelayed] @cnt, 'This is a test';\nselect @cnt = @cnt + 1;\nend",
        "WHILE (@cnt < @maxcnt) BEGIN EXECUTE dbo.TestInsertDelayed @cnt, 'This is a test'; SELECT @cnt = (@cnt + 1); END;",
    );
    golden("BEGIN BEGIN SELECT 1 END END", "BEGIN BEGIN SELECT 1; END; END;");
}

#[test]
fn return_print_and_use() {
    golden("RETURN", "RETURN;");
    golden("RETURN 0", "RETURN 0;");
    golden("IF @x = 1 RETURN @rc", "IF (@x = 1) RETURN @rc;");
    golden("RETURN (SELECT 1)", "RETURN (SELECT 1);");
    golden("RETURN SELECT 1", "RETURN;\nSELECT 1;");
    golden("PRINT 'i = ' + CAST(@i AS VARCHAR(10))", "PRINT ('i = ' + CAST(@i AS VARCHAR(10)));");
    golden("USE [my db]", "USE [my db];");
    golden("use master", "USE master;");
}

#[test]
fn throw_raiserror_try_catch() {
    golden("THROW 50000, N'boom', 1;", "THROW 50000, N'boom', 1;");
    golden("THROW @n, @msg, @state", "THROW @n, @msg, @state;");
    golden(
        "BEGIN TRY SELECT 1/0 END TRY BEGIN CATCH THROW; END CATCH",
        "BEGIN TRY SELECT (1 / 0); END TRY BEGIN CATCH THROW; END CATCH;",
    );
    golden(
        "BEGIN TRY\n  EXEC p\nEND TRY\nBEGIN CATCH\nEND CATCH",
        "BEGIN TRY EXECUTE p; END TRY BEGIN CATCH END CATCH;",
    );
    golden(
        "RAISERROR('x %d', 16, 1, @i) WITH NOWAIT, LOG",
        "RAISERROR ('x %d', 16, 1, @i) WITH NOWAIT, LOG;",
    );
    golden("RAISERROR (50001, 10, 1) WITH SETERROR", "RAISERROR (50001, 10, 1) WITH SETERROR;");
    golden(
        "RAISERROR('a', 1, 1) WITH x AS (SELECT 1 AS n) SELECT n FROM x",
        "RAISERROR ('a', 1, 1);\nWITH x AS (SELECT 1 AS n) SELECT n FROM x;",
    );
}

// ---------------------------------------------------------------------------------------------
// Transactions, EXEC, CHECKPOINT
// ---------------------------------------------------------------------------------------------

#[test]
fn transactions() {
    golden("BEGIN TRAN", "BEGIN TRANSACTION;");
    golden("begin transaction t1", "BEGIN TRANSACTION t1;");
    golden("BEGIN TRAN @name", "BEGIN TRANSACTION @name;");
    golden("COMMIT", "COMMIT TRANSACTION;");
    golden("COMMIT WORK", "COMMIT TRANSACTION;");
    golden("COMMIT TRAN t1", "COMMIT TRANSACTION t1;");
    golden(
        "COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON);",
        "COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON);",
    );
    golden(
        "commit with (DELAYED_DURABILITY=OFF)",
        "COMMIT TRANSACTION WITH (DELAYED_DURABILITY = OFF);",
    );
    golden("ROLLBACK", "ROLLBACK TRANSACTION;");
    golden("ROLLBACK WORK", "ROLLBACK TRANSACTION;");
    golden("ROLLBACK TRAN sp1", "ROLLBACK TRANSACTION sp1;");
    golden("SAVE TRAN sp1", "SAVE TRANSACTION sp1;");
    golden("SAVE TRANSACTION @sp", "SAVE TRANSACTION @sp;");
    golden("BEGIN TRAN; INSERT INTO dbo.t VALUES (1); COMMIT TRAN WITH (DELAYED_DURABILITY = ON);",
        "BEGIN TRANSACTION;\nINSERT INTO dbo.t VALUES (1);\nCOMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON);");
    let statement = parse_one("COMMIT TRAN WITH (DELAYED_DURABILITY = ON)");
    let expected = TransactionStatement::Commit { name: None, delayed_durability: Some(true) };
    assert_eq!(statement.kind, StatementKind::Transaction(expected));
}

#[test]
fn begin_distinguishes_blocks_transactions_and_try() {
    let kinds: Vec<String> = parse_batch(
        "BEGIN TRAN BEGIN SELECT 1 END BEGIN TRY SELECT 1 END TRY BEGIN CATCH END CATCH",
    )
    .unwrap()
    .statements
    .iter()
    .map(|s| format!("{:?}", s.kind).split('(').next().unwrap_or_default().to_owned())
    .collect();
    assert_eq!(kinds, ["Transaction", "Block", "TryCatch"]);
}

#[test]
fn execute() {
    golden("EXEC sp_flush_log", "EXECUTE sp_flush_log;");
    golden("EXECUTE sys.sp_flush_log;", "EXECUTE sys.sp_flush_log;");
    golden(
        "EXEC @rc = dbo.p 1, @b = 'x', @c = @out OUTPUT, DEFAULT, @d = DEFAULT, -1",
        "EXECUTE @rc = dbo.p 1, @b = 'x', @c = @out OUTPUT, DEFAULT, @d = DEFAULT, -1;",
    );
    golden("EXEC p @a OUT", "EXECUTE p @a OUTPUT;");
    golden("EXEC @procname", "EXECUTE @procname;");
    golden("EXEC ('SELECT ' + @x)", "EXECUTE (('SELECT ' + @x));");
    golden("EXEC sp_help t", "EXECUTE sp_help N't';");
    golden("EXEC sp_helptext [dbo.p], \"x\"", "EXECUTE sp_helptext N'dbo.p', N'x';");
    golden("exec sp_flush_log\nselect 1", "EXECUTE sp_flush_log;\nSELECT 1;");
    golden(
        "EXEC dbo.run_cell 'DISABLED', 'none', 0;",
        "EXECUTE dbo.run_cell 'DISABLED', 'none', 0;",
    );
}

#[test]
fn procedure_arguments_are_constants_variables_or_names() {
    golden("EXEC p @@SPID, 0x01, NULL, -1.5, +2", "EXECUTE p @@SPID, 0x01, NULL, -1.5, +2;");
    assert_error("EXEC p 1 + 1", "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near '+'.");
    assert_error("EXEC p (1)", "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near '1'.");
    assert_error(
        "EXEC p 1, f(2)",
        "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near '('.",
    );
    // Without arguments the call ends, and `THROW` starts the next statement.
    golden("EXEC p THROW 50000, 'x', 1", "EXECUTE p;\nTHROW 50000, 'x', 1;");
}

#[test]
fn a_bare_name_starting_a_batch_is_a_procedure_call() {
    golden("sp_who", "EXECUTE sp_who;");
    golden("sp_help 'x'\nSELECT 1", "EXECUTE sp_help 'x';\nSELECT 1;");
    golden("[dbo].[p] 1", "EXECUTE dbo.p 1;");
    assert_error(
        "SELECT 1;\nsp_who",
        "Msg 102, Level 15, State 1, Line 2\nIncorrect syntax near 'sp_who'.",
    );
    // After a complete statement a bare word is an alias, as in SQL Server.
    golden("SELECT 1\nsp_who", "SELECT 1 AS sp_who;");
}

#[test]
fn checkpoint() {
    golden("CHECKPOINT", "CHECKPOINT;");
    golden("CHECKPOINT 10", "CHECKPOINT 10;");
}

// ---------------------------------------------------------------------------------------------
// DDL
// ---------------------------------------------------------------------------------------------

#[test]
fn create_alter_drop_database() {
    golden("CREATE DATABASE my_dd_test", "CREATE DATABASE my_dd_test;");
    golden(
        r"CREATE DATABASE dd1 ON (name = 'dd1_data', filename = 'C:\SQLData\dd1.mdf', size = 1024MB)
          LOG ON (name = 'dd1_log', filename = 'D:\SQLLog\dd1.ldf', size = 1024MB, maxsize = unlimited, filegrowth = 10%)",
        r"CREATE DATABASE dd1 ON (NAME = dd1_data, FILENAME = 'C:\SQLData\dd1.mdf', SIZE = 1024MB) LOG ON (NAME = dd1_log, FILENAME = 'D:\SQLLog\dd1.ldf', SIZE = 1024MB, MAXSIZE = UNLIMITED, FILEGROWTH = 10%);",
    );
    golden(
        "CREATE DATABASE d ON PRIMARY (NAME = d, FILENAME = '/d.mdf', SIZE = 8, MAXSIZE = 2GB, FILEGROWTH = 64KB), (NAME = d2, FILENAME = '/d2.ndf') LOG ON (NAME = l, FILENAME = '/d.ldf', SIZE = 1TB)",
        "CREATE DATABASE d ON (NAME = d, FILENAME = '/d.mdf', SIZE = 8MB, MAXSIZE = 2GB, FILEGROWTH = 64KB), (NAME = d2, FILENAME = '/d2.ndf') LOG ON (NAME = l, FILENAME = '/d.ldf', SIZE = 1TB);",
    );
    golden("DROP DATABASE my_dd_test", "DROP DATABASE my_dd_test;");
    golden("DROP DATABASE IF EXISTS a, [b c]", "DROP DATABASE IF EXISTS a, [b c];");
    golden(
        "ALTER DATABASE my_dd_test SET delayed_durability = ALLOWED",
        "ALTER DATABASE my_dd_test SET DELAYED_DURABILITY = ALLOWED;",
    );
    golden(
        "ALTER DATABASE PerformanceV3 SET DELAYED_DURABILITY = Disabled;",
        "ALTER DATABASE PerformanceV3 SET DELAYED_DURABILITY = DISABLED;",
    );
    golden(
        "alter database current set delayed_durability = forced",
        "ALTER DATABASE CURRENT SET DELAYED_DURABILITY = FORCED;",
    );
    golden("ALTER DATABASE d SET RECOVERY SIMPLE", "ALTER DATABASE d SET RECOVERY SIMPLE;");
    golden("ALTER DATABASE d SET RECOVERY full", "ALTER DATABASE d SET RECOVERY FULL;");
    golden(
        "ALTER DATABASE d SET RECOVERY Bulk_Logged",
        "ALTER DATABASE d SET RECOVERY BULK_LOGGED;",
    );
    let statement = parse_one("ALTER DATABASE d SET DELAYED_DURABILITY = forced");
    let StatementKind::AlterDatabase(alter) = statement.kind else { panic!() };
    assert_eq!(alter.option, DatabaseOption::DelayedDurability(DelayedDurability::Forced));
}

#[test]
fn create_table_with_columns_and_constraints() {
    golden(
        "CREATE TABLE dbo.InsertTest (ID int primary key clustered, VALUE varchar(255))",
        "CREATE TABLE dbo.InsertTest (ID int PRIMARY KEY CLUSTERED, VALUE varchar(255));",
    );
    golden(
        "CREATE TABLE dbo.t (
            id INT IDENTITY(1, 1) CONSTRAINT pk_t PRIMARY KEY NONCLUSTERED,
            code CHAR(3) NOT NULL UNIQUE,
            amount DECIMAL(10,2) NULL DEFAULT 0 CHECK (amount >= 0),
            created DATETIME2(3) NOT NULL CONSTRAINT df_created DEFAULT SYSDATETIME(),
            seq BIGINT DEFAULT NEXT VALUE FOR dbo.s,
            name NVARCHAR(MAX) COLLATE Latin1_General_CI_AS,
            n INT IDENTITY,
            CONSTRAINT uq UNIQUE CLUSTERED (code ASC, amount DESC),
            CHECK (id > 0),
            PRIMARY KEY (id))",
        "CREATE TABLE dbo.t (id INT IDENTITY(1, 1) CONSTRAINT pk_t PRIMARY KEY NONCLUSTERED, code CHAR(3) NOT NULL UNIQUE, amount DECIMAL(10, 2) NULL DEFAULT 0 CHECK ((amount >= 0)), created DATETIME2(3) NOT NULL CONSTRAINT df_created DEFAULT SYSDATETIME(), seq BIGINT DEFAULT NEXT VALUE FOR dbo.s, name NVARCHAR(MAX) COLLATE Latin1_General_CI_AS, n INT IDENTITY, CONSTRAINT uq UNIQUE CLUSTERED (code, amount DESC), CHECK ((id > 0)), PRIMARY KEY (id));",
    );
    golden(
        "create table #results(test varchar(20) not null, [database] sysname NOT NULL)",
        "CREATE TABLE #results (test varchar(20) NOT NULL, [database] sysname NOT NULL);",
    );
    golden(
        "CREATE TABLE tempdb.dbo.x (a INT IDENTITY(-5, -1))",
        "CREATE TABLE tempdb.dbo.x (a INT IDENTITY(-5, -1));",
    );
}

#[test]
fn drop_and_truncate_tables() {
    golden("DROP TABLE IF EXISTS dbo.T1;", "DROP TABLE IF EXISTS dbo.T1;");
    golden("drop table a, dbo.b, #t, ##g", "DROP TABLE a, dbo.b, #t, ##g;");
    golden("TRUNCATE TABLE dbo.InsertTest", "TRUNCATE TABLE dbo.InsertTest;");
}

#[test]
fn indexes() {
    golden(
        "CREATE UNIQUE CLUSTERED INDEX ix ON dbo.t (a, b DESC) INCLUDE (c, d) WHERE c IS NOT NULL",
        "CREATE UNIQUE CLUSTERED INDEX ix ON dbo.t (a, b DESC) INCLUDE (c, d) WHERE (c IS NOT NULL);",
    );
    golden("CREATE INDEX ix2 ON t(a)", "CREATE INDEX ix2 ON t (a);");
    golden("CREATE NONCLUSTERED INDEX ix3 ON t (a ASC)", "CREATE NONCLUSTERED INDEX ix3 ON t (a);");
    golden(
        "DROP INDEX IF EXISTS ix ON dbo.t, ix2 ON t2",
        "DROP INDEX IF EXISTS ix ON dbo.t, ix2 ON t2;",
    );
    golden("DROP INDEX dbo.t.ix", "DROP INDEX ix ON dbo.t;");
}

#[test]
fn sequences() {
    golden(
        "CREATE SEQUENCE dbo.Seq1 AS BIGINT MINVALUE 1 CACHE 50; -- the default cache size is 50",
        "CREATE SEQUENCE dbo.Seq1 AS BIGINT MINVALUE 1 CACHE 50;",
    );
    golden(
        "CREATE SEQUENCE s START WITH 10 INCREMENT BY -1 MINVALUE -100 MAXVALUE 10 CYCLE CACHE",
        "CREATE SEQUENCE s START WITH 10 INCREMENT BY -1 MINVALUE -100 MAXVALUE 10 CYCLE CACHE;",
    );
    golden(
        "CREATE SEQUENCE s AS INT NO MINVALUE NO MAXVALUE NO CYCLE NO CACHE",
        "CREATE SEQUENCE s AS INT NO MINVALUE NO MAXVALUE NO CYCLE NO CACHE;",
    );
    golden("CREATE SEQUENCE s", "CREATE SEQUENCE s;");
    golden("DROP SEQUENCE IF EXISTS dbo.Seq1;", "DROP SEQUENCE IF EXISTS dbo.Seq1;");
    let statement = parse_one("CREATE SEQUENCE s CACHE 10000");
    let StatementKind::CreateSequence(sequence) = statement.kind else { panic!() };
    let [SequenceOption::Cache(Some(size))] = sequence.options.as_slice() else { panic!() };
    assert_eq!(size.kind, ExprKind::Literal(Literal::Integer("10000".into())));
}

#[test]
fn procedures() {
    golden(
        "CREATE PROCEDURE TestInsertTraditional @c1 int, @c2 varchar(255) as\nbegin tran\ninsert into dbo.InsertTest values (@c1, @c2)\ncommit",
        "CREATE PROCEDURE TestInsertTraditional @c1 int, @c2 varchar(255) AS BEGIN TRANSACTION; INSERT INTO dbo.InsertTest VALUES (@c1, @c2); COMMIT TRANSACTION;",
    );
    golden(
        "CREATE PROC dbo.p (@a INT = -1, @b AS VARCHAR(10) = 'x' OUT, @c INT OUTPUT) WITH RECOMPILE AS BEGIN SET NOCOUNT ON; RETURN 0; END",
        "CREATE PROCEDURE dbo.p @a INT = -1, @b VARCHAR(10) = 'x' OUTPUT, @c INT OUTPUT WITH RECOMPILE AS BEGIN SET NOCOUNT ON; RETURN 0; END;",
    );
    golden(
        "create or alter proc p as select 1 select 2",
        "CREATE OR ALTER PROCEDURE p AS SELECT 1; SELECT 2;",
    );
    golden("ALTER PROCEDURE p () AS RETURN", "ALTER PROCEDURE p AS RETURN;");
    golden("DROP PROC IF EXISTS p, dbo.q", "DROP PROCEDURE IF EXISTS p, dbo.q;");
    golden("DROP PROCEDURE p", "DROP PROCEDURE p;");
}

#[test]
fn procedures_keep_their_batch_text() {
    let sql = "-- header comment\nCREATE PROCEDURE p @a INT\nAS\nSELECT @a\nSELECT 2\n";
    let statement = parse_one(sql);
    let StatementKind::CreateProcedure(procedure) = statement.kind else { panic!() };
    assert_eq!(procedure.definition, sql);
    assert_eq!(procedure.mode, CreateMode::Create);
    assert_eq!(procedure.parameters[0].name, "@a");
    let body_lines: Vec<u32> = procedure.body.iter().map(|s| s.span.line).collect();
    assert_eq!(body_lines, [4, 5]);
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

#[test]
fn common_table_expressions() {
    golden(
        "WITH a (x) AS (SELECT 1), b AS (SELECT x FROM a) SELECT * FROM b",
        "WITH a (x) AS (SELECT 1), b AS (SELECT x FROM a) SELECT * FROM b;",
    );
    golden(
        ";WITH x AS (SELECT 1 AS n) SELECT n FROM x",
        "WITH x AS (SELECT 1 AS n) SELECT n FROM x;",
    );
    // SQL Server wants a `;` before WITH; Walden does not.
    golden(
        "SELECT 1 WITH x AS (SELECT 1 AS n) SELECT n FROM x",
        "SELECT 1;\nWITH x AS (SELECT 1 AS n) SELECT n FROM x;",
    );
    golden(
        "WITH x AS (SELECT 1 AS n) INSERT INTO t SELECT n FROM x",
        "WITH x AS (SELECT 1 AS n) INSERT INTO t SELECT n FROM x;",
    );
    golden(
        "WITH x AS (SELECT a FROM t) UPDATE x SET a = 1",
        "WITH x AS (SELECT a FROM t) UPDATE x SET a = 1;",
    );
    golden(
        "WITH x AS (SELECT a FROM t) DELETE FROM x",
        "WITH x AS (SELECT a FROM t) DELETE FROM x;",
    );
}

#[test]
fn select_lists() {
    golden(
        "SELECT a AS x, b y, c = d + 1, 'lit' AS [col name], 2 'two', [database] = 1, t.*, dbo.t.*, * FROM dbo.t",
        "SELECT a AS x, b AS y, (d + 1) AS c, 'lit' AS [col name], 2 AS two, 1 AS [database], t.*, dbo.t.*, * FROM dbo.t;",
    );
    golden("SELECT ALL a FROM t", "SELECT a FROM t;");
    golden("SELECT DISTINCT a FROM t", "SELECT DISTINCT a FROM t;");
    golden("SELECT TOP 10 a FROM t", "SELECT TOP (10) a FROM t;");
    golden(
        "SELECT TOP (@n) PERCENT WITH TIES a FROM t ORDER BY a",
        "SELECT TOP (@n) PERCENT WITH TIES a FROM t ORDER BY a;",
    );
    golden(
        "INSERT dbo.Rnd SELECT TOP (1000) 1, TheID FROM dbo.TheTable ORDER BY NEWID();",
        "INSERT INTO dbo.Rnd SELECT TOP (1000) 1, TheID FROM dbo.TheTable ORDER BY NEWID();",
    );
    golden("SELECT next FROM t", "SELECT next FROM t;");
}

#[test]
fn select_into_and_table_valued_functions() {
    golden(
        "SELECT * INTO #before_disabled FROM sys.dm_io_virtual_file_stats(DB_ID('Test'), NULL);",
        "SELECT * INTO #before_disabled FROM sys.dm_io_virtual_file_stats(DB_ID('Test'), NULL);",
    );
    golden(
        "SELECT NEXT VALUE FOR dbo.Seq1 AS n INTO dbo.T1 FROM GENERATE_SERIES(1, 100000) AS N;",
        "SELECT NEXT VALUE FOR dbo.Seq1 AS n INTO dbo.T1 FROM GENERATE_SERIES(1, 100000) AS N;",
    );
    golden(
        "SELECT log_hardened_lsn FROM sys.dm_db_log_stats(DB_ID())",
        "SELECT log_hardened_lsn FROM sys.dm_db_log_stats(DB_ID());",
    );
    golden(
        "SELECT * FROM sys.fn_dblog(NULL, NULL) l, dbo.f() AS g(a, b)",
        "SELECT * FROM sys.fn_dblog(NULL, NULL) AS l, dbo.f() AS g (a, b);",
    );
}

#[test]
fn table_sources() {
    golden(
        "SELECT * FROM db.dbo.t AS a, master..spt_values v, srv.db.dbo.t, @tv AS x, #tmp",
        "SELECT * FROM db.dbo.t AS a, master..spt_values AS v, srv.db.dbo.t, @tv AS x, #tmp;",
    );
    golden(
        "SELECT l.l FROM (VALUES('D'),('G')) AS l(l)",
        "SELECT l.l FROM (VALUES ('D'), ('G')) AS l (l);",
    );
    golden("SELECT x.n FROM (SELECT 1 AS n) x", "SELECT x.n FROM (SELECT 1 AS n) AS x;");
    golden(
        "SELECT * FROM t WITH (NOLOCK) WHERE 1 = 1",
        "SELECT * FROM t WITH (NOLOCK) WHERE (1 = 1);",
    );
    golden(
        "SELECT * FROM t AS x WITH (INDEX(ix), HOLDLOCK, INDEX = 1)",
        "SELECT * FROM t AS x WITH (INDEX(ix), HOLDLOCK, INDEX(1));",
    );
}

#[test]
fn joins() {
    golden(
        "SELECT * FROM a INNER JOIN b ON a.id = b.id LEFT JOIN c ON c.id = b.id RIGHT OUTER JOIN d ON 1 = 1 FULL JOIN e ON 1 = 1 CROSS JOIN f CROSS APPLY g(a.x) OUTER APPLY h(a.x) AS hh JOIN i ON 1 = 1",
        "SELECT * FROM a INNER JOIN b ON (a.id = b.id) LEFT OUTER JOIN c ON (c.id = b.id) RIGHT OUTER JOIN d ON (1 = 1) FULL OUTER JOIN e ON (1 = 1) CROSS JOIN f CROSS APPLY g(a.x) OUTER APPLY h(a.x) AS hh INNER JOIN i ON (1 = 1);",
    );
    golden(
        "SELECT * FROM a JOIN b JOIN c ON b.x = c.x ON a.y = b.y",
        "SELECT * FROM a INNER JOIN (b INNER JOIN c ON (b.x = c.x)) ON (a.y = b.y);",
    );
    golden(
        "SELECT * FROM (a JOIN b ON a.x = b.x) JOIN c ON c.x = a.x",
        "SELECT * FROM a INNER JOIN b ON (a.x = b.x) INNER JOIN c ON (c.x = a.x);",
    );
    golden(
        "SELECT * FROM #before AS B\nINNER JOIN #after AS A ON B.DATABASE_ID = A.DATABASE_ID AND B.[FILE_ID] = A.[FILE_ID]\nWHERE A.FILE_ID = 2;  -- the log file",
        "SELECT * FROM #before AS B INNER JOIN #after AS A ON ((B.DATABASE_ID = A.DATABASE_ID) AND (B.FILE_ID = A.FILE_ID)) WHERE (A.FILE_ID = 2);",
    );
}

#[test]
fn grouping_ordering_paging_and_hints() {
    golden(
        "SELECT a, COUNT(*) FROM t WHERE b > 1 GROUP BY a HAVING COUNT(*) > 1 ORDER BY a DESC, 2",
        "SELECT a, COUNT(*) FROM t WHERE (b > 1) GROUP BY a HAVING (COUNT(*) > 1) ORDER BY a DESC, 2;",
    );
    golden(
        "SELECT a FROM t ORDER BY a OFFSET 10 ROWS FETCH NEXT 5 ROWS ONLY",
        "SELECT a FROM t ORDER BY a OFFSET 10 ROWS FETCH NEXT 5 ROWS ONLY;",
    );
    golden(
        "SELECT a FROM t ORDER BY a ASC OFFSET 1 ROW FETCH FIRST 1 ROW ONLY",
        "SELECT a FROM t ORDER BY a OFFSET 1 ROWS FETCH NEXT 1 ROWS ONLY;",
    );
    golden(
        "SELECT a FROM t ORDER BY a OFFSET @n ROWS",
        "SELECT a FROM t ORDER BY a OFFSET @n ROWS;",
    );
    golden(
        "SELECT a FROM t OPTION (MAXDOP 1, OPTIMIZE FOR (@p = 1), RECOMPILE)",
        "SELECT a FROM t OPTION (MAXDOP 1, OPTIMIZE FOR (@p = 1), RECOMPILE);",
    );
}

#[test]
fn set_operations_bind_intersect_tightest() {
    let sql = "SELECT 1 UNION SELECT 2 UNION ALL SELECT 3 EXCEPT SELECT 4 INTERSECT SELECT 5";
    golden(sql, &format!("{sql};"));
    let statement = parse_one(sql);
    let StatementKind::Select(select) = statement.kind else { panic!() };
    let QueryBody::SetOperation { op: SetOperator::Except, left, right } = select.query.body else {
        panic!("EXCEPT should be the root")
    };
    assert!(matches!(*left, QueryBody::SetOperation { op: SetOperator::UnionAll, .. }));
    assert!(matches!(*right, QueryBody::SetOperation { op: SetOperator::Intersect, .. }));
    golden("(SELECT 1) UNION (SELECT 2) ORDER BY 1", "(SELECT 1) UNION (SELECT 2) ORDER BY 1;");
}

// ---------------------------------------------------------------------------------------------
// INSERT, UPDATE, DELETE
// ---------------------------------------------------------------------------------------------

#[test]
fn inserts() {
    golden(
        "INSERT INTO t VALUES (1, 'a'), (2, DEFAULT)",
        "INSERT INTO t VALUES (1, 'a'), (2, DEFAULT);",
    );
    golden("INSERT t (a, b) SELECT a, b FROM s", "INSERT INTO t (a, b) SELECT a, b FROM s;");
    golden("INSERT INTO #r EXEC dbo.p 1", "INSERT INTO #r EXECUTE dbo.p 1;");
    golden("INSERT INTO t DEFAULT VALUES", "INSERT INTO t DEFAULT VALUES;");
    golden(
        "INSERT TOP (5) INTO t WITH (TABLOCK) SELECT * FROM s",
        "INSERT TOP (5) INTO t WITH (TABLOCK) SELECT * FROM s;",
    );
    golden("INSERT INTO @t (a) VALUES (1)", "INSERT INTO @t (a) VALUES (1);");
    golden("INSERT INTO t (SELECT 1)", "INSERT INTO t (SELECT 1);");
    golden(
        "insert into dbo.test (id, name) values (next value for seq_test, 'test test test, absolute test');",
        "INSERT INTO dbo.test (id, name) VALUES (NEXT VALUE FOR seq_test, 'test test test, absolute test');",
    );
}

#[test]
fn updates() {
    golden(
        "UPDATE TOP (10) t SET a = 1, b += 2, @v = c = c + 1, @w = d, e = DEFAULT, t.f = NULL FROM dbo.t AS t INNER JOIN s ON s.id = t.id WHERE t.x = 1",
        "UPDATE TOP (10) t SET a = 1, b += 2, @v = c = (c + 1), @w = d, e = DEFAULT, t.f = NULL FROM dbo.t AS t INNER JOIN s ON (s.id = t.id) WHERE (t.x = 1);",
    );
    golden(
        "UPDATE #cells SET logflushes = (SELECT 1) - @flushes WHERE setting = @setting",
        "UPDATE #cells SET logflushes = ((SELECT 1) - @flushes) WHERE (setting = @setting);",
    );
    golden("UPDATE @t SET a *= 2 OPTION (MAXDOP 1)", "UPDATE @t SET a *= 2 OPTION (MAXDOP 1);");
}

#[test]
fn deletes() {
    golden("DELETE FROM t WHERE a = 1", "DELETE FROM t WHERE (a = 1);");
    golden(
        "DELETE TOP (5) t FROM t JOIN s ON s.id = t.id",
        "DELETE TOP (5) FROM t FROM t INNER JOIN s ON (s.id = t.id);",
    );
    golden(
        "DELETE dbo.TheTable WHERE TheID IN (SELECT TheID+1 FROM dbo.Rnd WHERE batch = 3);",
        "DELETE FROM dbo.TheTable WHERE (TheID IN (SELECT (TheID + 1) FROM dbo.Rnd WHERE (batch = 3)));",
    );
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

#[test]
fn arithmetic_precedence() {
    golden("SELECT 1 + 2 * 3", "SELECT (1 + (2 * 3));");
    golden("SELECT (1 + 2) * 3", "SELECT ((1 + 2) * 3);");
    golden(
        "SELECT 10 - 2 - 3, 8 / 2 / 2, 7 % 3 * 2",
        "SELECT ((10 - 2) - 3), ((8 / 2) / 2), ((7 % 3) * 2);",
    );
    golden("SELECT -a * b, a * -b, - -1, +a", "SELECT (-a * b), (a * -b), - -1, +a;");
    golden("SELECT ~a & b | c ^ d", "SELECT (((~a & b) | c) ^ d);");
    golden("SELECT a + b & c", "SELECT ((a + b) & c);");
    golden("SELECT a & b * c", "SELECT (a & (b * c));");
    golden(
        "SELECT 'DATA' + CONVERT(VARCHAR(10), @I)",
        "SELECT ('DATA' + CONVERT(VARCHAR(10), @I));",
    );
}

#[test]
fn logical_precedence() {
    golden(
        "SELECT 1 WHERE a = 1 OR b = 2 AND c = 3",
        "SELECT 1 WHERE ((a = 1) OR ((b = 2) AND (c = 3)));",
    );
    golden("SELECT 1 WHERE NOT a = 1 AND b = 2", "SELECT 1 WHERE (NOT (a = 1) AND (b = 2));");
    golden("SELECT 1 WHERE NOT NOT a = 1", "SELECT 1 WHERE NOT NOT (a = 1);");
    golden(
        "SELECT 1 WHERE (a = 1 OR b = 2) AND c = 3",
        "SELECT 1 WHERE (((a = 1) OR (b = 2)) AND (c = 3));",
    );
    golden("SELECT 1 WHERE a + 1 > b * 2", "SELECT 1 WHERE ((a + 1) > (b * 2));");
}

#[test]
fn comparison_operators() {
    golden(
        "SELECT 1 WHERE a = b AND a <> b AND a != b AND a < b AND a > b AND a <= b AND a >= b AND a !< b AND a !> b",
        "SELECT 1 WHERE (((((((((a = b) AND (a <> b)) AND (a <> b)) AND (a < b)) AND (a > b)) AND (a <= b)) AND (a >= b)) AND (a >= b)) AND (a <= b));",
    );
}

#[test]
fn predicates() {
    golden(
        "SELECT 1 WHERE a + 1 BETWEEN 1 AND 5 AND b NOT BETWEEN 2 AND 3",
        "SELECT 1 WHERE (((a + 1) BETWEEN 1 AND 5) AND (b NOT BETWEEN 2 AND 3));",
    );
    golden(
        "SELECT 1 WHERE a IN (1, 2) AND b NOT IN (SELECT x FROM t) AND c LIKE 'x%' ESCAPE '!' AND d NOT LIKE N'y' AND e IS NULL AND f IS NOT NULL",
        "SELECT 1 WHERE ((((((a IN (1, 2)) AND (b NOT IN (SELECT x FROM t))) AND (c LIKE 'x%' ESCAPE '!')) AND (d NOT LIKE N'y')) AND (e IS NULL)) AND (f IS NOT NULL));",
    );
    golden(
        "SELECT 1 WHERE a > ALL (SELECT x FROM t) OR b = ANY (SELECT y FROM t) OR c <> SOME (SELECT z FROM t)",
        "SELECT 1 WHERE (((a > ALL (SELECT x FROM t)) OR (b = ANY (SELECT y FROM t))) OR (c <> ANY (SELECT z FROM t)));",
    );
    golden(
        "SELECT 1 WHERE EXISTS (SELECT 1) AND NOT EXISTS (SELECT 2)",
        "SELECT 1 WHERE (EXISTS (SELECT 1) AND NOT EXISTS (SELECT 2));",
    );
    golden("IF DB_ID('x') IS NULL PRINT 1", "IF (DB_ID('x') IS NULL) PRINT 1;");
    golden("SELECT IIF(a > 1, 'big', 'small')", "SELECT IIF((a > 1), 'big', 'small');");
}

#[test]
fn subqueries() {
    golden("SELECT (SELECT MAX(x) FROM t) + 1", "SELECT ((SELECT MAX(x) FROM t) + 1);");
    golden(
        "IF (SELECT logflushes FROM #results WHERE test = 'delayed') > 1000 / 20 THROW 50033, 'x', 1;",
        "IF ((SELECT logflushes FROM #results WHERE (test = 'delayed')) > (1000 / 20)) THROW 50033, 'x', 1;",
    );
    golden("SELECT ((SELECT 1)) * 2", "SELECT ((SELECT 1) * 2);");
}

#[test]
fn case_cast_convert() {
    golden(
        "SELECT CASE @x WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END, CASE WHEN a > 1 THEN 1 END",
        "SELECT CASE @x WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END, CASE WHEN (a > 1) THEN 1 END;",
    );
    golden(
        "SELECT CAST(a AS DECIMAL(10, 2)), TRY_CAST('1' AS INT), CONVERT(VARCHAR(10), @i), CONVERT(CHAR(8), GETDATE(), 112), TRY_CONVERT(INT, 'x')",
        "SELECT CAST(a AS DECIMAL(10, 2)), TRY_CAST('1' AS INT), CONVERT(VARCHAR(10), @i), CONVERT(CHAR(8), GETDATE(), 112), TRY_CONVERT(INT, 'x');",
    );
}

#[test]
fn function_calls() {
    golden(
        "SELECT dbo.f(1), sys.fn_dblog(NULL, NULL), COUNT(*), COUNT(DISTINCT a), COUNT(ALL a), left(s, 2), COALESCE(a, b), NULLIF(a, 0), CURRENT_TIMESTAMP, GETDATE(), DATEDIFF (SS, @d1, @d2), f(DEFAULT)",
        "SELECT dbo.f(1), sys.fn_dblog(NULL, NULL), COUNT(*), COUNT(DISTINCT a), COUNT(a), left(s, 2), COALESCE(a, b), NULLIF(a, 0), CURRENT_TIMESTAMP, GETDATE(), DATEDIFF(SS, @d1, @d2), f(DEFAULT);",
    );
    golden(
        "SELECT ROW_NUMBER() OVER (ORDER BY a), SUM(x) OVER (PARTITION BY a, b ORDER BY c DESC), COUNT(*) OVER ()",
        "SELECT ROW_NUMBER() OVER (ORDER BY a), SUM(x) OVER (PARTITION BY a, b ORDER BY c DESC), COUNT(*) OVER ();",
    );
    golden(
        "SELECT NEXT VALUE FOR dbo.s, NEXT VALUE FOR s OVER (ORDER BY a)",
        "SELECT NEXT VALUE FOR dbo.s, NEXT VALUE FOR s OVER (ORDER BY a);",
    );
}

#[test]
fn names_variables_and_literals() {
    golden("SELECT @a, @@ROWCOUNT, @@trancount", "SELECT @a, @@ROWCOUNT, @@trancount;");
    golden("SELECT db.dbo.t.c, [a b].[c]]d]", "SELECT db.dbo.t.c, [a b].[c]]d];");
    golden(
        "SELECT 1, 1.5, .5, 1e10, 0x1F, 0x123, 0x, N'ü''x', 'a', NULL, 2147483648",
        "SELECT 1, 1.5, .5, 1e10, 0x1F, 0x0123, 0x, N'ü''x', 'a', NULL, 2147483648;",
    );
    let statement = parse_one("SELECT 0x0aFF, 9999999999999999999999");
    let StatementKind::Select(select) = statement.kind else { panic!() };
    let QueryBody::Select(body) = select.query.body else { panic!() };
    let literals: Vec<ExprKind> = body
        .items
        .into_iter()
        .map(|item| match item {
            SelectItem::Expr { expr, .. } => expr.kind,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        literals,
        [
            ExprKind::Literal(Literal::Binary(vec![0x0a, 0xff])),
            ExprKind::Literal(Literal::Integer("9999999999999999999999".into())),
        ]
    );
}

#[test]
fn quoted_identifiers_and_keywords_as_names() {
    golden("SELECT [select], \"from\" FROM [table]", "SELECT [select], [from] FROM [table];");
    golden("SELECT type, name, value, number FROM t", "SELECT type, name, value, number FROM t;");
    golden("SELECT 1 AS [throw]", "SELECT 1 AS [throw];");
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn syntax_errors_name_the_offending_token() {
    assert_error(
        "SELECT 1\nSELECT 2\nSELECT 3\nSELECT 1 AS y x",
        "Msg 102, Level 15, State 1, Line 4\nIncorrect syntax near 'x'.",
    );
    assert_error(
        "SELECT * FROM",
        "Msg 156, Level 15, State 1, Line 1\nIncorrect syntax near the keyword 'FROM'.",
    );
    assert_error(
        "SELECT 1\nselect * from t where\n",
        "Msg 156, Level 15, State 1, Line 2\nIncorrect syntax near the keyword 'where'.",
    );
    assert_error("SELECT 1 +", "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near '+'.");
    assert_error(
        "SELECT 1 WHERE a = b = c",
        "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near '='.",
    );
    assert_error(
        "SELECT 1 WHERE a = NOT b",
        "Msg 156, Level 15, State 1, Line 1\nIncorrect syntax near the keyword 'NOT'.",
    );
    assert_error(
        "BEGIN END",
        "Msg 156, Level 15, State 1, Line 1\nIncorrect syntax near the keyword 'END'.",
    );
    assert_error(
        "BEGIN TRY SELECT 1 END TRY",
        "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near 'TRY'.",
    );
    assert_error("WHILE @i < 1", "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near '1'.");
    assert_error(
        "EXEC",
        "Msg 156, Level 15, State 1, Line 1\nIncorrect syntax near the keyword 'EXEC'.",
    );
    assert_error(
        "SELECT 'a' 'b' 'c'",
        "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near 'c'.",
    );
    assert_error(
        "CREATE VIEW v AS SELECT 1",
        "Msg 156, Level 15, State 1, Line 1\nIncorrect syntax near the keyword 'VIEW'.",
    );
    assert_error(
        "DROP TABLE",
        "Msg 156, Level 15, State 1, Line 1\nIncorrect syntax near the keyword 'TABLE'.",
    );
    assert_error(
        "SELECT CASE END",
        "Msg 156, Level 15, State 1, Line 1\nIncorrect syntax near the keyword 'END'.",
    );
    assert_error("SELECT 1 AS ''", &error("SELECT 1 AS []").to_string());
}

#[test]
fn lexical_errors() {
    assert_error(
        "SELECT 1\nPRINT 'abc",
        "Msg 105, Level 15, State 1, Line 2\nUnclosed quotation mark after the character string 'abc'.",
    );
    assert_error(
        "SELECT 1 /* a /* b */",
        "Msg 113, Level 15, State 1, Line 1\nMissing end comment mark '*/'.",
    );
    assert_eq!(error("SELECT [abc").number, 105);
    assert_eq!(error("SELECT 1 AS []").number, 1038);
    assert_eq!(error(&format!("SELECT {}", "x".repeat(129))).number, 103);
    assert_error("SELECT $(N)", "Msg 102, Level 15, State 1, Line 1\nIncorrect syntax near '$'.");
}

#[test]
fn the_first_error_in_the_text_wins() {
    // A syntax error before an unclosed string is reported, not the string.
    assert_eq!(error("SELECT FROM 'abc").number, 156);
    // An unclosed string after a complete statement is reported.
    assert_eq!(error("SELECT 1 'abc").number, 105);
    assert_eq!(error("SELECT 1 + 'abc").number, 105);
}

#[test]
fn create_procedure_must_start_the_batch() {
    let message = "'CREATE/ALTER PROCEDURE' must be the first statement in a query batch.";
    assert_error(
        "SELECT 1\nCREATE PROCEDURE p AS SELECT 1",
        &format!("Msg 111, Level 15, State 1, Line 2\n{message}"),
    );
    assert_eq!(error("IF 1 = 1 CREATE PROC p AS SELECT 1").number, 111);
    assert_eq!(error("SET NOCOUNT ON; CREATE OR ALTER PROC p AS SELECT 1").number, 111);
    assert_eq!(error("USE x ALTER PROCEDURE p AS SELECT 1").number, 111);
    assert_eq!(error("CREATE PROC p AS").number, 156);
    // The body runs to the end of the batch.
    let statement = parse_one("CREATE PROC p AS SELECT 1 CREATE TABLE t (a INT) DROP TABLE t");
    let StatementKind::CreateProcedure(procedure) = statement.kind else { panic!() };
    assert_eq!(procedure.body.len(), 3);
    // ... so a second procedure in the same batch is nested, and rejected.
    assert_eq!(error("CREATE PROC p AS SELECT 1\nCREATE PROC q AS SELECT 2").line, 2);
}

#[test]
fn other_numbered_errors() {
    assert_error(
        "SELECT a.b.c.d.e FROM t",
        "Msg 117, Level 15, State 1, Line 1\nThe object name 'a.b.c.d.e' contains more than the maximum number of prefixes. The maximum is 3.",
    );
    assert_eq!(error("SELECT * FROM a.b.c.d.e").number, 117);
    assert_error(
        "SELECT @a = 1, b FROM t",
        "Msg 141, Level 15, State 1, Line 1\nA SELECT statement that assigns a value to a variable must not be combined with data-retrieval operations.",
    );
    assert_error(
        "SET NOCOUNTT ON",
        "Msg 195, Level 15, State 1, Line 1\n'NOCOUNTT' is not a recognized SET option.",
    );
}
