//! Minimal reproductions of what DBA scripts (sp_WhoIsActive, Ola Hallengren's maintenance
//! solution, the First Responder Kit) need of the system views and procedures.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use walden_engine::types::Value;

use crate::support;
use support::{ok, run, scalar, session};

/// sp_WhoIsActive lists the sessions of `sys.sysprocesses` with a client process
/// (`hostprocess > ''`, to leave system sessions out) and reads each running request's text
/// through its `sql_handle`.
#[test]
fn sysprocesses_shows_the_client_process_and_the_running_text() {
    let (_dir, mut s) = session();
    ok(
        &mut s,
        "CREATE PROCEDURE dbo.who AS
         SELECT sp.spid, sp.hostprocess, LOWER(sp.status) AS status,
                (SELECT t.text FROM sys.dm_exec_sql_text(sp.sql_handle) AS t) AS text
         FROM sys.sysprocesses AS sp
         WHERE sp.hostprocess > '' AND sp.ecid = 0
           AND (sp.status NOT IN ('sleeping', 'dormant') OR sp.open_tran > 0)",
    );
    let out = ok(&mut s, "EXEC dbo.who");
    let rows = &out.results[0].rows;
    let spid = scalar(&mut s, "SELECT @@SPID");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0][0], spid);
    let pid = std::process::id().to_string();
    assert_eq!(rows[0][1], Value::NStr(format!("{pid:<10}")));
    assert_eq!(rows[0][2], Value::NStr(format!("{:<30}", "runnable")));
    match &rows[0][3] {
        Value::NStr(text) => assert!(text.contains("CREATE PROCEDURE dbo.who"), "{text}"),
        other => panic!("no text: {other:?}"),
    }
    let pid = i32::try_from(std::process::id()).unwrap();
    assert_eq!(
        scalar(
            &mut s,
            "SELECT host_process_id FROM sys.dm_exec_sessions WHERE session_id = @@SPID"
        ),
        Value::Int(pid)
    );
}

/// sp_WhoIsActive reads these columns of `sys.dm_exec_requests`.
#[test]
fn exec_requests_has_the_counters_and_options_of_a_request() {
    let (_dir, mut s) = session();
    let out = ok(
        &mut s,
        "SET ANSI_NULLS OFF;
         SELECT r.reads, r.writes, r.logical_reads, r.cpu_time, r.granted_query_memory,
                r.percent_complete, r.text_size, r.date_first, r.ansi_nulls, r.quoted_identifier,
                r.deadlock_priority, r.nest_level, r.open_resultset_count
         FROM sys.dm_exec_requests AS r WHERE r.session_id = @@SPID",
    );
    let rows = &out.results[0].rows;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row[0], Value::BigInt(0));
    assert_eq!(row[3], Value::Int(0));
    assert_eq!(row[5], Value::Real(0.0));
    assert_eq!(row[7], Value::SmallInt(7));
    assert_eq!(row[8], Value::Bit(false));
    assert_eq!(row[9], Value::Bit(true));
}

/// `FOR XML PATH` columns named `processing-instruction(name)` and `comment()`, which
/// sp_WhoIsActive shows its SQL text as.
#[test]
fn for_xml_path_makes_processing_instructions_and_comments() {
    let (_dir, mut s) = session();
    let v = scalar(
        &mut s,
        "SELECT CONVERT(NVARCHAR(MAX), (SELECT N'--a < b--' AS [processing-instruction(query)],
                N'note' AS [comment()] FOR XML PATH(''), TYPE))",
    );
    assert_eq!(v, Value::NStr("<?query --a < b--?><!--note-->".into()));
}

/// Install scripts look for their Agent jobs in msdb before creating them: the tables are
/// there, empty; creating or starting a job is refused, since Walden has no Agent to run it.
#[test]
fn agent_tables_are_empty_and_agent_procedures_are_refused() {
    let (_dir, mut s) = session();
    let out = ok(
        &mut s,
        "SELECT j.name, st.command, h.run_status, sc.freq_type, c.name, o.email_address
         FROM msdb.dbo.sysjobs AS j
         JOIN msdb.dbo.sysjobsteps AS st ON st.job_id = j.job_id
         LEFT JOIN msdb.dbo.sysjobhistory AS h ON h.job_id = j.job_id
         LEFT JOIN msdb.dbo.sysjobschedules AS js ON js.job_id = j.job_id
         LEFT JOIN msdb.dbo.sysschedules AS sc ON sc.schedule_id = js.schedule_id
         LEFT JOIN msdb.dbo.syscategories AS c ON c.category_id = j.category_id
         CROSS JOIN msdb.dbo.sysoperators AS o",
    );
    assert_eq!(out.results[0].columns.len(), 6);
    assert!(out.results[0].rows.is_empty());
    let out = run(
        &mut s,
        "IF NOT EXISTS (SELECT * FROM msdb.dbo.sysjobs WHERE name = N'nightly')
           EXECUTE msdb.dbo.sp_add_job @job_name = N'nightly'
         EXECUTE msdb.dbo.sp_start_job @job_name = N'nightly'
         SELECT COUNT(*) FROM msdb.dbo.sysjobs",
    );
    let errors: Vec<(i32, String)> = out.errors().map(|e| (e.number, e.message.clone())).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().all(|(n, m)| *n == 50000 && m.contains("no SQL Server Agent")));
    assert!(errors[0].1.contains("sp_add_job") && errors[1].1.contains("sp_start_job"));
    assert_eq!(out.results.last().unwrap().rows[0][0], Value::Int(0));
}
