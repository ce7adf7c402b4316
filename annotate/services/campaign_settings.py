"""A campaign's settings as an admin edits them: grouped as a study is set up, checked by one rule, saved at once.

The groups follow the order of a crowd platform's study setup (where workers come from and how they leave,
what they are paid, who may start, how their work is checked, how many judge each item). Which fields a
campaign shows depends on its protocol: workers who label sentences are checked with traps and control
items, workers who edit summaries (BUMP) by review. The API's campaign PATCH checks the same rules
(:func:`campaign_settings_errors`), and so does the settings page, so neither stores what the other refuses.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from annotate.models import Campaign
from annotate.protocols import PROTOCOLS, protocol_for
from annotate.services.campaigns import campaign_setting_problems

#: The field a campaign constraint is reported on, so that a refusal names what to change.
CONSTRAINT_FIELDS = {
    "completion_code_differs_from_screen_out_code": "prolific_screenout_code",
    "campaign_min_workers_le_max": "min_workers",
}
NON_FIELD = "__all__"

# Fields that only mean something where workers label sentences (traps, control items, label models), or
# only where they edit summaries (edit distance, review-based pay holds).
SENTENCE_ONLY = frozenset({
    "entity_check_enabled", "trap_rate", "trap_block_threshold", "trap_min_count",
    "control_share", "control_min_per_class", "control_block_threshold", "crowd_gold_posterior",
    "bonus_min_score", "bonus_confidence", "bonus_streak_size", "bonus_streak_amount", "bonus_on_public_labels",
    "adaptive_redundancy", "min_workers", "max_workers", "stop_posterior", "label_model",
})
EDIT_ONLY = frozenset({"max_edit_distance", "unreviewed_paid_edits", "max_not_applicable_share", "max_rejected_edit_share"})


@dataclass(frozen=True)
class SettingsSection:
    key: str  # the page's anchor (#settings-<key>), which the readiness checklist links to
    title: str
    intro: str
    fields: tuple[str, ...]
    # Where workers edit summaries instead of labelling sentences, a section may read differently.
    title_for_edits: str = ""
    intro_for_edits: str = ""


SECTIONS: tuple[SettingsSection, ...] = (
    SettingsSection(
        "crowd", "Crowd platform and exits",
        "Where workers come from and how they leave. A Prolific study returns every worker with a code: the "
        "completion code to those who finished, the screen-out code to those screened out. Copy both from your "
        "Prolific study's setup.",
        ("crowd_platform", "prolific_completion_code", "prolific_screenout_code", "completion_min_items",
         "mturk_items_per_assignment", "new_crowd_workers_per_hour", "unattended_release_minutes"),
    ),
    SettingsSection(
        "pay", "Pay and bonus",
        "What a worker earns per item, and the quality bonus on top. A bonus is paid only where a check can "
        "tell good work from bad (private gold, traps from human edits, or a reviewed edit).",
        ("pay_per_item", "bonus_per_item", "bonus_min_score", "bonus_confidence", "bonus_streak_size",
         "bonus_streak_amount", "bonus_on_public_labels", "unreviewed_paid_edits"),
    ),
    SettingsSection(
        "qualification", "Qualification and tutorial",
        "Who may start: the tutorial shows the task, the qualification test admits only those who pass it.",
        ("tutorial_required", "qualification_required", "qualification_pass_score", "qualification_attempts",
         "shipped_qualification_accepted"),
    ),
    SettingsSection(
        "quality", "Quality checks: traps and control items",
        "How work is checked while it is done. Traps are sentences whose answer is known, placed among the real "
        "ones; control items are real items with a known (gold) label. A worker whose checked answers fall below "
        "the threshold is blocked.",
        ("entity_check_enabled", "trap_rate", "trap_block_threshold", "trap_min_count", "min_seconds_per_sentence",
         "control_share", "control_min_per_class", "control_block_threshold", "crowd_gold_posterior",
         "max_edit_distance", "max_not_applicable_share", "max_rejected_edit_share"),
        "Quality checks: edit rules and review",
        "How edits are checked: an edit must stay minimal, and expert review accepts, corrects or rejects it. A worker "
        "who works faster than the text can be read, or whose edits are often rejected, has their pay held until "
        "an admin looks at their work.",
    ),
    SettingsSection(
        "redundancy", "Redundancy",
        "How many workers judge each item. Adaptive redundancy starts with the minimum and asks for more only "
        "where the labels are still uncertain.",
        ("redundancy", "assignment_timeout_minutes", "adaptive_redundancy", "min_workers", "max_workers",
         "stop_posterior", "label_model"),
        "Redundancy",
        "How many workers edit each summary (BUMP: one; each edit is then reviewed), and how long one may hold it.",
    ),
)

#: Labels and help for fields whose model help text is missing or written for developers; the rest use the model's.
FIELD_TEXT: Mapping[str, tuple[str, str]] = {
    "crowd_platform": ("Crowd platform", "Where workers come from: a Prolific study needs both codes below before it starts."),
    "prolific_completion_code": ("Prolific completion code", "The code Prolific gave your study for completed submissions; shown to a worker who finished."),
    "prolific_screenout_code": ("Prolific screen-out code", "A second code from Prolific (must differ from the completion code); shown to a worker who failed the qualification or was blocked."),
    "completion_min_items": ("Items before the completion code", "How many items a crowd worker submits before the completion code is shown."),
    "mturk_items_per_assignment": ("Items per MTurk assignment", "How many items one MTurk assignment covers (the HIT's reward pays for them)."),
    "new_crowd_workers_per_hour": ("New crowd workers per hour", "A cap on new crowd identities per hour, against hoarding and farmed identities."),
    "unattended_release_minutes": ("Release unattended items after (minutes)", "An item whose page was closed is given to someone else after this long."),
    "pay_per_item": ("Pay per item", "Base pay for each submitted item, in the platform's currency."),
    "bonus_per_item": ("Bonus per item", "Quality bonus per item, paid only when the checks say the work is good; 0 offers none."),
    "bonus_min_score": ("Bonus threshold", "The share of checked answers (0–1) a worker needs for the bonus."),
    "bonus_confidence": ("Bonus confidence", "How sure the score must be before a bonus is paid (0–0.999); 0 uses the score itself."),
    "bonus_streak_size": ("Streak length", "Items in a row, all above the threshold, that earn the streak bonus."),
    "bonus_streak_amount": ("Streak bonus", "Paid once per streak."),
    "bonus_on_public_labels": ("Bonus on published labels (risky)", "Let gold taken from published labels earn bonuses; a worker holding the published labels passes every check without reading."),
    "unreviewed_paid_edits": ("Edits paid before review", "Edits a worker is paid for while they wait for review; the pay of further edits waits for their review."),
    "tutorial_required": ("Tutorial first", "Workers go through the tutorial before the qualification or the task."),
    "qualification_required": ("Qualification test", "Workers must pass a qualification test before the task."),
    "qualification_pass_score": ("Pass mark", "The share of right answers (0–1) that passes the qualification."),
    "qualification_attempts": ("Attempts", "How many times a worker may take the qualification test."),
    "shipped_qualification_accepted": ("Use the shipped qualification (risky)", "Without material of its own, use the protocol's shipped test; its answers are public in the source code."),
    "entity_check_enabled": ("Reading check", "Ask which names the article mentions; two failures screen a worker out (paid for the work done)."),
    "trap_rate": ("Trap rate", "Share of items (0–1) that carry a trap sentence with a known answer."),
    "trap_block_threshold": ("Trap block threshold", "A worker whose trap score falls below this share (0–1) is blocked."),
    "trap_min_count": ("Traps before blocking", "Traps a worker answers before the trap score can block them."),
    "min_seconds_per_sentence": ("Minimum seconds per sentence", "Reading time per sentence shown (article and summary): a faster submission is too fast, counts for no completion code and can hold pay."),
    "control_share": ("Control share", "Share of each worker's items (0–1) that carry gold labels."),
    "control_min_per_class": ("Control answers per class", "Checked answers needed on factual and on erroneous sentences before the control score decides."),
    "control_block_threshold": ("Control block threshold", "A worker whose balanced control score (0.5 = chance) falls below this is blocked."),
    "crowd_gold_posterior": ("Gold from agreement", "0: off. Else a sentence becomes gold once trusted workers agree on it with at least this posterior."),
    "max_edit_distance": ("Maximum edit distance", "Words an edit may change at most (BUMP's minimal edits)."),
    "max_not_applicable_share": ("N/A share that holds pay", "A worker answering N/A more often than this (after 5 items) has their pay held for review."),
    "max_rejected_edit_share": ("Rejected share that holds pay", "A worker with more of their edits rejected than this (after 4 reviewed) has their pay held for review."),
    "redundancy": ("Workers per item", "How many workers judge each item (fixed redundancy)."),
    "assignment_timeout_minutes": ("Time per item (minutes)", "An item not submitted in this time goes back to the pool."),
    "adaptive_redundancy": ("Adaptive redundancy", "Ask more workers only where the labels are still uncertain."),
    "min_workers": ("Minimum workers per item", "Adaptive redundancy: every item gets at least this many."),
    "max_workers": ("Maximum workers per item", "Adaptive redundancy: never more than this many."),
    "stop_posterior": ("Stop when this certain", "Adaptive redundancy: stop asking once every label's posterior reaches this (0.5–1)."),
    "label_model": ("Label model", "The model that turns the workers' answers into labels (and their certainty)."),
}


def campaign_sections(campaign: Campaign) -> list[SettingsSection]:
    """The sections with the fields that apply to the campaign's protocol (empty sections left out)."""
    sentences = protocol_for(campaign.kind).labels_sentences
    skipped = EDIT_ONLY if sentences else SENTENCE_ONLY
    sections = []
    for section in SECTIONS:
        fields = tuple(name for name in section.fields if name not in skipped)
        if fields:
            title, intro = (section.title, section.intro) if sentences or not section.title_for_edits else (
                section.title_for_edits, section.intro_for_edits)
            sections.append(SettingsSection(section.key, title, intro, fields))
    return sections


