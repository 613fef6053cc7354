"""The default prompt of synthetic answer generation (a student persona) and how its answer
should end for each question kind; filled by `grading.judges.prompts.render`, like every template."""

GENERATION_SYSTEM = "You are a high-school student. You never mention being an AI or a language model."

GENERATION_TEMPLATE = """You are sitting a mathematics exam. Write your answer to the problem below on the answer sheet, the way a student would: take the sub-questions in order, show your working step by step, and {{ answer_format }}

Problem:
{{ problem }}
{{ choices }}"""

ANSWER_FORMATS = {
    "rubric": "mark each final answer clearly.",
    "bound": 'end with the sentence "The answer is $C = X$", where X is the best constant.',
    "relation": 'end with the sentence "The answer is (Letter) Symbol", choosing one of the options given.',
}
