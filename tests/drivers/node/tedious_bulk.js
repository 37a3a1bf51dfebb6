// tedious' bulk load (connection.newBulkLoad / execBulkLoad: INSERT BULK and a Bulk Load
// message) against `walden serve`. Called by tedious_test.js with its helpers.
'use strict';

const { TYPES } = require('tedious');

function load(connection, table, options, columns, rows) {
  return new Promise((resolve, reject) => {
    const bulk = connection.newBulkLoad(table, options, (err, rowCount) =>
      err ? reject(err) : resolve(rowCount),
    );
    for (const [name, type, opts] of columns) bulk.addColumn(name, type, opts);
    connection.execBulkLoad(bulk, rows);
  });
}

async function bulkCopy({ connect, close, run, scalar, eq, fail, DATABASE, UNICODE_TEXT }) {
  const db = await connect(DATABASE);
  await run(db,
    'CREATE TABLE bulk_js (id INT NOT NULL PRIMARY KEY, name NVARCHAR(60) NULL, ' +
    "amount DECIMAL(12,2) NULL, day DATE NULL, note NVARCHAR(10) NULL DEFAULT N'dflt')");
  const columns = [
    ['id', TYPES.Int, { nullable: false }],
    ['name', TYPES.NVarChar, { length: 60, nullable: true }],
    ['amount', TYPES.Decimal, { precision: 12, scale: 2, nullable: true }],
    ['day', TYPES.Date, { nullable: true }],
    ['note', TYPES.NVarChar, { length: 10, nullable: true }],
  ];
  const rows = [];
  for (let i = 1; i <= 3000; i++) {
    rows.push([i, i % 10 === 0 ? null : `${UNICODE_TEXT} ${i}`, i + 0.5, new Date(Date.UTC(2024, 1, 29)), null]);
  }
  eq('rows execBulkLoad reports', await load(db, 'bulk_js', {}, columns, rows), 3000);
  eq('rows in the table', await scalar(db, 'SELECT COUNT(*) FROM bulk_js'), 3000);
  eq('NULL names kept', await scalar(db, 'SELECT COUNT(*) FROM bulk_js WHERE name IS NULL'), 300);
  eq('a unicode name', await scalar(db, 'SELECT name FROM bulk_js WHERE id = 7'), `${UNICODE_TEXT} 7`);
  eq('a decimal', await scalar(db, 'SELECT CAST(amount AS VARCHAR(20)) FROM bulk_js WHERE id = 12'), '12.50');
  eq('a date', await scalar(db, "SELECT CONVERT(VARCHAR(10), day, 23) FROM bulk_js WHERE id = 1"), '2024-02-29');
  eq('NULL takes the default without keepNulls',
    await scalar(db, "SELECT COUNT(*) FROM bulk_js WHERE note = N'dflt'"), 3000);
  eq('rows with keepNulls',
    await load(db, 'bulk_js', { keepNulls: true }, columns, [[5000, 'k', null, null, null]]), 1);
  eq('NULL kept with keepNulls', await scalar(db, 'SELECT COUNT(*) FROM bulk_js WHERE note IS NULL'), 1);
  try {
    await load(db, 'bulk_js', {}, columns, [[6000, 'a', null, null, null], [7, 'dup', null, null, null]]);
    fail('a duplicate key in a bulk load raised no error');
  } catch (e) {
    eq('the duplicate key error number', e.number, 2627);
  }
  eq('the failed load left nothing', await scalar(db, 'SELECT COUNT(*) FROM bulk_js WHERE id = 6000'), 0);
  eq('the connection works after the failed load', await scalar(db, 'SELECT COUNT(*) FROM bulk_js'), 3001);
  await close(db);
}

module.exports = { bulkCopy };