def editable_fields(campaign: Campaign) -> list[str]:
    return [name for section in campaign_sections(campaign) for name in section.fields]


class CampaignSettingsRejected(ValueError):
    """Settings refused as a whole; ``errors`` maps each field (or ``__all__``) to what is wrong with it."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{field}: {' '.join(messages)}" for field, messages in errors.items()))


def campaign_settings_errors(campaign: Campaign) -> dict[str, list[str]]:
    """What the campaign's database constraints and its kind refuse in its current (unsaved) values, by field."""
    errors: dict[str, list[str]] = {}
    for constraint in Campaign._meta.constraints:
        try:
            constraint.validate(Campaign, campaign)
        except ValidationError as exc:
            errors.setdefault(CONSTRAINT_FIELDS.get(constraint.name, NON_FIELD), []).extend(exc.messages)
    if campaign.kind in PROTOCOLS:  # an unknown kind is the kind field's own error
        for field, message in campaign_setting_problems(campaign.kind, vars(campaign)).items():
            errors.setdefault(field, []).append(message)
    return errors


def save_campaign_settings(campaign: Campaign, values: Mapping[str, object]) -> Campaign:
    """Store ``values`` (field name -> value, among :func:`editable_fields`) all together or none of them.

    The row is locked while the values are checked against its latest state, so two admins saving at once
    cannot together store a combination that neither form allowed. Raises ``CampaignSettingsRejected``.
    """
    allowed = set(editable_fields(campaign))
    unknown = sorted(set(values) - allowed)
    if unknown:
        raise CampaignSettingsRejected({name: ["not a setting of this campaign"] for name in unknown})
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        for name, value in values.items():
            setattr(locked, name, value)
        try:
            locked.full_clean(exclude=["researchers", "reviewers"], validate_unique=False, validate_constraints=False)
        except ValidationError as exc:
            raise CampaignSettingsRejected(exc.message_dict) from exc
        errors = campaign_settings_errors(locked)
        if errors:
            raise CampaignSettingsRejected(errors)
        locked.save(update_fields=[*values, "updated_at"])
    return locked
