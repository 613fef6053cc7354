"""The answer-check page (grading.judges.answer_check.answer_check, /grading/equivalence/): login, any role, verdicts, escaping."""
import pytest
from django.contrib.auth.models import User
from django.urls import reverse

URL = reverse("grading:equivalence")


@pytest.mark.django_db
def test_anonymous_users_are_sent_to_login(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
    assert client.post(URL, {"pred": "1", "gold": "1", "mode": "default"}).status_code == 302


@pytest.mark.django_db
def test_any_logged_in_user_may_use_it_even_without_a_role(client):
    user = User.objects.create_user("norole", password="a-long-test-password")
    client.force_login(user)
    response = client.get(URL)
    assert response.status_code == 200
    assert b'name="pred"' in response.content and b'name="gold"' in response.content


def test_page_is_linked_from_the_navigation(annotator_client):
    response = annotator_client.get(reverse("annotation:question_list"))
    assert f'href="{URL}"'.encode() in response.content
    assert b"Answer check" in response.content


def test_verdict_and_both_parsed_forms_are_shown(annotator_client):
    response = annotator_client.post(URL, {"pred": r"x \geq 2", "gold": r"[2, +\infty)", "mode": "default"})
    assert response.status_code == 200
    verdict = response.context["verdict"]
    assert verdict.equivalent is True
    html = response.content.decode()
    assert 'id="eq-label">Equivalent<' in html
    assert 'id="eq-pred-math"' in html and 'id="eq-gold-math"' in html
    assert "$$x \\geq 2$$" in html  # sympy's LaTeX, for KaTeX to render
    assert "[2, \u221e)" in html


def test_not_equivalent_and_strict_mode(annotator_client):
    response = annotator_client.post(URL, {"pred": "6.28318", "gold": r"2\pi", "mode": "strict"})
    assert response.context["verdict"].equivalent is False
    assert 'id="eq-label">Not equivalent<' in response.content.decode()
    response = annotator_client.post(URL, {"pred": "6.28318", "gold": r"2\pi", "mode": "default"})
    assert response.context["verdict"].equivalent is True


def test_undecided_is_shown_as_such(annotator_client):
    response = annotator_client.post(URL, {"pred": "2^{-x}", "gold": "1 +", "mode": "default"})
    assert response.context["verdict"].equivalent is None
    assert 'id="eq-label">Undecided<' in response.content.decode()


def test_user_text_is_escaped(annotator_client):
    hostile = '<script>alert("x")</script>'
    response = annotator_client.post(URL, {"pred": hostile, "gold": "\\text{<img src=x onerror=alert(1)>}", "mode": "default"})
    html = response.content.decode()
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;" in html


def test_missing_fields_are_form_errors_not_crashes(annotator_client):
    response = annotator_client.post(URL, {"pred": "1", "mode": "default"})
    assert response.status_code == 200
    assert response.context["verdict"] is None
    assert response.context["form"].errors["gold"]


def test_get_parameters_prefill_the_form(annotator_client):
    response = annotator_client.get(URL, {"pred": "1/2", "gold": "0.5", "mode": "strict"})
    form = response.context["form"]
    assert form.initial == {"pred": "1/2", "gold": "0.5", "mode": "strict"}


def test_tolerance_policy_is_stated_on_the_page(annotator_client):
    html = annotator_client.get(URL).content.decode()
    assert 'id="eq-policy"' in html
    assert "rounded or truncated at its last written place" in html
    assert "<strong>Strict</strong> (IneqMath)" in html


def test_second_opinion_is_shown_beside_ours_and_disagreement_flagged(annotator_client):
    # 0.333 rounds 1/3 at its last place (our default policy); Math-Verify rounds to 6 places.
    response = annotator_client.post(URL, {"pred": "0.333", "gold": r"\frac{1}{3}", "mode": "default", "second_opinion": "on"})
    verdict = response.context["verdict"]
    assert verdict.equivalent is True
    assert verdict.second_opinion["checker"] == "Math-Verify"
    assert verdict.second_opinion["equivalent"] is False
    assert verdict.agreement == "disagree"
    html = response.content.decode()
    assert 'id="eq-label">Equal up to rounding<' in html  # ours is the verdict (an approximation)
    assert 'id="eq-second-label">not equivalent<' in html
    assert 'id="eq-disagree"' in html


def test_no_second_opinion_unless_asked(annotator_client):
    response = annotator_client.post(URL, {"pred": "1/2", "gold": "0.5", "mode": "default"})
    assert response.context["verdict"].second_opinion is None
    assert 'id="eq-second"' not in response.content.decode()


@pytest.mark.parametrize("pred, gold, label, decisive", [
    (r"\begin{cases} x+1, & x \ge 0 \\ -x, & x < 0 \end{cases}", "|x|", "Not equivalent", "breakpoint x = 0"),
    ("最大值为 2，最小值为 -1", "最小值为 2，最大值为 -1", "Not equivalent", "label 最小值"),
    ("(0, 1) 内递增", "(0, 1) 内递减", "Undecided", "word 递增 vs 递减"),
    ("12个", "12元", "Not equivalent", "units 个 / yuan"),
])
def test_the_decisive_branch_label_or_word_is_shown(annotator_client, pred, gold, label, decisive):
    html = annotator_client.post(URL, {"pred": pred, "gold": gold, "mode": "default"}).content.decode()
    assert f'id="eq-label">{label}<' in html
    assert f'id="eq-decisive-what">{decisive}<' in html


def test_an_approximation_has_its_own_verdict(annotator_client):
    html = annotator_client.post(URL, {"pred": "3.14", "gold": r"\pi", "mode": "default"}).content.decode()
    assert 'id="eq-label">Equal up to rounding<' in html
    assert 'id="eq-approximate"' in html
    exact = annotator_client.post(URL, {"pred": "0.5", "gold": r"\frac12", "mode": "default"}).content.decode()
    assert 'id="eq-label">Equivalent<' in exact and 'id="eq-approximate"' not in exact
    strict = annotator_client.post(URL, {"pred": "3.14", "gold": r"\pi", "mode": "strict"}).content.decode()
    assert 'id="eq-label">Not equivalent<' in strict


def test_the_page_lists_the_words_that_change_the_meaning(annotator_client):
    html = annotator_client.get(URL).content.decode()
    assert 'id="eq-meaning-words"' in html
    assert "递增" in html and "decreasing" in html and "不存在" in html


# --- issues 39 and 41: explanations in Chinese, the text taken from a whole solution, domains ---------

import ast  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

from django.utils import translation  # noqa: E402

from accounts.services import set_user_language  # noqa: E402
from equivalence import check_many  # noqa: E402
from equivalence.meaning import MEANING_WORDS  # noqa: E402
from grading.judges import answer_messages  # noqa: E402

from .cases import load_cases  # noqa: E402

LIBRARY = Path(__file__).resolve().parents[2] / "equivalence"
# English that may stay in a Chinese explanation: names of tools and notations, answer codes.
ALLOWED_WORDS = {"SymPy", "IneqMath", "Math-Verify", "rejected", "default", "strict", "det", "max", "min", "ln", "boxed",
                 "begin", "end", "overline", "pm", "mathbb", "modulo", "rad", "yuan", "jiao", "fen"}  # units are notation


def _library_templates():
    """Every template the library can emit, read from its source: M("...") calls (also in a
    conditional), the tables of templates, and the meaning-word groups."""
    found = set()
    for path in LIBRARY.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "M" and node.args:
                arg = node.args[0]
                branches = [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]
                found |= {b.value for b in branches if isinstance(b, ast.Constant) and isinstance(b.value, str)}
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("_ONLY_ONE", "template"):
                for sub in ast.walk(node.value):
                    if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "{" in sub.value:
                        found.add(sub.value)
    return found | set(MEANING_WORDS)


def _skeleton(data):
    """A message rendered in the active language with every answer-text field replaced by §."""
    if isinstance(data, dict) and "t" in data:
        params = {name: _skeleton(value) for name, value in (data.get("p") or {}).items()}
        return translation.gettext(data["t"]).format(**params)
    return "§"


def _english_words(text):
    return [word for word in re.findall(r"[A-Za-z][A-Za-z-]{2,}", text) if word not in ALLOWED_WORDS]


def test_every_template_of_the_engine_is_listed_and_translated():
    templates = _library_templates()
    assert len(templates) > 250
    listed = set(answer_messages.TEMPLATES)
    assert sorted(templates - listed) == []
    with translation.override("zh-hans"):
        untranslated = [t for t in templates if _english_words(translation.gettext(t).replace("{", " {"))
                        and translation.gettext(t) == t and re.search(r"[A-Za-z]{3,}", re.sub(r"\{\w+\}", "", t))]
        assert untranslated == []
        kept_fields = [t for t in templates if sorted(re.findall(r"\{\w*\}", t)) != sorted(re.findall(r"\{\w*\}", translation.gettext(t)))]
        assert kept_fields == []


def test_no_explanation_of_the_engine_is_english_in_the_chinese_interface():
    """Every explanation and decisive item over the case sets, rendered in Chinese: no English word
    outside the answers' own text (which the skeleton replaces by §)."""
    cases = load_cases()[::3] + load_cases(Path(__file__).with_name("heldout_solutions.jsonl"))
    verdicts = check_many([(case["pred"], case["gold"]) for case in cases], mode="default")
    verdicts += check_many([("C = \\sqrt{\\frac{n}{n-1}}", "C = \\frac{\\sqrt{n(n-1)}}{n-1}")], domain="n \\ge 2")
    texts = [case["pred"] + " " + case["gold"] for case in cases] + ["n"]
    english = []
    with translation.override("zh-hans"):
        for verdict, text in zip(verdicts, texts):
            answer_words = set(re.findall(r"[A-Za-z][A-Za-z-]{2,}", text))
            for data in (verdict.explanation_data, verdict.decisive_data):
                shown = _skeleton(data)
                if _english_words(shown):
                    english.append((verdict.explanation, shown))
                rendered = answer_messages.render(data)  # what the page shows, answer text included
                if [word for word in _english_words(rendered) if word not in answer_words]:
                    english.append((verdict.explanation, rendered))
            for code in (answer_messages.method_name(verdict.method), answer_messages.kind_name(verdict.pred_kind or "number")):
                if _english_words(code):
                    english.append((verdict.method, code))
    assert english == []


def _chinese_client(client):
    user = User.objects.create_user("zh-teacher", password="a-long-test-password")
    set_user_language(user, "zh-hans")
    client.force_login(user)
    return client


def _visible(html, element_id):
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</(?:span|p|div)>', html, re.S)
    return re.sub(r"<[^>]+>", "", match.group(1)) if match else ""


@pytest.mark.django_db
@pytest.mark.parametrize("pred, gold, decisive", [
    ("当 a ≥ 1 时, x > 1", "当 a > 1 时, x > 1", "分界点 a = 1"),
    ("a>1 时单调递增", "a>1", "词语 单调递增"),
    ("最大值为 2，最小值为 -1", "最小值为 2，最大值为 -1", "标签 最小值"),
    ("(0, 1) 内递增", "(0, 1) 内递减", "词语 递增 vs 递减"),
])
def test_the_chinese_page_explains_in_chinese(client, pred, gold, decisive):
    html = _chinese_client(client).post(URL, {"pred": pred, "gold": gold, "mode": "default"}).content.decode()
    assert 'lang="zh-Hans"' in html
    explanation = _visible(html, "eq-explanation")
    assert explanation and re.search(r"[\u4e00-\u9fff]", explanation)
    answer_words = set(re.findall(r"[A-Za-z]{3,}", pred + gold))
    assert [w for w in _english_words(explanation) if w not in answer_words] == [], explanation
    assert _visible(html, "eq-decisive-what") == decisive
    for element in ("eq-method", "eq-mode", "eq-pred-kind", "eq-gold-kind"):
        assert _english_words(_visible(html, element)) == [], (element, _visible(html, element))
    assert "default 模式" not in html and "默认模式" in html
    assert "金标准分" not in html  # the gold side is the gold answer (标准答案), not a score


def test_the_text_taken_from_a_whole_solution_is_shown(annotator_client):
    solution = ("We had $y = 12$ on the way.\n" * 300) + "Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct."
    assert len(solution) > 5000
    response = annotator_client.post(URL, {"pred": solution, "gold": "0.75", "mode": "default"})
    verdict = response.context["verdict"]
    assert verdict.equivalent is True and verdict.pred_answer == "\\frac{3}{4}" and verdict.pred_source == "answer-is"
    html = response.content.decode()
    assert 'id="eq-pred-taken"' in html and "\\frac{3}{4}" in _visible(html, "eq-pred-taken")
    assert 'id="eq-gold-taken"' not in html  # the gold was an answer as given


def test_a_stated_domain_is_used(annotator_client):
    pair = {"pred": "\\sqrt{\\frac{n}{n-1}}", "gold": "\\frac{\\sqrt{n(n-1)}}{n-1}", "mode": "default"}
    without = annotator_client.post(URL, pair).context["verdict"]
    assert without.equivalent is None and without.method == "numeric-points-domain"
    inside = annotator_client.post(URL, {**pair, "domain": "n \\ge 2, n \\in \\mathbb{N}^*"})
    assert inside.context["verdict"].equivalent is True
    html = inside.content.decode()
    assert "n ≥ 2" in _visible(html, "eq-decisive-what")
    bad = annotator_client.post(URL, {**pair, "domain": "n is big"}).context["verdict"]
    assert bad.equivalent is None and bad.method == "domain"


def test_explanations_of_the_library_are_data_with_their_structure():
    verdict = check_many([("a>1 时单调递增", "a>1")])[0]
    assert verdict.explanation.startswith("the first answer also says «单调递增»")
    assert verdict.explanation_data["t"].startswith("the first answer also says «{shown}»")
    json.dumps(verdict.as_dict())  # plain data all the way down


@pytest.mark.django_db
def test_the_second_opinion_is_explained_in_chinese_too(client):
    html = _chinese_client(client).post(URL, {"pred": "0.333", "gold": r"\frac{1}{3}", "mode": "default",
                                              "second_opinion": "on"}).content.decode()
    second = re.sub(r"<[^>]+>", "", re.search(r'id="eq-second"(.*?)</div>', html, re.S).group(1))
    assert "Math-Verify：不等价" in second
    assert _english_words(second.replace("Math-Verify", "")) == [], second
