"""Sessions: the live one the chat appends to, the journals on disk, and browsing them.

DESIGN: a session is a JSONL journal, appended and fsynced message by message (`journal`;
each message checked by `memory.message`); `live` is the session the chat is in; `marks`
and `pending` find open and pending sessions without reading every journal, so start-up
does not grow with history; `browse` lists them all for the sessions browser and deletes
one; `import_transcript` and `import_exports` (one module per format in `exports/`) turn a
transcript or another tool's export into pending sessions; `orphans` deletes private
journals a dead process left behind.
"""
