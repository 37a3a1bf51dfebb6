// go-mssqldb against `walden serve`.
//
// Usage: go-driver-test HOST PORT PASSWORD [DATABASE] (or $WALDEN_HOST, $WALDEN_PORT,
// $WALDEN_PASSWORD, $WALDEN_DATABASE). Prints one line per section and a FAIL line per failed
// check; exits 1 if any check failed.
//
// The DSN says encrypt=disable. Parameters are sent as sp_executesql RPCs; a query that is a
// bare procedure name is an RPC to that procedure (sql.Named, sql.Out, mssql.ReturnStatus);
// db.BeginTx and Tx.Commit/Rollback are Transaction Manager requests.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/golang-sql/civil"
	"github.com/golang-sql/sqlexp"
	mssql "github.com/microsoft/go-mssqldb"
	"github.com/shopspring/decimal"
)

// NVARCHAR text beyond Latin-1 and beyond the BMP (a UTF-16 surrogate pair).
const unicodeText = "Grüße, 日本語 ✓ \U0001F600"

var longText = strings.Repeat("walden-", 3000) + "é"

const typesSelect = "SELECT CAST(42 AS INT) AS i, CAST(9007199254740993 AS BIGINT) AS b, " +
	"CAST(1 AS BIT) AS f, CAST(12345678.91 AS DECIMAL(10,2)) AS d, CAST(-2.5 AS FLOAT) AS x, " +
	"CAST('abc' AS VARCHAR(20)) AS v, N'" + unicodeText + "' AS n, " +
	"REPLICATE(CAST(N'walden-' AS NVARCHAR(MAX)), 3000) + N'é' AS nmax, " +
	"CAST(0xDEADBEEF00 AS VARBINARY(16)) AS vb, CAST('2024-02-29' AS DATE) AS dt, " +
	"CAST('2024-02-29 13:45:56.1234567' AS DATETIME2) AS dt2, " +
	"CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS UNIQUEIDENTIFIER) AS g, " +
	"CAST(NULL AS INT) AS ni, CAST(NULL AS NVARCHAR(10)) AS nn, CAST(NULL AS DATE) AS nd"

const typesTable = "CREATE TABLE types_t (i INT NOT NULL PRIMARY KEY, b BIGINT, f BIT, " +
	"d DECIMAL(10,2), x FLOAT, v VARCHAR(20), n NVARCHAR(40), nmax NVARCHAR(MAX), " +
	"vb VARBINARY(16), dt DATE, dt2 DATETIME2, g UNIQUEIDENTIFIER, ni INT, nn NVARCHAR(10), " +
	"nd DATE)"

const procedure = "CREATE PROCEDURE add_one @a INT, @b INT OUTPUT AS " +
	"BEGIN SET @b = @a + 1; RETURN @a * 2 END"

var (
	host, port, password, database string
	failures, checked              int
	ctx                            = context.Background()
)

func eq(what string, got, expected any) {
	checked++
	if !reflect.DeepEqual(got, expected) {
		failures++
		g, e := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", expected)
		if len(g) > 200 {
			g = g[:200] + "..."
		}
		if len(e) > 200 {
			e = e[:200] + "..."
		}
		fmt.Printf("FAIL %s: got %s, expected %s\n", what, g, e)
	}
}

func ok(what string, err error) bool {
	checked++
	if err != nil {
		failures++
		fmt.Printf("FAIL %s: %v\n", what, err)
		return false
	}
	return true
}

func section(name string, fn func()) {
	before := failures
	func() {
		defer func() {
			if r := recover(); r != nil {
				failures++
				fmt.Printf("FAIL %s: panic: %v\n", name, r)
			}
		}()
		fn()
	}()
	status := "ok"
	if failures != before {
		status = "FAILED"
	}
	fmt.Printf("go-mssqldb: %s: %s\n", name, status)
}

func arg(i int, env, def string) string {
	if len(os.Args) > i {
		return os.Args[i]
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	if def == "" {
		fmt.Fprintf(os.Stderr, "usage: %s HOST PORT PASSWORD [DATABASE] (or $%s)\n", os.Args[0], env)
		os.Exit(2)
	}
	return def
}

func open(db string) *sql.DB {
	q := url.Values{}
	q.Set("database", db)
	q.Set("encrypt", "disable")
	q.Set("dial timeout", "10")
	u := url.URL{
		Scheme:   "sqlserver",
		User:     url.UserPassword("sa", password),
		Host:     host + ":" + port,
		RawQuery: q.Encode(),
	}
	pool, err := sql.Open("sqlserver", u.String())
	if err != nil {
		panic(err)
	}
	return pool
}

func scalar(q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, query string, args ...any) any {
	var v any
	if err := q.QueryRowContext(ctx, query, args...).Scan(&v); err != nil {
		panic(fmt.Sprintf("%s: %v", query, err))
	}
	return v
}

func mustExec(q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) sql.Result {
	r, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", query, err))
	}
	return r
}

