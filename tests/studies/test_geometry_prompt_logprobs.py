"""vLLM's `prompt_logprobs` answer shape (and the echo shape's k + 1 entries): the prompt's tokens
read from either (studies/geometry/logprobs.py), byte pieces placed on the text, and the
surprisal figures, hand-computed, against the loopback server asked in either form."""
import math

import pytest

from studies.geometry import logprobs, services, stats
from tests.studies.test_geometry_runs import jsonl_segments, surprisal_scorer

# What vLLM sends for the prompt "a b\nc d" tokenized "a" " b" "\nc" " d", asked prompt_logprobs=2:
# null for the first token; then the prompt's own token first (its rank in the vocabulary), then
# the 2 best (ranks 1, 2). At "\nc" the prompt token is outside the 2 best: 3 entries.
VLLM_PROMPT_LOGPROBS = [
    None,
    {"318": {"logprob": -1.0, "rank": 1, "decoded_token": " b"}, "11": {"logprob": -1.7, "rank": 2, "decoded_token": ","}},
    {"77": {"logprob": -2.0, "rank": 4, "decoded_token": "\nc"}, "5": {"logprob": -0.1, "rank": 1, "decoded_token": " x"},
     "294": {"logprob": -1.5, "rank": 2, "decoded_token": " d"}},
    {"294": {"logprob": -0.5, "rank": 1, "decoded_token": " d"}, "9": {"logprob": -2.5, "rank": 2, "decoded_token": "."}},
]


def test_prompt_logprobs_shape_is_read_as_the_prompts_tokens():
    read = logprobs.from_prompt_logprobs(VLLM_PROMPT_LOGPROBS, "a b\nc d")
    assert read.tokens == ["a", " b", "\nc", " d"]  # the first token is what the others leave of the start
    assert read.offsets == [0, 1, 3, 5]
    assert read.token_logprobs == [None, -1.0, -2.0, -0.5]
    assert read.top_logprobs[2] == {"\nc": -2.0, " x": -0.1, " d": -1.5}
    got = stats.transition_figures(read.tokens, read.token_logprobs, read.top_logprobs, read.offsets,
                                   context_end=3, prompt_end=7, top_k=2)
    assert got["tokens"] == 2 and got["surprisal"] == pytest.approx((2.0 + 0.5) / 2)
    # The 2 best at the context's last position are " x" and " d": " d" is a step token, so LL is
    # exact: e^-1.5 (the step's "\nc", rank 4, is less likely than both).
    assert got["ll"] == pytest.approx(math.exp(-1.5)) and got["ll_exact"] is True
    assert got["outside_top_k"] == 1 and got["top_k"] == 2


def test_the_prompt_token_added_beside_the_top_k_is_not_counted_in_it():
    # Asked for the best 1: " x" only; "\nc" is there because it is the prompt's token (rank 4).
    entries = [None, VLLM_PROMPT_LOGPROBS[1],
               {"77": {"logprob": -2.0, "rank": 4, "decoded_token": "\nc"}, "5": {"logprob": -0.1, "rank": 1, "decoded_token": " x"}},
               VLLM_PROMPT_LOGPROBS[3]]
    read = logprobs.from_prompt_logprobs(entries, "a b\nc d")
    got = stats.transition_figures(read.tokens, read.token_logprobs, read.top_logprobs, read.offsets,
                                   context_end=3, prompt_end=7, top_k=1)
    assert got["ll"] == pytest.approx(math.exp(-2.0))  # the first token's own probability: a lower bound
    assert got["ll_exact"] is False and got["outside_top_k"] == 2
    # The echo shape has the same k + 1 entries (OpenAI's legacy rule): the same figures.
    echo = {"tokens": ["a", " b", "\nc", " d", "."], "token_logprobs": [None, -1.0, -2.0, -0.5, -0.3],
            "top_logprobs": [None, {" b": -1.0}, {" x": -0.1, "\nc": -2.0}, {" d": -0.5}, {".": -0.3}],
            "text_offset": [0, 1, 3, 5, 7]}
    read = logprobs.read({"logprobs": echo}, "a b\nc d", prompt_tokens=4)
    assert read.tokens == ["a", " b", "\nc", " d"]  # the generated "." dropped
    assert stats.transition_figures(read.tokens, read.token_logprobs, read.top_logprobs, read.offsets,
                                    context_end=3, prompt_end=7, top_k=1) == got


def test_byte_pieces_of_a_character_are_placed_on_the_text():
    # "所" cut over two byte-level tokens, each decoded alone as U+FFFD (as vLLM decodes them).
    prompt = "x 所以 y"
    assert logprobs.align(prompt, ["x", " ", "\ufffd", "\ufffd", "以", " y"]) == [0, 1, 2, 3, 3, 4]
    entries = [None, *({"1": {"logprob": -1.0, "rank": 1, "decoded_token": p}} for p in [" ", "\ufffd", "\ufffd", "以", " y"])]
    read = logprobs.from_prompt_logprobs(entries, prompt)
    assert read.tokens[0] == "x" and read.offsets == [0, 1, 2, 3, 3, 4]
    assert logprobs.align(prompt, ["x", " ", "所", "以", " z"]) is None  # a piece that is not the text
    with pytest.raises(logprobs.ShapeError):
        logprobs.from_prompt_logprobs([None, {"1": {"logprob": -1.0, "rank": 1, "decoded_token": "zz"}}], prompt)
    with pytest.raises(logprobs.ShapeError):
        logprobs.read({"logprobs": None}, prompt)


