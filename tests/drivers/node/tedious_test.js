// tedious against `walden serve`.
//
// Usage: node tedious_test.js HOST PORT PASSWORD [DATABASE] (or $WALDEN_HOST, $WALDEN_PORT,
// $WALDEN_PASSWORD, $WALDEN_DATABASE). Prints one line per section and a FAIL line per failed
// check; exits 1 if any check failed.
//
// Connection options: encrypt: false. execSqlBatch sends a SQL batch, execSql an sp_executesql
// RPC with typed parameters, callProcedure an RPC to the procedure by name;
// beginTransaction / commitTransaction / rollbackTransaction are Transaction Manager requests.
'use strict';

const assert = require('node:assert');
const util = require('node:util');
const { Connection, Request, TYPES } = require('tedious');
const { bulkCopy } = require('./tedious_bulk.js');

const arg = (i, env, def) => {
  const v = process.argv[i + 1] ?? process.env[env] ?? def;
  if (v === undefined) {
    console.error(`usage: node tedious_test.js HOST PORT PASSWORD [DATABASE] (or $${env})`);
    process.exit(2);
  }
  return v;
};
const HOST = arg(1, 'WALDEN_HOST', '127.0.0.1');
const PORT = Number(arg(2, 'WALDEN_PORT', '1433'));
const PASSWORD = arg(3, 'WALDEN_PASSWORD');
const DATABASE = arg(4, 'WALDEN_DATABASE', 'drivers');

// NVARCHAR text beyond Latin-1 and beyond the BMP (a UTF-16 surrogate pair).
const UNICODE_TEXT = 'Grüße, 日本語 ✓ \u{1F600}';
const LONG_TEXT = 'walden-'.repeat(3000) + 'é';

const TYPES_SELECT =
  'SELECT CAST(42 AS INT) AS i, CAST(9007199254740993 AS BIGINT) AS b, CAST(1 AS BIT) AS f, ' +
  'CAST(12345678.91 AS DECIMAL(10,2)) AS d, CAST(-2.5 AS FLOAT) AS x, ' +
  `CAST('abc' AS VARCHAR(20)) AS v, N'${UNICODE_TEXT}' AS n, ` +
  "REPLICATE(CAST(N'walden-' AS NVARCHAR(MAX)), 3000) + N'é' AS nmax, " +
  "CAST(0xDEADBEEF00 AS VARBINARY(16)) AS vb, CAST('2024-02-29' AS DATE) AS dt, " +
  "CAST('2024-02-29 13:45:56.1234567' AS DATETIME2) AS dt2, " +
  "CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS UNIQUEIDENTIFIER) AS g, " +
  'CAST(NULL AS INT) AS ni, CAST(NULL AS NVARCHAR(10)) AS nn, CAST(NULL AS DATE) AS nd';

const TYPES_TABLE =
  'CREATE TABLE types_t (i INT NOT NULL PRIMARY KEY, b BIGINT, f BIT, d DECIMAL(10,2), ' +
  'x FLOAT, v VARCHAR(20), n NVARCHAR(40), nmax NVARCHAR(MAX), vb VARBINARY(16), dt DATE, ' +
  'dt2 DATETIME2, g UNIQUEIDENTIFIER, ni INT, nn NVARCHAR(10), nd DATE)';

const PROCEDURE =
  'CREATE PROCEDURE add_one @a INT, @b INT OUTPUT AS BEGIN SET @b = @a + 1; RETURN @a * 2 END';

let failures = 0;
let checked = 0;

function eq(what, got, expected) {
  checked++;
  try {
    assert.deepStrictEqual(got, expected);
  } catch {
    failures++;
    const show = (v) => {
      const s = typeof v === 'string' ? JSON.stringify(v) : util.inspect(v, { breakLength: Infinity });
      return s.length > 400 ? s.slice(0, 400) + '...' : s;
    };
    console.log(`FAIL ${what}: got ${show(got)}, expected ${show(expected)}`);
  }
}

function fail(what) {
  checked++;
  failures++;
  console.log(`FAIL ${what}`);
}

async function section(name, fn) {
  const before = failures;
  try {
    await fn();
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
  }
  console.log(`tedious: ${name}: ${failures === before ? 'ok' : 'FAILED'}`);
}

// `options` are more connection options (tedious turns datefirst, dateFormat, textsize...
// into SET statements of its login batch).
function connect(database = 'master', options = {}) {
  const connection = new Connection({
    server: HOST,
    authentication: { type: 'default', options: { userName: 'sa', password: PASSWORD } },
    options: {
      port: PORT,
      database,
      encrypt: false,
      connectTimeout: 10000,
      requestTimeout: 30000,
      ...options,
    },
  });
  return new Promise((resolve, reject) => {
    connection.on('connect', (err) => (err ? reject(err) : resolve(connection)));
    connection.connect();
  });
}

