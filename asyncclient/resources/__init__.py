"""One thin module per resource: endpoint -> typed method."""

from asyncclient.resources._base import AsyncPager
from asyncclient.resources.integrations import Integrations
from asyncclient.resources.projects import Projects
from asyncclient.resources.schedule import Schedule
from asyncclient.resources.social import NicheVideosPage, Social
from asyncclient.resources.templates import Templates
from asyncclient.resources.videos import Videos

__all__ = [
    "AsyncPager",
    "Integrations",
    "NicheVideosPage",
    "Projects",
    "Schedule",
    "Social",
    "Templates",
    "Videos",
]