func setup() {
	master := open("master")
	defer master.Close()
	mustExec(master, "CREATE DATABASE ["+database+"]")
	mustExec(master, "ALTER DATABASE ["+database+"] SET DELAYED_DURABILITY = ALLOWED")
	db := open(database)
	defer db.Close()
	eq("DB_NAME() after a login to the new database", scalar(db, "SELECT DB_NAME()"), database)
	mustExec(db, typesTable)
	mustExec(db, "CREATE TABLE k (id INT NOT NULL PRIMARY KEY, note NVARCHAR(20))")
	mustExec(db, "INSERT INTO k (id, note) VALUES (1, N'first')")
	mustExec(db, procedure)
}

func guid() mssql.UniqueIdentifier {
	var g mssql.UniqueIdentifier
	if err := g.Scan("6F9619FF-8B86-D011-B42D-00C04FC964FF"); err != nil {
		panic(err)
	}
	return g
}

func typesQuery() {
	db := open(database)
	defer db.Close()
	rows, err := db.QueryContext(ctx, typesSelect)
	if !ok("types query", err) {
		return
	}
	defer rows.Close()
	names, _ := rows.Columns()
	eq("column names", names, []string{"i", "b", "f", "d", "x", "v", "n", "nmax", "vb", "dt",
		"dt2", "g", "ni", "nn", "nd"})
	types, _ := rows.ColumnTypes()
	var dbTypes []string
	for _, t := range types {
		dbTypes = append(dbTypes, t.DatabaseTypeName())
	}
	eq("column types", dbTypes, []string{"INT", "BIGINT", "BIT", "DECIMAL", "FLOAT", "VARCHAR",
		"NVARCHAR", "NVARCHAR", "VARBINARY", "DATE", "DATETIME2", "UNIQUEIDENTIFIER", "INT",
		"NVARCHAR", "DATE"})
	if p, s, okp := types[3].DecimalSize(); okp {
		eq("DECIMAL precision and scale", []int64{p, s}, []int64{10, 2})
	}
	if !rows.Next() {
		ok("a row", fmt.Errorf("no row: %v", rows.Err()))
		return
	}
	var (
		i, b       int64
		f          bool
		d          string
		x          float64
		v, n, nmax string
		vb         []byte
		dt, dt2    time.Time
		g          mssql.UniqueIdentifier
		ni         sql.NullInt64
		nn         sql.NullString
		nd         sql.NullTime
	)
	if !ok("scan", rows.Scan(&i, &b, &f, &d, &x, &v, &n, &nmax, &vb, &dt, &dt2, &g, &ni, &nn, &nd)) {
		return
	}
	eq("INT", i, int64(42))
	eq("BIGINT", b, int64(9007199254740993))
	eq("BIT", f, true)
	eq("DECIMAL(10,2)", d, "12345678.91")
	eq("FLOAT", x, -2.5)
	eq("VARCHAR", v, "abc")
	eq("NVARCHAR", n, unicodeText)
	eq("NVARCHAR(MAX)", nmax, longText)
	eq("VARBINARY", vb, []byte{0xDE, 0xAD, 0xBE, 0xEF, 0x00})
	eq("DATE", dt.Format("2006-01-02"), "2024-02-29")
	eq("DATETIME2", dt2.Format("2006-01-02 15:04:05.0000000"), "2024-02-29 13:45:56.1234567")
	eq("UNIQUEIDENTIFIER", g.String(), "6F9619FF-8B86-D011-B42D-00C04FC964FF")
	eq("NULL INT", ni.Valid, false)
	eq("NULL NVARCHAR", nn.Valid, false)
	eq("NULL DATE", nd.Valid, false)
	eq("a single row", rows.Next(), false)
}

