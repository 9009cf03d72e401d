"""What the user sees and types: the Textual app and the `kept` command line.

DESIGN: the App (`main`) is thin: it owns the state screens follow (reactives: the model,
the session, the memory status), handles the requests screens post (`messages`), and owns
the reply being written (`reply`), so Ctrl+N works from any screen. Start-up (`startup`),
memory work in the background (`background`), notices and review (`review`), what
/remember, /export and /copy do (`actions`) and the files /memory edits (`documents`) each
have a module. `screens/` has a screen per file, `widgets/` the parts screens share, and
`words/` what Kept says of the facts below in the chat's words or the shell's. `cli/` is
the command line, which never imports Textual for a verb.
"""
