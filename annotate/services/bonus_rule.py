"""Whether an item bonus can be paid in a campaign: the one rule the worker page, the control page, the
readiness checklist and the pay rules read, so that no page promises a bonus the pay rules refuse, nor warns
of one they pay.

* **none**: the campaign offers no item bonus (``bonus_per_item`` is 0);
* **review**: the protocol settles the bonus after a review of the work (BUMP: an accepted edit);
* **unchecked**: the campaign checks no answers (no gold, no traps), so the bonus is paid on every item
  submitted at the minimum time, like pay; the checklist warns the admin;
* **checks**: paid while the worker's balanced score on checks is high enough, which needs erroneous
  checks whose label the page does not give away (``Protocol.bonus_evidence``; sentence gold:
  :func:`~annotate.services.gold.bonus_evidence`);
* **no evidence**: the campaign has checks but none of them can earn a bonus (only public gold, or only traps
  built from the article, which a script finds): no bonus can be paid until such checks exist.

The pay rules decide each submission from the worker's own checks (``pay_rules.bonus_refusal``); a worker
can pass them only with at least ``control_min_per_class`` (at least 1) erroneous checks counted as
evidence here, so "no evidence" refuses there too.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate.models import Campaign
from annotate.protocols import protocol_for

from .gold import campaign_has_checks

NO_BONUS, BY_REVIEW, UNCHECKED, ON_CHECKS, NO_EVIDENCE = "none", "review", "unchecked", "checks", "no evidence"


@dataclass(frozen=True)
class BonusRule:
    """How an item bonus is earned in a campaign (``basis``, one of the module's five), and why, in words."""

    basis: str
    reason: str
    #: Erroneous sentences that can check a bonus (counted for the "checks" and "no evidence" bases).
    evidence: int | None = None
    #: Whether the campaign checks answers at all (gold or traps): the pay rules score a submission only then.
    checks: bool = True

    @property
    def possible(self) -> bool:
        """Whether some submission can be paid the item bonus under the campaign's settings and data.

        Examples
        --------
        >>> BonusRule(UNCHECKED, "no checks").possible, BonusRule(NO_EVIDENCE, "only public gold", 0).possible
        (True, False)
        """
        return self.basis in (BY_REVIEW, UNCHECKED, ON_CHECKS)

    @property
    def checked(self) -> bool:
        """Whether the bonus rests on the worker's answers being checked, whether or not a check can pay it yet
        (the worker page then says how it is earned)."""
        return self.basis in (ON_CHECKS, NO_EVIDENCE)


def bonus_rule(campaign: Campaign, *, count_evidence: bool = True, kept_evidence: bool = False) -> BonusRule:
    """How an item bonus can be earned in ``campaign`` (module docstring). ``count_evidence=False``: a campaign
    with checks is taken as "checks" without counting its evidence (the pay rules, which decide that per
    worker from the same checks); ``kept_evidence``: the evidence as last counted (a task page, which
    queries neither gold nor traps)."""
    amount = campaign.bonus_per_item
    protocol = protocol_for(campaign.kind)
    checks = campaign_has_checks(campaign)
    if amount <= 0:
        return BonusRule(NO_BONUS, "no item bonus is offered", checks=checks)
    if not protocol.bonus_at_submission:
        return BonusRule(BY_REVIEW, f"a bonus of {amount} is paid for each item that review accepts", checks=checks)
    if not checks:
        return BonusRule(UNCHECKED, f"a bonus of {amount} is paid on every item submitted at the minimum time: "
                                    "no answer is checked (no gold labels, no traps)", checks=False)
    evidence = protocol.bonus_evidence(campaign, kept=kept_evidence) if count_evidence else None
    if evidence is None:  # not counted: the worker's own checks decide
        return BonusRule(ON_CHECKS, f"a bonus of {amount} is paid while the worker's balanced control score is high enough")
    if evidence == 0:
        public = "" if campaign.bonus_on_public_labels else " that is private (public labels, e.g. a released benchmark's, do not count)"
        return BonusRule(NO_EVIDENCE, "a bonus needs erroneous sentences checked against labels the page does not give away, and "
                                      f"this campaign has none: no erroneous gold sentence{public} and no trap from a human BUMP edit", 0)
    return BonusRule(ON_CHECKS, f"a bonus of {amount} per item can be earned ({evidence} erroneous sentences can check it)", evidence)
