from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotate.models import Campaign, CampaignStatus


@login_required
def home(request):
    campaigns = Campaign.objects.exclude(status=CampaignStatus.DRAFT).order_by("name") if not request.user.is_staff else Campaign.objects.order_by("name")
    return render(request, "annotate/home.html", {"campaigns": campaigns})
