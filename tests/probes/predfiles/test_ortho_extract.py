"""Item extraction for the orthographic switch probe: raw-text matching, context rules, alignment."""

from __future__ import annotations

import pytest

from asr_audit.errors import ConfigError
from asr_audit.probes.predfiles.conventions import (
    available_families,
    available_groups,
    form_regex,
    get_family,
    resolve_families,
)
from asr_audit.probes.predfiles.ortho import classify, find_occurrences, reference_items, tokenize

# (text, family, [(matched text, role), ...]) on the reference side (context rules on)
CASES = [
    ("Thank you, Mr. President.", "mr", [("Mr", "B")]),
    ("Thank you, Mr President.", "mr", [("Mr", "B")]),
    ("THANK YOU MISTER PRESIDENT", "mr", [("MISTER", "A")]),  # single-case text: any next word
    ("thank you mister president", "mr", [("mister", "A")]),
    ("Hey mister, wait for me.", "mr", []),  # vocative, no name follows
    ("Mr and Mrs Smith came.", "mr", []),  # 'and' is not a capitalised name
    ("Mr and Mrs Smith came.", "mrs", [("Mrs", "B")]),
    ("Mrs. Smith spoke.", "mr", []),  # "Mr" never matches inside "Mrs"
    ("Then Missus Smith spoke.", "mrs", [("Missus", "A")]),
    ("Ask the missus first.", "mrs", []),
    ("Dr. Jones will see you.", "dr", [("Dr", "B")]),
    ("The doctor said no.", "dr", []),
    ("Then Doctor Jones said no.", "dr", [("Doctor", "A")]),
    ("He lives on Baker St. near the park.", "st", []),  # street: no capitalised name follows
    ("We visited St. Paul's Cathedral.", "st", [("St", "B")]),
    ("They flew to Saint Petersburg.", "st", [("Saint", "A")]),
    ("She was a saint and a scholar.", "st", []),
    ("I saw him to-day.", "to_day", [("to-day", "A")]),
    ("I saw him to\u2011day.", "to_day", [("to\u2011day", "A")]),  # non-breaking hyphen
    ("TO DAY WE VOTE", "to_day", [("TO DAY", "A")]),
    ("Today, we vote.", "to_day", [("Today", "B")]),
    ("It changes from day to day.", "to_day", []),
    ("The day-to-day business.", "to_day", []),
    ("We skip to day one of the plan.", "to_day", []),
    ("We skip to day 3.", "to_day", []),
    ("From day to night it rained.", "to_night", []),
    ("She went to night school.", "to_night", []),
    ("We meet to-night.", "to_night", [("to-night", "A")]),
    ("Anyone's guess.", "any_one", [("Anyone", "B")]),
    ("Any one of them may speak.", "any_one", [("Any one", "A")]),
    ("Any  one\tof them.", "any_one", [("Any  one", "A")]),
    ("Any one-off payment.", "any_one", []),
    ("No one came.", "no_one", [("No one", "A")]),
    ("No-one came.", "no_one", [("No-one", "B")]),
    ("It is 50% more.", "percent_sign", [("%", "B")]),
    ("It is fifty per cent more.", "percent_sign", [("per cent", "A")]),
    ("It is fifty per cent more.", "per_cent", [("per cent", "A")]),
    ("It is fifty percent more.", "per_cent", [("percent", "B")]),
    ("O.K., fine.", "okay", [("O.K", "B")]),
    ("OK, fine.", "okay", [("OK", "B")]),
    ("Okay, fine.", "okay", [("Okay", "A")]),
    ("Send an e-mail.", "e_mail", [("e-mail", "A")]),
    ("Send an email.", "e_mail", [("email", "B")]),
    ("It is all right.", "all_right", [("all right", "A")]),
    ("For ever and ever, forever.", "for_ever", [("For ever", "A"), ("forever", "B")]),
    ("Everything, every thing, everyday.", "every_thing", [("Everything", "B"), ("every thing", "A")]),
]


@pytest.mark.parametrize(("text", "family", "expected"), CASES)
def test_reference_occurrences(text: str, family: str, expected: list[tuple[str, str]]) -> None:
    fam = get_family(family)
    got = [(o.text, fam.arms[o.arm].role) for o in find_occurrences(text, fam)]
    assert got == expected


def test_hypothesis_side_skips_context_rules() -> None:
    fam = get_family("mr")
    assert find_occurrences("hey mister, wait", fam) == []
    assert [o.text for o in find_occurrences("hey mister, wait", fam, context=False)] == ["mister"]


def test_form_regex_boundaries() -> None:
    import re

    assert re.search(form_regex("mr"), "Mr.", re.I)
    assert not re.search(form_regex("mr"), "Mrs", re.I)
    assert not re.search(form_regex("to-day"), "day-to-day", re.I)
    assert re.search(form_regex("%"), "50%")


def test_tokenize_splits_hyphens_and_keeps_percent() -> None:
    assert [t.norm for t in tokenize("To-day 50% — O'Neil’s")] == ["to", "day", "50", "%", "o'neil's"]


# (reference, hypothesis, family, statuses of the reference's items in order)
CLASSIFY = [
    ("Mr President, thanks.", "THANK YOU MISTER PRESIDENT THANKS", "mr", ["other"]),
    ("Mr President, thanks.", " Mr. President, thanks.", "mr", ["same"]),
    ("Mr President, thanks.", "President, thanks.", "mr", ["neither"]),
    ("Mr Smith and Mr Jones", "Mister Smith and Mr Jones", "mr", ["other", "same"]),
    ("Mr Smith and Mr Jones", "Mr Smith and Mister Jones", "mr", ["same", "other"]),
    ("Today we vote.", "to-day we vote", "to_day", ["other"]),
    ("Today we vote.", "TO DAY WE VOTE", "to_day", ["other"]),
    ("To-day we vote.", "Today we vote.", "to_day", ["other"]),
    ("To-day we vote.", "to day we vote", "to_day", ["same"]),
    ("Today we vote.", "we vote", "to_day", ["neither"]),
    ("Anyone can.", "any one can", "any_one", ["other"]),
    ("It is 5% now.", "it is five percent now", "percent_sign", ["other"]),
    ("It is 5% now.", "it is 5 % now", "percent_sign", ["same"]),
    ("Thank you, Mr. President.", "thank you mrs president", "mr", ["neither"]),
]


@pytest.mark.parametrize(("ref", "hyp", "family", "expected"), CLASSIFY)
def test_classify(ref: str, hyp: str, family: str, expected: list[str]) -> None:
    fam = get_family(family)
    items = reference_items("c1", ref, [fam])
    got = classify(items, fam, ref, tokenize(ref), hyp, tokenize(hyp))
    assert [status for status, _, _ in got] == expected
    for (status, arm, text), item in zip(got, items):
        if status == "same":
            assert arm == item.ref_arm and text
        elif status == "other":
            assert arm is not None and arm != item.ref_arm


def test_registry_resolution_and_errors() -> None:
    assert [f.name for f in resolve_families(["honorific"])] == ["mr", "mrs", "dr", "st"]
    assert [f.name for f in resolve_families(["to_day", "mr"])] == ["mr", "to_day"]  # registry order
    assert {"honorific", "spacing"} <= set(available_groups())
    with pytest.raises(ConfigError, match="families mr, mrs"):
        resolve_families(["bogus"])
    every = resolve_families(None)
    assert [f.name for f in every] == available_families()
    for fam in every:  # every family documents why its arms sound the same, one arm per role
        assert fam.why and sorted(a.role for a in fam.arms) == ["A", "B"]