function close(connection) {
  return new Promise((resolve) => {
    connection.on('end', resolve);
    connection.close();
  });
}

// Runs `sql`: a batch without parameters, else sp_executesql with `params`
// ([name, TYPE, value, options]). Resolves to { rows, rowCount, returnValues, returnStatus }.
function run(connection, sql, params, how = params ? 'execSql' : 'execSqlBatch') {
  return new Promise((resolve, reject) => {
    const rows = [];
    const returnValues = {};
    let returnStatus;
    const request = new Request(sql, (err, rowCount) => {
      if (err) reject(err);
      else resolve({ rows, rowCount, returnValues, returnStatus });
    });
    for (const [name, type, value, options] of params || []) {
      if (options && options.output) request.addOutputParameter(name, type, value, options);
      else request.addParameter(name, type, value, options);
    }
    request.on('row', (columns) => rows.push(columns.map((c) => c.value)));
    request.on('returnValue', (name, value) => (returnValues[name] = value));
    request.on('doneProc', (_rowCount, _more, status) => (returnStatus = status));
    connection[how](request);
  });
}

async function scalar(connection, sql, params) {
  const { rows } = await run(connection, sql, params);
  return rows[0][0];
}

const tx = (connection, method, ...rest) =>
  new Promise((resolve, reject) =>
    connection[method]((err) => (err ? reject(err) : resolve()), ...rest),
  );

async function setup() {
  const master = await connect();
  await run(master, `CREATE DATABASE [${DATABASE}]`);
  await run(master, `ALTER DATABASE [${DATABASE}] SET DELAYED_DURABILITY = ALLOWED`);
  await close(master);
  const db = await connect(DATABASE);
  eq('DB_NAME() after a login to the new database', await scalar(db, 'SELECT DB_NAME()'), DATABASE);
  await run(db, TYPES_TABLE);
  await run(db, 'CREATE TABLE k (id INT NOT NULL PRIMARY KEY, note NVARCHAR(20))');
  await run(db, "INSERT INTO k (id, note) VALUES (1, N'first')");
  await run(db, PROCEDURE);
  await close(db);
}

// The values of TYPES_SELECT's row as tedious gives them: BIGINT as a string, DECIMAL as a
// number, DATE and DATETIME2 as UTC Dates (DATETIME2's last 100 ns digits in nanosecondsDelta).
function checkTypesRow(what, row) {
  const names = ['i', 'b', 'f', 'd', 'x', 'v', 'n', 'nmax', 'vb'];
  const expected = [42, '9007199254740993', true, 12345678.91, -2.5, 'abc', UNICODE_TEXT,
    LONG_TEXT, Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00])];
  names.forEach((name, i) => eq(`${what} ${name}`, row[i], expected[i]));
  eq(`${what} dt`, row[9] instanceof Date && row[9].toISOString(), '2024-02-29T00:00:00.000Z');
  eq(`${what} dt2`, row[10] instanceof Date && row[10].toISOString(), '2024-02-29T13:45:56.123Z');
  eq(`${what} dt2 below the millisecond`, row[10] && Math.round(row[10].nanosecondsDelta * 1e7),
    4567);
  eq(`${what} g`, row[11], '6F9619FF-8B86-D011-B42D-00C04FC964FF');
  eq(`${what} NULLs`, row.slice(12), [null, null, null]);
}

async function typesQuery() {
  const db = await connect(DATABASE);
  const columns = [];
  const { rows } = await new Promise((resolve, reject) => {
    const got = [];
    const request = new Request(TYPES_SELECT, (err) => (err ? reject(err) : resolve({ rows: got })));
    request.on('columnMetadata', (meta) => {
      for (const c of meta) columns.push([c.colName, c.type.name]);
    });
    request.on('row', (cols) => got.push(cols.map((c) => c.value)));
    db.execSqlBatch(request);
  });
  eq('column names and types', columns, [
    ['i', 'IntN'], ['b', 'IntN'], ['f', 'BitN'], ['d', 'DecimalN'], ['x', 'FloatN'],
    ['v', 'VarChar'], ['n', 'NVarChar'], ['nmax', 'NVarChar'], ['vb', 'VarBinary'],
    ['dt', 'Date'], ['dt2', 'DateTime2'], ['g', 'UniqueIdentifier'], ['ni', 'IntN'],
    ['nn', 'NVarChar'], ['nd', 'Date'],
  ]);
  eq('one row', rows.length, 1);
  if (rows.length) checkTypesRow('column', rows[0]);
  await close(db);
}

