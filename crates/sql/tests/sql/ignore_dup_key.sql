-- IGNORE_DUP_KEY = ON: an INSERT skips the rows whose key is already there, with one message
-- 3604 per statement; UPDATE still fails; sys.indexes shows it.
CREATE TABLE codes (id INT CONSTRAINT pk_codes PRIMARY KEY WITH (IGNORE_DUP_KEY = ON), name VARCHAR(10))
INSERT codes VALUES (1, 'one'), (2, 'two')
INSERT codes VALUES (2, 'again'), (3, 'three'), (3, 'twice'), (4, 'four')
SELECT @@ROWCOUNT AS rc, @@ERROR AS err
SELECT * FROM codes ORDER BY id
GO
UPDATE codes SET id = 1 WHERE id = 2
GO
INSERT codes SELECT id, 'copy' FROM codes
SELECT COUNT(*) AS n FROM codes
GO
-- Table-level constraints, CREATE INDEX and ALTER TABLE ADD CONSTRAINT.
CREATE TABLE pairs (a INT, b INT, c INT,
    CONSTRAINT uq_ab UNIQUE NONCLUSTERED (a, b) WITH (IGNORE_DUP_KEY = ON, PAD_INDEX = OFF))
CREATE UNIQUE INDEX ix_c ON pairs (c) WITH (IGNORE_DUP_KEY = ON)
INSERT pairs VALUES (1, 1, 1), (1, 1, 2), (2, 2, 1), (3, 3, 3)
SELECT * FROM pairs ORDER BY a
GO
CREATE TABLE later (id INT NOT NULL, v INT)
ALTER TABLE later ADD CONSTRAINT pk_later PRIMARY KEY CLUSTERED (id) WITH (IGNORE_DUP_KEY = ON)
INSERT later VALUES (1, 1), (1, 2)
SELECT * FROM later
GO
SELECT OBJECT_NAME(object_id) AS tbl, name, is_unique, ignore_dup_key FROM sys.indexes
WHERE object_id IN (OBJECT_ID('codes'), OBJECT_ID('pairs'), OBJECT_ID('later')) ORDER BY tbl, name
GO
-- In a transaction and with a trigger: only the inserted rows count.
CREATE TABLE audit (n INT)
GO
CREATE TRIGGER tr_codes ON codes AFTER INSERT AS INSERT audit SELECT COUNT(*) FROM inserted
GO
BEGIN TRAN
INSERT codes VALUES (4, 'dup'), (5, 'five')
SELECT @@TRANCOUNT AS trancount, n FROM audit
COMMIT
SELECT * FROM codes WHERE id >= 4 ORDER BY id
GO
-- A unique index built over existing duplicates still fails; a nonunique one may not have it.
CREATE TABLE dupdata (v INT)
INSERT dupdata VALUES (1), (1)
CREATE UNIQUE INDEX ix_v ON dupdata (v) WITH (IGNORE_DUP_KEY = ON)
GO
CREATE INDEX ix_nonunique ON dupdata (v) WITH (IGNORE_DUP_KEY = ON)
GO
-- OFF is a duplicate key error as always.
CREATE TABLE strict (id INT PRIMARY KEY WITH (IGNORE_DUP_KEY = OFF))
INSERT strict VALUES (1), (1)
GO
SELECT COUNT(*) AS n FROM strict
GO
