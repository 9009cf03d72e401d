"""Other tools' chat exports, read: one module per format (ChatGPT's and Claude.ai's
`conversations.json`, llm's SQLite `logs.db`), each conversation a `Conversation` in Kept's
shape (or `Damaged`, with why). `memory.sessions.import_exports` journals them."""