func parameters() {
	db := open(database)
	defer db.Close()
	// decimal.NullDecimal goes as DECIMAL; a plain decimal.Decimal would go as text.
	dec := decimal.NullDecimal{Decimal: decimal.RequireFromString("12345678.91"), Valid: true}
	dt := civil.Date{Year: 2024, Month: time.February, Day: 29}
	dt2 := civil.DateTime{Date: dt, Time: civil.Time{Hour: 13, Minute: 45, Second: 56, Nanosecond: 123456700}}
	r := mustExec(db, "INSERT INTO types_t VALUES (@p1, @p2, @p3, @p4, @p5, @p6, @p7, @p8, @p9, "+
		"@p10, @p11, @p12, @p13, @p14, @p15)",
		100, int64(9007199254740993), true, dec, -2.5,
		mssql.VarChar("abc"), unicodeText, longText, []byte{0xDE, 0xAD, 0xBE, 0xEF, 0x00}, dt,
		dt2, guid(), nil, sql.NullString{}, sql.NullTime{})
	n, _ := r.RowsAffected()
	eq("INSERT rows affected", n, int64(1))
	var (
		d, v, nv, nmax string
		x              float64
		vb             []byte
		gotDt, gotDt2  time.Time
		g              mssql.UniqueIdentifier
		ni             sql.NullInt64
		nn             sql.NullString
		nd             sql.NullTime
	)
	err := db.QueryRowContext(ctx, "SELECT d, x, v, n, nmax, vb, dt, dt2, g, ni, nn, nd "+
		"FROM types_t WHERE i = @id AND n = @n AND g = @g",
		sql.Named("id", 100), sql.Named("n", unicodeText), sql.Named("g", guid())).
		Scan(&d, &x, &v, &nv, &nmax, &vb, &gotDt, &gotDt2, &g, &ni, &nn, &nd)
	if ok("select by named parameters", err) {
		eq("round trip of DECIMAL", d, "12345678.91")
		eq("round trip of FLOAT", x, -2.5)
		eq("round trip of VARCHAR", v, "abc")
		eq("round trip of NVARCHAR", nv, unicodeText)
		eq("round trip of NVARCHAR(MAX)", nmax, longText)
		eq("round trip of VARBINARY", vb, []byte{0xDE, 0xAD, 0xBE, 0xEF, 0x00})
		eq("round trip of DATE", gotDt.Format("2006-01-02"), "2024-02-29")
		eq("round trip of DATETIME2", gotDt2.Format("2006-01-02 15:04:05.0000000"),
			"2024-02-29 13:45:56.1234567")
		eq("round trip of UNIQUEIDENTIFIER", g.String(), "6F9619FF-8B86-D011-B42D-00C04FC964FF")
		eq("round trip of NULLs", []bool{ni.Valid, nn.Valid, nd.Valid}, []bool{false, false, false})
	}
	// A time.Time goes as DATETIMEOFFSET; stored in DATETIME2 it keeps its clock time.
	at := time.Date(2024, 3, 1, 8, 30, 0, 0, time.FixedZone("", 2*3600))
	mustExec(db, "UPDATE types_t SET dt2 = @p1 WHERE i = @p2", at, 100)
	var stored time.Time
	if ok("select the DATETIMEOFFSET-set value", db.QueryRowContext(ctx,
		"SELECT dt2 FROM types_t WHERE i = 100").Scan(&stored)) {
		eq("a DATETIMEOFFSET parameter stored as DATETIME2", stored.Format("2006-01-02 15:04:05"),
			"2024-03-01 08:30:00")
	}
	// A DATETIMEOFFSET keeps its moment and its offset both ways.
	var back time.Time
	if ok("select a DATETIMEOFFSET", db.QueryRowContext(ctx,
		"SELECT CAST('2024-03-01 08:30:00 +02:00' AS DATETIMEOFFSET)").Scan(&back)) {
		eq("a DATETIMEOFFSET keeps its moment", back.UTC().Format(time.RFC3339), "2024-03-01T06:30:00Z")
		_, offset := back.Zone()
		eq("a DATETIMEOFFSET keeps its offset", offset, 2*3600)
	}
	eq("a time.Time parameter compares as its moment", scalar(db,
		"SELECT CASE WHEN @p1 = CAST('2024-03-01 06:30 +00:00' AS DATETIMEOFFSET) THEN 1 ELSE 0 END", at),
		int64(1))
	// A SQL_VARIANT arrives as its base type's value.
	eq("a SQL_VARIANT holding an INT", scalar(db, "SELECT CAST(42 AS SQL_VARIANT)"), int64(42))
	eq("a SQL_VARIANT holding an NVARCHAR", scalar(db, "SELECT CAST(N'text' AS SQL_VARIANT)"), "text")
	r = mustExec(db, "UPDATE types_t SET x = x * @p1 WHERE i = @p2", 2.0, 100)
	n, _ = r.RowsAffected()
	eq("UPDATE rows affected", n, int64(1))
	eq("the updated value", scalar(db, "SELECT x FROM types_t WHERE i = @p1", 100), -5.0)
	eq("a quote in a parameter is data", scalar(db, "SELECT @p1 + N'!'", "it's; DROP TABLE k --"),
		"it's; DROP TABLE k --!")
}

