"""ChatGPT's `conversations.json`: each conversation a tree of messages (its `mapping`), of
which the branch the user last saw is imported."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.message import Message
from memory.sessions.exports.records import UNKNOWN_TIME, Conversation, message, text, when


def chatgpt_conversation(item: dict[str, Any]) -> Conversation:
    """The branch the user last saw (from `current_node` up to the root): edits and
    regenerated replies left on other branches are not part of the conversation."""
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise ValueError("it has no 'mapping' of messages")
    path = _branch(mapping, item.get("current_node"))
    created = when(item.get("create_time")) or next(
        (
            at
            for node in path
            if isinstance(node.get("message"), dict)
            and (at := when(node["message"].get("create_time")))
        ),
        when(item.get("update_time")) or UNKNOWN_TIME,
    )
    messages: list[Message] = []
    model = None
    for node in path:
        said, slug = _said(node, created)
        model = slug or model
        if said:
            messages.append(said)
    source_id = text(item.get("conversation_id") or item.get("id"))
    return Conversation(source_id, text(item.get("title")), created, model, tuple(messages))


def _node(mapping: dict[Any, Any], node_id: Any) -> dict[str, Any]:
    node = mapping[node_id]
    if not isinstance(node, dict):
        raise ValueError(f"node {text(node_id)!r} is not an object")
    return node


def _branch(mapping: dict[Any, Any], node_id: Any) -> list[dict[str, Any]]:
    """The nodes from the root down to `node_id` (else to the last child of each node).
    Both walks are loops over a seen-set: a tree that loops back on itself ends, and one
    thousands of nodes deep costs no recursion."""
    if not isinstance(node_id, str) or node_id not in mapping:
        node_id = _last_leaf(mapping)
    path: list[dict[str, Any]] = []
    seen: set[object] = set()
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = _node(mapping, node_id)
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def _last_leaf(mapping: dict[Any, Any]) -> Any:
    """No pointer to the last message: follow the last children down from the root."""
    node_id = next(
        (k for k, n in mapping.items() if isinstance(n, dict) and not n.get("parent")), None
    )
    seen: set[object] = set()
    while node_id in mapping and node_id not in seen:
        seen.add(node_id)
        children = _node(mapping, node_id).get("children") or []
        if not isinstance(children, list):
            raise ValueError(f"the children of node {text(node_id)!r} are not a list")
        if not children or not isinstance(children[-1], str):
            break
        node_id = children[-1]
    return node_id


def _said(node: dict[str, Any], created: datetime) -> tuple[Message | None, str | None]:
    """A node's words to or from the user, and the model that wrote them (its slug)."""
    said = node.get("message")
    if not isinstance(said, dict):
        return None, None
    role = (said.get("author") or {}).get("role")
    metadata = said.get("metadata") or {}
    if role not in ("user", "assistant") or metadata.get("is_visually_hidden_from_conversation"):
        return None, None
    if said.get("recipient", "all") != "all":
        return None, None  # a call to a tool (browsing, code), not words to the user
    content = said.get("content") or {}
    parts = content.get("parts")
    if isinstance(parts, list):
        words = "\n".join(p for p in parts if isinstance(p, str))
    else:
        given = content.get("text")
        words = given if isinstance(given, str) else ""
    slug = text(metadata.get("model_slug")) or None
    return message(role, words, when(said.get("create_time")), created, slug), slug
