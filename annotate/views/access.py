"""Who may open the admin pages (``/manage/``): campaign admins (staff) only."""
from __future__ import annotations

import functools

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest


def staff_required(view):
    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Only campaign admins may open this page.")
        return view(request, *args, **kwargs)

    return wrapped