// conformance checks what go-sqlcmd relies on (issue 28): the message-queue API, which walks
// a batch statement by statement by its DONE tokens, also under SET NOCOUNT ON and around
// PRINT; and DATETIME (DateTime1) parameters, which keep their seconds and 1/300 s ticks.
func conformance() {
	db := open(database)
	defer db.Close()
	retmsg := &sqlexp.ReturnMessage{}
	rows, err := db.QueryContext(ctx,
		"SET NOCOUNT ON; SELECT 1 AS a, 2 AS b; PRINT 'between'; DECLARE @v INT; "+
			"SELECT @v = 3; SELECT 'x' AS y; PRINT 'end'", retmsg)
	if ok("a NOCOUNT batch through the message queue", err) {
		var events []string
		for active := true; active; {
			switch m := retmsg.Message(ctx).(type) {
			case sqlexp.MsgNotice:
				events = append(events, "notice "+m.Message.String())
			case sqlexp.MsgNext:
				cols, _ := rows.Columns()
				for rows.Next() {
					vals := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					if ok("scan a queued row", rows.Scan(ptrs...)) {
						events = append(events, fmt.Sprintf("row %v", vals))
					}
				}
			case sqlexp.MsgNextResultSet:
				active = rows.NextResultSet()
			case sqlexp.MsgError:
				ok("a queued message", m.Error)
			}
		}
		rows.Close()
		eq("the queued events", events,
			[]string{"row [1 2]", "notice between", "row [x]", "notice end"})
	}
	for _, c := range []struct {
		at       time.Time
		expected string
	}{
		{time.Date(2024, 1, 2, 22, 4, 5, 0, time.UTC), "2024-01-02 22:04:05.000"},
		{time.Date(2024, 12, 31, 23, 59, 59, 997000000, time.UTC), "2024-12-31 23:59:59.997"},
		{time.Date(1753, 1, 1, 0, 0, 1, 3000000, time.UTC), "1753-01-01 00:00:01.003"},
	} {
		var back time.Time
		if ok("select a DATETIME parameter", db.QueryRowContext(ctx, "SELECT @p1",
			mssql.DateTime1(c.at)).Scan(&back)) {
			eq("a DATETIME parameter keeps its seconds", back.Format("2006-01-02 15:04:05.000"), c.expected)
		}
		eq("a DATETIME parameter as text",
			scalar(db, "SELECT CONVERT(VARCHAR(23), @p1, 121)", mssql.DateTime1(c.at)), c.expected)
	}
}

func procedureCall() {
	db := open(database)
	defer db.Close()
	var out int64
	var rs mssql.ReturnStatus
	_, err := db.ExecContext(ctx, "add_one", sql.Named("a", 41), sql.Named("b", sql.Out{Dest: &out}), &rs)
	if ok("RPC to add_one", err) {
		eq("OUTPUT parameter", out, int64(42))
		eq("return status", rs, mssql.ReturnStatus(82))
	}
	// In a transaction too: the RPC carries the transaction descriptor.
	tx, err := db.BeginTx(ctx, nil)
	if !ok("BeginTx", err) {
		return
	}
	_, err = tx.ExecContext(ctx, "dbo.add_one", sql.Named("a", 5), sql.Named("b", sql.Out{Dest: &out}), &rs)
	if ok("RPC to dbo.add_one in a transaction", err) {
		eq("OUTPUT parameter in a transaction", out, int64(6))
		eq("return status in a transaction", rs, mssql.ReturnStatus(10))
	}
	ok("commit", tx.Commit())
	var o int64
	if ok("EXEC through sp_executesql", db.QueryRowContext(ctx,
		"DECLARE @o INT; EXEC add_one @a = @p1, @b = @o OUTPUT; SELECT @o", 9).Scan(&o)) {
		eq("EXEC through sp_executesql", o, int64(10))
	}
}

// orderLine is a row of the table type dbo.order_lines, for table-valued parameters: the
// driver sends one TVP column per field, in order, typed from the Go type.
type orderLine struct {
	Sku   string
	Qty   *int32
	Price float64
}

