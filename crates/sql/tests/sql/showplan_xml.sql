-- SET SHOWPLAN_XML: the statements of each batch are not run; one ShowPlanXML document
-- describes them all (showplan_xml.rs), with the operators SHOWPLAN_TEXT shows as RelOps.
CREATE TABLE t (id INT CONSTRAINT pk_t PRIMARY KEY, v INT);
INSERT INTO t VALUES (1, 10);
GO
SET SHOWPLAN_XML ON;
GO
SELECT v FROM t WHERE id = 1;
DELETE FROM t;
GO
SET SHOWPLAN_XML OFF;
GO
-- The DELETE was described, not run.
SELECT COUNT(*) AS still_there FROM t;
GO
