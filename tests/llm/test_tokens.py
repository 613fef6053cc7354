"""llm.tokens: token counts before sending (tiktoken for OpenAI's models, per-character otherwise)."""
import hashlib
import socket
from unittest import mock

import pytest

from llm import client, tokens


def test_models_map_to_their_encodings():
    assert tokens.encoding_name("gpt-4o-mini") == "o200k_base"
    assert tokens.encoding_name("openai/gpt-4.1-nano") == "o200k_base"  # a router's provider prefix
    assert tokens.encoding_name("ft:gpt-4o-2024-08-06:org::abc") == "o200k_base"
    for name in ("o1", "o1-mini", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "chatgpt-4o-latest"):
        assert tokens.encoding_name(name) == "o200k_base", name
    for name in ("gpt-4", "gpt-4-turbo", "gpt-3.5-turbo", "gpt-35-turbo", "text-embedding-3-small"):
        assert tokens.encoding_name(name) == "cl100k_base", name
    for name in ("qwen2.5-math-7b", "llama-3-70b", "deepseek-r1", "o1x", "", "gpt-oss-20b"):
        assert tokens.encoding_name(name) is None, name


def test_shipped_files_are_the_ones_tiktoken_pins():
    """The files are byte-identical to OpenAI's: tiktoken's own constructors name the same hashes,
    patterns and special tokens (read from tiktoken with its loader stubbed, so nothing is fetched)."""
    from tiktoken_ext import openai_public

    for name, spec in tokens.ENCODINGS.items():
        digest = hashlib.sha256((tokens.ENCODINGS_DIR / spec["file"]).read_bytes()).hexdigest()
        assert digest == spec["sha256"]
        with mock.patch.object(openai_public, "load_tiktoken_bpe", return_value={}) as loader:
            theirs = getattr(openai_public, name)()
        assert loader.call_args.kwargs["expected_hash"] == spec["sha256"]
        assert theirs["pat_str"] == spec["pat_str"]
        assert theirs["special_tokens"] == spec["special_tokens"]


def test_tiktoken_counts_offline(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("token counting tried to open a connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    # OpenAI's documented examples: o200k "hello world" = [24912, 2375]; cl100k "tiktoken is great!" = 6 tokens
    assert tokens._tiktoken_encoding("o200k_base").encode_ordinary("hello world") == [24912, 2375]
    assert tokens.count_text("tiktoken is great!", "gpt-4") == 6
    assert tokens.count_text("hello world", "gpt-4o") == 2
    assert tokens.method("gpt-4o") == "tiktoken o200k_base"
    assert tokens.method("gpt-3.5-turbo") == "tiktoken cl100k_base"
    chinese = "设函数 f(x)=x^2，求证 f(2)=4。"
    assert tokens.count_text(chinese, "gpt-4o") == len(tokens._tiktoken_encoding("o200k_base").encode_ordinary(chinese))


def test_per_character_estimate_counts_cjk_one_each():
    assert tokens.method("qwen2.5-7b") == tokens.PER_CHARACTER
    assert tokens.estimate_text("") == 0
    assert tokens.estimate_text("abcd") == 1
    assert tokens.estimate_text("abcde") == 2  # rounded up
    assert tokens.estimate_text("求证") == 2  # Han: one each
    assert tokens.estimate_text("证明：x+1") == 3 + 1  # 证 明 and the full-width colon, then "x+1" (3 chars -> 1)
    assert tokens.estimate_text("こんにちは 안녕") == 7 + 1  # kana and Hangul count one each; the space a quarter
    assert tokens.count_text("证明：x+1", "local-model") == 4


def test_messages_add_framing_and_images_count_fixed():
    messages = [{"role": "system", "content": "abcd"}, {"role": "user", "content": "求证abcdefgh", "name": "s"}]
    # 3 per message, 1 + 1 for the name, 3 for the reply; contents 1 and 2 + 2
    assert tokens.count_messages(messages, "local") == 3 + 1 + 3 + 4 + 1 + 1 + 3
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 400_000}}
    vision = [{"role": "user", "content": [{"type": "text", "text": "abcd"}, image]}]
    assert tokens.count_messages(vision, "local") == 3 + 1 + tokens.TOKENS_PER_IMAGE + 3
    assert tokens.count_messages([], "") == tokens.TOKENS_PER_REPLY


def test_the_limiter_reserves_what_the_estimate_counts():
    messages = [{"role": "user", "content": "hello world"}]
    assert client.estimate_tokens(messages, 300, "gpt-4o") == 3 + 2 + 3 + 300
    assert client.estimate_tokens(messages, None, "local") == 3 + 3 + 3 + 512
    assert client.estimate_tokens(messages, 8192, "local") == 3 + 3 + 3 + 1024
    assert client.estimate_tokens(messages, 300, "gpt-4o") == tokens.estimate_request(messages, 300, "gpt-4o")


def test_a_changed_encoding_file_is_refused(tmp_path, monkeypatch):
    (tmp_path / "cl100k_base.tiktoken").write_bytes(b"aGk= 0\n")
    monkeypatch.setattr(tokens, "ENCODINGS_DIR", tmp_path)
    monkeypatch.setattr(tokens, "_loaded", {})
    with pytest.raises(tokens.EncodingUnavailable, match="SHA-256"):
        tokens.count_text("hello", "gpt-4")


def test_without_tiktoken_every_model_is_estimated(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "tiktoken":
            raise ImportError("no tiktoken")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(tokens, "_loaded", {})
    monkeypatch.setattr(builtins, "__import__", refuse)
    assert tokens.method("gpt-4o") == tokens.PER_CHARACTER
    assert tokens.count_text("hello world", "gpt-4o") == 3
