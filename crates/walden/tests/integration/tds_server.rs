#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! `walden serve` end to end: the real binary on port 0 and a temporary data directory,
//! driven by tiberius, an unmodified SQL Server driver.

use tiberius::{AuthMethod, Client, Config, EncryptionLevel};
use tokio::net::TcpStream;
use tokio_util::compat::{Compat, TokioAsyncWriteCompatExt};

use crate::common;

use common::server::{serve_command, Server};
use common::PASSWORD;

async fn connect(port: u16, password: &str) -> tiberius::Result<Client<Compat<TcpStream>>> {
    let mut config = Config::new();
    config.host("127.0.0.1");
    config.port(port);
    config.authentication(AuthMethod::sql_server("sa", password));
    config.encryption(EncryptionLevel::NotSupported);
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    Client::connect(config, tcp.compat_write()).await
}

/// The rows of the first result set of `sql`, a batch without parameters.
async fn first_rows(client: &mut Client<Compat<TcpStream>>, sql: &str) -> Vec<tiberius::Row> {
    client.simple_query(sql).await.unwrap().into_first_result().await.unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn tiberius_queries_parameters_procedures_transactions_and_errors() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();

        // Several types in one row, through a plain SQL batch.
        let row = client
            .simple_query(
                "SELECT CAST(42 AS int) AS i, CAST(7 AS bigint) AS b, CAST(1 AS bit) AS f, \
                 CAST(12.50 AS decimal(10,2)) AS d, CAST(2.5 AS float) AS x, \
                 N'héllo' AS n, 'abc' AS v, CAST(NULL AS int) AS z, \
                 CAST('2024-02-29' AS date) AS dt",
            )
            .await
            .unwrap()
            .into_row()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.get::<i32, _>("i"), Some(42));
        assert_eq!(row.get::<i64, _>("b"), Some(7));
        assert_eq!(row.get::<bool, _>("f"), Some(true));
        assert_eq!(row.get::<tiberius::numeric::Numeric, _>("d").map(|n| n.value()), Some(1250));
        assert_eq!(row.get::<f64, _>("x"), Some(2.5));
        assert_eq!(row.get::<&str, _>("n"), Some("héllo"));
        assert_eq!(row.get::<&str, _>("v"), Some("abc"));
        assert_eq!(row.get::<i32, _>("z"), None);
        let date = row.cells().nth(8).map(|(_, data)| data.clone());
        assert!(matches!(date, Some(tiberius::ColumnData::Date(Some(_)))), "{date:?}");

        // DDL, then INSERT with parameters: tiberius sends sp_executesql.
        client.simple_query("CREATE TABLE t (id int NOT NULL, name nvarchar(50))").await.unwrap();
        let result = client
            .execute("INSERT INTO t (id, name) VALUES (@P1, @P2)", &[&1i32, &"one"])
            .await
            .unwrap();
        assert_eq!(result.rows_affected(), &[1]);
        client.execute("INSERT INTO t VALUES (@P1, @P2)", &[&2i32, &"two"]).await.unwrap();
        let rows = client
            .query("SELECT id, name FROM t WHERE id >= @P1 ORDER BY id", &[&1i32])
            .await
            .unwrap()
            .into_first_result()
            .await
            .unwrap();
        let got: Vec<(i32, String)> = rows
            .iter()
            .map(|r| (r.get::<i32, _>(0).unwrap(), r.get::<&str, _>(1).unwrap().to_string()))
            .collect();
        assert_eq!(got, vec![(1, "one".to_string()), (2, "two".to_string())]);

        // A procedure, called through sp_executesql.
        client
            .simple_query(
                "CREATE PROCEDURE count_from @min int AS SELECT COUNT(*) AS n FROM t WHERE id >= @min",
            )
            .await
            .unwrap();
        let n = client
            .query("EXEC count_from @min = @P1", &[&2i32])
            .await
            .unwrap()
            .into_row()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n.get::<i32, _>("n"), Some(1));

        // A bad query: error 208, and the session goes on.
        let err = match client.simple_query("SELECT * FROM no_such_table").await {
            Ok(stream) => stream.into_results().await.unwrap_err(),
            Err(e) => e,
        };
        match err {
            tiberius::error::Error::Server(e) => assert_eq!(e.code(), 208),
            other => panic!("expected a server error, got {other:?}"),
        }
        let one = client.simple_query("SELECT 1 AS one").await.unwrap().into_row().await.unwrap();
        assert_eq!(one.unwrap().get::<i32, _>(0), Some(1));
    });
}

