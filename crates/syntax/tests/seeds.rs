//! The T-SQL of the seed articles (`shared/seeds/`), copied here batch by batch as the articles
//! print it (lowercase keywords, odd spacing, comments, no semicolons), parses into the
//! expected statements.

use walden_syntax::ast::*;
use walden_syntax::parse_batch;

/// Parses `sql` and returns the statement kinds' names, checking the canonical print
/// round-trips.
fn kinds(sql: &str) -> Vec<&'static str> {
    let batch = parse_batch(sql).unwrap_or_else(|error| panic!("{error}\n{sql}"));
    let printed = batch.to_string();
    let reparsed = parse_batch(&printed).unwrap_or_else(|error| panic!("{error}\n{printed}"));
    assert_eq!(printed, reparsed.to_string());
    batch.statements.iter().map(|statement| kind_name(&statement.kind)).collect()
}

fn kind_name(kind: &StatementKind) -> &'static str {
    match kind {
        StatementKind::Select(_) => "SELECT",
        StatementKind::Insert(_) => "INSERT",
        StatementKind::Update(_) => "UPDATE",
        StatementKind::Delete(_) => "DELETE",
        StatementKind::Declare(_) => "DECLARE",
        StatementKind::Set(_) => "SET",
        StatementKind::If(_) => "IF",
        StatementKind::While(_) => "WHILE",
        StatementKind::Block(_) => "BLOCK",
        StatementKind::Transaction(TransactionStatement::Begin { .. }) => "BEGIN TRAN",
        StatementKind::Transaction(TransactionStatement::Commit { .. }) => "COMMIT",
        StatementKind::Execute(_) => "EXEC",
        StatementKind::Use(_) => "USE",
        StatementKind::Print(_) => "PRINT",
        StatementKind::AlterDatabase(_) => "ALTER DATABASE",
        StatementKind::CreateDatabase(_) => "CREATE DATABASE",
        StatementKind::CreateTable(_) => "CREATE TABLE",
        StatementKind::CreateSequence(_) => "CREATE SEQUENCE",
        StatementKind::CreateProcedure(_) => "CREATE PROCEDURE",
        StatementKind::Drop(_) => "DROP",
        StatementKind::TruncateTable(_) => "TRUNCATE",
        other => panic!("unexpected statement {other:?}"),
    }
}

#[test]
fn seed_002_procedures_and_loops() {
    assert_eq!(
        kinds("use master\n\n\n\nif exists (select 1 from sys.databases where name = 'my_dd_test')\n\nbegin\n\nDROP DATABASE my_dd_test\n\nend\n"),
        ["USE", "IF"]
    );
    assert_eq!(
        kinds("ALTER DATABASE my_dd_test SET delayed_durability = ALLOWED\n"),
        ["ALTER DATABASE"]
    );
    assert_eq!(
        kinds("CREATE TABLE dbo.InsertTest (ID int primary key clustered, VALUE varchar(255))"),
        ["CREATE TABLE"]
    );
    let traditional = "CREATE PROCEDURE TestInsertTraditional @c1 int, @c2 varchar(255) as\n\nbegin tran\n\ninsert into dbo.InsertTest values (@c1, @c2)\n\ncommit\n";
    assert_eq!(kinds(traditional), ["CREATE PROCEDURE"]);
    let delayed = "create procedure TestInsertDelayed @c1 int, @c2 varchar(255) as\n\nbegin tran\n\ninsert into dbo.InsertTest values (@c1, @c2)\n\ncommit with (DELAYED_DURABILITY=ON)\n";
    let batch = parse_batch(delayed).unwrap();
    let StatementKind::CreateProcedure(procedure) = &batch.statements[0].kind else { panic!() };
    let commit = TransactionStatement::Commit { name: None, delayed_durability: Some(true) };
    assert_eq!(procedure.body[2].kind, StatementKind::Transaction(commit));
    assert_eq!(procedure.definition, delayed);

    let first_run = "declare @cnt int = 1 , @maxcnt int = 100000, @start datetime\n\ntruncate table dbo.InsertTest\n\nselect @start = getdate()\n\nwhile @cnt<@maxcnt\n\nbegin\n\nexec TestInsertTraditional @cnt, 'This is a test';\n\nselect @cnt = @cnt + 1;\n\nend\n\nselect datediff(s, @start, getdate()) truncate table dbo.InsertTest\n";
    assert_eq!(kinds(first_run), ["DECLARE", "TRUNCATE", "SELECT", "WHILE", "SELECT", "TRUNCATE"]);
    let second_run = "set nocount on\n\ndeclare @cnt int = 1 , @maxcnt int = 100000, @start datetime\n\nset @cnt = 1\n\nselect @start = getdate()\n\nwhile @cnt<@maxcnt\n\nbegin exec [dbo].[TestInsertDelayed] @cnt, 'This is a test';\n\nselect @cnt = @cnt + 1;\n\nend\n\nselect datediff(s, @start, getdate())\n\ntruncate table dbo.InsertTest\n\nexec sp_flush_log\n";
    assert_eq!(
        kinds(second_run),
        ["SET", "DECLARE", "SET", "SELECT", "WHILE", "SELECT", "TRUNCATE", "EXEC"]
    );
}

