"""The `kept` command line, apart from the Textual app.

DESIGN: `main` parses the arguments and dispatches to one module per group of verbs
(`ask`, `imports`, `inspect`, `trust`, `eval`, `mcp_server`); none of them imports Textual.
"""
