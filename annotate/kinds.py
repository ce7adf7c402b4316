"""The registry of campaign kinds: kind -> its protocol, filled as the installed protocol apps get ready.

A protocol is an installed Django app whose ``AppConfig`` subclasses :class:`ProtocolAppConfig` and names its
protocol classes; ``ready()`` registers them, in ``INSTALLED_APPS`` order, so the registry is the list of
installed protocol apps (``PROTOCOL_APPS`` in ``factlab/settings.py``: one line adds one) and nothing else
lists the kinds. This module imports nothing of the project, so that the models can offer the kinds as
choices without importing the protocols.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured

#: campaign kind -> its protocol (an ``annotate.protocols.base.Protocol``, one stateless instance per kind), in
#: registration order. Typed loosely: the protocols import the models, which import this module.
PROTOCOLS: dict[str, Any] = {}
#: campaign kind -> the label of the app that registered it.
APPS: dict[str, str] = {}


def register(protocol: Any, *, app_label: str) -> None:
    """Add a protocol under its ``kind``; a kind registered by another class is a configuration error."""
    kind = str(protocol.kind)
    known = PROTOCOLS.get(kind)
    if known is not None and type(known) is not type(protocol):
        raise ImproperlyConfigured(f"campaign kind {kind!r} of app {app_label!r} is registered already by app {APPS[kind]!r}")
    PROTOCOLS[kind] = protocol
    APPS[kind] = app_label


def kind_choices() -> list[tuple[str, str]]:
    """The registered kinds as field choices (read at each use, so a registered protocol shows at once)."""
    return [(kind, protocol.label or kind) for kind, protocol in PROTOCOLS.items()]


def default_kind() -> str:
    """The kind a campaign made without one gets: the first registered (the first protocol app's first protocol)."""
    if not PROTOCOLS:
        raise ImproperlyConfigured("no protocol app is installed: PROTOCOL_APPS in factlab/settings.py lists none")
    return next(iter(PROTOCOLS))


class ProtocolAppConfig(AppConfig):
    """The app config of a protocol package (its models, migrations, ``templates/<label>/``, ``static/<label>/``)."""

    default_auto_field = "django.db.models.BigAutoField"
    #: The app's protocol classes as "module:Class", one per campaign kind, in the order admins see them.
    protocols: tuple[str, ...] = ()

    def ready(self) -> None:
        for target in self.protocols:
            module_name, class_name = target.split(":")
            register(getattr(import_module(module_name), class_name)(), app_label=self.label)
