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

  // Issue 28: TEXT, NTEXT and IMAGE columns, whose COLMETADATA entries carry the table name.
  await run(db, 'CREATE TABLE bulk_lob (id INT NOT NULL PRIMARY KEY, t TEXT NULL, n NTEXT NULL, i IMAGE NULL)');
  const lobColumns = [
    ['id', TYPES.Int, { nullable: false }],
    ['t', TYPES.Text, { nullable: true }],
    ['n', TYPES.NText, { nullable: true }],
    ['i', TYPES.Image, { nullable: true }],
  ];
  eq('rows loaded into TEXT, NTEXT and IMAGE columns', await load(db, 'bulk_lob', {}, lobColumns, [
    [1, 'some text', UNICODE_TEXT, Buffer.from([0xde, 0xad, 0xbe, 0xef])],
    [2, null, null, null],
  ]), 2);
  eq('TEXT, NTEXT and IMAGE values loaded', (await run(db,
    'SELECT CAST(t AS VARCHAR(20)), CAST(n AS NVARCHAR(40)), CAST(i AS VARBINARY(4)) FROM bulk_lob ORDER BY id')).rows,
  [['some text', UNICODE_TEXT, Buffer.from([0xde, 0xad, 0xbe, 0xef])], [null, null, null]]);

  // ORDER naming the clustered key is a promise (4819 with the two keys); on a heap it is
  // ignored, as SQL Server ignores it.
  const orderColumns = [['id', TYPES.Int, { nullable: false }], ['name', TYPES.NVarChar, { length: 20, nullable: false }]];
  const unsorted = [[1, 'a'], [3, 'c'], [2, 'b']];
  await run(db, 'CREATE TABLE bulk_keyed (id INT NOT NULL PRIMARY KEY CLUSTERED, name NVARCHAR(20) NOT NULL)');
  try {
    await load(db, 'bulk_keyed', { order: { id: 'ASC' } }, orderColumns, unsorted);
    fail('rows out of the ORDER of the clustered key raised no error');
  } catch (e) {
    eq('the out-of-order error', [e.number, e.message.slice(e.message.indexOf('Sort order'))],
      [4819, 'Sort order incorrect for the following two rows: primary key of first row: (3), primary key of second row: (2).']);
  }
  eq('the out-of-order load left nothing', await scalar(db, 'SELECT COUNT(*) FROM bulk_keyed'), 0);
  await run(db, 'CREATE TABLE bulk_heap (id INT NOT NULL, name NVARCHAR(20) NOT NULL)');
  eq('ORDER on a heap is ignored', await load(db, 'bulk_heap', { order: { id: 'ASC' } }, orderColumns, unsorted), 3);
  await close(db);
}

module.exports = { bulkCopy };
