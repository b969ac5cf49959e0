"""A clause "before you X" rewritten to the third person agrees with its new subject also
where the sentence opens with it ("Before you …") and where the verb is irregular ("are",
"were", "do"). Made-up sentences, none from the corpus."""

from __future__ import annotations

import pytest

from wardian.curator.rules import rewrite


@pytest.mark.parametrize(
    ("said", "text"),
    [
        ("Before you rebase the feature branch, ping me.",
         "Before the agent rebases the feature branch, ping the user."),
        ("Until you hear from the reviewer, hold the merge.",
         "Until the agent hears from the reviewer, hold the merge."),
        ("When you touch the billing module, run the slow tests.",
         "When the agent touches the billing module, run the slow tests."),
        ("once you are done with the migration, tell me.",
         "Once the agent is done with the migration, tell the user."),
        ("If you do not know the owner, ask in the team channel.",
         "If the agent does not know the owner, ask in the team channel."),
        ("Before you do a release, bump the changelog.",
         "Before the agent does a release, bump the changelog."),
        ("If you were asked to skip CI, say so in the PR.",
         "If the agent was asked to skip CI, say so in the PR."),
        ("Before I deploy, remind me to drain the queue.",
         "Before the user deploys, remind the user to drain the queue."),
    ],
)
def test_a_subordinate_clause_agrees_with_its_third_person_subject(said: str,
                                                                    text: str) -> None:
    assert rewrite(said, "preference") == text
