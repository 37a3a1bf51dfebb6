-- Full-text predicates: Walden has no full-text indexes, so CONTAINS and FREETEXT are
-- refused with SQL Server's error for a table without one (7601), whatever rows there are.
CREATE TABLE docs (id INT PRIMARY KEY, title NVARCHAR(100), body NVARCHAR(MAX));
GO
SELECT id FROM docs WHERE CONTAINS(title, 'walden');
GO
SELECT id FROM docs d WHERE FREETEXT((title, body), 'pond', LANGUAGE 1033);
GO
SELECT id FROM docs WHERE id > 0 AND CONTAINS(*, '"lake*"');
GO
SELECT COUNT(*) FROM docs a JOIN docs b ON a.id = b.id AND FREETEXT(b.body, 'woods');
GO
