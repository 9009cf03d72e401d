"""The `kept` command line, apart from the Textual app.

DESIGN: `main` parses the arguments, builds one `Context` (settings, catalog and store,
each loaded when a verb first asks for it) and hands it to the verb; a verb that cannot
go on raises `CliError(message, code)`, which `main` alone prints. One module per group
of verbs (`models`, `imports`, `consolidate`, `inspect`, `trust`, `ask`, `eval`, `sync`,
`mcp_server`); none imports Textual (`kept` with no command is the one way into the app),
and none imports `main` back. The next step a sentence gives is the shell's: commands to
type, never the chat's slash commands (`app.words.models` words both).
"""
