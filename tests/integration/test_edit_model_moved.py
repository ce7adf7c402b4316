"""BUMP's Edit model moved from the shared app into the BUMP app without moving data: an edit stored before the
move is the same row, read through the BUMP app's model, after it."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotate", "0011_campaign_reviewers"), ("bump", None)]
AFTER = [("annotate", "0012_edit_moves_to_bump"), ("bump", "0001_edit")]


@pytest.mark.django_db(transaction=True)
def test_an_edit_stored_before_the_move_is_read_by_the_bump_app_after_it():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE[:1]).apps
    assert old.get_model("annotate", "Edit")._meta.db_table == "annotate_edit"
    campaign = old.get_model("annotate", "Campaign").objects.create(slug="moved", name="Moved", kind="bump_free")
    document = old.get_model("annotate", "Document").objects.create(campaign=campaign, external_id="1", text="An article.")
    summary = old.get_model("annotate", "Summary").objects.create(document=document, system="reference", text="A summary .")
    stored = old.get_model("annotate", "Edit").objects.create(source_summary=summary, text="A changed summary .", word_distance=1)

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    with pytest.raises(LookupError):
        new.get_model("annotate", "Edit")
    moved = new.get_model("bump", "Edit").objects.get()
    assert (moved.pk, moved.text, moved.word_distance, moved.source_summary_id) == (stored.pk, "A changed summary .", 1, summary.pk)

    from annotate.bump.models import Edit

    assert Edit._meta.db_table == "annotate_edit" and Edit.objects.get().pk == stored.pk
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())  # the schema every later test expects
