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
