"""The chat turn: the user's message, the model's answer, and the tool calls between.

DESIGN: `turn` runs one turn over the catalog's transport (history searches and the user's
tool servers included), one request at a time; `context` is what the model is sent (the
session's context with its attachments, and the chain of models that can take them);
`system_prompt` puts MEMORY.md and INSTRUCTIONS.md before it. `attachments` decides what a
file shown with a message becomes: read and measured (`reading`), kept by content hash
(`storage`), shown to the model and mentioned to memory (`seen`), and whether a model can
take it (`sending`, facts only: the app says what to do about them).
"""