func tableValuedParameters() {
	db := open(database)
	defer db.Close()
	mustExec(db, "CREATE TYPE dbo.order_lines AS TABLE "+
		"(sku NVARCHAR(20) NOT NULL, qty INT, price DECIMAL(10,2))")
	mustExec(db, "CREATE PROCEDURE dbo.order_total @lines dbo.order_lines READONLY AS "+
		"SELECT COUNT(*) AS n, SUM(qty * price) AS total, MIN(sku) AS first FROM @lines")
	two, three := int32(2), int32(3)
	lines := []orderLine{{"b-2", &two, 1.25}, {"a-1", &three, 10}, {"c-3", nil, 99.5}}
	var n int64
	var total, first string
	row := db.QueryRowContext(ctx, "dbo.order_total",
		sql.Named("lines", mssql.TVP{TypeName: "dbo.order_lines", Value: lines}))
	if ok("RPC to a procedure with a table-valued parameter", row.Scan(&n, &total, &first)) {
		eq("rows the procedure saw", n, int64(3))
		eq("SUM over the rows, NULL qty left out", total, "32.50")
		eq("MIN(sku)", first, "a-1")
	}
	// A TVP in a parameterized query: sp_executesql declares it "order_lines READONLY".
	var skus string
	row = db.QueryRowContext(ctx,
		"SELECT STRING_AGG(sku, ',') WITHIN GROUP (ORDER BY sku) FROM @p1 WHERE qty IS NOT NULL",
		mssql.TVP{TypeName: "order_lines", Value: lines})
	if ok("a table-valued parameter in sp_executesql", row.Scan(&skus)) {
		eq("rows joined from the TVP", skus, "a-1,b-2")
	}
	row = db.QueryRowContext(ctx, "dbo.order_total",
		sql.Named("lines", mssql.TVP{TypeName: "dbo.order_lines", Value: []orderLine{}}))
	var none sql.NullString
	if ok("an empty table-valued parameter", row.Scan(&n, &none, &none)) {
		eq("rows of an empty TVP", n, int64(0))
	}
	many := make([]orderLine, 2500)
	for i := range many {
		many[i] = orderLine{fmt.Sprintf("s-%04d", i), &two, 0.5}
	}
	row = db.QueryRowContext(ctx, "dbo.order_total",
		sql.Named("lines", mssql.TVP{TypeName: "dbo.order_lines", Value: many}))
	if ok("a 2,500-row table-valued parameter", row.Scan(&n, &total, &first)) {
		eq("rows of the large TVP", n, int64(2500))
		eq("SUM over the large TVP", total, "2500.00")
	}
	// An identity column of the table type is sent as a default (the "@identity" tag): it
	// takes its next value.
	mustExec(db, "CREATE TYPE dbo.tagged AS TABLE (id INT IDENTITY(1,1), tag NVARCHAR(20))")
	type tagged struct {
		ID  int32 `tvp:"@identity"`
		Tag string
	}
	var ids, tags string
	row = db.QueryRowContext(ctx,
		"SELECT STRING_AGG(CAST(id AS VARCHAR(5)), ',') WITHIN GROUP (ORDER BY id), "+
			"STRING_AGG(tag, ',') WITHIN GROUP (ORDER BY id) FROM @p1",
		mssql.TVP{TypeName: "dbo.tagged", Value: []tagged{{Tag: "x"}, {Tag: "y"}}})
	if ok("a TVP with an identity column sent as a default", row.Scan(&ids, &tags)) {
		eq("identity values of the TVP's rows", ids, "1,2")
		eq("the other column of the TVP's rows", tags, "x,y")
	}
	_, err := db.ExecContext(ctx, "dbo.order_total",
		sql.Named("lines", mssql.TVP{TypeName: "dbo.no_such_type", Value: lines}))
	eq("a TVP of an unknown type fails", err != nil && strings.Contains(err.Error(), "no_such_type"), true)
}

func transactions() {
	db := open(database)
	defer db.Close()
	count := "SELECT COUNT(*) FROM k WHERE id = @p1"

	// COMMIT WITH (DELAYED_DURABILITY = ON) in a database that ALLOWS it, on one connection.
	conn, err := db.Conn(ctx)
	if !ok("a dedicated connection", err) {
		return
	}
	mustExec(conn, "BEGIN TRAN")
	mustExec(conn, "INSERT INTO k (id, note) VALUES (@p1, @p2)", 10, "delayed")
	eq("@@TRANCOUNT inside BEGIN TRAN", scalar(conn, "SELECT @@TRANCOUNT"), int64(1))
	mustExec(conn, "COMMIT WITH (DELAYED_DURABILITY = ON)")
	eq("@@TRANCOUNT after the delayed commit", scalar(conn, "SELECT @@TRANCOUNT"), int64(0))
	eq("a delayed commit is visible", scalar(db, count, 10), int64(1))
	mustExec(conn, "BEGIN TRAN")
	mustExec(conn, "INSERT INTO k (id, note) VALUES (@p1, @p2)", 11, "rolled back")
	mustExec(conn, "ROLLBACK")
	eq("a rolled-back insert is gone", scalar(db, count, 11), int64(0))
	conn.Close()

	// The driver's transactions: Transaction Manager requests.
	tx, err := db.BeginTx(ctx, nil)
	if !ok("BeginTx", err) {
		return
	}
	eq("@@TRANCOUNT in BeginTx", scalar(tx, "SELECT @@TRANCOUNT"), int64(1))
	mustExec(tx, "INSERT INTO k (id, note) VALUES (@p1, @p2)", 20, "rollback")
	ok("Rollback", tx.Rollback())
	eq("Rollback undid the insert", scalar(db, count, 20), int64(0))

	tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if !ok("BeginTx read committed", err) {
		return
	}
	mustExec(tx, "INSERT INTO k (id, note) VALUES (@p1, @p2)", 21, "commit")
	ok("Commit", tx.Commit())
	eq("Commit made the insert visible", scalar(db, count, 21), int64(1))

	// A delayed COMMIT inside the driver's transaction ends it: the server's ENVCHANGE (commit
	// transaction) clears the driver's descriptor, so its own Commit then fails on the client.
	tx, err = db.BeginTx(ctx, nil)
	if !ok("BeginTx", err) {
		return
	}
	mustExec(tx, "INSERT INTO k (id, note) VALUES (@p1, @p2)", 22, "delayed")
	mustExec(tx, "COMMIT WITH (DELAYED_DURABILITY = ON)")
	eq("a delayed COMMIT ends the driver's transaction", scalar(db, count, 22), int64(1))
	err = tx.Commit()
	var me mssql.Error
	if !errors.As(err, &me) || !strings.Contains(me.Message, "does not have an active transaction") {
		ok("Commit after the delayed COMMIT knows the transaction ended", fmt.Errorf("got %v", err))
	}
	eq("the connection still works", scalar(db, "SELECT COUNT(*) FROM k"), int64(4))
}