// DATETIMEOFFSET arrives as the moment it names (a Date), and each SQL_VARIANT as its base
// type's value; a DATETIMEOFFSET parameter keeps its moment.
async function newerTypes() {
  const db = await connect(DATABASE);
  const { rows } = await run(
    db,
    "SELECT CAST('2024-03-01 08:30:00.125 +02:00' AS DATETIMEOFFSET(3)), CAST(42 AS SQL_VARIANT), " +
      "CAST(N'text' AS SQL_VARIANT), CAST(NULL AS SQL_VARIANT)",
  );
  const [dto, vi, vn, vz] = rows[0];
  eq('DATETIMEOFFSET', dto instanceof Date ? dto.toISOString() : dto, '2024-03-01T06:30:00.125Z');
  eq('SQL_VARIANT values', [vi, vn, vz], [42, 'text', null]);
  const same = await scalar(
    db,
    "SELECT CASE WHEN @p = CAST('2024-03-01 06:30:00 +00:00' AS DATETIMEOFFSET) THEN 1 ELSE 0 END",
    [['p', TYPES.DateTimeOffset, new Date('2024-03-01T06:30:00Z')]],
  );
  eq('a DATETIMEOFFSET parameter', same, 1);
  await close(db);
}

// Issue 28: DATETIME and SMALLDATETIME parameters keep their value (seconds, 1/300 s ticks),
// MONEY and SMALLMONEY their four decimals, TEXT, NTEXT and IMAGE parameters are taken, and
// a request cancelled while tedious is still sending it (the IGNORE bit) or just after (an
// attention) ends with ECANCEL and leaves the connection usable.
async function legacyTypesAndCancel() {
  const db = await connect(DATABASE);
  const at = new Date(Date.UTC(2024, 0, 2, 22, 4, 5, 997));
  eq('a DATETIME parameter keeps its seconds',
    await scalar(db, 'SELECT CONVERT(VARCHAR(23), @d, 121)', [['d', TYPES.DateTime, at]]),
    '2024-01-02 22:04:05.997');
  eq('a SMALLDATETIME parameter',
    await scalar(db, 'SELECT CONVERT(VARCHAR(23), @d, 121)',
      [['d', TYPES.SmallDateTime, new Date(Date.UTC(2024, 0, 2, 22, 4, 0))]]),
    '2024-01-02 22:04:00.000');
  const { rows } = await run(db, 'SELECT CONVERT(VARCHAR(30), @m, 2), CONVERT(VARCHAR(30), @s, 2)',
    // 1234.0625 is exact as a double: tedious truncates value * 10000 to an integer.
    [['m', TYPES.Money, 1234.0625], ['s', TYPES.SmallMoney, -7.0001]]);
  eq('MONEY and SMALLMONEY parameters keep 4 decimals', rows[0], ['1234.0625', '-7.0001']);
  const lobs = await run(db, 'SELECT @t, @n, @i', [
    ['t', TYPES.Text, 'abc'],
    ['n', TYPES.NText, 'd\u00e9f'],
    ['i', TYPES.Image, Buffer.from([1, 2])],
  ]);
  eq('TEXT, NTEXT and IMAGE parameters', lobs.rows[0], ['abc', 'd\u00e9f', Buffer.from([1, 2])]);
  const cancelled = await new Promise((resolve) => {
    const request = new Request('SELECT LEN(@big)', (err) => resolve(err));
    request.addParameter('big', TYPES.NVarChar, 'x'.repeat(8 << 20));
    db.execSql(request);
    setImmediate(() => request.cancel());
  });
  eq('a request cancelled while being sent', cancelled && cancelled.code, 'ECANCEL');
  eq('the connection after the cancel', await scalar(db, 'SELECT 1'), 1);
  await close(db);
}

