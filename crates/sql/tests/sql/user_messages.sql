-- sys.messages lists Walden's own messages and the user-defined ones; sp_addmessage,
-- sp_dropmessage, RAISERROR(msg_id, ...) and FORMATMESSAGE(msg_id, ...) use them.
SELECT message_id, language_id, severity, is_event_logged, text
FROM sys.messages WHERE message_id IN (208, 8134, 2732, 15043, 18054) ORDER BY message_id
GO
-- The text of a built-in error is its row's template, filled in.
SELECT * FROM no_such_table
GO
SELECT 1 / 0
GO
EXEC sp_addmessage 50001, 16, N'Value %d is out of range for %s.'
EXEC sp_addmessage @msgnum = 50002, @severity = 10, @msgtext = N'Just a note: %s', @with_log = 'false'
SELECT message_id, language_id, severity, is_event_logged, text
FROM sys.messages WHERE message_id > 50000 ORDER BY message_id
GO
RAISERROR(50001, 16, 2, 42, N'quantity')
GO
RAISERROR(50002, 10, 1, N'informational')
GO
-- A negative severity takes the message's own.
RAISERROR(50001, -1, 1, 7, N'price')
GO
BEGIN TRY
    RAISERROR(50001, 16, 1, 5, N'weight')
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS number, ERROR_SEVERITY() AS severity, ERROR_MESSAGE() AS message
END CATCH
GO
SELECT FORMATMESSAGE(50001, 3, N'size') AS formatted, FORMATMESSAGE(59999, 1) AS missing,
       FORMATMESSAGE(N'%s and %d', N'text', 9) AS from_text,
       FORMATMESSAGE(N'[%*d] [%-5s] [%.2s]', 4, 12, N'ab', N'xyz') AS widths
GO
-- Errors: a message that exists needs REPLACE; numbers and severities are checked.
EXEC sp_addmessage 50001, 16, N'again'
GO
EXEC sp_addmessage 50001, 11, N'Replaced %d.', @replace = 'replace'
SELECT severity, text FROM sys.messages WHERE message_id = 50001
GO
EXEC sp_addmessage 50000, 16, N'too low'
GO
EXEC sp_addmessage 50010, 26, N'too severe'
GO
EXEC sp_addmessage 50010, 16, N'bad flag', @with_log = 'maybe'
GO
EXEC sp_addmessage 50010, 16, N'bad language', @lang = 'Klingon'
GO
-- Another language needs the us_english version first, which then goes last.
EXEC sp_addmessage 50010, 16, N'Nur Deutsch', @lang = 'German'
GO
EXEC sp_addmessage 50001, 11, N'Ersetzt %d.', @lang = 'German'
SELECT language_id, text FROM sys.messages WHERE message_id = 50001 ORDER BY language_id
GO
EXEC sp_dropmessage 50001
GO
EXEC sp_dropmessage 50001, 'German'
EXEC sp_dropmessage @msgnum = 50002, @lang = 'all'
SELECT COUNT(*) AS user_messages FROM sys.messages WHERE message_id > 50000
GO
EXEC sp_dropmessage 50002
GO
EXEC sp_dropmessage 208
GO
-- RAISERROR of a number without a message, and of numbers it cannot raise.
RAISERROR(50009, 16, 1)
GO
RAISERROR(5000, 16, 1)
GO
RAISERROR(50000, 16, 1)
GO
-- A Walden message above 13000 raises with its own text.
RAISERROR(15043, 16, 1)
GO
-- sp_addmessage takes part in the transaction.
BEGIN TRANSACTION
EXEC sp_addmessage 50020, 16, N'rolled back'
ROLLBACK
SELECT COUNT(*) AS user_messages FROM sys.messages WHERE message_id > 50000
GO
