"""Every creation body the SDK builds in any test is checked against the OpenAPI
document (``tests/conftest.py``); this shows the check is in place and can fail."""

from __future__ import annotations

import pytest


def test_the_suite_checks_each_creation_body_it_builds_against_the_document() -> None:
    # tests/conftest.py wraps the builder of creation requests: a body the document
    # refuses fails the test that built it.
    from asyncclient.http import prepared

    with pytest.raises(AssertionError, match=r"script: 5 is not of type 'string'"):
        prepared.build_request("POST", "/v1/project/create/talking-avatar", json_body={"script": 5})
    prepared.build_request(
        "POST",
        "/v1/project/create/talking-avatar",
        json_body={"script": "Hi", "avatarId": "a", "voiceId": "v"},
    )
