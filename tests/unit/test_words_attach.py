"""The chat and `kept ask` each say the next step in their own words; the layers below
return facts and say none (no /keys or /model below app/)."""

from __future__ import annotations

from pathlib import Path

from app.cli.ask_io import cannot_send
from app.words.attachments import does_not_fit, vision_model_sentence
from memory.chat.attachments import read_stdin_bytes
from tests.attach_files import png
from tests.fakes.provider import FakeProvider
from tests.support import fake_catalog

ROOT = Path(__file__).parents[2]
MINE = ["memory/chat", "memory/recall", "memory/eval"]


def test_a_shell_user_is_told_a_shell_step_for_an_image_no_model_can_see_yet(
    fake: FakeProvider,
) -> None:
    catalog = fake_catalog(fake, env={})  # no key: a model that sees images needs one
    image = read_stdin_bytes(png(), "shot.png")
    said = cannot_send(catalog, "deepseek-chat", [image], "What is on it?")
    assert said is not None and said.startswith("DeepSeek V3 cannot see images; -m ")
    assert "keyring set kept " in said
    assert "/keys" not in said and "/model" not in said


def test_the_chat_names_its_own_commands_for_the_same_facts(fake: FakeProvider) -> None:
    catalog = fake_catalog(fake, env={})
    said = vision_model_sentence(catalog, "deepseek-chat")
    assert said.startswith("DeepSeek V3 cannot see images; /model ")
    assert said.endswith(" can, once /keys has its key.")
    ready = vision_model_sentence(fake_catalog(fake), "deepseek-chat")
    assert ready.startswith("DeepSeek V3 cannot see images; /model ") and ready.endswith(" can.")


def test_a_message_past_the_window_is_worded_for_the_chat_or_the_shell() -> None:
    text = read_stdin_bytes(b"word " * 10_000, "big.txt")
    chat = does_not_fit([text], "what is this?", 8_000)
    shell = does_not_fit([text], "what is this?", 8_000, shell=True)
    assert chat is not None and chat.endswith("with a larger window with /model.")
    assert shell is not None and shell.endswith("with a larger window with -m MODEL.")
    assert chat.removesuffix("/model.") == shell.removesuffix("-m MODEL.")


def test_no_command_of_the_chat_is_named_in_the_chat_turn_search_or_eval() -> None:
    for folder in MINE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            assert "/keys" not in text and "/model " not in text, path