// SMALLDATETIME, SMALLMONEY, TEXT, NTEXT and IMAGE columns arrive as themselves (DATETIMN and
// MONEYN of 4 bytes, the text types), a text column with its own collation, a SMALLDATETIME
// OUTPUT parameter rounded to the minute, and the types' parameters round trip.
async function declaredTypes() {
  const db = await connect(DATABASE);
  await run(db, 'CREATE TABLE legacy_t (id INT PRIMARY KEY, sd SMALLDATETIME, sm SMALLMONEY, ' +
    'tx TEXT, nt NTEXT, im IMAGE, cs VARCHAR(10) COLLATE Latin1_General_CS_AS, ' +
    'ci NVARCHAR(10), sq VARCHAR(10) COLLATE SQL_Latin1_General_CP1_CS_AS)');
  await run(db, 'INSERT INTO legacy_t VALUES (1, @sd, @sm, @tx, @nt, @im, @cs, @ci, @sq)', [
    ['sd', TYPES.SmallDateTime, new Date(Date.UTC(2024, 1, 29, 13, 45, 0))],
    ['sm', TYPES.SmallMoney, -7.0001],
    ['tx', TYPES.Text, 'plain text'],
    ['nt', TYPES.NText, UNICODE_TEXT],
    ['im', TYPES.Image, Buffer.from([0xca, 0xfe])],
    ['cs', TYPES.VarChar, 'AbC'],
    ['ci', TYPES.NVarChar, 'x'],
    ['sq', TYPES.VarChar, 'y'],
  ]);
  await run(db, 'INSERT INTO legacy_t (id) VALUES (2)');
  const meta = [];
  const rows = await new Promise((resolve, reject) => {
    const got = [];
    const request = new Request('SELECT sd, sm, tx, nt, im, cs, ci, sq FROM legacy_t ORDER BY id',
      (err) => (err ? reject(err) : resolve(got)));
    request.on('columnMetadata', (columns) => meta.push(...columns));
    request.on('row', (cols) => got.push(cols.map((c) => c.value)));
    db.execSqlBatch(request);
  });
  eq('the wire types', meta.map((c) => [c.type.name, c.dataLength]).slice(0, 5),
    [['DateTimeN', 4], ['MoneyN', 4], ['Text', 2147483647], ['NText', 2147483646],
      ['Image', 2147483647]]);
  const collation = (c) => c && [c.lcid, c.flags, c.version, c.sortId];
  eq('collations (LCID, flags, version, sort id)', meta.slice(5).map((c) => collation(c.collation)), [
    [0x409, 0x04 | 0x08, 0, 0],
    [0x409, 0x01 | 0x04 | 0x08, 0, 52],
    [0x409, 0x04 | 0x08, 0, 51],
  ]);
  eq('the values', rows[0], [new Date(Date.UTC(2024, 1, 29, 13, 45, 0)), -7.0001, 'plain text',
    UNICODE_TEXT, Buffer.from([0xca, 0xfe]), 'AbC', 'x', 'y']);
  eq('NULLs', rows[1], [null, null, null, null, null, null, null, null]);
  await run(db, 'CREATE PROCEDURE later_sd @d SMALLDATETIME OUTPUT AS ' +
    "SET @d = DATEADD(MILLISECOND, 45500, CAST('2024-03-01 08:15:00' AS DATETIME))");
  const out = await run(db, 'later_sd', [['d', TYPES.SmallDateTime, null, { output: true }]],
    'callProcedure');
  eq('a SMALLDATETIME OUTPUT parameter, rounded to the minute', out.returnValues,
    { d: new Date(Date.UTC(2024, 2, 1, 8, 16, 0)) });
  await run(db, 'CREATE PROCEDURE late_sd @d SMALLDATETIME OUTPUT AS ' +
    "SET @d = CAST('2090-01-01' AS DATETIME)");
  const refused = await run(db, 'late_sd', [['d', TYPES.SmallDateTime, null, { output: true }]],
    'callProcedure').then(() => null, (err) => err);
  eq('a SMALLDATETIME OUTPUT parameter out of range', refused && refused.number, 298);
  eq('the connection after it', await scalar(db, 'SELECT 1'), 1);
  // A variable, CAST and CONVERT of these types: the same wire types, the values fitted.
  const varMeta = [];
  const varRows = await new Promise((resolve, reject) => {
    const got = [];
    const request = new Request("DECLARE @d SMALLDATETIME = '2020-01-01 10:00:40', " +
      "@m SMALLMONEY = 1.23456; SELECT @d, @m, CAST('x' AS TEXT), CONVERT(NTEXT, N'y'), " +
      'CAST(0x01 AS IMAGE)', (err) => (err ? reject(err) : resolve(got)));
    request.on('columnMetadata', (columns) => varMeta.push(...columns));
    request.on('row', (cols) => got.push(cols.map((c) => c.value)));
    db.execSqlBatch(request);
  });
  eq("variables' and casts' wire types", varMeta.map((c) => [c.type.name, c.dataLength]),
    [['DateTimeN', 4], ['MoneyN', 4], ['Text', 2147483647], ['NText', 2147483646],
      ['Image', 2147483647]]);
  eq("variables' and casts' values", varRows[0], [new Date(Date.UTC(2020, 0, 1, 10, 1, 0)),
    1.2346, 'x', 'y', Buffer.from([1])]);
  await close(db);
}

// A VARCHAR column in a UTF-8 collation: its collation carries the UTF-8 flag (0x40 of the
// flags) and its data travels as UTF-8, which tedious decodes by that flag; tedious asks for
// UTF8_SUPPORT at login and is told yes (FEATUREEXTACK). Characters code page 1252 lacks
// come back whole, where a VARCHAR column of the default collation gives '?'.
async function utf8Collation() {
  const db = await connect(DATABASE);
  await run(db, 'CREATE TABLE utf8_t (id INT PRIMARY KEY, ' +
    'u VARCHAR(40) COLLATE Latin1_General_100_CI_AS_SC_UTF8, l VARCHAR(40))');
  await run(db, "INSERT INTO utf8_t VALUES (1, N'\u00e9\u20ac\u0101\u{1F600}', N'\u00e9\u20ac\u0101')");
  const meta = [];
  const rows = await new Promise((resolve, reject) => {
    const got = [];
    const request = new Request('SELECT u, l, DATALENGTH(u) FROM utf8_t',
      (err) => (err ? reject(err) : resolve(got)));
    request.on('columnMetadata', (columns) => meta.push(...columns));
    request.on('row', (cols) => got.push(cols.map((c) => c.value)));
    db.execSqlBatch(request);
  });
  const collation = (c) => c && [c.lcid, c.flags, c.version, c.sortId];
  eq("the UTF-8 column's collation (LCID, flags, version, sort id)", collation(meta[0].collation),
    [0x409, 0x01 | 0x04 | 0x08 | 0x40, 1, 0]);
  eq('the values', rows[0], ['\u00e9\u20ac\u0101\u{1F600}', '\u00e9\u20ac?', 11]);
  await close(db);
}