#[test]
fn tiberius_transaction_with_delayed_durability() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();
        client.simple_query("CREATE DATABASE dd").await.unwrap().into_results().await.unwrap();
        client
            .simple_query("ALTER DATABASE dd SET DELAYED_DURABILITY = ALLOWED")
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
        client.simple_query("USE dd").await.unwrap().into_results().await.unwrap();
        client
            .simple_query("CREATE TABLE k (id int NOT NULL)")
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
        client.simple_query("BEGIN TRAN").await.unwrap().into_results().await.unwrap();
        client.execute("INSERT INTO k VALUES (@P1)", &[&5i32]).await.unwrap();
        client
            .simple_query("COMMIT WITH (DELAYED_DURABILITY = ON)")
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
        let row = client
            .simple_query("SELECT COUNT(*) AS n, @@TRANCOUNT AS tc, DB_NAME() AS db FROM k")
            .await
            .unwrap()
            .into_row()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.get::<i32, _>("n"), Some(1));
        assert_eq!(row.get::<i32, _>("tc"), Some(0));
        assert_eq!(row.get::<&str, _>("db"), Some("dd"));
    });
}

#[test]
fn tiberius_wrong_password_is_refused_with_18456() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        match connect(server.port, "wrong").await {
            Err(tiberius::error::Error::Server(e)) => {
                assert_eq!(e.code(), 18456);
                assert_eq!(e.message(), "Login failed for user 'sa'.");
            }
            Err(other) => panic!("expected a login error, got {other:?}"),
            Ok(_) => panic!("logged in with a wrong password"),
        }
        // The server goes on: the right password works.
        connect(server.port, PASSWORD).await.unwrap();
    });
}

#[test]
fn walden_toml_configures_the_server_and_flags_and_variables_win_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("walden.toml");
    std::fs::write(
        &config,
        "port = 0\ndata = \"from-file\"\nsa_password = \"FromFile-1\"\nlogin_timeout_secs = 5\n",
    )
    .unwrap();
    let start = |extra: &[&str], variable: Option<(&str, &str)>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_walden"));
        command.args(["serve", "--config"]).arg(&config).args(extra);
        command.env_remove("WALDEN_SA_PASSWORD");
        if let Some((name, value)) = variable {
            command.env(name, value);
        }
        Server::spawn(command, None)
    };

    // The file's relative data path is taken from the file's directory.
    let server = start(&[], None);
    let seen = server.startup();
    assert!(seen.iter().any(|l| l.contains(" INFO  configuration: ")), "{seen:?}");
    assert!(dir.path().join("from-file").is_dir(), "{seen:?}");
    runtime().block_on(async {
        let mut client = connect(server.port, "FromFile-1").await.unwrap();
        let one = client.simple_query("SELECT 1").await.unwrap().into_row().await.unwrap();
        assert_eq!(one.unwrap().get::<i32, _>(0), Some(1));
    });
    drop(server);

    // A variable wins over the file, and a flag over both.
    let server = start(&[], Some(("WALDEN_SA_PASSWORD", "FromEnv-1")));
    runtime().block_on(async {
        assert!(connect(server.port, "FromFile-1").await.is_err());
        connect(server.port, "FromEnv-1").await.unwrap();
    });
    drop(server);
    let server = start(&["--sa-password", "FromFlag-1"], Some(("WALDEN_SA_PASSWORD", "FromEnv-1")));
    runtime().block_on(async {
        connect(server.port, "FromFlag-1").await.unwrap();
    });
    drop(server);

    // A misspelt setting stops the server at start with the file and the key named.
    std::fs::write(&config, "prot = 1433\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_walden"))
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("walden.toml") && stderr.contains("prot"), "{stderr}");
}

