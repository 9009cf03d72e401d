"""The chat turn: the user's message, the model's answer, and the tool calls between.

DESIGN: `turn` runs one turn over the catalog's transport (history searches and the user's
tool servers included); `attachments` decides what a file shown with a message becomes for
the model and for memory.
"""