async function parameters() {
  const db = await connect(DATABASE);
  const params = [
    ['i', TYPES.Int, 100],
    ['b', TYPES.BigInt, '9007199254740993'],
    ['f', TYPES.Bit, true],
    ['d', TYPES.Decimal, 12345678.91, { precision: 10, scale: 2 }],
    ['x', TYPES.Float, -2.5],
    ['v', TYPES.VarChar, 'abc'],
    ['n', TYPES.NVarChar, UNICODE_TEXT],
    ['nmax', TYPES.NVarChar, LONG_TEXT],
    ['vb', TYPES.VarBinary, Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00])],
    ['dt', TYPES.Date, new Date(Date.UTC(2024, 1, 29))],
    ['dt2', TYPES.DateTime2, Object.assign(new Date(Date.UTC(2024, 1, 29, 13, 45, 56, 123)),
      { nanosecondDelta: 0.0004567 }), { scale: 7 }],
    ['g', TYPES.UniqueIdentifier, '6F9619FF-8B86-D011-B42D-00C04FC964FF'],
    ['ni', TYPES.Int, null],
    ['nn', TYPES.NVarChar, null],
    ['nd', TYPES.Date, null],
  ];
  const marks = params.map(([name]) => `@${name}`).join(', ');
  const inserted = await run(db, `INSERT INTO types_t VALUES (${marks})`, params);
  eq('INSERT rowCount', inserted.rowCount, 1);
  const { rows } = await run(db, 'SELECT * FROM types_t WHERE i = @id AND n = @n AND g = @g', [
    ['id', TYPES.Int, 100],
    ['n', TYPES.NVarChar, UNICODE_TEXT],
    ['g', TYPES.UniqueIdentifier, '6F9619FF-8B86-D011-B42D-00C04FC964FF'],
  ]);
  eq('the inserted row is found by its parameters', rows.length, 1);
  if (rows.length) {
    eq('round trip of i', rows[0][0], 100);
    checkTypesRow('round trip of', [42, ...rows[0].slice(1)]);
  }
  const updated = await run(db, 'UPDATE types_t SET x = x * @m WHERE i = @i', [
    ['m', TYPES.Float, 2.0],
    ['i', TYPES.Int, 100],
  ]);
  eq('UPDATE rowCount', updated.rowCount, 1);
  eq('the updated value', await scalar(db, 'SELECT x FROM types_t WHERE i = @i', [['i', TYPES.Int, 100]]), -5);
  eq('a quote in a parameter is data',
    await scalar(db, "SELECT @s + N'!'", [['s', TYPES.NVarChar, "it's; DROP TABLE k --"]]),
    "it's; DROP TABLE k --!");
  await close(db);
}

async function procedure() {
  const db = await connect(DATABASE);
  const result = await run(db, 'add_one', [
    ['a', TYPES.Int, 41],
    ['b', TYPES.Int, null, { output: true }],
  ], 'callProcedure');
  eq('callProcedure OUTPUT parameter', result.returnValues, { b: 42 });
  eq('callProcedure return status', result.returnStatus, 82);
  const viaSql = await run(db, 'DECLARE @o INT; EXEC add_one @a = @x, @b = @o OUTPUT; SET @r = @o', [
    ['x', TYPES.Int, 9],
    ['r', TYPES.Int, null, { output: true }],
  ]);
  eq('an OUTPUT parameter of sp_executesql', viaSql.returnValues, { r: 10 });
  await close(db);
}

// A dbo.order_lines table-valued parameter: tedious sends its columns as described here.
function orderLines(rows) {
  return {
    schema: 'dbo',
    name: 'order_lines',
    columns: [
      { name: 'sku', type: TYPES.NVarChar, length: 20 },
      { name: 'qty', type: TYPES.Int },
      { name: 'price', type: TYPES.Decimal, precision: 10, scale: 2 },
    ],
    rows,
  };
}

