"""A toy protocol that proves a protocol is one package and one registry line: a worker rates how faithful a
summary is to its article, from 1 (made up) to 5 (fully supported).

Everything it needs is here: the app config (``apps.py``), its answer and gold models with their migration,
the protocol (``protocol.py``, whose ``task_page`` the shared task view renders), the page's routes, template
and script (``urls.py``, ``templates/toy_rating/``, ``static/toy_rating/``) and its tests. The only line
outside this package that names it is its entry in ``PROTOCOL_APPS`` (``factlab/settings.py``), which installs
it for the test suite only.
"""