func badInput() {
	db := open(database)
	defer db.Close()
	db.SetMaxOpenConns(1)
	cases := []struct {
		query  string
		args   []any
		number int32
	}{
		{"SELECT 1 +", nil, 102},
		{"SELECT * FROM no_such_table", nil, 208},
		{"SELECT 1 / 0", nil, 8134},
		{"INSERT INTO k (id) VALUES (1)", nil, 2627},
		{"SELECT 1 + @p1 +", []any{1}, 102},
		{"SELECT * FROM no_such_table WHERE id = @p1", []any{1}, 208},
		{"SELECT @p1 / 0", []any{1}, 8134},
		{"INSERT INTO k (id) VALUES (@p1)", []any{1}, 2627},
	}
	for _, inTx := range []bool{false, true} {
		var q interface {
			QueryContext(context.Context, string, ...any) (*sql.Rows, error)
			QueryRowContext(context.Context, string, ...any) *sql.Row
		} = db
		var tx *sql.Tx
		mode := "autocommit"
		if inTx {
			var err error
			tx, err = db.BeginTx(ctx, nil)
			if !ok("BeginTx", err) {
				return
			}
			q, mode = tx, "transaction"
		}
		for _, c := range cases {
			rows, err := q.QueryContext(ctx, c.query, c.args...)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			var me mssql.Error
			if errors.As(err, &me) {
				eq(fmt.Sprintf("%s: error number of %q", mode, c.query), me.Number, c.number)
			} else {
				ok(fmt.Sprintf("%s: %q gives error %d", mode, c.query, c.number), fmt.Errorf("got %v", err))
			}
			eq(fmt.Sprintf("%s: the connection works after %d", mode, c.number), scalar(q, "SELECT 7"), int64(7))
		}
		if tx != nil {
			ok("Rollback after the errors", tx.Rollback())
		}
	}
}

// An xml column read (XMLTYPE in COLMETADATA and ROW). go-mssqldb has no xml parameter type:
// a string parameter is NVARCHAR, which the server converts to xml where xml is wanted.
func xmlType() {
	db := open(database)
	defer db.Close()
	mustExec(db, "CREATE TABLE xdocs_g (id INT PRIMARY KEY, body XML)")
	mustExec(db, "INSERT INTO xdocs_g VALUES (1, @p1)", "<a  n='1'><b>x &amp; y</b></a>")
	rows, err := db.QueryContext(ctx, "SELECT body, body.value('(/a/@n)[1]', 'int') FROM xdocs_g")
	if !ok("xml query", err) {
		return
	}
	defer rows.Close()
	types, _ := rows.ColumnTypes()
	eq("the column's type", types[0].DatabaseTypeName(), "XML")
	var body string
	var n int
	if !rows.Next() {
		ok("a row", fmt.Errorf("no row: %v", rows.Err()))
		return
	}
	if ok("scan", rows.Scan(&body, &n)) {
		eq("an xml column's canonical text", body, `<a n="1"><b>x &amp; y</b></a>`)
		eq("value() over it", n, 1)
	}
	eq("nodes() of a converted parameter",
		scalar(db, "DECLARE @x xml = @p1; SELECT SUM(t.c.value('.', 'int')) FROM @x.nodes('/r/i') AS t(c)",
			"<r><i>3</i><i>4</i></r>"), int64(7))
}

