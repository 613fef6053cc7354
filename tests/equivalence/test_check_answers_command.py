"""manage.py check_answers: one output line per input line, in order; bad lines are reported."""
import io
import json

import pytest
from django.core.management import CommandError, call_command


def run(tmp_path, lines, *args):
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    call_command("check_answers", str(source), *args, stdout=out, stderr=err)
    return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


def test_results_in_input_order_with_modes(tmp_path):
    lines = [
        json.dumps({"pred": "1/2", "gold": "0.5"}),
        json.dumps({"pred": "x>2", "gold": "[2, oo)"}),
        json.dumps({"pred": "6.28318", "gold": "2\\pi", "mode": "strict"}),
        json.dumps({"pred": "6.28318", "gold": "2\\pi"}),
        json.dumps({"pred": "\\sqrt{x^2}", "gold": "|x|"}),
    ]
    rows, summary = run(tmp_path, lines)
    assert [row["line"] for row in rows] == [1, 2, 3, 4, 5]
    assert [row["equivalent"] for row in rows] == [True, False, False, True, True]
    assert all(row["method"] and row["explanation"] for row in rows)
    assert rows[2]["mode"] == "strict"
    assert [row["approximate"] for row in rows] == [False, False, False, True, False]  # 6.28318 rounds 2π
    assert "3 equivalent, 2 not equivalent, 0 undecided, 0 bad lines" in summary


def test_bad_lines_give_error_lines_and_the_run_continues(tmp_path):
    lines = [
        "not json at all",
        json.dumps({"pred": "1"}),
        json.dumps(["1", "1"]),
        json.dumps({"pred": "1", "gold": "1", "mode": "lenient"}),
        json.dumps({"pred": {"x": 1}, "gold": "1"}),
        "",
        '{"pred": 0.50, "gold": "1/2"}',
    ]
    rows, summary = run(tmp_path, lines)
    assert [row["line"] for row in rows] == [1, 2, 3, 4, 5, 7]
    assert [row["method"] for row in rows[:5]] == ["input-error"] * 5
    assert all(row["equivalent"] is None and row["error"] for row in rows[:5])
    assert "missing 'gold'" in rows[1]["error"]
    assert rows[5]["equivalent"] is True  # a JSON number keeps its written form
    assert "5 bad lines" in summary


def test_out_file_and_default_mode(tmp_path):
    out_path = tmp_path / "out.jsonl"
    rows, _ = run(tmp_path, [json.dumps({"pred": "3.1416", "gold": "\\pi"})], "--mode", "strict", "--out", str(out_path))
    assert rows == []
    written = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert written[0]["equivalent"] is False and written[0]["mode"] == "strict"


def test_missing_input_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("check_answers", str(tmp_path / "nope.jsonl"))


def test_deeply_nested_line_gives_an_error_line_and_the_run_continues(tmp_path):
    lines = [
        json.dumps({"pred": "1/2", "gold": "0.5"}),
        "[" * 5000 + "]" * 5000,
        '{"pred": "1", "gold": "1", "note": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}",
        json.dumps({"pred": "(" * 2000 + "1" + ")" * 2000, "gold": "1"}),
        json.dumps({"pred": "2", "gold": "2"}),
    ]
    rows, summary = run(tmp_path, lines)
    assert [row["line"] for row in rows] == [1, 2, 3, 4, 5]
    assert [row["method"] for row in rows[1:3]] == ["input-error"] * 2
    assert all("nested too deeply" in row["error"] for row in rows[1:3])
    assert rows[3]["equivalent"] is None and rows[3]["method"] != "input-error"  # the checker's own limit
    assert rows[0]["equivalent"] is True and rows[4]["equivalent"] is True
    assert "2 bad lines" in summary