#[test]
fn seed_003_test_template_and_work_sections() {
    let template = "-- Preparation
SET NOCOUNT ON;
USE PerformanceV3;
ALTER DATABASE PerformanceV3 SET DELAYED_DURABILITY = Disabled; -- default
DROP TABLE IF EXISTS dbo.T1;
CREATE TABLE dbo.T1(col1 INT NOT NULL);
DECLARE @db AS sysname = N'PerformanceV3';
DECLARE @logflushes AS INT, @starttime AS DATETIME2, @duration AS INT;
-- Stats before
SET @logflushes = ( SELECT cntr_value FROM sys.dm_os_performance_counters
                    WHERE counter_name = 'Log Flushes/sec'
                      AND instance_name = @db );
SET @starttime = SYSDATETIME();
-- Actual work
DECLARE @i AS INT = 1;
WHILE @i <= 1000000
BEGIN

  BEGIN TRAN
    INSERT INTO dbo.T1(col1) VALUES(@i);
  COMMIT TRAN;

  SET @i += 1;
END;
-- Stats after
SET @duration = DATEDIFF(second, @starttime, SYSDATETIME());
SET @logflushes = ( SELECT cntr_value FROM sys.dm_os_performance_counters
                    WHERE counter_name = 'Log Flushes/sec'
                      AND instance_name = @db ) - @logflushes;

SELECT 
  @duration AS durationinseconds,
  @logflushes AS logflushes;";
    assert_eq!(
        kinds(template),
        [
            "SET",
            "USE",
            "ALTER DATABASE",
            "DROP",
            "CREATE TABLE",
            "DECLARE",
            "DECLARE",
            "SET",
            "SET",
            "DECLARE",
            "WHILE",
            "SET",
            "SET",
            "SELECT"
        ]
    );
    let batch = parse_batch(template).unwrap();
    let StatementKind::While(loop_) = &batch.statements[10].kind else { panic!() };
    let StatementKind::Block(body) = &loop_.body.kind else { panic!() };
    let body: Vec<&str> = body.iter().map(|s| kind_name(&s.kind)).collect();
    assert_eq!(body, ["BEGIN TRAN", "INSERT", "COMMIT", "SET"]);

    let big_transaction = "-- Actual work
BEGIN TRAN;

DECLARE @i AS INT = 1;

WHILE @i <= 1000000
BEGIN
  INSERT INTO dbo.T1(col1) VALUES(@i);

  SET @i += 1;
END;

COMMIT TRAN;";
    assert_eq!(kinds(big_transaction), ["BEGIN TRAN", "DECLARE", "WHILE", "COMMIT"]);
}

#[test]
fn seed_003_sequence_caching() {
    let preparation = "-- Preparation
SET NOCOUNT ON;
USE PerformanceV3; -- try PerformanceV3, tempdb

ALTER DATABASE PerformanceV3         -- try PerformanceV3, tempdb
  SET DELAYED_DURABILITY = Disabled; -- try Disabled, Forced

DROP TABLE IF EXISTS dbo.T1;

DROP SEQUENCE IF EXISTS dbo.Seq1;

CREATE SEQUENCE dbo.Seq1 AS BIGINT MINVALUE 1 CACHE 50; -- try NO CACHE, CACHE 50, CACHE 10000

DECLARE @db AS sysname = N'PerformanceV3'; -- try PerformanceV3, tempdb";
    assert_eq!(
        kinds(preparation),
        ["SET", "USE", "ALTER DATABASE", "DROP", "DROP", "CREATE SEQUENCE", "DECLARE"]
    );
    let work = "-- Actual work
SELECT
  -- n -- to test without seq
  NEXT VALUE FOR dbo.Seq1 AS n -- to test sequence
INTO dbo.T1
FROM PerformanceV3.dbo.GetNums(1, 1000000) AS N;";
    assert_eq!(kinds(work), ["SELECT"]);
    let batch = parse_batch(work).unwrap();
    let StatementKind::Select(select) = &batch.statements[0].kind else { panic!() };
    let QueryBody::Select(body) = &select.query.body else { panic!() };
    let Some(into) = &body.into else { panic!("SELECT INTO expected") };
    assert_eq!(into.to_string(), "dbo.T1");
    let [TableSource::Function { name, alias, .. }] = body.from.as_slice() else { panic!() };
    assert_eq!(name.database, Some(Ident::new("PerformanceV3")));
    assert_eq!(alias, &Some(Ident::new("N")));
    assert_eq!(kinds("SELECT NEXT VALUE FOR dbo.Seq1;"), ["SELECT"]);
}

