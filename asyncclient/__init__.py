"""asyncclient: the asyncio-first SDK for the video-generation service.

Start with :class:`AsyncClient` (or :class:`Client`, its synchronous twin); every model,
enum and error is importable from here.

``import asyncclient`` loads what a first request uses (the client, its request path,
the errors); the models, batches and the rest load when first named (PEP 562), so
``from asyncclient import Batch`` works as before, only later.
"""

import importlib
import sys
from typing import TYPE_CHECKING

from asyncclient._clock import Clock, SystemClock
from asyncclient._version import __version__
from asyncclient.awaiting.jobs import JobUpdate, VideoJob
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.client import AsyncClient, batch_status
from asyncclient.errors import (
    AmbiguousCreationError,
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    FleetError,
    InsufficientCreditsError,
    InternalServerError,
    JobTimeoutError,
    JournalError,
    JournalKeyError,
    JournalLockedError,
    JournalWriteError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ReconciliationError,
    RowChangedError,
    ValidationError,
    VideoFailedError,
)
from asyncclient.http.options import RawResponse
from asyncclient.http.transport import Timeouts
from asyncclient.lanes import Lane, lane
from asyncclient.ratelimit import Limiter, Plan, RateLimit, TokenBucket
from asyncclient.resources._base import AsyncPager
from asyncclient.retry import RetryPolicy

if TYPE_CHECKING:  # what the names below resolve to, for type checkers and IDEs
    from asyncclient.batch.runner import (
        Batch,
        BatchOptions,
        BatchProgress,
        BatchSettings,
        RowOutcome,
        RowResult,
    )
    from asyncclient.batch.status import BatchStatus
    from asyncclient.models import (
        AccountAnalytics,
        AccountStats,
        AddCaptionsRequest,
        AdSettings,
        AnalyzeAccountRequest,
        AnalyzedAccount,
        AspectRatio,
        Audio,
        AvatarBox,
        AvatarScene,
        BRollType,
        Caption,
        CaptionPreset,
        CreatedProject,
        CreationRequest,
        Creator,
        FrameModel,
        GameplaySettings,
        HookDemoRequest,
        Integration,
        IntegrationAccount,
        KeywordsStatus,
        LipsyncModel,
        MediaType,
        Niche,
        Page,
        Pagination,
        PictureInPictureScene,
        Platform,
        PlatformData,
        Point,
        PostPlatformData,
        PostVideo,
        PresetSettings,
        ProductAdSettings,
        ProductAdsRequest,
        ProjectType,
        Scene,
        ScenesRequest,
        ScheduledPost,
        ScheduledPostCreated,
        ScheduleRequest,
        ScheduleStatus,
        ScriptToVideoRequest,
        ScrollMode,
        Search,
        SearchAnalytics,
        SearchCreated,
        SearchRequest,
        SentCreation,
        SocialMusic,
        SocialPlatform,
        SocialVideo,
        SocialVideoStats,
        StartEndFrameScene,
        TalkingAvatarRequest,
        Template,
        TemplateAvatar,
        TemplateCaptionBox,
        TemplateCaptionSettings,
        TemplateDetail,
        TemplateGenerationRequest,
        TemplateScene,
        TemplateSceneInfo,
        TemplateVariable,
        TemplateVariableInfo,
        TemplateVariableType,
        TemplateVideoSettings,
        TextAlignment,
        TextPreset,
        TextSettings,
        UGCAdsRequest,
        UGCLanguage,
        UGCVideoRequest,
        Video,
        VideoCaptionSettings,
        VideoDetail,
        VideoListStatus,
        VideoScene,
        VideoSettings,
        VideoStatus,
        VisualPreset,
    )
    from asyncclient.resources.social import NicheVideosPage
    from asyncclient.sync import Client, SyncBatch, SyncPager, SyncVideoJob

_MODULE_OF = {
    "Client": "asyncclient.sync",
    "SyncBatch": "asyncclient.sync",
    "SyncPager": "asyncclient.sync",
    "SyncVideoJob": "asyncclient.sync",
    "Batch": "asyncclient.batch.runner",
    "BatchOptions": "asyncclient.batch.runner",
    "BatchProgress": "asyncclient.batch.runner",
    "BatchSettings": "asyncclient.batch.runner",
    "BatchStatus": "asyncclient.batch",
    "NicheVideosPage": "asyncclient.resources.social",
    "RowOutcome": "asyncclient.batch.runner",
    "RowResult": "asyncclient.batch.runner",
}
"""Where a lazily loaded name comes from: these, and ``asyncclient.models`` for the rest."""