async function tableValuedParameters() {
  const db = await connect(DATABASE);
  await run(db, 'CREATE TYPE dbo.order_lines AS TABLE ' +
    '(sku NVARCHAR(20) NOT NULL, qty INT, price DECIMAL(10,2))');
  await run(db, 'CREATE PROCEDURE dbo.order_total @lines dbo.order_lines READONLY AS ' +
    'SELECT COUNT(*) AS n, SUM(qty * price) AS total, MIN(sku) AS first FROM @lines');
  const rows = [['b-2', 2, 1.25], ['a-1', 3, 10], ['c-3', null, 99.5]];
  const result = await run(db, 'dbo.order_total',
    [['lines', TYPES.TVP, orderLines(rows)]], 'callProcedure');
  eq('TVP to a procedure', result.rows, [[3, 32.5, 'a-1']]);
  const viaSql = await run(db, 'SELECT COUNT(*) FROM @lines WHERE qty IS NOT NULL',
    [['lines', TYPES.TVP, orderLines(rows)]]);
  eq('TVP in sp_executesql', viaSql.rows, [[2]]);
  const empty = await run(db, 'dbo.order_total',
    [['lines', TYPES.TVP, orderLines([])]], 'callProcedure');
  eq('an empty TVP', empty.rows, [[0, null, null]]);
  // Without its type's name (as tedious' own tests send one), by position and by name: the
  // procedure's parameter gives the type, as SQL Server takes it.
  const unnamed = { ...orderLines(rows), schema: undefined, name: undefined };
  eq('an unnamed TVP to a procedure', (await run(db, 'dbo.order_total',
    [['lines', TYPES.TVP, unnamed]], 'callProcedure')).rows, [[3, 32.5, 'a-1']]);
  await run(db, 'CREATE PROCEDURE dbo.order_count @tag NVARCHAR(10), @lines dbo.order_lines ' +
    'READONLY AS SELECT @tag AS tag, COUNT(*) AS n FROM @lines');
  eq('an unnamed TVP as the second parameter', (await run(db, 'dbo.order_count',
    [['tag', TYPES.NVarChar, 'x'], ['lines', TYPES.TVP, unnamed]], 'callProcedure')).rows,
  [['x', 3]]);
  try {
    await run(db, 'dbo.order_count', [['tag', TYPES.TVP, unnamed], ['lines', TYPES.TVP, unnamed]],
      'callProcedure');
    fail('an unnamed TVP for a parameter of no table type raised no error');
  } catch (e) {
    eq('an unnamed TVP for a parameter of no table type', e.number, 8009);
  }
  await close(db);
}

async function transactions() {
  const watcher = await connect(DATABASE);
  const count = (id) => scalar(watcher, 'SELECT COUNT(*) FROM k WHERE id = @id', [['id', TYPES.Int, id]]);
  const insert = (db, id, note) => run(db, 'INSERT INTO k (id, note) VALUES (@id, @note)', [
    ['id', TYPES.Int, id],
    ['note', TYPES.NVarChar, note],
  ]);

  const db = await connect(DATABASE);
  await run(db, 'BEGIN TRAN');
  await insert(db, 10, 'delayed');
  eq('@@TRANCOUNT inside BEGIN TRAN', await scalar(db, 'SELECT @@TRANCOUNT'), 1);
  await run(db, 'COMMIT WITH (DELAYED_DURABILITY = ON)');
  eq('@@TRANCOUNT after the delayed commit', await scalar(db, 'SELECT @@TRANCOUNT'), 0);
  eq('a delayed commit is visible', await count(10), 1);
  await run(db, 'BEGIN TRAN');
  await insert(db, 11, 'rolled back');
  await run(db, 'ROLLBACK');
  eq('a rolled-back insert is gone', await count(11), 0);

  // The driver's transactions: Transaction Manager requests.
  await tx(db, 'beginTransaction');
  eq('@@TRANCOUNT in beginTransaction', await scalar(db, 'SELECT @@TRANCOUNT'), 1);
  await insert(db, 20, 'rollback');
  await tx(db, 'rollbackTransaction');
  eq('rollbackTransaction undid the insert', await count(20), 0);
  await tx(db, 'beginTransaction', 'named', 2 /* ISOLATION_LEVEL.READ_COMMITTED */);
  await insert(db, 21, 'commit');
  await tx(db, 'commitTransaction');
  eq('commitTransaction made the insert visible', await count(21), 1);
  eq('@@TRANCOUNT after commitTransaction', await scalar(db, 'SELECT @@TRANCOUNT'), 0);
  await tx(db, 'beginTransaction');
  await insert(db, 22, 'delayed');
  await run(db, 'COMMIT WITH (DELAYED_DURABILITY = ON)');
  eq('a delayed COMMIT ends the driver\'s transaction', await count(22), 1);
  eq('@@TRANCOUNT after it', await scalar(db, 'SELECT @@TRANCOUNT'), 0);
  eq('the connection still works', await scalar(db, 'SELECT COUNT(*) FROM k'), 4);
  await close(db);
  await close(watcher);
}

