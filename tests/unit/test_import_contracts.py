"""The protocol-apps import contract (factlab/import_contracts.py) on a small fixture tree: it finds protocol
apps by their app config, so a package added with an ``apps.py`` is covered without a line in the config."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

from factlab.import_contracts import ProtocolAppsContract

CONFIG = """
[importlinter]
root_packages =
    shop
contract_types =
    protocol_apps: factlab.import_contracts.ProtocolAppsContract

[importlinter:contract:apps]
name = protocol apps
type = protocol_apps
app_config = shop.kinds.ProtocolAppConfig
shared_modules =
    shop.*
composition_modules =
    shop.commands
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def shop(tmp_path, monkeypatch):
    """Two protocol apps (one subclasses the config by attribute, one by name), an ordinary app, shared code."""
    write(tmp_path, {
        ".importlinter": CONFIG,
        "shop/__init__.py": "",
        "shop/kinds.py": "class ProtocolAppConfig:\n    protocols = ()\n",
        "shop/services.py": "import json\n",
        "shop/commands.py": "from shop.alpha import models\n",  # composition: may wire an app in
        "shop/alpha/__init__.py": "",
        "shop/alpha/apps.py": "from shop import kinds\n\n\nclass AlphaConfig(kinds.ProtocolAppConfig):\n    pass\n",
        "shop/alpha/models.py": "from shop import services\n",
        "shop/beta/__init__.py": "",
        "shop/beta/apps.py": "from shop.kinds import ProtocolAppConfig\n\n\nclass BetaConfig(ProtocolAppConfig):\n    pass\n",
        "shop/plain/__init__.py": "",
        "shop/plain/apps.py": "class PlainConfig:\n    pass\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


#: A third protocol app, named nowhere in the config.
GAMMA = {
    "shop/gamma/__init__.py": "",
    "shop/gamma/apps.py": "from shop import kinds\n\n\nclass GammaConfig(kinds.ProtocolAppConfig):\n    pass\n",
    "shop/gamma/models.py": "",
}


def run(capsys) -> tuple[int, str]:
    code = lint_imports(config_filename=".importlinter", no_cache=True, verbose=True)
    return code, capsys.readouterr().out


def test_the_apps_are_found_by_their_config_and_the_tree_keeps_the_contract(shop, capsys):
    code, out = run(capsys)
    assert code == 0, out
    assert "Protocol apps: shop.alpha, shop.beta" in out  # shop.plain has an apps.py, not a protocol app config
    assert ProtocolAppsContract.type_name == "protocol_apps"


def test_a_new_protocol_package_is_covered_without_naming_it(shop, capsys):
    write(shop, {**GAMMA, "shop/gamma/views.py": "from shop.alpha.models import services\n"})
    code, out = run(capsys)
    assert code == 1
    assert "Protocol apps: shop.alpha, shop.beta, shop.gamma" in out
    assert "shop.gamma is not allowed to import shop.alpha" in out


def test_shared_code_may_not_import_a_new_protocol_app_even_through_another_module(shop, capsys):
    write(shop, {**GAMMA, "shop/helpers.py": "from shop.gamma import models\n", "shop/services.py": "from shop import helpers\n"})
    code, out = run(capsys)
    assert code == 1
    assert "shop.services is not allowed to import shop.gamma" in out
    assert "shop.helpers is not allowed to import shop.gamma" in out


def test_no_protocol_app_found_breaks_the_contract(shop, capsys):
    # A renamed config class would otherwise leave every protocol unchecked.
    write(shop, {"shop/kinds.py": "class AppConfigOfProtocols:\n    protocols = ()\n",
                 "shop/alpha/apps.py": "from shop import kinds\n\n\nclass AlphaConfig(kinds.AppConfigOfProtocols):\n    pass\n",
                 "shop/beta/apps.py": "from shop import kinds\n\n\nclass BetaConfig(kinds.AppConfigOfProtocols):\n    pass\n"})
    code, out = run(capsys)
    assert code == 1
    assert "found 0 protocol app(s), expected at least 1" in out
