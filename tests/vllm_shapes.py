"""vLLM's answer shapes that the loopback server (tests/llm_server.py) gives when asked.

`prompt_logprobs(rows, k)` is vLLM's ``choices[0].prompt_logprobs`` for a prompt scored as
`rows` ([(token text, logprob, {text: logprob} of the candidates at that position)], the
server's scorer): null for the first token, then per position ``{token id: {"logprob", "rank",
"decoded_token"}}`` whose first key is the prompt's own token, with its rank among the
candidates (1 + how many are more likely), followed by the k most likely candidates, ranked
1..k. When the prompt's token is among them it appears once, first (vLLM inserts it first and
the top-k insertion only updates it). Token ids are made up, one per distinct text.
"""


def prompt_logprobs(rows, k):
    ids = {}

    def token_id(text):
        return str(ids.setdefault(text, 1000 + len(ids)))

    entries = [None]
    for token, logprob, top in list(rows)[1:]:
        others = {text: value for text, value in (top or {}).items() if text != token}
        rank = 1 + sum(1 for value in others.values() if value > logprob)
        entry = {token_id(token): {"logprob": logprob, "rank": rank, "decoded_token": token}}
        candidates = sorted({**others, token: logprob}.items(), key=lambda item: -item[1])[: max(0, int(k))]
        for place, (text, value) in enumerate(candidates, start=1):
            key = token_id(text)
            if key in entry:
                entry[key]["rank"] = place
            else:
                entry[key] = {"logprob": value, "rank": place, "decoded_token": text}
        entries.append(entry)
    return entries
