"""Whether a campaign is ready for a real study: the checklist the campaign page shows and the start refuses on.

Like a crowd platform's own study setup, each item says what is missing and what to do about it. Items marked
``blocking`` stop a draft from starting (a study whose workers finish without a completion code, or whose pay
promises a bonus no rule can pay, fails its first real participant); the others are warnings the admin reads.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate.models import Campaign
from annotate.protocols import protocol_for
from annotate.services.bonus_rule import BY_REVIEW, NO_BONUS, ON_CHECKS, UNCHECKED, bonus_rule
from annotate.services.gold import campaign_has_checks


@dataclass(frozen=True)
class ReadinessItem:
    key: str
    title: str
    ok: bool
    blocking: bool
    detail: str
    #: The section of the campaign's settings page where this item is fixed (None: elsewhere, e.g. an upload).
    settings_section: str | None = None

    @property
    def stops_start(self) -> bool:
        return self.blocking and not self.ok


def study_readiness(campaign: Campaign) -> list[ReadinessItem]:
    """The checklist, in the order an admin works through it."""
    protocol = protocol_for(campaign.kind)
    items = [
        ReadinessItem(
            "items", "Items to annotate", campaign.items.exists(), True,
            "The campaign has items." if campaign.items.exists()
            else "Upload a dataset on this page (Uploads) or with manage.py import_dataset; a campaign without items has nothing to show.",
        ),
    ]
    codes = bool(campaign.prolific_completion_code and campaign.prolific_screenout_code)
    if campaign.crowd_platform == "prolific":
        items.append(ReadinessItem(
            "exits", "Prolific completion and screen-out codes", codes, True,
            "Both codes are set; paste the Prolific study link below into your Prolific study." if codes else
            "Set the completion code and the screen-out code of your Prolific study in the campaign's settings (Crowd "
            "platform and exits): without them workers finish with no code to return and cannot be paid, and "
            "screened-out workers cannot be told apart.", "crowd",
        ))
    else:
        where = {"mturk": "MTurk (the HIT's form returns the worker)", "invited": "invited workers with an account here"}
        items.append(ReadinessItem(
            "exits", "Where workers come from", True, True,
            f"Workers come from {where.get(campaign.crowd_platform, campaign.crowd_platform)}; no exit codes are needed.", "crowd",
        ))
    if campaign.qualification_required:
        source = protocol.qualification_source(campaign)
        own = source in ("imported", "campaign")
        ready = own or campaign.shipped_qualification_accepted
        items.append(ReadinessItem(
            "qualification", "Qualification", ready, True,
            f"The qualification is drawn from the campaign's {'imported material' if source == 'imported' else 'own gold'}."
            if own else (
                "The shipped qualification pool is accepted knowingly (its keys are public in the source code)."
                if ready else
                "The qualification has no material of its own: import some (manage.py import_training_material), add "
                "gold to the campaign, accept the shipped pool knowingly on the quality-control page (its keys are "
                "public), or turn the qualification off in the campaign's settings."
            ), "qualification",
        ))
    bonus = bonus_rule(campaign)
    if bonus.basis == BY_REVIEW or not protocol.bonus_at_submission:
        # The protocol settles its bonus from expert review (BUMP), not from checks at submission.
        items.append(ReadinessItem("bonus", "Bonus rule", True, True, "A bonus is paid for each edit that review accepts.", "pay"))
        return items
    checks = campaign_has_checks(campaign)
    items.append(ReadinessItem(
        "checks", "Quality checks", checks, False,
        "Workers are scored on control items or traps." if checks else
        "No gold labels and no traps: no worker's answers are checked. Add gold on the control page or set a trap rate.",
        "quality",
    ))
    # A warning, not a stop: the worker page and the pay rules follow the same rule (annotate.services.bonus_rule).
    unchecked = (": with no gold and no traps it is paid on every item submitted at the minimum time, whatever the answers"
                 if bonus.basis == UNCHECKED else " (it needs erroneous private gold or traps from human edits)")
    items.append(ReadinessItem(
        "bonus", "Bonus rule", bonus.basis in (NO_BONUS, ON_CHECKS), False,
        "No quality bonus is offered." if bonus.basis == NO_BONUS else (
            f"{bonus.reason[0].upper()}{bonus.reason[1:]}." if bonus.basis == ON_CHECKS else
            f"A bonus of {campaign.bonus_per_item} per item is offered, but no check can ever pay it{unchecked}. "
            "Add erroneous gold on the control page, or set the bonus to 0."
        ), "pay",
    ))
    return items


def start_problems(campaign: Campaign) -> list[ReadinessItem]:
    """The blocking items still open: a draft with any of them does not start."""
    return [item for item in study_readiness(campaign) if item.stops_start]