// declaredTypes: SMALLDATETIME, SMALLMONEY, TEXT, NTEXT and IMAGE columns come back as
// themselves (DATETIMN 4, MONEYN 4, the text types with their text pointers), with their
// values, whether the rows were written from literals or from parameters.
func declaredTypes() {
	db := open(database)
	defer db.Close()
	mustExec(db, "CREATE TABLE legacy_g (id INT PRIMARY KEY, sd SMALLDATETIME, sm SMALLMONEY, "+
		"tx TEXT, nt NTEXT, im IMAGE)")
	mustExec(db, "INSERT INTO legacy_g VALUES (1, '2024-02-29 13:45:31', 214748.3647, 'plain', "+
		"N'"+unicodeText+"', 0xCAFE)")
	at := time.Date(2024, 3, 1, 8, 15, 29, 0, time.UTC)
	mustExec(db, "INSERT INTO legacy_g VALUES (2, @p1, @p2, @p3, @p4, @p5)",
		mssql.DateTime1(at), "-12.3456", longText, unicodeText, []byte{1, 2, 3})
	mustExec(db, "INSERT INTO legacy_g (id) VALUES (3)")
	rows, err := db.QueryContext(ctx, "SELECT sd, sm, tx, nt, im FROM legacy_g ORDER BY id")
	if !ok("query", err) {
		return
	}
	defer rows.Close()
	types, _ := rows.ColumnTypes()
	var names []string
	for _, t := range types {
		names = append(names, t.DatabaseTypeName())
	}
	eq("the columns' types", names, []string{"SMALLDATETIME", "SMALLMONEY", "TEXT", "NTEXT", "IMAGE"})
	type row struct {
		sd     sql.NullTime
		sm     []byte
		tx, nt sql.NullString
		im     []byte
	}
	var got []row
	for rows.Next() {
		var r row
		if ok("scan", rows.Scan(&r.sd, &r.sm, &r.tx, &r.nt, &r.im)) {
			got = append(got, r)
		}
	}
	if !ok("rows", rows.Err()) || len(got) != 3 {
		eq("rows read", len(got), 3)
		return
	}
	eq("a SMALLDATETIME literal, rounded up to the minute", got[0].sd.Time,
		time.Date(2024, 2, 29, 13, 46, 0, 0, time.UTC))
	eq("a SMALLDATETIME parameter, rounded down", got[1].sd.Time, time.Date(2024, 3, 1, 8, 15, 0, 0, time.UTC))
	eq("SMALLMONEY's largest value", string(got[0].sm), "214748.3647")
	eq("a SMALLMONEY parameter", string(got[1].sm), "-12.3456")
	eq("TEXT", got[0].tx.String, "plain")
	eq("a long TEXT parameter", got[1].tx.String, longText)
	eq("NTEXT", got[0].nt.String, unicodeText)
	eq("an NTEXT parameter", got[1].nt.String, unicodeText)
	eq("IMAGE", got[0].im, []byte{0xCA, 0xFE})
	eq("an IMAGE parameter", got[1].im, []byte{1, 2, 3})
	eq("NULLs", []bool{got[2].sd.Valid, got[2].sm == nil, got[2].tx.Valid, got[2].nt.Valid, got[2].im == nil},
		[]bool{false, true, false, false, true})
	_, err = db.ExecContext(ctx, "INSERT INTO legacy_g (id, sm) VALUES (4, 214748.3648)")
	checked++
	var sqlErr mssql.Error
	if !errors.As(err, &sqlErr) || sqlErr.Number != 8115 {
		failures++
		fmt.Printf("FAIL a SMALLMONEY out of range: got %v, expected error 8115\n", err)
	}
	eq("sys.columns' type names",
		scalar(db, "SELECT STRING_AGG(t.name, ',') WITHIN GROUP (ORDER BY c.column_id) FROM sys.columns c "+
			"JOIN sys.types t ON t.user_type_id = c.user_type_id WHERE c.object_id = OBJECT_ID('legacy_g')"),
		"int,smalldatetime,smallmoney,text,ntext,image")

	// Variables and casts of these types are typed as themselves too, their values fitted.
	vars, err := db.QueryContext(ctx, "DECLARE @d SMALLDATETIME = '2020-01-01 10:00:40', "+
		"@m SMALLMONEY = 1.23456; SELECT @d, @m, CAST('x' AS TEXT), CONVERT(NTEXT, N'y'), "+
		"CAST(0x01 AS IMAGE)")
	if !ok("variables", err) {
		return
	}
	defer vars.Close()
	types, _ = vars.ColumnTypes()
	names = nil
	for _, t := range types {
		names = append(names, t.DatabaseTypeName())
	}
	eq("variables' and casts' types", names, []string{"SMALLDATETIME", "SMALLMONEY", "TEXT", "NTEXT", "IMAGE"})
	var r row
	if vars.Next() && ok("scan variables", vars.Scan(&r.sd, &r.sm, &r.tx, &r.nt, &r.im)) {
		eq("a SMALLDATETIME variable, rounded on assignment", r.sd.Time, time.Date(2020, 1, 1, 10, 1, 0, 0, time.UTC))
		eq("a SMALLMONEY variable", string(r.sm), "1.2346")
		eq("CAST AS TEXT", r.tx.String, "x")
		eq("CONVERT to NTEXT", r.nt.String, "y")
		eq("CAST AS IMAGE", r.im, []byte{1})
	} else {
		checked++
		failures++
		fmt.Printf("FAIL variables: no row (%v)\n", vars.Err())
	}
	declaredExpressions(db)
}

