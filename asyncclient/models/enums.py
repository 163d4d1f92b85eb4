"""The service's enumerations, as ``str`` enums.

Every enum here is a ``str`` subclass, so a member compares equal to its wire
value and plain strings are accepted wherever an enum is expected. Response
decoding keeps values the service adds later as plain strings (see
``asyncclient._convert``), so none of these lists is a closed world at runtime.

"""

from __future__ import annotations

import enum

__all__ = [
    "AspectRatio",
    "BRollType",
    "CaptionPreset",
    "FrameModel",
    "KeywordsStatus",
    "LipsyncModel",
    "MediaType",
    "Platform",
    "ProjectType",
    "ScheduleStatus",
    "ScrollMode",
    "SocialPlatform",
    "TemplateVariableType",
    "TextAlignment",
    "TextPreset",
    "UGCLanguage",
    "VideoListStatus",
    "VideoStatus",
    "VisualPreset",
]


class _StrEnum(str, enum.Enum):
    """A ``str`` enum whose ``str()`` is its wire value (like 3.11's StrEnum)."""

    def __str__(self) -> str:
        return str(self.value)


class AspectRatio(_StrEnum):
    """Output aspect ratio; ``RATIO_9_16`` is the default wherever optional."""

    RATIO_9_16 = "ratio_9_16"
    RATIO_16_9 = "ratio_16_9"
    RATIO_1_1 = "ratio_1_1"


class LipsyncModel(_StrEnum):
    """Lip-sync model; ``BASE`` is the default."""

    BASE = "base"
    PRO = "pro"


class TextAlignment(_StrEnum):
    """Vertical placement of captions and hook text."""

    TOP = "top"
    MIDDLE = "middle"
    BOTTOM = "bottom"


class MediaType(_StrEnum):
    """Source of the visuals for script to video."""

    AI_IMAGES = "ai-images"
    AI_VIDEOS = "ai-videos"
    MEDIA = "media"
    GAMEPLAY = "gameplay"


class BRollType(_StrEnum):
    """Layout of avatar and b-roll in a UGC ad; ``DOWN`` is the default."""

    DOWN = "down"
    UP = "up"
    LEFT = "left"
    RIGHT = "right"
    ROUNDED_COVER = "rounded-cover"
    FULL_WIDTH = "full-width"


class ScrollMode(_StrEnum):
    """How the captured web page scrolls in a product ad."""

    RESTART = "restart"
    LOOP = "loop"
    ONCE = "once"
    FIXED = "fixed"


class FrameModel(_StrEnum):
    """Frame model of a multi-scene scene."""

    MODELA_2_5 = "modela_2_5"
    MODELB_3_1 = "modelb_3_1"


class UGCLanguage(_StrEnum):
    """Languages of the UGC video format."""

    EN = "en"
    ES = "es"


class Platform(_StrEnum):
    """Social platforms for integrations and scheduled posts."""

    VIDEOSITE = "videosite"
    CLIPSITE = "clipsite"
    PHOTOSITE = "photosite"


class SocialPlatform(_StrEnum):
    """Platforms of social research: analysis, search and niches."""

    CLIPSITE = "clipsite"
    VIDEOSITE = "videosite"


class ScheduleStatus(_StrEnum):
    """Status of a scheduled post."""

    PENDING = "pending"
    PUBLISHED = "published"
    FAILED = "failed"
    DRAFT = "draft"


class VideoStatus(_StrEnum):
    """Status of a video record in responses."""

    STARTED = "STARTED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


class VideoListStatus(_StrEnum):
    """The lower-case status filter of ``GET /v1/video/list``."""

    DRAFT = "draft"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"


class KeywordsStatus(_StrEnum):
    """Keyword extraction state of a social search."""

    PENDING = "pending"
    COMPLETED = "completed"


class TemplateVariableType(_StrEnum):
    """Kind of a template variable: text, or a media URL."""

    TEXT = "text"
    MEDIA = "media"


class ProjectType(_StrEnum):
    """Project types of the video list filter and of templates."""

    CLASS = "class"
    UGC_ADS = "ugc_ads"
    UGC_VIDEO = "ugc_video"
    SCRIPT_TO_VIDEO = "script_to_video"
    PROMPT_TO_VIDEO = "prompt_to_video"
    HOOK_DEMO = "hook_demo"
    PRODUCT_ADS = "product_ads"
    SCENES = "scenes"
    ADD_CAPTIONS = "add_captions"
    EXTEND_VIDEO = "extend_video"
    REMOVE_BACKGROUND = "remove_background"
    CLIPSITE_SLIDESHOW = "clipsite_slideshow"
    ALL = "all"


class CaptionPreset(_StrEnum):
    """The 22 caption presets (``CLASSIC`` is the service's default style)."""

    DEFAULT = "default"
    BEAST = "beast"
    UMI = "umi"
    CLIPSITE = "clipsite"
    WRAP1 = "wrap1"
    WRAP2 = "wrap2"
    ARIEL = "ariel"
    BRANDNAME = "brandname"
    CLASSIC = "classic"
    ACTIVE = "active"
    BUBBLE = "bubble"
    GLASS = "glass"
    COMIC = "comic"
    GLOW = "glow"
    PASTEL = "pastel"
    NEON = "neon"
    RETRO_TV = "retroTV"
    RED = "red"
    MARKER = "marker"
    MODERN = "modern"
    BLUE = "blue"
    VIVID = "vivid"


class TextPreset(_StrEnum):
    """The 15 text presets of hook plus demo (``MODERN`` is the default)."""

    MODERN = "modern"
    CLIPSITE = "clipsite"
    SOCIAL = "social"
    IMPACT = "impact"
    SLICED_TEXT = "slicedText"
    MINIMAL_MONOCHROME = "minimalMonochrome"
    HIGHLIGHT = "highlight"
    GRADIENT = "gradient"
    NEON_FUTURE = "neonFuture"
    AVANT_GARDE = "avantGarde"
    GLASSMORPHIC = "glassmorphic"
    STAGE_EFFECT = "stageEffect"
    NEON_EFFECT = "neonEffect"
    GLOW_EFFECT = "glowEffect"
    WRAP_EFFECT = "wrapEffect"


class VisualPreset(_StrEnum):
    """The 27 visual style presets of ``presetSettings.preset``."""

    REALISTIC = "realistic"
    ANIME = "anime"
    CINEMATIC = "cinematic"
    FANTASY = "fantasy"
    CYBERPUNK_ANIME = "cyberpunk-anime"
    STUDIO3D = "studio3d"
    COMIC_BOOK = "comic-book"
    REAL_ANIME = "real-anime"
    PAINTERLY_STUDIO = "painterly-studio"
    SKETCH_BLACK_AND_WHITE = "sketch-black-and-white"
    ART_STYLE = "art-style"
    RETRO_ANIME = "retro-anime"
    FANTASY_MOVIE_80S = "80s-fantasy-movie"
    CARTOON = "cartoon"
    CREATIVE = "creative"
    CRIME_GAME_V = "crime-game-v"
    SKETCH_COLOR = "sketch-color"
    JAPANESE_INK = "japanese-ink"
    ARMORED_MARINES_40K = "armored-marines-40k"
    HAUNTED_LINEWORK = "haunted-linework"
    INK_STYLE = "ink-style"
    NEON_FUTURISTIC = "neon-futuristic"
    BLOCKGAME = "blockgame"
    PIXEL_ART = "pixel-art"
    COLLAGE = "collage"
    BRICK_TOY = "brick-toy"
    TECHNICAL_BLUEPRINTS = "technical-blueprints"