def test_a_leading_special_token_outside_the_text():
    echo = {"tokens": ["<s>", "a", " b"], "token_logprobs": [None, -1.0, -0.5], "top_logprobs": [None, {}, {}]}
    read = logprobs.from_echo(echo, "a b", prompt_tokens=3)
    assert read.tokens == ["", "a", " b"] and read.offsets == [0, 0, 1]
    entries = [None, {"7": {"logprob": -1.0, "rank": 1, "decoded_token": "a"}},
               {"8": {"logprob": -0.5, "rank": 1, "decoded_token": " b"}}]
    assert logprobs.from_prompt_logprobs(entries, "a b").tokens == ["", "a", " b"]


@pytest.mark.parametrize("shape", ["prompt_logprobs", "echo"])
def test_surprisal_run_in_either_shape_gives_the_hand_computed_figures(endpoint, llm_server, shape):
    llm_server.scorer = surprisal_scorer
    segments = jsonl_segments({"human": ["human one\nalpha beta\ngamma delta", "human two\nalpha beta"],
                               "synthetic": ["synthetic one\nalpha beta\ngamma delta"]})
    run = services.run_inline(services.start_run(kind="surprisal", endpoint=endpoint, model=f"causal-{shape}",
                                                 segments=segments, bootstrap=50, top_k=1, logprobs_shape=shape,
                                                 enqueue=False))
    assert run.analysis_state == "done", run.analysis_error
    human, synthetic = run.results["groups"]["human"], run.results["groups"]["synthetic"]
    assert human["transitions"] == 3 and synthetic["transitions"] == 2
    # Each step: "\nword" (-2.0 human, -0.5 synthetic), then " word" (-1.0).
    assert human["surprisal"]["mean"] == pytest.approx(1.5) and synthetic["surprisal"]["mean"] == pytest.approx(0.75)
    # With the best 1 only (" x", p = e^-0.1), no step token is in it: LL is the step's first
    # token's probability, a lower bound, on every transition.
    assert human["ll"]["mean"] == pytest.approx(math.exp(-2.0)) and synthetic["ll"]["mean"] == pytest.approx(math.exp(-0.5))
    assert human["ll_lower_bound"] == 3 and human["step_tokens_outside_top_k"] == 3 * 2
    asked = [r.payload for r in llm_server.requests if r.path.endswith("/completions")]
    assert len(asked) == 5 and run.params["logprobs"] == shape
    if shape == "prompt_logprobs":
        assert all(p["prompt_logprobs"] == 1 and "echo" not in p and "logprobs" not in p for p in asked)
    else:
        assert all(p["echo"] is True and p["logprobs"] == 1 and "prompt_logprobs" not in p for p in asked)


def test_prompt_logprobs_run_with_top_5_matches_the_echo_figures(endpoint, llm_server):
    llm_server.scorer = surprisal_scorer
    segments = jsonl_segments({"human": ["human one\nalpha beta\ngamma delta"], "synthetic": ["synthetic one\nalpha beta"]})
    run = services.run_inline(services.start_run(kind="surprisal", endpoint=endpoint, model="causal-vllm",
                                                 segments=segments, bootstrap=0, logprobs_shape="prompt_logprobs",
                                                 enqueue=False))
    human, synthetic = run.results["groups"]["human"], run.results["groups"]["synthetic"]
    # LL: the best of the step's first token (e^-2 / e^-0.5) and its second word in the top 5 (e^-1.2).
    assert human["ll"]["mean"] == pytest.approx(math.exp(-1.2)) and synthetic["ll"]["mean"] == pytest.approx(math.exp(-0.5))
    assert human["ll_lower_bound"] == 0


def test_a_server_without_prompt_log_probabilities_fails_the_call_with_a_reason(endpoint, llm_server):
    from tests.llm_server import Reply

    llm_server.script("first step", Reply(body=b'{"id": "c", "object": "text_completion", "created": 1, "model": "m", '
                                               b'"choices": [{"index": 0, "text": ".", "finish_reason": "length", '
                                               b'"logprobs": null}]}', content_type="application/json"))
    run = services.run_inline(services.start_run(kind="surprisal", endpoint=endpoint, model="no-logprobs",
                                                 segments=jsonl_segments({"human": ["first step\nsecond step"]}), bootstrap=0,
                                                 enqueue=False))
    segment = run.items.get()
    assert segment.state == "error" and "no prompt log-probabilities" in segment.errors[0]["message"]