#[test]
fn seed_004_virtual_file_stats() {
    let batch = "DECLARE @DATE1 DATETIME
DECLARE @DATE2 DATETIME

ALTER DATABASE TEST
SET DELAYED_DURABILITY  =DISABLED

TRUNCATE TABLE T


   SELECT * INTO #before_disabled FROM sys.dm_io_virtual_file_stats(DB_ID('Test'), NULL);

SELECT @DATE1 =  GETDATE()

SET NOCOUNT ON

DECLARE @I INT =1
WHILE @I <= 100000
       BEGIN
              INSERT INTO T VALUES (@I, 'DATA'+ CONVERT(VARCHAR(10),@I))
              SET @I = @I+1
       END

SET NOCOUNT OFF

SELECT * INTO #after_disabled FROM sys.dm_io_virtual_file_stats(DB_ID('Test'), NULL);

SELECT @DATE2 =  GETDATE()
SELECT DATEDIFF (SS, @DATE1,@DATE2)


SELECT 
                B.DATABASE_ID, B.[FILE_ID],
                           CASE WHEN A.FILE_ID = 1 THEN 'LOG' ELSE 'DATA' END AS FILE_TYPE,

                A.NUM_OF_READS - B.NUM_OF_READS AS NUM_OF_READS,
                A.NUM_OF_BYTES_READ - B.NUM_OF_BYTES_READ AS NUM_OF_BYTES_READ,
                A.NUM_OF_WRITES - B.NUM_OF_WRITES AS NUM_OF_WRITES,
                (A.NUM_OF_BYTES_WRITTEN - B.NUM_OF_BYTES_WRITTEN)/(1024*1024) AS NUM_OF_BYTES_WRITTEN_MB
            FROM
               #BEFORE_DISABLED AS B
               INNER JOIN #AFTER_DISABLED A ON B.DATABASE_ID = A.DATABASE_ID AND B.[FILE_ID] = A.[FILE_ID]
";
    assert_eq!(
        kinds(batch),
        [
            "DECLARE",
            "DECLARE",
            "ALTER DATABASE",
            "TRUNCATE",
            "SELECT",
            "SELECT",
            "SET",
            "DECLARE",
            "WHILE",
            "SET",
            "SELECT",
            "SELECT",
            "SELECT",
            "SELECT"
        ]
    );
    assert_eq!(kinds("CREATE TABLE T\n(ID INT,\nDATA VARCHAR(100))\n"), ["CREATE TABLE"]);
    assert_eq!(kinds("ALTER DATABASE TEST\nSET DELAYED_DURABILITY  =FORCED\n"), ["ALTER DATABASE"]);
}

