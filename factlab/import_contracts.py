"""An import-linter contract type that covers every protocol app without naming one.

A protocol app is a package whose ``apps.py`` defines a subclass of the protocol app config (in this project
``annotate.kinds.ProtocolAppConfig``, which registers the app's protocols when it is ready). The contract
finds them in the import graph on every run, so a new protocol package is checked from the moment it has
its ``apps.py``, with no line in ``.importlinter``:

* **independent**: no protocol app imports another one, directly or through other modules;
* **unknown to the shared code**: no module matched by ``shared_modules`` (the protocol apps themselves and
  ``composition_modules`` left out) imports a protocol app, directly or through other modules.

Both checks are import-linter's own ``independence`` and ``forbidden`` contracts, run on the apps found.
Registered in ``.importlinter`` with ``contract_types = protocol_apps: factlab.import_contracts.ProtocolAppsContract``.
"""
from __future__ import annotations

import ast
import copy
import importlib.util
from pathlib import Path

from grimp import ImportGraph
from importlinter.application import output
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck
from importlinter.domain.helpers import module_expressions_to_modules


def _source_path(module: str, is_package: bool) -> Path | None:
    """Where ``module``'s source is, found from its top-level package (nothing is imported)."""
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*rest)
    return path / "__init__.py" if is_package else path.with_suffix(".py")


def _defines_subclass(path: Path, base_name: str) -> bool:
    """Whether the module at ``path`` defines a class with a base named ``base_name`` (``kinds.X`` or ``X``)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
                if name == base_name:
                    return True
    return False


def protocol_apps(graph: ImportGraph, app_config: str) -> list[str]:
    """The packages of ``graph`` whose ``apps`` module subclasses ``app_config`` ("module.Class") and
    imports the module defining it.

    Examples
    --------
    In this project (the apps installed in ``PROTOCOL_APPS``): ``['annotate.bump', 'annotate.frank', ...]``.
    """
    config_module, _, class_name = app_config.rpartition(".")
    found = []
    for module in sorted(graph.modules):
        package, _, leaf = module.rpartition(".")
        if leaf != "apps" or not package or config_module in (module, package):
            continue
        if not graph.direct_import_exists(importer=module, imported=config_module):
            continue
        path = _source_path(module, is_package=bool(graph.find_children(module)))
        if path is not None and _defines_subclass(path, class_name):
            found.append(package)
    return found


class ProtocolAppsContract(Contract):
    """Protocol apps (found by their app config) are independent and the shared modules import none of them.

    Options:
        - app_config: the protocol app config class, "module.Class" (its subclasses in ``<package>.apps`` mark the apps).
        - shared_modules: module expressions (``annotate.*``) for the code that must not import a protocol app.
        - composition_modules: modules left out of the shared ones: they wire protocol apps in (optional).
        - ignore_imports: import expressions both checks ignore (optional).
        - min_apps: fewer apps found than this is an error (a renamed config class would find none).
    """

    type_name = "protocol_apps"

    app_config = fields.StringField()
    shared_modules = fields.ListField(subfield=fields.ModuleExpressionField())
    composition_modules = fields.ListField(subfield=fields.ModuleField(), required=False, default=[])
    ignore_imports = fields.ListField(subfield=fields.StringField(), required=False, default=[])
    min_apps = fields.IntegerField(required=False, default=1)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        apps = protocol_apps(graph, self.app_config)
        if len(apps) < self.min_apps:
            return ContractCheck(kept=False, metadata={"apps": apps, "parts": [],
                                                       "problem": f"found {len(apps)} protocol app(s), expected at least {self.min_apps}"})
        output.verbose_print(verbose, f"Protocol apps: {', '.join(apps)}")
        composition = {m.name for m in self.composition_modules}

        def outside(name: str, excluded: set[str]) -> bool:
            return not any(name == e or name.startswith(e + ".") for e in excluded)

        shared = sorted(
            m.name for m in module_expressions_to_modules(graph, self.shared_modules)
            if outside(m.name, set(apps)) and outside(m.name, composition) and not any(a.startswith(m.name + ".") for a in apps)
        )
        common = {"ignore_imports": list(self.ignore_imports), "unmatched_ignore_imports_alerting": "none"}
        parts = []
        if len(apps) > 1:
            parts.append(("Protocol apps never import each other",
                          IndependenceContract(self.name, self.session_options, {"modules": apps, **common})))
        parts.append(("The shared code imports no protocol app",
                      ForbiddenContract(self.name, self.session_options, {"source_modules": shared, "forbidden_modules": apps, **common})))
        results = []
        for title, contract in parts:
            # Each check may remove ignored imports from the graph it gets: each gets its own copy.
            results.append((title, contract, contract.check(copy.deepcopy(graph), verbose)))
        return ContractCheck(kept=all(check.kept for _, _, check in results),
                             metadata={"apps": apps, "parts": results, "problem": None})

    def render_broken_contract(self, check: ContractCheck) -> None:
        if check.metadata["problem"]:
            output.print_error(check.metadata["problem"])
            return
        output.print(f"Protocol apps found: {', '.join(check.metadata['apps'])}")
        output.new_line()
        for title, contract, result in check.metadata["parts"]:
            if not result.kept:
                output.print_heading(title, output.HEADING_LEVEL_THREE)
                contract.render_broken_contract(result)
