"""Notices the crowd side sends; the metrics service receives them (``metrics_service/apps.py``).

``annotate`` imports nothing of ``metrics_service``: what the metrics must do after a change here is theirs to
decide. Sent synchronously, inside the sender's transaction where there is one (receivers that queue work
do it after the commit).
"""
from django.dispatch import Signal

#: A campaign's data changed (judgements submitted, a dataset imported): figures computed from it are stale.
#: Arguments: ``campaign``, ``delay`` (seconds to wait for more changes; ``None``: the configured debounce).
campaign_data_changed = Signal()

#: New summaries were stored in a campaign (a BUMP edit): the campaign's ``auto_score_metrics`` score them.
#: Arguments: ``campaign``, ``summary_ids``. Sent after the commit; a receiver's failure never undoes the edit.
summaries_added = Signal()