#[test]
fn seed_000_dynamic_sql_and_metrics() {
    assert_eq!(
        kinds(
            "SELECT d.name, d.recovery_model_desc, d.delayed_durability_desc, 
  log_disk = CASE WHEN mf.physical_name LIKE N'D%' THEN 'SSD' else 'HDD' END
FROM sys.databases AS d
INNER JOIN sys.master_files AS mf
ON d.database_id = mf.database_id
WHERE d.name LIKE N'dd[1-8]'
AND mf.[type] = 1; -- log"
        ),
        ["SELECT"]
    );
    assert_eq!(
        kinds(
            "SELECT test = 1, cycle = 1, start_time = GETDATE(), * 
INTO #Metrics 
FROM sys.dm_io_virtual_file_stats(DB_ID('dd1'), 2) WHERE 1 = 0;"
        ),
        ["SELECT"]
    );
    assert_eq!(
        kinds(
            "INSERT #Metrics SELECT 1, 1, GETDATE(), * 
  FROM sys.dm_io_virtual_file_stats(DB_ID('dd1'), 2);"
        ),
        ["INSERT"]
    );
    // The generator of the article, its lost lines restored from the prose.
    assert_eq!(
        kinds(
            "DECLARE @sql NVARCHAR(MAX) = N'';
;WITH l AS (SELECT l FROM (VALUES('D'),('G')) AS l(l)),
x AS (SELECT l.l, n = CONVERT(CHAR(1),ROW_NUMBER() OVER (ORDER BY l.l)) FROM l)
SELECT @sql += N'
CREATE DATABASE dd' + n + ' ON '
+ '(name = ''dd' + n + '_data'','
+ ' filename = ''C:\\SQLData\\dd' + n + '.mdf'', size = 1024MB)
LOG ON (name = ''dd' + n + '_log'','
+ ' filename = ''' + l + ':\\SQLLog\\dd' + n + '.ldf'', size = 1024MB);'
FROM x;
PRINT @sql;
-- EXEC sp_executesql @sql;"
        ),
        ["DECLARE", "SELECT", "PRINT"]
    );
    assert_eq!(
        kinds(";WITH x AS (SELECT TOP (8) number FROM master..spt_values WHERE type = N'P' ORDER BY number)
SELECT @sql += N'USE dd' + RTRIM(Number+1) + ';' FROM x;"),
        ["SELECT"]
    );
    assert_eq!(
        kinds("CREATE DATABASE dd1 ON (name = 'dd1_data', filename = 'C:\\SQLData\\dd1.mdf', size = 1024MB)
LOG ON (name = 'dd1_log', filename = 'G:\\SQLLog\\dd1.ldf', size = 1024MB);
  ALTER DATABASE dd1 SET RECOVERY FULL;"),
        ["CREATE DATABASE", "ALTER DATABASE"]
    );
    let larger_transactions =
        "INSERT dbo.Rnd SELECT TOP (1000) 1, TheID FROM dbo.TheTable ORDER BY NEWID();
INSERT dbo.Rnd SELECT TOP (10)   2, TheID FROM dbo.TheTable ORDER BY NEWID();
UPDATE t SET TheDate = DATEADD(MINUTE, 1, TheDate)
  FROM dbo.TheTable AS t
  INNER JOIN dbo.Rnd AS r
  ON t.TheID = r.TheID
  WHERE r.batch = 1;
UPDATE t SET RowGuid = NEWID()
  FROM dbo.TheTable AS t
  INNER JOIN dbo.Rnd AS r
  ON t.TheID = r.TheID
  WHERE r.batch = 2;
DELETE dbo.TheTable WHERE TheID IN (SELECT TheID   FROM dbo.Rnd WHERE batch = 3);
DELETE dbo.TheTable WHERE TheID IN (SELECT TheID-1 FROM dbo.Rnd WHERE batch = 3);
INSERT #Metrics SELECT 2, GETDATE(), * 
  FROM sys.dm_io_virtual_file_stats(DB_ID('dd1'), 2);";
    assert_eq!(
        kinds(larger_transactions),
        ["INSERT", "INSERT", "UPDATE", "UPDATE", "DELETE", "DELETE", "INSERT"]
    );
    assert_eq!(
        kinds(
            "SELECT 
      [database] = db_name(m1.database_id),
      num_writes = m2.num_of_writes - m1.num_of_writes, 
      bytes_per_write = (m2.num_of_bytes_written - m1.num_of_bytes_written)*1.0
        /(m2.num_of_writes - m1.num_of_writes),
      duration = DATEDIFF(SECOND, m1.start_time, m2.start_time)
    FROM #Metrics AS m1
    INNER JOIN #Metrics AS m2
    ON m1.database_id = m2.database_id
    WHERE m1.cycle = 1 AND m2.cycle = 2
    AND m1.test = 1 AND m2.test = 1;"
        ),
        ["SELECT"]
    );
}

#[test]
fn seed_001_load_test_transaction() {
    let script = "begin tran;
insert into dbo.test (id, name) values (next value for seq_test, 'test test test, absolute test');
insert into dbo.test (id, name) values (next value for seq_test, 'another sample name');
insert into dbo.test (id, name) values (next value for seq_test, 'third not so long text');
commit with (DELAYED_DURABILITY = ON);";
    assert_eq!(kinds(script), ["BEGIN TRAN", "INSERT", "INSERT", "INSERT", "COMMIT"]);
}