// declaredExpressions: expressions over those columns are typed as SQL Server types them
// (data type precedence; ISNULL takes its first argument's type; MIN, MAX and DATEADD keep
// theirs; SUM and AVG of SMALLMONEY are MONEY), and so are a UNION's, a view's and a derived
// table's columns.
func declaredExpressions(db *sql.DB) {
	cases := []struct{ expr, typ string }{
		{"sd + 1", "SMALLDATETIME"},
		{"ISNULL(sd, GETDATE())", "SMALLDATETIME"},
		{"COALESCE(sd, '2020-01-01')", "SMALLDATETIME"},
		{"CASE WHEN id = 2 THEN sd END", "SMALLDATETIME"},
		{"DATEADD(MINUTE, 5, sd)", "SMALLDATETIME"},
		{"sd + CAST(0 AS DATETIME)", "DATETIME"},
		{"sm * 2", "SMALLMONEY"},
		{"ISNULL(sm, 0)", "SMALLMONEY"},
		{"sm + $1", "MONEY"},
		{"ISNULL(tx, 'x')", "TEXT"},
		{"COALESCE(nt, N'y')", "NTEXT"},
		{"CASE WHEN id > 0 THEN im END", "IMAGE"},
	}
	var exprs, want []string
	for _, c := range cases {
		exprs = append(exprs, c.expr)
		want = append(want, c.typ)
	}
	typesOf := func(query string) []string {
		rows, err := db.QueryContext(ctx, query)
		if !ok(query, err) {
			return nil
		}
		defer rows.Close()
		types, _ := rows.ColumnTypes()
		var names []string
		for _, t := range types {
			names = append(names, t.DatabaseTypeName())
		}
		for rows.Next() {
		}
		ok(query+": rows", rows.Err())
		return names
	}
	// Row 2: row 1's SMALLMONEY is the largest, which sm * 2 overflows.
	eq("expressions' types", typesOf("SELECT "+strings.Join(exprs, ", ")+" FROM legacy_g WHERE id = 2"), want)
	eq("aggregates' types", typesOf("SELECT MIN(sd), MAX(sm), SUM(sm), AVG(sm) FROM legacy_g"),
		[]string{"SMALLDATETIME", "SMALLMONEY", "MONEY", "MONEY"})
	mustExec(db, "CREATE VIEW legacy_gv AS SELECT id, sd + 1 AS next_day, ISNULL(sm, 0) AS amount FROM legacy_g")
	eq("a UNION's, a view's and a derived table's types",
		typesOf("SELECT u.x, v.next_day, v.amount FROM (SELECT sd AS x FROM legacy_g UNION ALL SELECT NULL) u "+
			"CROSS JOIN (SELECT next_day, amount FROM legacy_gv WHERE id = 1) v"),
		[]string{"SMALLDATETIME", "SMALLDATETIME", "SMALLMONEY"})
}

func main() {
	host = arg(1, "WALDEN_HOST", "127.0.0.1")
	port = arg(2, "WALDEN_PORT", "1433")
	password = arg(3, "WALDEN_PASSWORD", "")
	database = arg(4, "WALDEN_DATABASE", "drivers")
	section("setup", setup)
	section("types", typesQuery)
	section("parameters", parameters)
	section("conformance", conformance)
	section("procedure", procedureCall)
	section("table-valued parameters", tableValuedParameters)
	section("transactions", transactions)
	section("bad input", badInput)
	section("bulk copy", bulkCopy)
	section("xml", xmlType)
	section("declared types", declaredTypes)
	fmt.Printf("go-mssqldb: %d checks, %d failures\n", checked, failures)
	if failures > 0 {
		os.Exit(1)
	}
}
