"""Drives `trae-mem serve` in a real headless Chromium, with Playwright.

Run by tests/browser.rs. Usage:
  viewer_browser.py flow URL TRAE_MEM_BIN PROJECT_DIR CHROMIUM
  viewer_browser.py screenshot URL CHROMIUM OUT.png
TRAE_MEM_HOME comes from the environment. Prints one JSON object per step
on stdout ({"step": name, ...}); the Rust test asserts on them.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse

from playwright.sync_api import sync_playwright

# As root, Chromium needs --no-sandbox; the rest keep it off this
# machine's closed network.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

TIMEOUT_MS = 10_000


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def hook(binary, project, session, prompt):
    """Records a prompt as Claude Code's hook would; returns when the hook exits."""
    payload = {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": project,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    env = dict(os.environ, CLAUDE_PROJECT_DIR=project)
    run = subprocess.run([binary, "hook"], input=json.dumps(payload).encode(), env=env, capture_output=True)
    if run.returncode != 0:
        raise SystemExit(f"the hook failed: {run.stderr.decode()}")


def wait_until(condition):
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the page never got there")
        time.sleep(0.05)


def flow(url, binary, project, chromium):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page()
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        errors = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))

        # Live: a hook's observation appears without a reload.
        page.goto(url)
        page.wait_for_selector("#feed", state="attached")
        time.sleep(0.5)  # the event stream connects
        hook(binary, project, "browser-1", "the browser canary prompt about quokka migrations")
        exited = time.monotonic()
        card = page.locator("#feed .card", has_text="quokka migrations")
        card.wait_for(timeout=TIMEOUT_MS)
        emit("live", seconds=round(time.monotonic() - exited, 3), cards=page.locator("#feed .card").count())

        # Paused, a new one waits behind the button.
        page.click("#pause")
        hook(binary, project, "browser-1", "a second prompt while paused, about wombats")
        page.locator("#pause", has_text="1 new").wait_for(timeout=TIMEOUT_MS)
        held = page.locator("#feed .card", has_text="wombats").count()
        page.click("#pause")
        page.locator("#feed .card", has_text="wombats").wait_for(timeout=TIMEOUT_MS)
        emit("paused", held_back=held == 0)

        # Hostile text is shown, never run.
        hook(binary, project, "browser-1", "<img src=x onerror=alert(1)><script>alert(2)</script> hostile")
        page.locator("#feed .card", has_text="hostile").wait_for(timeout=TIMEOUT_MS)
        text = page.locator("#feed .card", has_text="hostile").first.locator("pre").inner_text()

        # Search as you type finds it, marked.
        page.goto(url + "search")
        page.fill("#q", "quokka")
        # The page's strict CSP forbids eval, so no wait_for_function: the URL
        # changes (history.replaceState) once the typed search's results are in.
        wait_until(lambda: page.evaluate("location.search") == "?q=quokka")
        hit = page.locator("#results li.hit", has_text="migrations")
        hit.wait_for(timeout=TIMEOUT_MS)
        marked = hit.first.locator("mark").all_inner_texts()
        searched_url = page.evaluate("location.href")
        reference = hit.first.locator("a.ref").inner_text()

        # Its session, one click away.
        hit.first.locator("a.ref").click()
        page.wait_for_url("**/observation/*")
        observation_url = page.url
        page.locator(".card.anchor a.session").first.click()
        page.wait_for_url("**/session/*")
        session_has_it = page.locator(".card", has_text="quokka migrations").count() == 1

        # Forget it from its page, confirmed.
        page.goto(observation_url)
        page.click("a.danger")
        page.wait_for_url("**/forget?observation=*")
        page.click("#confirm-forget")
        page.wait_for_selector("#forgotten")
        forgotten = page.locator("#forgotten").inner_text()

        page.goto(url + "search?q=quokka")
        after = page.locator("#results li.hit", has_text="quokka").count()
        emit(
            "search",
            marked=marked,
            url=searched_url,
            reference=reference,
            session_has_it=session_has_it,
            forgotten=forgotten,
            hits_after=after,
        )
        emit("hostile", text=text, dialogs=dialogs, console_errors=errors)
        browser.close()
    emit("done")


# The README's picture: words in English and in Chinese, each found in a
# session's summary (a card of its own) and in the observations that hold it.
SCREENSHOT_QUERY = "database locked 缓存"
VIEWPORT = {"width": 1200, "height": 1000}


def screenshot(url, chromium, out):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.emulate_media(color_scheme="light")
        page.goto(url + "search?" + urllib.parse.urlencode({"q": SCREENSHOT_QUERY}))
        page.wait_for_selector("#results li.hit")
        # What the summary cards wholly in the picture mark.
        summary_marks = [
            card.locator("p.snippet mark").all_inner_texts()
            for card in page.locator("#results li.hit.summary").all()
            if (box := card.bounding_box()) and box["y"] + box["height"] <= VIEWPORT["height"]
        ]
        page.screenshot(path=out)
        browser.close()
    emit("screenshot", path=out, summary_marks=summary_marks, quantized=quantize(out))


def quantize(path):
    """Rewrites the PNG with a palette (pngquant), where pngquant is
    installed: a page's few colours lose nothing seen, and the file shrinks
    by half or more. Returns whether it did."""
    if shutil.which("pngquant") is None:
        return False
    run = subprocess.run(
        ["pngquant", "--force", "--strip", "--speed=1", "--quality=80-100", "--skip-if-larger", "--output", path, path],
        capture_output=True,
    )
    # 98: the result would be larger; 99: below the quality asked for. The
    # original is kept either way.
    if run.returncode not in (0, 98, 99):
        raise SystemExit(f"pngquant failed: {run.stderr.decode()}")
    return run.returncode == 0


if __name__ == "__main__":
    if sys.argv[1] == "flow":
        flow(*sys.argv[2:6])
    else:
        screenshot(*sys.argv[2:5])
