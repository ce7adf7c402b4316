"""Each protocol app registers its own models in the Django admin (Django finds its ``admin.py``): BUMP's edits and
checkpoint codes and FRANK's reading-check answers are listed there, next to the shared assignment they belong to."""
from __future__ import annotations

import pytest

from annotate.frank.services import check_entity_answer
from annotate.services.assignments import request_assignment, submit_assignment
from tests.factories import BUMP_REFERENCE, make_bump_document, make_campaign, make_document, make_worker, qualify

pytestmark = pytest.mark.django_db


def test_the_admin_lists_each_protocol_app_s_own_rows(admin_client):
    bump = make_campaign(kind="bump_free")
    make_bump_document(bump)
    editor = make_worker()
    qualify(editor, bump)
    claimed = request_assignment(editor, bump)
    submit_assignment(claimed.pk, editor, {"checkpoint": claimed.checkpoint.code, "edited": BUMP_REFERENCE.replace("Merck", "Pfizer")})
    frank = make_campaign(entity_check_enabled=True, trap_rate=0.0)
    make_document(frank, negative_entity="Zanzibar Quorn")
    reader = make_worker()
    qualify(reader, frank)
    checked = request_assignment(reader, frank)
    check_entity_answer(checked.pk, reader, (checked.layout["entity"]["answer"] + 1) % 3)

    assert claimed.checkpoint.code in admin_client.get("/admin/bump/checkpoint/").content.decode()
    edit = admin_client.get(f"/admin/bump/edit/{claimed.edit.pk}/change/")
    assert edit.status_code == 200 and "Pfizer" in edit.content.decode()
    answers = admin_client.get("/admin/frank/entityanswer/")
    assert answers.status_code == 200 and f"reading check of assignment {checked.pk}: wrong" in answers.content.decode()