async function badInput() {
  const cases = [
    ['SELECT 1 +', null, 102],
    ['SELECT * FROM no_such_table', null, 208],
    ['SELECT 1 / 0', null, 8134],
    ['INSERT INTO k (id) VALUES (1)', null, 2627],
    ['SELECT 1 + @p +', [['p', TYPES.Int, 1]], 102],
    ['SELECT * FROM no_such_table WHERE id = @p', [['p', TYPES.Int, 1]], 208],
    ['SELECT @p / 0', [['p', TYPES.Int, 1]], 8134],
    ['INSERT INTO k (id) VALUES (@p)', [['p', TYPES.Int, 1]], 2627],
  ];
  const db = await connect(DATABASE);
  for (const inTx of [false, true]) {
    const mode = inTx ? 'transaction' : 'autocommit';
    if (inTx) await tx(db, 'beginTransaction');
    for (const [sql, params, number] of cases) {
      try {
        await run(db, sql, params);
        fail(`${mode}: ${JSON.stringify(sql)} raised no error (expected ${number})`);
      } catch (e) {
        eq(`${mode}: error number of ${JSON.stringify(sql)}`, e.number, number);
      }
      eq(`${mode}: the connection works after ${number}`, await scalar(db, 'SELECT 7'), 7);
    }
    if (inTx) await tx(db, 'rollbackTransaction');
  }
  await close(db);
}

// Issue 28, from tedious's own integration tests: the session options its login batch sets
// (`set datefirst 3`, `set dateformat dmy`, `set textsize -1` / `0`, then `set language
// us_english`, which must not undo them), and TIME / DATETIME2 parameters of a declared scale
// shown as text with that many fractional digits; a key on a missing column is two errors.
async function loginOptionsAndScales() {
  const a = await connect(DATABASE, { datefirst: 3, dateFormat: 'dmy', textsize: -1 });
  eq('@@DATEFIRST after datefirst: 3', await scalar(a, 'SELECT @@DATEFIRST'), 3);
  eq('date_format after dateFormat: dmy',
    await scalar(a, 'SELECT date_format FROM sys.dm_exec_sessions WHERE session_id = @@SPID'), 'dmy');
  eq('a dmy date literal', await scalar(a, "SELECT CONVERT(VARCHAR(10), CAST('13/02/2024' AS DATE), 23)"),
    '2024-02-13');
  eq('@@TEXTSIZE after textsize: -1', await scalar(a, 'SELECT @@TEXTSIZE'), -1);
  eq('a long NVARCHAR(MAX) whole under textsize -1',
    await scalar(a, "SELECT LEN(REPLICATE(CAST(N'x' AS NVARCHAR(MAX)), 10000))"), 10000);
  // tedious' TIME value: a Date of 1970-01-01 and the digits past the millisecond.
  const time = Object.assign(new Date('1970-01-01T00:00:00Z'), { nanosecondDelta: 0.1111111 });
  for (const [scale, text] of [[0, '00:00:00'], [1, '00:00:00.1'], [3, '00:00:00.111'], [7, '00:00:00.1111111']]) {
    eq(`TIME(${scale}) parameter as text`,
      await scalar(a, 'SELECT CAST(@t AS VARCHAR(MAX))', [['t', TYPES.Time, time, { scale }]]), text);
  }
  eq('DATETIME2(2) parameter as text',
    await scalar(a, 'SELECT CONVERT(NVARCHAR(40), @d, 121)',
      [['d', TYPES.DateTime2, new Date(Date.UTC(2024, 1, 29, 13, 45, 56, 120)), { scale: 2 }]]),
    '2024-02-29 13:45:56.12');
  eq('a DATETIME2(3) column as text', await scalar(a,
    "DECLARE @t TABLE (d DATETIME2(3)); INSERT @t VALUES ('2024-02-29 13:45:56.5'); " +
    'SELECT CAST(d AS VARCHAR(30)) FROM @t'), '2024-02-29 13:45:56.500');
  await close(a);
  const b = await connect(DATABASE, { textsize: 0 });
  eq('@@TEXTSIZE after textsize: 0 (the 4 KB default)', await scalar(b, 'SELECT @@TEXTSIZE'), 4096);
  // A key on a missing column: 1911 then 1750, which tedious gives as one AggregateError.
  try {
    await run(b, 'CREATE TYPE key_on_nothing AS TABLE (id INT, PRIMARY KEY (code))');
    fail('a table type keyed on a missing column raised no error');
  } catch (e) {
    eq('the errors of a key on a missing column', (e.errors || [e]).map((x) => x.number), [1911, 1750]);
  }
  await close(b);
}

