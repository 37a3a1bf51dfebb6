// The bulk copy (mssql.CopyIn: INSERT BULK and a Bulk Load message) against `walden serve`.
package main

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

// copyIn loads rows into table through conn with mssql.CopyIn; the rows it reports and
// the error of the final Exec (where the server answers).
func copyIn(conn *sql.Conn, table string, opts mssql.BulkOptions, columns []string, rows [][]any) (int64, error) {
	stmt, err := conn.PrepareContext(ctx, mssql.CopyIn(table, opts, columns...))
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	for _, row := range rows {
		if _, err := stmt.ExecContext(ctx, row...); err != nil {
			return 0, err
		}
	}
	res, err := stmt.ExecContext(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func bulkCopy() {
	db := open(database)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if !ok("a dedicated connection", err) {
		return
	}
	defer conn.Close()
	mustExec(conn, "CREATE TABLE bulk_go (id INT NOT NULL PRIMARY KEY, name NVARCHAR(50) NULL, "+
		"amount DECIMAL(12,2) NULL, created DATETIME2 NULL, day DATE NULL, flag BIT NULL, "+
		"note NVARCHAR(20) NULL DEFAULT N'dflt', qty INT NULL CHECK (qty > 0))")
	mustExec(conn, "CREATE TABLE bulk_go_audit (n INT)")
	mustExec(conn, "CREATE TRIGGER bulk_go_ins ON bulk_go AFTER INSERT AS "+
		"SET NOCOUNT ON; INSERT INTO bulk_go_audit SELECT COUNT(*) FROM inserted")
	columns := []string{"id", "name", "amount", "created", "day", "flag", "note", "qty"}
	when := time.Date(2024, 2, 29, 13, 45, 56, 123456700, time.UTC)
	rows := make([][]any, 2500)
	for i := range rows {
		var name any = fmt.Sprintf("%s #%d", unicodeText, i)
		if i%10 == 0 {
			name = nil
		}
		rows[i] = []any{i, name, fmt.Sprintf("%d.%02d", i, i%100), when, when, i%2 == 0, nil, i + 1}
	}
	n, err := copyIn(conn, "bulk_go", mssql.BulkOptions{RowsPerBatch: 2500}, columns, rows)
	if ok("CopyIn of 2,500 rows", err) {
		eq("rows CopyIn reports", n, int64(2500))
	}
	eq("rows in the table", scalar(conn, "SELECT COUNT(*) FROM bulk_go"), int64(2500))
	eq("NULL names kept (no default)", scalar(conn, "SELECT COUNT(*) FROM bulk_go WHERE name IS NULL"), int64(250))
	eq("a unicode name", scalar(conn, "SELECT name FROM bulk_go WHERE id = 7"), unicodeText+" #7")
	eq("a decimal", scalar(conn, "SELECT CAST(amount AS VARCHAR(20)) FROM bulk_go WHERE id = 1234"), "1234.34")
	eq("a datetime2", scalar(conn, "SELECT CONVERT(VARCHAR(30), created, 121) FROM bulk_go WHERE id = 3"), "2024-02-29 13:45:56.1234567")
	eq("NULL takes the default without KEEP_NULLS", scalar(conn, "SELECT COUNT(*) FROM bulk_go WHERE note = N'dflt'"), int64(2500))
	eq("no trigger without FIRE_TRIGGERS", scalar(conn, "SELECT COUNT(*) FROM bulk_go_audit"), int64(0))

	// KEEP_NULLS, FIRE_TRIGGERS, and CHECK constraints unchecked without CHECK_CONSTRAINTS.
	more := [][]any{{5000, "a", nil, nil, nil, nil, nil, -1}, {5001, "b", nil, nil, nil, nil, nil, 0}}
	n, err = copyIn(conn, "bulk_go", mssql.BulkOptions{KeepNulls: true, FireTriggers: true, Tablock: true}, columns, more)
	if ok("CopyIn with KEEP_NULLS, FIRE_TRIGGERS and TABLOCK", err) {
		eq("rows of the second load", n, int64(2))
	}
	eq("NULL kept with KEEP_NULLS", scalar(conn, "SELECT COUNT(*) FROM bulk_go WHERE id >= 5000 AND note IS NULL"), int64(2))
	eq("the trigger fired once for the load", scalar(conn, "SELECT SUM(n) FROM bulk_go_audit"), int64(2))

	// Errors: the load is undone and the connection goes on.
	_, err = copyIn(conn, "bulk_go", mssql.BulkOptions{CheckConstraints: true}, columns,
		[][]any{{6000, "c", nil, nil, nil, nil, nil, 5}, {6001, "d", nil, nil, nil, nil, nil, -5}})
	eq("a CHECK violation with CHECK_CONSTRAINTS fails with 547", err != nil && strings.Contains(err.Error(), "CHECK constraint"), true)
	_, err = copyIn(conn, "bulk_go", mssql.BulkOptions{}, columns,
		[][]any{{7000, "e", nil, nil, nil, nil, nil, 1}, {7, "dup", nil, nil, nil, nil, nil, 1}})
	var sqlErr mssql.Error
	if eq("a duplicate key fails", err != nil, true); err != nil && errors.As(err, &sqlErr) {
		eq("the duplicate key's error number", sqlErr.Number, int32(2627))
	}
	eq("nothing of the failed loads is left", scalar(conn, "SELECT COUNT(*) FROM bulk_go WHERE id >= 6000"), int64(0))
	eq("the connection is usable after the failed load", scalar(conn, "SELECT COUNT(*) FROM bulk_go"), int64(2502))

	// In a transaction that is rolled back, the load goes with it.
	tx, err := conn.BeginTx(ctx, nil)
	if ok("BEGIN TRAN for a bulk load", err) {
		stmt, err := tx.PrepareContext(ctx, mssql.CopyIn("bulk_go", mssql.BulkOptions{}, "id", "name"))
		if ok("CopyIn in a transaction", err) {
			for i := 8000; i < 8100; i++ {
				_, err = stmt.ExecContext(ctx, i, "tx")
			}
			_, err = stmt.ExecContext(ctx)
			ok("the load in the transaction", err)
			stmt.Close()
		}
		ok("ROLLBACK", tx.Rollback())
	}
	eq("the rolled-back load is gone", scalar(conn, "SELECT COUNT(*) FROM bulk_go WHERE id >= 8000"), int64(0))
	_, err = copyIn(conn, "bulk_go", mssql.BulkOptions{}, []string{"id", "no_such_column"}, [][]any{{1, 2}})
	eq("an unknown column fails", err != nil, true)
}