#[test]
fn max_server_memory_mb_sizes_the_one_buffer_pool_from_a_flag_or_a_variable() {
    let server = Server::start(&["--max-server-memory-mb", "200"]);
    let seen = server.startup();
    assert!(seen.iter().any(|l| l.contains("max_server_memory_mb = 200")), "{seen:?}");
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();
        client.simple_query("CREATE DATABASE a; CREATE DATABASE b").await.unwrap();
        let rows = first_rows(
            &mut client,
            "SELECT value FROM sys.configurations WHERE name = 'max server memory (MB)'",
        )
        .await;
        assert_eq!(rows[0].get::<i32, _>(0), Some(200));
        // One clerk for the pool all the databases share: 200 MB reserved, a little used;
        // and the query memory it lends from the same budget.
        let rows = first_rows(
            &mut client,
            "SELECT type, pages_kb, virtual_memory_reserved_kb FROM sys.dm_os_memory_clerks \
             ORDER BY type",
        )
        .await;
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].get::<&str, _>(0), Some("MEMORYCLERK_SQLQERESERVATIONS"));
        assert_eq!(rows[0].get::<&str, _>(0), Some("MEMORYCLERK_SQLBUFFERPOOL"));
        let used = rows[0].get::<i64, _>(1).unwrap();
        assert!(used > 0 && used < 20 * 1024, "{used} KB");
        assert_eq!(rows[0].get::<i64, _>(2), Some(200 * 1024));
        let rows = first_rows(
            &mut client,
            "SELECT COUNT(DISTINCT database_id) FROM sys.dm_os_buffer_descriptors",
        )
        .await;
        assert!(rows[0].get::<i32, _>(0).unwrap() >= 4, "master, tempdb, a and b");
    });
    drop(server);

    let server = Server::start_with(&[], &[("WALDEN_MAX_SERVER_MEMORY_MB", "300")]);
    let seen = server.startup();
    assert!(seen.iter().any(|l| l.contains("max_server_memory_mb = 300")), "{seen:?}");
    drop(server);

    // A size the pool cannot have stops the server at start, naming the setting.
    let dir = tempfile::tempdir().unwrap();
    for bad in [&["--max-server-memory-mb", "0"][..], &["--max-server-memory-mb", "lots"][..]] {
        let out = serve_command(&dir.path().join("data")).args(bad).output().unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("max-server-memory-mb") || stderr.contains("max_server_memory_mb"),
            "{stderr}"
        );
    }
    let out = serve_command(&dir.path().join("data"))
        .env("WALDEN_MAX_SERVER_MEMORY_MB", "-5")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("WALDEN_MAX_SERVER_MEMORY_MB"));
}

#[test]
fn tiberius_views_functions_and_identity_insert() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();
        client
            .simple_query(
                "CREATE TABLE items (id int IDENTITY PRIMARY KEY, label nvarchar(20), qty int); \
                 INSERT items (label, qty) VALUES (N'a', 1), (N'b', 5)",
            )
            .await
            .unwrap();
        // Each CREATE is a batch of its own, as SQL Server requires.
        client
            .simple_query("CREATE VIEW big_items AS SELECT id, label FROM items WHERE qty > 2")
            .await
            .unwrap();
        client
            .simple_query(
                "CREATE FUNCTION dbo.twice(@x int) RETURNS decimal(10,1) AS BEGIN RETURN @x * 2 END",
            )
            .await
            .unwrap();
        // A parameterized query over the view and the function, as sp_executesql.
        let rows = client
            .query("SELECT label, dbo.twice(id) AS t FROM big_items WHERE id >= @P1", &[&1i32])
            .await
            .unwrap()
            .into_first_result()
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get::<&str, _>("label"), Some("b"));
        // The result column has the function's declared type.
        let t = rows[0].get::<tiberius::numeric::Numeric, _>("t").unwrap();
        assert_eq!((t.value(), t.scale()), (40, 1));

        // Rows change through the view; explicit identity values need IDENTITY_INSERT.
        let result = client.execute("UPDATE big_items SET label = @P1", &[&"B"]).await.unwrap();
        assert_eq!(result.rows_affected(), &[1]);
        let refused = client
            .simple_query("INSERT items (id, label) VALUES (10, N'x')")
            .await
            .map(|_| ())
            .map_err(|e| match e {
                tiberius::error::Error::Server(e) => e.code(),
                other => panic!("{other}"),
            });
        assert_eq!(refused, Err(544), "an explicit identity value without IDENTITY_INSERT");
        client
            .simple_query(
                "SET IDENTITY_INSERT items ON; INSERT items (id, label, qty) VALUES (10, N'x', 9); \
                 SET IDENTITY_INSERT items OFF; INSERT items (label, qty) VALUES (N'y', 9)",
            )
            .await
            .unwrap();
        let rows = client
            .simple_query("SELECT id, label FROM big_items ORDER BY id")
            .await
            .unwrap()
            .into_first_result()
            .await
            .unwrap();
        let got: Vec<(i32, String)> = rows
            .iter()
            .map(|r| (r.get::<i32, _>(0).unwrap(), r.get::<&str, _>(1).unwrap().to_string()))
            .collect();
        assert_eq!(got, vec![(2, "B".into()), (10, "x".into()), (11, "y".into())]);
    });
}

