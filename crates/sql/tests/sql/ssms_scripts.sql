-- What SSMS's "Script Table as CREATE" writes: bracketed names and types, key constraints
-- WITH (index options) ON [PRIMARY], ON [PRIMARY] TEXTIMAGE_ON [PRIMARY] after the table,
-- separate ALTER TABLE statements for defaults and foreign keys, CHECK CONSTRAINT, and
-- CREATE INDEX with its options. The storage options are read and change nothing; those
-- that would change behaviour are refused or carried out.
SET ANSI_NULLS ON
GO
SET QUOTED_IDENTIFIER ON
GO
CREATE DATABASE ssmsdb
GO
USE ssmsdb
GO
CREATE TABLE [dbo].[Customers](
	[CustomerID] [int] IDENTITY(1,1) NOT NULL,
	[Name] [nvarchar](100) NOT NULL,
	[Notes] [nvarchar](max) NULL,
	[Created] [datetime2](7) NOT NULL,
 CONSTRAINT [PK_Customers] PRIMARY KEY CLUSTERED 
(
	[CustomerID] ASC
)WITH (PAD_INDEX = OFF, STATISTICS_NORECOMPUTE = OFF, IGNORE_DUP_KEY = OFF, ALLOW_ROW_LOCKS = ON, ALLOW_PAGE_LOCKS = ON, OPTIMIZE_FOR_SEQUENTIAL_KEY = OFF) ON [PRIMARY],
 CONSTRAINT [UQ_Customers_Name] UNIQUE NONCLUSTERED ([Name] ASC) WITH FILLFACTOR = 80 ON [PRIMARY]
) ON [PRIMARY] TEXTIMAGE_ON [PRIMARY]
GO
ALTER TABLE [dbo].[Customers] ADD  CONSTRAINT [DF_Customers_Created]  DEFAULT (sysutcdatetime()) FOR [Created]
GO
CREATE TABLE [dbo].[Orders](
	[OrderID] [int] IDENTITY(1,1) NOT NULL,
	[CustomerID] [int] NOT NULL,
	[Amount] [money] NOT NULL,
 CONSTRAINT [PK_Orders] PRIMARY KEY CLUSTERED ([OrderID] ASC) ON [PRIMARY]
) ON [PRIMARY] WITH (DATA_COMPRESSION = PAGE)
GO
ALTER TABLE [dbo].[Orders]  WITH CHECK ADD  CONSTRAINT [FK_Orders_Customers] FOREIGN KEY([CustomerID])
REFERENCES [dbo].[Customers] ([CustomerID])
GO
ALTER TABLE [dbo].[Orders] CHECK CONSTRAINT [FK_Orders_Customers]
GO
CREATE NONCLUSTERED INDEX [IX_Orders_Customer] ON [dbo].[Orders]
(
	[CustomerID] ASC
)
INCLUDE([Amount]) WITH (PAD_INDEX = OFF, STATISTICS_NORECOMPUTE = OFF, SORT_IN_TEMPDB = OFF, DROP_EXISTING = OFF, ONLINE = OFF, ALLOW_ROW_LOCKS = ON, ALLOW_PAGE_LOCKS = ON, MAXDOP = 0, RESUMABLE = OFF, MAX_DURATION = 1 MINUTES) ON [PRIMARY]
GO
INSERT Customers (Name) VALUES (N'Ann'), (N'Bob')
INSERT Orders (CustomerID, Amount) VALUES (1, $10.50), (2, $3)
SELECT o.OrderID, c.Name, o.Amount FROM Orders AS o JOIN Customers AS c ON c.CustomerID = o.CustomerID ORDER BY o.OrderID
SELECT name, type_desc, is_unique FROM sys.indexes WHERE object_id = OBJECT_ID('Orders') ORDER BY index_id
GO
-- DROP_EXISTING = ON rebuilds the index under its name; it must exist (7999).
CREATE NONCLUSTERED INDEX [IX_Orders_Customer] ON [dbo].[Orders] ([CustomerID], [Amount]) WITH (DROP_EXISTING = ON)
SELECT i.name, COL_NAME(c.object_id, c.column_id) AS col FROM sys.indexes AS i
JOIN sys.index_columns AS c ON c.object_id = i.object_id AND c.index_id = i.index_id
WHERE i.name = 'IX_Orders_Customer' ORDER BY c.key_ordinal
GO
CREATE NONCLUSTERED INDEX [IX_none] ON [dbo].[Orders] ([Amount]) WITH (DROP_EXISTING = ON)
GO
-- An index a foreign key uses cannot be dropped; IGNORE_DUP_KEY = ON is kept; other
-- filegroups are refused.
DROP INDEX UQ_Customers_Name ON Customers
GO
CREATE UNIQUE INDEX IX_dup ON Orders (Amount) WITH (IGNORE_DUP_KEY = ON)
GO
CREATE TABLE t_fg (id INT) ON [SECONDARY]
GO
USE master
DROP DATABASE ssmsdb
