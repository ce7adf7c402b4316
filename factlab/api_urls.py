"""Routes under ``/api/`` in the ``api`` namespace: the crowd side's and the metrics service's.

The project wires its apps together here: ``annotate`` imports nothing of ``metrics_service`` (the ``layers``
contract in ``.importlinter``), so neither app's URLconf can hold the other's routes.
"""
from annotate.api import urls as annotate_api
from metrics_service.api import urls as metrics_api

app_name = "api"

# The metrics routes first: as before, the report's paths are tried before the campaign routers' catch-alls.
urlpatterns = [*metrics_api.urlpatterns, *annotate_api.urlpatterns]
