"""Shared fixtures for end-to-end tests in Debian's headless Chromium (Playwright's sync API).

The fixtures are registered for the whole suite in ``tests/conftest.py`` (``pytest_plugins``), so one
session-wide Playwright instance serves every browser test; import only helpers such as ``live_login``.
Mark browser tests with ``@pytest.mark.browser`` and use the ``transactional_db`` fixture.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test are still synchronous.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run `make browser`"
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


# Waits (selectors, navigations) give up after this long: generous, because a full run shares 2 cores between
# pytest, the live server, PostgreSQL and Chromium; a passing test never waits for it.
BROWSER_TIMEOUT_MS = 30_000


@pytest.fixture
def browser_page(browser) -> Iterator:
    """A fresh browser context (own cookies and localStorage) and page, 1280x900; closed after the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors  # tests assert no JavaScript error happened
    yield page
    context.close()


@pytest.fixture
def new_page(browser):
    """Factory for extra isolated pages (a second worker in the same test)."""
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(BROWSER_TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.js_errors = []
        page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
        return page

    yield make
    for context in contexts:
        context.close()


def follow(page, selector: str) -> None:
    """Click a link or a form's button and wait until the page it opens has loaded.

    A plain ``click`` returns as soon as the new page starts to arrive, before its HTML is parsed: a
    ``locator(...).count()`` or an ``inner_text`` of an element both pages have (``main``, the status) right
    after it can read the old page or half of the new one.
    """
    with page.expect_navigation():
        page.click(selector)


def live_login(page, live_server, username: str, password: str) -> None:
    """Sign in through the real login form."""
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()


@pytest.fixture
def screenshot(test_output_dir):
    """``screenshot(page, "name")`` saves ``test-output/screenshots/name.png`` (full page) for reviewers."""
    folder = test_output_dir / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
