"""What the app says, in the TUI's words or the shell's, of facts the layers below return."""