#[test]
fn tiberius_triggers_fire_refuse_and_survive_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let count = |rows: Vec<tiberius::Row>| rows[0].get::<i32, _>(0).unwrap();
    let server = Server::spawn(serve_command(&data), None);
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();
        client
            .simple_query(
                "CREATE TABLE acct (id int PRIMARY KEY, balance int); \
                 CREATE TABLE audit (id int, old_balance int, new_balance int)",
            )
            .await
            .unwrap();
        client
            .simple_query(
                "CREATE TRIGGER acct_audit ON acct AFTER INSERT, UPDATE AS \
                 SET NOCOUNT ON; \
                 IF EXISTS (SELECT * FROM inserted WHERE balance < 0) \
                 BEGIN RAISERROR('A balance cannot be negative.', 16, 1); ROLLBACK; RETURN END; \
                 INSERT audit SELECT i.id, d.balance, i.balance \
                 FROM inserted AS i LEFT JOIN deleted AS d ON d.id = i.id",
            )
            .await
            .unwrap();
        // The trigger's own statements send no counts (NOCOUNT): the driver sees the
        // statement's.
        let result =
            client.execute("INSERT acct VALUES (@P1, @P2)", &[&1i32, &10i32]).await.unwrap();
        assert_eq!(result.rows_affected(), &[1]);
        let refused = client
            .execute("UPDATE acct SET balance = @P1 WHERE id = 1", &[&-5i32])
            .await
            .map(|_| ())
            .map_err(|e| match e {
                tiberius::error::Error::Server(e) => (e.code(), e.message().to_string()),
                other => panic!("{other}"),
            });
        let (code, message) = refused.unwrap_err();
        assert!(code == 50000 && message.contains("negative") || code == 3609, "{code} {message}");
        let rows = first_rows(&mut client, "SELECT balance FROM acct WHERE id = 1").await;
        assert_eq!(count(rows), 10, "the refused update was rolled back");
    });
    // SIGKILL, then a restart on the same data: the trigger is still there and fires.
    drop(server);
    let server = Server::spawn(serve_command(&data), None);
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();
        client.execute("UPDATE acct SET balance = @P1 WHERE id = 1", &[&20i32]).await.unwrap();
        let rows =
            first_rows(&mut client, "SELECT COUNT(*) FROM audit WHERE new_balance IN (10, 20)")
                .await;
        assert_eq!(count(rows), 2, "one audit row per change, none for the refused one");
        let rows =
            first_rows(&mut client, "SELECT COUNT(*) FROM sys.triggers WHERE name = 'acct_audit'")
                .await;
        assert_eq!(count(rows), 1);
    });
}

#[test]
fn tiberius_reads_for_json_for_xml_and_rollup_results() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();
        client
            .simple_query(
                "CREATE TABLE sales (region nvarchar(10), qty int); \
                 INSERT sales VALUES (N'east', 5), (N'east', 2), (N'west', 7)",
            )
            .await
            .unwrap();
        // FOR JSON's one NVARCHAR(MAX) column, under SQL Server's name for it.
        let rows = client
            .query(
                "SELECT region, SUM(qty) AS qty FROM sales WHERE qty > @P1 GROUP BY region \
                 ORDER BY region FOR JSON PATH",
                &[&0i32],
            )
            .await
            .unwrap()
            .into_first_result()
            .await
            .unwrap();
        let column = rows[0].columns()[0].name().to_string();
        assert_eq!(column, "JSON_F52E2B61-18A1-11d1-B105-00805F49916B");
        assert_eq!(
            rows[0].get::<&str, _>(0),
            Some(r#"[{"region":"east","qty":7},{"region":"west","qty":7}]"#)
        );
        let concatenated = "SELECT STUFF((SELECT N',' + region FROM sales ORDER BY qty \
                            FOR XML PATH('')), 1, 1, N'')";
        let rows = first_rows(&mut client, concatenated).await;
        assert_eq!(rows[0].get::<&str, _>(0), Some("east,east,west"));
        // ROLLUP's total row has NULL for the region, and GROUPING says so.
        let rollup = "SELECT region, SUM(qty), GROUPING(region) FROM sales \
                      GROUP BY ROLLUP(region) ORDER BY GROUPING(region), region";
        let rows = first_rows(&mut client, rollup).await;
        let got: Vec<(Option<String>, i32, u8)> = rows
            .iter()
            .map(|r| {
                (
                    r.get::<&str, _>(0).map(str::to_string),
                    r.get::<i32, _>(1).unwrap(),
                    r.get::<u8, _>(2).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![(Some("east".into()), 7, 0), (Some("west".into()), 7, 0), (None, 14, 1)]
        );
    });
}