def _load(name: str) -> object:
    """Load a name of ``__all__`` not imported above on first use, then keep it."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(_MODULE_OF.get(name, "asyncclient.models"))
    value = getattr(module, name)
    globals()[name] = value
    return value


def _names() -> list[str]:
    return sorted({*globals(), *__all__})


if not TYPE_CHECKING:  # hidden from type checkers, which see the imports above instead
    __getattr__ = _load  # PEP 562
    __dir__ = _names


__all__ = [
    "APIConnectionError",
    "APIError",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AccountAnalytics",
    "AccountStats",
    "AdSettings",
    "AddCaptionsRequest",
    "AmbiguousCreationError",
    "AnalyzeAccountRequest",
    "AnalyzedAccount",
    "AspectRatio",
    "AsyncClient",
    "AsyncPager",
    "Audio",
    "AuthenticationError",
    "AvatarBox",
    "AvatarScene",
    "BRollType",
    "BadRequestError",
    "Batch",
    "BatchOptions",
    "BatchProgress",
    "BatchSettings",
    "BatchStatus",
    "Caption",
    "CaptionPreset",
    "Client",
    "Clock",
    "CreatedProject",
    "CreationRequest",
    "Creator",
    "FleetError",
    "FrameModel",
    "GameplaySettings",
    "HookDemoRequest",
    "InsufficientCreditsError",
    "Integration",
    "IntegrationAccount",
    "InternalServerError",
    "JobTimeoutError",
    "JobUpdate",
    "JournalError",
    "JournalKeyError",
    "JournalLockedError",
    "JournalWriteError",
    "KeywordsStatus",
    "Lane",
    "Limiter",
    "LipsyncModel",
    "MediaType",
    "Niche",
    "NicheVideosPage",
    "NotFoundError",
    "Page",
    "Pagination",
    "PermissionDeniedError",
    "PictureInPictureScene",
    "Plan",
    "Platform",
    "PlatformData",
    "Point",
    "PollPolicy",
    "PostPlatformData",
    "PostVideo",
    "PresetSettings",
    "ProductAdSettings",
    "ProductAdsRequest",
    "ProjectType",
    "RateLimit",
    "RateLimitError",
    "RawResponse",
    "ReconciliationError",
    "RetryPolicy",
    "RowChangedError",
    "RowOutcome",
    "RowResult",
    "Scene",
    "ScenesRequest",
    "ScheduleRequest",
    "ScheduleStatus",
    "ScheduledPost",
    "ScheduledPostCreated",
    "ScriptToVideoRequest",
    "ScrollMode",
    "Search",
    "SearchAnalytics",
    "SearchCreated",
    "SearchRequest",
    "SentCreation",
    "SocialMusic",
    "SocialPlatform",
    "SocialVideo",
    "SocialVideoStats",
    "StartEndFrameScene",
    "SyncBatch",
    "SyncPager",
    "SyncVideoJob",
    "SystemClock",
    "TalkingAvatarRequest",
    "Template",
    "TemplateAvatar",
    "TemplateCaptionBox",
    "TemplateCaptionSettings",
    "TemplateDetail",
    "TemplateGenerationRequest",
    "TemplateScene",
    "TemplateSceneInfo",
    "TemplateVariable",
    "TemplateVariableInfo",
    "TemplateVariableType",
    "TemplateVideoSettings",
    "TextAlignment",
    "TextPreset",
    "TextSettings",
    "Timeouts",
    "TokenBucket",
    "UGCAdsRequest",
    "UGCLanguage",
    "UGCVideoRequest",
    "ValidationError",
    "Video",
    "VideoCaptionSettings",
    "VideoDetail",
    "VideoFailedError",
    "VideoJob",
    "VideoListStatus",
    "VideoScene",
    "VideoSettings",
    "VideoStatus",
    "VisualPreset",
    "__version__",
    "batch_status",
    "lane",
]

_LAZY = frozenset(__all__) - frozenset(globals())
"""The names ``__getattr__`` loads: those of ``__all__`` not imported above."""

if "IPython" in sys.modules:  # a shell may run: jobs and batches show themselves in it
    import asyncclient.notebook as _notebook

    _notebook.attach_to_running_shell()
    del _notebook  # not a name of the package