// Each TDS version before 7.4 that tedious speaks (TDS_VERSION), logged in with and answered
// in that version: LOGINACK and sys.dm_exec_connections name it; below 7.3 DATE and
// DATETIME2 arrive as NVARCHAR text, below 7.2 NVARCHAR(MAX) as NTEXT and VARBINARY(MAX) as
// IMAGE; requests (batches, sp_executesql and procedure RPCs, the transaction requests, which
// tedious sends as SQL below 7.2) and responses (row counts, error line numbers) work in each.
async function olderTdsVersions() {
  const versions = [['7_1', 0x71000001], ['7_2', 0x72090002], ['7_3_A', 0x730a0003],
    ['7_3_B', 0x730b0003]];
  for (const [version, ack] of versions) {
    const what = `TDS ${version}`;
    const db = await connect(DATABASE, { tdsVersion: version });
    eq(`${what}: the version tedious adopted from LOGINACK`, db.config.options.tdsVersion, version);
    eq(`${what}: sys.dm_exec_connections.protocol_version`, await scalar(db,
      'SELECT protocol_version FROM sys.dm_exec_connections WHERE session_id = @@SPID'), ack);
    const columns = [];
    const rows = await new Promise((resolve, reject) => {
      const got = [];
      const request = new Request(TYPES_SELECT, (err) => (err ? reject(err) : resolve(got)));
      request.on('columnMetadata', (meta) => {
        for (const c of meta) columns.push(c.type.name);
      });
      request.on('row', (cols) => got.push(cols.map((c) => c.value)));
      db.execSqlBatch(request);
    });
    const before73 = version < '7_3';
    const before72 = version < '7_2';
    eq(`${what}: column types`, [columns[7], columns[9], columns[10], columns[14]], [
      before72 ? 'NText' : 'NVarChar',
      before73 ? 'NVarChar' : 'Date', before73 ? 'NVarChar' : 'DateTime2',
      before73 ? 'NVarChar' : 'Date']);
    const row = rows[0] || [];
    eq(`${what}: NVARCHAR(MAX) value`, row[7], LONG_TEXT);
    if (before73) {
      eq(`${what}: DATE and DATETIME2 as text`, [row[9], row[10], row[14]],
        ['2024-02-29', '2024-02-29 13:45:56.1234567', null]);
    } else {
      eq(`${what}: DATE`, row[9] instanceof Date && row[9].toISOString(), '2024-02-29T00:00:00.000Z');
    }
    eq(`${what}: the other values`, [row[0], row[1], row[6], row[11]],
      [42, '9007199254740993', UNICODE_TEXT, '6F9619FF-8B86-D011-B42D-00C04FC964FF']);
    const blob = await scalar(db, 'SELECT CAST(REPLICATE(CAST(0xAB AS VARBINARY(MAX)), 9000) AS VARBINARY(MAX))');
    eq(`${what}: a 9,000-byte VARBINARY(MAX)`, blob, Buffer.alloc(9000, 0xab));
    eq(`${what}: sp_executesql with parameters`, (await run(db, 'SELECT @a + 1, @s',
      [['a', TYPES.Int, 41], ['s', TYPES.NVarChar, UNICODE_TEXT]])).rows, [[42, UNICODE_TEXT]]);
    eq(`${what}: an UPDATE's row count`,
      (await run(db, 'UPDATE k SET note = note WHERE id = 1')).rowCount, 1);
    const proc = await run(db, 'add_one', [['a', TYPES.Int, 5], ['b', TYPES.Int, null, { output: true }]],
      'callProcedure');
    eq(`${what}: a procedure's OUTPUT parameter and status`, [proc.returnValues.b, proc.returnStatus],
      [6, 10]);
    await tx(db, 'beginTransaction');
    eq(`${what}: @@TRANCOUNT in a transaction`, await scalar(db, 'SELECT @@TRANCOUNT'), 1);
    await tx(db, 'rollbackTransaction');
    eq(`${what}: @@TRANCOUNT after its rollback`, await scalar(db, 'SELECT @@TRANCOUNT'), 0);
    try {
      await run(db, 'SELECT 1\nSELECT * FROM no_such_table');
      fail(`${what}: a missing table raised no error`);
    } catch (e) {
      eq(`${what}: error number and line`, [e.number, e.lineNumber], [208, 2]);
    }
    await close(db);
  }
}

(async () => {
  await section('setup', setup);
  await section('types', typesQuery);
  await section('parameters', parameters);
  await section('procedure', procedure);
  await section('table-valued parameters', tableValuedParameters);
  await section('transactions', transactions);
  await section('bad input', badInput);
  await section('newer types', newerTypes);
  await section('legacy types and cancel', legacyTypesAndCancel);
  await section('declared types and collations', declaredTypes);
  await section('UTF-8 collation', utf8Collation);
  await section('login options and fractional scales', loginOptionsAndScales);
  await section('older TDS versions', olderTdsVersions);
  await section('bulk copy', () =>
    bulkCopy({ connect, close, run, scalar, eq, fail, DATABASE, UNICODE_TEXT }));
  console.log(`tedious: ${checked} checks, ${failures} failures`);
  process.exit(failures ? 1 : 0);
})();
