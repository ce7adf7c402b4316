"""Which campaign a page's slug names, from the cache: the submit and reading-check endpoints need only the
campaign's id and kind to find the worker's locked rows (which bring the campaign itself, fresh, with them),
so they do not read the campaign's ~60 columns once more per request.

The cache holds ``slug -> (id, kind)``, neither of which changes by an update of settings; a campaign's save or
deletion forgets its slug (the slug it was loaded with too, should the save rename it), in every process,
since the cache is shared (Redis). Entries also expire after :data:`REFERENCE_SECONDS`.
"""
from __future__ import annotations

from django.core.cache import cache
from django.db.models.signals import post_delete, post_init, post_save

from annotate.models import Campaign

REFERENCE_SECONDS = 600


def _key(slug: str) -> str:
    return f"factlab:campaign-ref:{slug}"


def campaign_reference(slug: str) -> Campaign | None:
    """An unsaved :class:`Campaign` holding only the id, slug and kind of the campaign named ``slug`` (None when
    none is): enough to lock the worker's rows in it, never to read its settings."""
    found = cache.get(_key(slug))
    if found is None:
        found = Campaign.objects.filter(slug=slug).values_list("pk", "kind").first()
        if found is None:
            return None
        cache.set(_key(slug), tuple(found), REFERENCE_SECONDS)
    pk, kind = found
    return Campaign(pk=pk, slug=slug, kind=kind)


def _remember_loaded_slug(sender, instance: Campaign, **kwargs) -> None:
    instance._loaded_slug = instance.__dict__.get("slug")


def _forget(sender, instance: Campaign, **kwargs) -> None:
    cache.delete_many([_key(slug) for slug in {instance.slug, getattr(instance, "_loaded_slug", None)} if slug])


def connect() -> None:
    """Forget a campaign's reference when it is saved or deleted (called once, by the app's ``ready``)."""
    post_init.connect(_remember_loaded_slug, sender=Campaign, dispatch_uid="campaign-ref-loaded-slug")
    post_save.connect(_forget, sender=Campaign, dispatch_uid="campaign-ref-saved")
    post_delete.connect(_forget, sender=Campaign, dispatch_uid="campaign-ref-deleted")