#[test]
fn tiberius_receives_max_values_cut_to_set_textsize() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();
        let values = "SELECT CAST('abcdefghij' AS varchar(max)) AS v, \
                      CAST(N'abcdefghij' AS nvarchar(max)) AS n, \
                      CAST(0x0102030405 AS varbinary(max)) AS b, 'abcdefghij' AS short";
        client.simple_query("SET TEXTSIZE 4").await.unwrap().into_results().await.unwrap();
        let rows = first_rows(&mut client, values).await;
        // Bytes: four characters of varchar, two of nvarchar; varchar(10) is not cut.
        assert_eq!(rows[0].get::<&str, _>("v"), Some("abcd"));
        assert_eq!(rows[0].get::<&str, _>("n"), Some("ab"));
        assert_eq!(rows[0].get::<&[u8], _>("b"), Some(&[1u8, 2, 3, 4][..]));
        assert_eq!(rows[0].get::<&str, _>("short"), Some("abcdefghij"));
        // -1 is no limit; 0 is SQL Server's documented default of 4 KB.
        client.simple_query("SET TEXTSIZE -1").await.unwrap().into_results().await.unwrap();
        let rows = first_rows(&mut client, values).await;
        assert_eq!(rows[0].get::<&str, _>("v"), Some("abcdefghij"));
        let rows = first_rows(&mut client, "SET TEXTSIZE 0 SELECT @@TEXTSIZE").await;
        assert_eq!(rows[0].get::<i32, _>(0), Some(4096));
    });
}

/// What go-mssqldb's own tests (`go_mssqldb_suite.rs`) found, each checked here on its own.
#[test]
fn tiberius_runs_what_go_mssqldb_tests_send() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = connect(server.port, PASSWORD).await.unwrap();
        // 1,000 SELECTs joined by UNION ALL (TestProcessQueryNextErrors): a left-deep chain
        // that once overflowed a worker's stack and aborted the server.
        let union = vec!["SELECT 1 AS one"; 1000].join(" UNION ALL ");
        assert_eq!(first_rows(&mut client, &union).await.len(), 1000);
        let rows = first_rows(&mut client, "SELECT 2 AS two").await;
        assert_eq!(rows[0].get::<i32, _>(0), Some(2));

        // The bulk copy's `..table` (current database, default schema), and a table of a
        // database that does not exist is error 208, not 911.
        client
            .simple_query("CREATE TABLE dotted (i int); INSERT dotted VALUES (7)")
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
        let rows = first_rows(&mut client, "SELECT i FROM ..dotted").await;
        assert_eq!(rows[0].get::<i32, _>(0), Some(7));
        let code = match client.simple_query("SELECT * FROM nosuchdb.dbo.dotted").await {
            Ok(stream) => stream.into_results().await.unwrap_err().code(),
            Err(e) => e.code(),
        };
        assert_eq!(code, Some(208));

        // CONVERT with a date-and-time style shows a DATE's date and a TIME's time of day
        // alone (TestParameterValues).
        let rows = first_rows(
            &mut client,
            "SELECT CONVERT(nvarchar(40), CAST('2006-01-02' AS date), 121), \
             CONVERT(nvarchar(40), CAST('22:04:05' AS time), 121)",
        )
        .await;
        assert_eq!(rows[0].get::<&str, _>(0), Some("2006-01-02"));
        assert_eq!(rows[0].get::<&str, _>(1), Some("22:04:05.0000000"));

        // An empty element is serialized `<a/>`, as SQL Server sends it (TestSelect).
        let rows = first_rows(
            &mut client,
            "SELECT CAST(CAST('<root></root>' AS xml) AS nvarchar(max)), \
             CAST(CAST('<a x=\"1\"/>' AS xml) AS nvarchar(max))",
        )
        .await;
        assert_eq!(rows[0].get::<&str, _>(0), Some("<root/>"));
        assert_eq!(rows[0].get::<&str, _>(1), Some("<a x=\"1\"/>"));
    });
}
